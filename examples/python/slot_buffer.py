"""A one-slot buffer guarded by one ``Condition`` (producers wait for an empty slot,
consumers for a full one), threads built in list comprehensions.

With ``notify()`` a producer can wake another producer (or a consumer another consumer):
the wake-up is spent on a thread that cannot proceed, and every thread ends up waiting —
a deadlock CPython really reaches. ``notify_all()`` wakes everyone and is correct.

absmc check examples/python/slot_buffer.py --entry run_notify 1 2 2 \
    --component Slot,producer,consumer,run --order dfs          # violated: deadlock
absmc check examples/python/slot_buffer.py --entry run_notify_all 1 1 2 \
    --component Slot,producer,consumer,run                      # holds

(The full 2 producers + 2 consumers, 2 items each, is the same program with ``2 2 2``.)
"""

import threading
from dataclasses import dataclass, field


@dataclass
class Slot:
    wake_all: bool = False
    item: object = None
    full: bool = False
    cond: threading.Condition = field(default_factory=threading.Condition)

    def _wake(self):
        if self.wake_all:
            self.cond.notify_all()
        else:
            self.cond.notify()

    def put(self, item):
        with self.cond:
            while self.full:
                self.cond.wait()
            self.item = item
            self.full = True
            self._wake()

    def take(self):
        with self.cond:
            while not self.full:
                self.cond.wait()
            item = self.item
            self.full = False
            self._wake()
            return item


def producer(slot, items):
    for item in items:
        slot.put(item)


def consumer(slot, count, out):
    for _ in range(count):
        out.append(slot.take())


def run(producers, consumers, items, wake_all):
    slot = Slot(wake_all=wake_all)
    out = []
    made = [[(p, i) for i in range(items)] for p in range(producers)]
    share = producers * items // consumers
    threads = [threading.Thread(target=producer, args=(slot, m)) for m in made]
    threads += [threading.Thread(target=consumer, args=(slot, share, out)) for _ in range(consumers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(out) == sorted(x for m in made for x in m), out


def run_notify(producers=2, consumers=2, items=2):
    run(producers, consumers, items, wake_all=False)


def run_notify_all(producers=2, consumers=2, items=2):
    run(producers, consumers, items, wake_all=True)
