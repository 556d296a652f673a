"""A read-through cache: ``get`` loads a missing key from the backing store and keeps it.

``get`` checks ``key not in self.entries`` and loads in a later statement
(check-then-act): two readers of the same key can both miss and both load it, and the
assertion that each key is loaded once fails. ``get_locked`` makes the check and the load
one critical section. The readers are ``threading.Thread`` subclasses.

absmc check examples/python/cache.py --entry run --component Cache,Reader,run  # violated: assertion
absmc check examples/python/cache.py --entry run_locked --component Cache,Reader,run  # holds
"""

import threading


def fetch(key):
    """The backing store (the environment)."""
    return key.upper()


class Cache:
    def __init__(self):
        self.entries = {}
        self.loads = {}
        self.lock = threading.Lock()

    @property
    def size(self):
        return len(self.entries)

    def _load(self, key):
        self.loads[key] = self.loads.get(key, 0) + 1
        value = fetch(key)
        self.entries[key] = value
        return value

    def get(self, key):
        if key not in self.entries:
            return self._load(key)
        return self.entries[key]

    def get_locked(self, key):
        with self.lock:
            if key not in self.entries:
                return self._load(key)
            return self.entries[key]


class Reader(threading.Thread):
    def __init__(self, cache, keys, locked):
        super().__init__()
        self.cache = cache
        self.keys = keys
        self.locked = locked
        self.seen = []

    def run(self):
        for key in self.keys:
            if self.locked:
                self.seen.append(self.cache.get_locked(key))
            else:
                self.seen.append(self.cache.get(key))


def run(readers=2, locked=False):
    cache = Cache()
    workers = [Reader(cache, ["a"], locked) for _ in range(readers)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert cache.size == 1
    assert all(n == 1 for n in cache.loads.values()), cache.loads
    assert all(w.seen == ["A"] for w in workers)


def run_locked(readers=2):
    run(readers, locked=True)
