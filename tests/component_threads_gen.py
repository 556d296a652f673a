"""Small generated threaded Python programs for the component checker's differential tests
(partial-order reduction against the full interleaving search): 2–3 threads created one by
one in ``main``, each a few operations on a shared object — unlocked and locked updates,
private lists, a condition with ``wait``/``notify_all``, two locks taken in either order,
assertions that may fail — so that deadlocks, failed assertions and uncaught exceptions all
occur among the programs."""

from __future__ import annotations

import random

HEADER = """import threading


class Shared:
    def __init__(self):
        self.x = 0
        self.y = 0
        self.items = []
        self.lock = threading.Lock()
        self.lock2 = threading.Lock()
        self.cond = threading.Condition()

"""


def _op(rng: random.Random, k: int) -> list[str]:
    """The lines of one operation of thread ``k`` (indented for a function body)."""
    c = rng.randint(0, 3)
    choices = [
        ["s.x += 1"],
        ["s.y = s.x + 1"],
        ["with s.lock:", "    s.x += 1"],
        ["with s.lock:", f"    s.items.append({k})"],
        [f"mine.append({k})", "mine.append(len(mine))"],
        ["if s.x > 1:", "    s.y += 1"],
        [f"assert s.x <= {c + 1}, s.x"],
        ["with s.cond:", "    while s.y == 0:", "        s.cond.wait()", "    s.x += 1"],
        ["with s.cond:", "    s.y += 1", "    s.cond.notify_all()"],
        ["with s.lock:", "    with s.lock2:", "        s.x += 1"],
        ["with s.lock2:", "    with s.lock:", "        s.y += 1"],
        ["if s.items:", "    s.items.pop()"],
    ]
    return rng.choice(choices)


def program(seed: int, threads: int | None = None, ops: int | None = None) -> str:
    """The source of generated program ``seed``: entry ``main``, component
    ``Shared,main,t0,t1,...``."""
    rng = random.Random(seed)
    n = threads if threads is not None else rng.randint(2, 3)
    lines = [HEADER]
    for k in range(n):
        lines.append(f"def t{k}(s):")
        lines.append("    mine = []")
        for _ in range(ops if ops is not None else rng.randint(1, 3)):
            lines.extend("    " + line for line in _op(rng, k))
        lines.append("")
        lines.append("")
    lines.append("def main():")
    lines.append("    s = Shared()")
    for k in range(n):
        lines.append(f"    h{k} = threading.Thread(target=t{k}, args=(s,))")
    for k in range(n):
        lines.append(f"    h{k}.start()")
    for k in range(n):
        lines.append(f"    h{k}.join()")
    lines.append(f"    assert s.x <= {rng.randint(1, 2 * n)}, s.x")
    lines.append("")
    return "\n".join(lines)


def component(seed: int, threads: int | None = None) -> list[str]:
    """The component names of :func:`program` ``seed``."""
    n = threads if threads is not None else random.Random(seed).randint(2, 3)
    return ["Shared", "main", *[f"t{k}" for k in range(n)]]
