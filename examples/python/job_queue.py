"""A bounded job queue on one ``Condition`` with ``notify_all()``; workers and submitters
built in comprehensions.

``take_if``/``submit_if`` test their condition with ``if`` before ``wait()``: a worker
woken together with another worker proceeds after the other took the only job, and finds
the queue empty (the assertion fails). ``take``/``submit`` retest in a ``while`` loop and
are proved.

absmc check examples/python/job_queue.py --entry run_if 1 2 2 \
    --component JobQueue,submitter,worker,run                   # violated: assertion
absmc check examples/python/job_queue.py --entry run_while 1 1 2 \
    --component JobQueue,submitter,worker,run                   # holds

(The full 2 submitters + 2 workers, 2 jobs each, is ``2 2 2``.)
"""

import threading
from dataclasses import dataclass, field


@dataclass
class JobQueue:
    capacity: int
    careful: bool = True
    jobs: list = field(default_factory=list)
    changed: threading.Condition = field(default_factory=threading.Condition)

    def submit(self, job):
        with self.changed:
            if self.careful:
                while len(self.jobs) >= self.capacity:
                    self.changed.wait()
            elif len(self.jobs) >= self.capacity:
                self.changed.wait()
            assert len(self.jobs) < self.capacity, "submitted to a full queue"
            self.jobs.append(job)
            self.changed.notify_all()

    def take(self):
        with self.changed:
            if self.careful:
                while not self.jobs:
                    self.changed.wait()
            elif not self.jobs:
                self.changed.wait()
            assert self.jobs, "woken with no job to take"
            job = self.jobs.pop(0)
            self.changed.notify_all()
            return job


def submitter(queue, jobs):
    for job in jobs:
        queue.submit(job)


def worker(queue, count, done):
    for _ in range(count):
        done.append(queue.take())


def run(submitters, workers, jobs, careful):
    queue = JobQueue(capacity=1, careful=careful)
    done = []
    batches = [[(s, j) for j in range(jobs)] for s in range(submitters)]
    share = submitters * jobs // workers
    threads = [threading.Thread(target=submitter, args=(queue, b)) for b in batches]
    threads += [threading.Thread(target=worker, args=(queue, share, done)) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(done) == submitters * jobs


def run_if(submitters=2, workers=2, jobs=2):
    run(submitters, workers, jobs, careful=False)


def run_while(submitters=2, workers=2, jobs=2):
    run(submitters, workers, jobs, careful=True)
