"""A one-slot buffer guarded by one ``Condition``: two producers and two consumers, two items
each, threads created one by one in ``main`` (the 4-thread program of issue 27, a benchmark
input for partial-order reduction).

``main`` notifies with ``notify_all()`` and holds; ``main_notify`` notifies with ``notify()``:
a producer's notification can wake the other producer instead of a consumer, and all four
threads end up waiting (a deadlock that CPython really reaches).

absmc check examples/python/por_buffer.py --entry main --component Buffer,producer,consumer,run
"""

import threading


class Buffer:
    def __init__(self, capacity, wake_all):
        self.items = []
        self.capacity = capacity
        self.wake_all = wake_all
        self.cond = threading.Condition()

    def _wake(self):
        if self.wake_all:
            self.cond.notify_all()
        else:
            self.cond.notify()

    def put(self, item):
        with self.cond:
            while len(self.items) >= self.capacity:
                self.cond.wait()
            self.items.append(item)
            self._wake()

    def get(self):
        with self.cond:
            while not self.items:
                self.cond.wait()
            item = self.items.pop(0)
            self._wake()
            return item


def producer(buf, base, n):
    for i in range(n):
        buf.put(base + i)


def consumer(buf, n, out):
    for _ in range(n):
        item = buf.get()
        out.append(item)


def run(wake_all, n=2):
    buf = Buffer(1, wake_all)
    out = []
    p1 = threading.Thread(target=producer, args=(buf, 0, n))
    p2 = threading.Thread(target=producer, args=(buf, 100, n))
    c1 = threading.Thread(target=consumer, args=(buf, n, out))
    c2 = threading.Thread(target=consumer, args=(buf, n, out))
    p1.start()
    p2.start()
    c1.start()
    c2.start()
    p1.join()
    p2.join()
    c1.join()
    c2.join()
    assert sorted(out) == sorted([*range(n), *range(100, 100 + n)]), out


def main(n=2):
    run(True, n)


def main_notify(n=2):
    run(False, n)
