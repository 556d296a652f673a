"""Producer–consumer over a bounded buffer with one condition variable (thesis Table 3.1).

``run`` waits in ``while`` loops (correct). ``run_if`` waits with ``if`` and uses
``notify()`` with two consumers: a consumer woken by the other consumer's removal finds the
buffer empty and ``pop`` raises (found). ``run_queue`` uses ``queue.Queue`` (correct).

absmc check examples/python/producer_consumer.py --entry run --component Buffer,producer,consumer
"""

import queue
import threading


class Buffer:
    def __init__(self, size):
        self.items = []
        self.size = size
        self.cond = threading.Condition()

    def put(self, x):
        with self.cond:
            while len(self.items) >= self.size:
                self.cond.wait()
            self.items.append(x)
            self.cond.notify_all()

    def take(self):
        with self.cond:
            while not self.items:
                self.cond.wait()
            x = self.items.pop(0)
            self.cond.notify_all()
            return x

    def take_if(self):
        with self.cond:
            if not self.items:
                self.cond.wait()
            x = self.items.pop(0)
            return x

    def put_if(self, x):
        with self.cond:
            self.items.append(x)
            self.cond.notify()


def producer(buf, n):
    for i in range(n):
        buf.put(i)


def consumer(buf, n, out):
    for _ in range(n):
        out.append(buf.take())


def run(n=2):
    buf = Buffer(1)
    out = []
    threads = [
        threading.Thread(target=producer, args=(buf, n)),
        threading.Thread(target=consumer, args=(buf, n, out)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == list(range(n)), out


def consumer_if(buf, out):
    out.append(buf.take_if())


def run_if():
    buf = Buffer(1)
    out = []
    threads = [
        threading.Thread(target=consumer_if, args=(buf, out)),
        threading.Thread(target=consumer_if, args=(buf, out)),
    ]
    for t in threads:
        t.start()
    buf.put_if(1)
    buf.put_if(2)
    for t in threads:
        t.join()
    assert sorted(out) == [1, 2], out


def queue_producer(q, n):
    for i in range(n):
        q.put(i)
    q.put(None)


def queue_consumer(q, out):
    while True:
        x = q.get()
        if x is None:
            break
        out.append(x)


def run_queue(n=3):
    q = queue.Queue(maxsize=1)
    out = []
    p = threading.Thread(target=queue_producer, args=(q, n))
    c = threading.Thread(target=queue_consumer, args=(q, out))
    p.start()
    c.start()
    p.join()
    c.join()
    assert out == list(range(n)), out
