"""A hit counter shared by request handlers started through a ``spawn()`` helper of the
environment. ``record`` does ``self.hits += 1`` without a lock: at the default (statement)
granularity the ``+=`` is one step, as the GIL makes it look, so nothing is found; with
``--granularity access`` the read and the write are separate steps and the lost update is
found. ``record_locked`` holds the lock and holds at both granularities.

absmc check examples/python/hit_counter.py --entry serve 2 --component Stats,handle,serve \
    --granularity access                                    # violated: assertion
absmc check examples/python/hit_counter.py --entry serve_locked 2 --component Stats,handle,serve \
    --granularity access                                    # holds
"""

import threading
from dataclasses import dataclass, field


@dataclass
class Stats:
    hits: int = 0
    lock: threading.Lock = field(default_factory=lambda: threading.Lock())

    def record(self):
        self.hits += 1

    def record_locked(self):
        with self.lock:
            self.hits += 1


def handle(stats, locked):
    if locked:
        stats.record_locked()
    else:
        stats.record()


def spawn(target, *args):
    """The environment's helper: create and start a worker thread."""
    worker = threading.Thread(target=target, args=args)
    worker.start()
    return worker


def serve(requests=2, locked=False):
    stats = Stats()
    workers = [spawn(handle, stats, locked) for _ in range(requests)]
    for w in workers:
        w.join()
    assert stats.hits == requests, stats.hits


def serve_locked(requests=2):
    serve(requests, locked=True)
