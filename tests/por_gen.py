"""Random small Promela models as *text* (seeded ``random.Random``), for the differential test
of partial-order reduction (tests/test_por.py): two or three process types (some with several
instances) with local and global variables, a buffered or rendezvous channel, ``if``/``do``
with ``else``, ``atomic`` blocks, assertions over locals and globals, ``timeout``, ``run`` of a
helper process, and blocking guards (invalid end states). Values stay small (``% 4``), so the
state spaces are small enough for an exhaustive search without reduction as the oracle."""

from __future__ import annotations

import random

GLOBALS = ("g0", "g1")
LOCALS = ("l0", "l1")


class _Gen:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.chan = rng.random() < 0.7
        self.rendezvous = self.chan and rng.random() < 0.3
        self.helper = rng.random() < 0.3

    def var(self, local_bias: float = 0.7) -> str:
        r = self.rng
        return r.choice(LOCALS) if r.random() < local_bias else r.choice(GLOBALS)

    def expr(self) -> str:
        r = self.rng
        a = self.var()
        k = r.randint(0, 3)
        return r.choice([a, f"({a} + {k}) % 4", f"({a} + {self.var()}) % 4", str(k)])

    def cond(self) -> str:
        r = self.rng
        return f"{self.var()} {r.choice(['<', '<=', '==', '!=', '>'])} {r.randint(0, 3)}"

    def stmt(self, depth: int) -> str:
        r = self.rng
        k = r.randrange(14 if depth > 0 else 9)
        if k <= 2:
            return f"{self.var()} = {self.expr()}"
        if k == 3:
            return f"{self.var(0.3)} = {self.expr()}"
        if k == 4:
            return f"assert({self.cond()} || {self.cond()})"
        if k == 5:
            return f"{self.cond()} -> skip" if r.random() < 0.7 else "skip"
        if k == 6 and self.chan:
            return f"c!{self.var()}"
        if k == 7 and self.chan:
            return f"c?{r.choice(LOCALS)}"
        if k == 8:
            return "timeout -> skip" if r.random() < 0.2 else f"{r.choice(LOCALS)}++"
        if k == 9:
            return f"atomic {{ {self.seq(depth - 1, 2)} }}"
        if k == 10:
            return f"if :: {self.cond()} -> {self.seq(depth - 1, 2)} :: else -> {self.stmt(0)} fi"
        if k == 11:
            x = r.choice(LOCALS)
            return f"do :: {x} < {r.randint(1, 3)} -> {x}++; {self.stmt(0)} :: else -> break od"
        if k == 12 and self.helper:
            return "run H()"
        return f"{self.var()} = {self.expr()}"

    def seq(self, depth: int, n: int) -> str:
        return "; ".join(self.stmt(depth) for _ in range(self.rng.randint(1, n)))

    def proc(self, name: str, count: int) -> str:
        active = f"active [{count}] " if count > 1 else "active "
        body = self.seq(2, 5)
        return f"{active}proctype {name}() {{ byte l0, l1; {body} }}"

    def model(self) -> str:
        r = self.rng
        lines = ["byte g0, g1;"]
        if self.chan:
            lines.append(f"chan c = [{0 if self.rendezvous else r.randint(1, 2)}] of {{ byte }};")
        for i in range(r.randint(2, 3)):
            lines.append(self.proc(f"P{i}", r.choice([1, 1, 2])))
        if self.helper:
            self.helper = False  # H runs no process
            lines.append(f"proctype H() {{ byte l0, l1; {self.seq(1, 3)} }}")
        return "\n".join(lines) + "\n"


def random_promela(seed: int) -> str:
    """The Promela text of ``seed`` (deterministic)."""
    return _Gen(random.Random(seed)).model()
