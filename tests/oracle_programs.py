"""A seeded generator of small threaded Python programs for the differential test of the
component checker against the CPython oracle (issue 27, item 3b).

Each program has a ``run()`` entry that starts two or three threads, joins them and asserts
on the shared data. Patterns (each in a correct and a buggy variant): shared counters
(unlocked two-statement update, locked, one-statement ``+=``), lock order, a one-slot buffer
with a ``Condition`` (``while``/``if`` around ``wait``, ``notify``/``notify_all``, a wait
without predicate), ``Semaphore`` occupancy, ``queue.Queue`` producers/consumers (a consumer
that takes one item too many), ``Event`` hand-over, ``RLock`` re-entry, check-then-act on a
list, helper functions, asserts in threads. Threads are created by explicit statements, in a
loop, in a list comprehension, by a helper function, or as a ``Thread`` subclass;
``Generated.flags`` names the constructs absmc's translation did not schedule when this was
written (``comprehension``, ``helper``, ``subclass``).
"""

from __future__ import annotations

import random
import textwrap
from dataclasses import dataclass

#: thread-creation styles whose threads absmc ran natively (issue 27 item 1)
FLAGGED = frozenset({"comprehension", "helper", "subclass"})


@dataclass(frozen=True)
class Generated:
    """A generated program: ``source``, its ``seed``, the ``pattern`` and the creation
    ``style`` it uses, and ``flags`` (constructs in :data:`FLAGGED`)."""

    seed: int
    pattern: str
    style: str
    source: str
    flags: frozenset[str]


def _counter(r: random.Random) -> tuple[str, str, str]:
    kind = r.choice(["unlocked", "locked", "augmented", "semaphore", "rlock"])
    n = r.choice([1, 1, 2])
    body = {
        "unlocked": "        tmp = counter\n        counter = tmp + 1\n",
        "locked": "        with lock:\n            tmp = counter\n            counter = tmp + 1\n",
        "augmented": "        counter += 1\n",
        "semaphore": "        sem.acquire()\n        tmp = counter\n        counter = tmp + 1\n"
        "        sem.release()\n",
        "rlock": "        with lock:\n            with lock:\n"
        "                counter = bump(counter)\n",
    }[kind]
    lock = "threading.RLock()" if kind == "rlock" else "threading.Lock()"
    glob = f"counter = 0\nlock = {lock}\nsem = threading.Semaphore(1)\n"
    worker = (
        f"def bump(x):\n    return x + 1\n\n\ndef worker(k):\n    global counter\n"
        f"    for _ in range({n}):\n{body}"
    )
    final = "    assert counter == {total}, counter\n".replace("{total}", f"{{NT}} * {n}")
    return glob, worker, final


def _lock_order(r: random.Random) -> tuple[str, str, str]:
    bad = r.random() < 0.5
    glob = "a = threading.Lock()\nb = threading.Lock()\ndone = []\n"
    second = "b, a" if bad else "a, b"
    worker = textwrap.dedent(
        f"""\
        def worker(k):
            first, second = (a, b) if k % 2 == 0 else ({second})
            with first:
                with second:
                    done.append(k)
        """
    )
    return glob, worker, "    assert len(done) == {NT}\n"


def _buffer(r: random.Random) -> tuple[str, str, str]:
    guard = r.choice(["while", "while", "if"])
    notify = r.choice(["notify_all", "notify"])
    glob = "cond = threading.Condition()\nslot = []\ngot = []\n"
    worker = textwrap.dedent(
        f"""\
        def producer(k):
            with cond:
                {guard} slot:
                    cond.wait()
                slot.append(k)
                cond.{notify}()


        def consumer(k):
            with cond:
                {guard} not slot:
                    cond.wait()
                got.append(slot.pop())
                cond.{notify}()


        def worker(k):
            if k % 2 == 0:
                producer(k)
            else:
                consumer(k)
        """
    )
    return glob, worker, "    assert len(got) == {NT} // 2\n"


def _lost_wakeup(r: random.Random) -> tuple[str, str, str]:
    fixed = r.random() < 0.5
    wait = (
        "        while not ready:\n            cond.wait()\n" if fixed else "        cond.wait()\n"
    )
    glob = "cond = threading.Condition()\nready = []\n"
    worker = (
        "def waiter():\n    with cond:\n"
        + wait
        + "\n\ndef signaller():\n    with cond:\n        ready.append(1)\n        cond.notify()\n"
        "\n\ndef worker(k):\n    if k == 0:\n        waiter()\n    else:\n        signaller()\n"
    )
    return glob, worker, "    assert ready\n"


def _semaphore(r: random.Random) -> tuple[str, str, str]:
    permits = r.choice([1, 2])
    glob = f"sem = threading.Semaphore({permits})\ninside = [0]\n"
    worker = textwrap.dedent(
        """\
        def worker(k):
            with sem:
                inside[0] += 1
                assert inside[0] <= 1, inside[0]
                inside[0] -= 1
        """
    )
    return glob, worker, "    assert inside[0] == 0\n"


def _queue(r: random.Random) -> tuple[str, str, str]:
    extra = r.random() < 0.3
    size = r.choice([0, 1])
    take = "2" if extra else "1"
    glob = f"q = queue.Queue({size})\ntotal = []\n"
    worker = textwrap.dedent(
        f"""\
        def worker(k):
            if k % 2 == 0:
                q.put(k + 1)
            else:
                for _ in range({take}):
                    total.append(q.get())
        """
    )
    return glob, worker, "    assert len(total) == {NT} // 2\n"


def _event(r: random.Random) -> tuple[str, str, str]:
    early = r.random() < 0.5
    setter = (
        "        ev.set()\n        data.append(1)\n"
        if early
        else "        data.append(1)\n        ev.set()\n"
    )
    glob = "ev = threading.Event()\ndata = []\n"
    worker = (
        "def worker(k):\n    if k == 0:\n        ev.wait()\n        assert data, 'no data'\n"
        "    else:\n" + setter
    )
    return glob, worker, "    assert ev.is_set()\n"


def _check_then_act(r: random.Random) -> tuple[str, str, str]:
    locked = r.random() < 0.5
    glob = "lock = threading.Lock()\nitems = [1]\ntaken = []\n"
    if locked:
        body = "    with lock:\n        if items:\n            taken.append(items.pop())\n"
    else:
        body = "    if items:\n        taken.append(items.pop())\n"
    return glob, "def worker(k):\n" + body, "    assert len(taken) == 1\n"


PATTERNS = {
    "counter": _counter,
    "lock-order": _lock_order,
    "buffer": _buffer,
    "lost-wakeup": _lost_wakeup,
    "semaphore": _semaphore,
    "queue": _queue,
    "event": _event,
    "check-then-act": _check_then_act,
}

#: patterns that need exactly two threads
_TWO = frozenset({"lost-wakeup", "event", "buffer", "queue"})


def _spawn(style: str, nt: int) -> str:
    if style == "explicit":
        make = "".join(
            f"    t{i} = threading.Thread(target=worker, args=({i},))\n" for i in range(nt)
        )
        start = "".join(f"    t{i}.start()\n" for i in range(nt))
        join = "".join(f"    t{i}.join()\n" for i in range(nt))
        return make + start + join
    if style == "loop":
        return (
            f"    ts = []\n    for i in range({nt}):\n"
            "        t = threading.Thread(target=worker, args=(i,))\n"
            "        ts.append(t)\n        t.start()\n    for t in ts:\n        t.join()\n"
        )
    if style == "comprehension":
        return (
            f"    ts = [threading.Thread(target=worker, args=(i,)) for i in range({nt})]\n"
            "    for t in ts:\n        t.start()\n    for t in ts:\n        t.join()\n"
        )
    if style == "helper":
        return f"    ts = spawn({nt})\n    for t in ts:\n        t.join()\n"
    assert style == "subclass"
    return (
        f"    ts = []\n    for i in range({nt}):\n        ts.append(Worker(i))\n"
        "    for t in ts:\n        t.start()\n    for t in ts:\n        t.join()\n"
    )


_HELPER = """

def spawn(n):
    out = []
    for i in range(n):
        t = threading.Thread(target=worker, args=(i,))
        t.start()
        out.append(t)
    return out
"""

_SUBCLASS = """

class Worker(threading.Thread):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def run(self):
        worker(self.k)
"""


def generate(seed: int, styles: tuple[str, ...] | None = None, max_threads: int = 3) -> Generated:
    """The program of ``seed`` (deterministic). ``styles`` restricts the thread-creation
    styles (default: all five); ``max_threads`` the worker threads (2 or 3)."""
    r = random.Random(seed)
    pattern = r.choice(sorted(PATTERNS))
    style = r.choice(styles or ("explicit", "loop", "comprehension", "helper", "subclass"))
    glob, worker, final = PATTERNS[pattern](r)
    nt = 2 if pattern in _TWO else r.choice([2, 2, 3])
    nt = min(nt, max_threads)
    extra = _HELPER if style == "helper" else _SUBCLASS if style == "subclass" else ""
    src = (
        f'"""generated: seed {seed}, {pattern}, {style}"""\n\nimport queue\nimport threading\n\n'
        + glob
        + "\n\n"
        + worker
        + extra
        + "\n\ndef run():\n"
        + _spawn(style, nt)
        + final.replace("{NT}", str(nt))
    )
    compile(src, f"<seed {seed}>", "exec")
    return Generated(seed, pattern, style, src, frozenset({style}) & FLAGGED)
