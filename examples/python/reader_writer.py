"""Reader–writer (thesis Table 3.1): a writer fills a shared list under a lock, a reader
copies it and the *environment* sorts what the reader read (``sorted`` and the program's
``normalize`` run natively, one step each). ``run`` holds; ``run_unlocked`` lets the reader
see a half-written list (the assertion fails).

absmc check examples/python/reader_writer.py --entry run --component Store,reader,writer
"""

import threading


def normalize(values):
    """Environment: sorts and removes duplicates."""
    return sorted(set(values))


class Store:
    def __init__(self):
        self.data = []
        self.lock = threading.RLock()

    def write(self, values):
        with self.lock:
            for v in values:
                self.data.append(v)

    def read(self):
        with self.lock:
            return list(self.data)

    def write_unlocked(self, values):
        for v in values:
            self.data.append(v)

    def read_unlocked(self):
        return list(self.data)


def writer(store):
    store.write([3, 1, 2])


def reader(store, seen):
    seen.append(normalize(store.read()))


def writer_unlocked(store):
    store.write_unlocked([3, 1, 2])


def reader_unlocked(store, seen):
    seen.append(normalize(store.read_unlocked()))


def run():
    store = Store()
    seen = []
    w = threading.Thread(target=writer, args=(store,))
    r = threading.Thread(target=reader, args=(store, seen))
    w.start()
    r.start()
    w.join()
    r.join()
    assert seen[0] in ([], [1, 2, 3]), seen


def run_unlocked():
    store = Store()
    seen = []
    w = threading.Thread(target=writer_unlocked, args=(store,))
    r = threading.Thread(target=reader_unlocked, args=(store, seen))
    w.start()
    r.start()
    w.join()
    r.join()
    assert seen[0] in ([], [1, 2, 3]), seen
