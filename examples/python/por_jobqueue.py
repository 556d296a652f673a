"""A bounded job queue (capacity 1) on one lock and two conditions: two submitters and two
workers, two jobs each, threads created one by one in ``main`` (a 4-thread benchmark input for
partial-order reduction, issue 27).

``main`` waits in ``while`` loops and holds. ``main_if`` waits with ``if``: a worker woken
after the other worker took the job finds the queue empty and ``pop`` raises ``IndexError``.

absmc check examples/python/por_jobqueue.py --entry main --component JobQueue,submitter,worker,run
"""

import threading


class JobQueue:
    def __init__(self, capacity, recheck):
        self.jobs = []
        self.capacity = capacity
        self.recheck = recheck
        self.lock = threading.Lock()
        self.not_full = threading.Condition(self.lock)
        self.not_empty = threading.Condition(self.lock)

    def submit(self, job):
        with self.lock:
            if self.recheck:
                while len(self.jobs) >= self.capacity:
                    self.not_full.wait()
            elif len(self.jobs) >= self.capacity:
                self.not_full.wait()
            self.jobs.append(job)
            self.not_empty.notify()

    def take(self):
        with self.lock:
            if self.recheck:
                while not self.jobs:
                    self.not_empty.wait()
            elif not self.jobs:
                self.not_empty.wait()
            job = self.jobs.pop(0)
            self.not_full.notify()
            return job


def submitter(q, base, n):
    for i in range(n):
        q.submit(base + i)


def worker(q, n, done):
    for _ in range(n):
        job = q.take()
        done.append(job)


def run(recheck, n=2):
    q = JobQueue(1, recheck)
    done = []
    s1 = threading.Thread(target=submitter, args=(q, 0, n))
    s2 = threading.Thread(target=submitter, args=(q, 10, n))
    w1 = threading.Thread(target=worker, args=(q, n, done))
    w2 = threading.Thread(target=worker, args=(q, n, done))
    s1.start()
    s2.start()
    w1.start()
    w2.start()
    s1.join()
    s2.join()
    w1.join()
    w2.join()
    assert sorted(done) == sorted([*range(n), *range(10, 10 + n)]), done


def main(n=2):
    run(True, n)


def main_if(n=2):
    run(False, n)
