"""Random finite-ish GCL models as *text* (seeded ``random.Random``), for differential tests.

Different from :mod:`tests.strategies` (Hypothesis, IR built directly, every update bounded):
the models here go through the GCL parser and use what the abstraction methods find hard —
several processes with program counters, unbounded ``int`` and bounded ``lo..hi`` variables,
booleans, comparisons and arithmetic in guards *and* right-hand sides (comparisons assigned as
values, ``/`` and ``%`` by variables, conditional expressions, unary minus), ``invariant`` and
``unreachable`` properties, and deadlocks (commands that block). Unbounded variables are mostly
updated under a guard that bounds them, so most models have a small state space, but not all:
exact search with a state limit is the oracle, and a model it cannot exhaust only checks the
other methods' ``violated`` traces.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

INT_NAMES = ("a", "b", "c")
RANGE_NAMES = ("r", "s")
BOOL_NAMES = ("f", "g")


@dataclass
class GenModel:
    """A generated model: its GCL ``text``, the unbounded ``int`` variables (candidates for
    ``--abstract``) and the comparison ``atoms`` written in it (GCL text; candidates for
    four-valued predicates)."""

    text: str
    int_vars: list[str]
    atoms: list[str] = field(default_factory=list)


class _Gen:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.ints = list(INT_NAMES[: rng.randint(1, 3)])
        self.ranges = list(RANGE_NAMES[: rng.randint(0, 2)])
        self.bools = list(BOOL_NAMES[: rng.randint(0, 2)])
        self.atoms: list[str] = []

    def num_var(self) -> str:
        return self.rng.choice(self.ints + self.ranges)

    def int_expr(self, depth: int) -> str:
        r = self.rng
        if depth <= 0 or r.random() < 0.35:
            return self.num_var() if r.random() < 0.7 else str(r.randint(-2, 3))
        kind = r.randrange(9)
        a = self.int_expr(depth - 1)
        b = self.int_expr(depth - 1)
        if kind <= 1:
            return f"({a} + {b})"
        if kind == 2:
            return f"({a} - {b})"
        if kind == 3:
            return f"({a} * {r.randint(-2, 3)})" if r.random() < 0.6 else f"({a} * {b})"
        if kind == 4:
            return f"({a} / {b})"
        if kind == 5:
            return f"({a} % {b})"
        if kind == 6:
            return f"-({a})"
        if kind == 7:
            return f"({self.bool_expr(depth - 1)} ? {a} : {b})"
        return f"({a} / {r.choice([2, 3, -2])})"

    def comparison(self, depth: int) -> str:
        r = self.rng
        a = self.int_expr(depth)
        b = self.int_expr(depth - 1) if r.random() < 0.5 else str(r.randint(-1, 2))
        text = f"{a} {r.choice(['<', '<=', '==', '!=', '>', '>='])} {b}"
        if text not in self.atoms:
            self.atoms.append(text)
        return text

    def bool_expr(self, depth: int) -> str:
        r = self.rng
        if depth <= 0 or r.random() < 0.5:
            if self.bools and r.random() < 0.25:
                return r.choice(self.bools)
            return self.comparison(max(depth, 1))
        kind = r.randrange(4)
        if kind == 0:
            return f"!({self.bool_expr(depth - 1)})"
        if kind == 1:
            return f"({self.bool_expr(depth - 1)} && {self.bool_expr(depth - 1)})"
        if kind == 2:
            return f"({self.bool_expr(depth - 1)} || {self.bool_expr(depth - 1)})"
        return f"({self.bool_expr(depth - 1)} ? {self.bool_expr(0)} : {self.bool_expr(0)})"

    def update(self, name: str) -> str:
        r = self.rng
        if name in self.bools:
            return f"{name} := {self.bool_expr(1)}"
        if name in self.ranges:
            rhs = self.int_expr(1)
            if not any(c.isalpha() for c in rhs):  # a constant outside the range is an error
                rhs = str(r.randint(0, 1))
            return f"{name} := {rhs}"
        kind = r.randrange(4)
        if kind == 0:
            return f"{name} := {name} + {r.choice([1, 1, 2, -1])}"
        return f"{name} := {self.int_expr(2)}"

    def command(self, pc: str | None, pcs: int) -> str:
        r = self.rng
        parts: list[str] = []
        if pc is not None:
            parts.append(f"{pc} == {r.randrange(pcs)}")
        if r.random() < 0.8:
            parts.append(self.bool_expr(r.randint(0, 2)))
        targets = self.ints + self.ranges + self.bools
        chosen = r.sample(targets, k=min(len(targets), r.randint(1, 2)))
        updates = [self.update(t) for t in chosen]
        # unbounded variables grow only below a bound (most models stay finite)
        for t in chosen:
            if t in self.ints:
                parts.append(f"{t} < {r.randint(1, 3)}")
                parts.append(f"{t} > {r.randint(-3, -1)}")
        if pc is not None and r.random() < 0.8:
            updates.append(f"{pc} := {r.randrange(pcs)}")
        guard = " && ".join(parts) if parts else "true"
        return f"  {guard} -> {', '.join(updates)};"

    def if_else(self, pc: str | None, pcs: int) -> list[str]:
        """Two commands with complementary comparisons (an if/else), often over a quotient:
        ``x / y >= k`` and ``x / y < k`` (undefined together when ``y == 0``)."""
        r = self.rng
        lhs = f"{self.num_var()} {r.choice(['/', '%'])} {self.num_var()}"
        k = r.randint(-1, 2)
        at = f"{pc} == {r.randrange(pcs)} && " if pc is not None else ""
        out = []
        for cmp in r.choice([(">=", "<"), ("<=", ">"), ("==", "!=")]):
            atom = f"{lhs} {cmp} {k}"
            self.atoms.append(atom)
            target = r.choice(self.ranges + self.bools) if self.ranges or self.bools else None
            if target is not None and r.random() < 0.5:
                update = self.update(target)
            elif pc is not None:
                update = f"{pc} := {r.randrange(pcs)}"
            else:
                update = "skip"
            out.append(f"  {at}{atom} -> {update};")
        return out

    def model(self) -> GenModel:
        r = self.rng
        nproc = r.randint(1, 3)
        lines: list[str] = []
        for v in self.ints:
            init = r.choice([0, 0, 1, -1, 2])
            lines.append(f"var {v} : int = {init};")
        for v in self.ranges:
            lines.append(f"var {v} : {r.choice(['0..2', '-1..1', '0..3'])};")
        for v in self.bools:
            lines.append(f"var {v} : bool = {r.choice(['true', 'false'])};")
        procs: list[str] = []
        for k in range(nproc):
            pc = f"pc{k}" if r.random() < 0.7 else None
            pcs = r.randint(2, 3)
            if pc is not None:
                lines.append(f"var {pc} : 0..{pcs - 1};")
            body = [self.command(pc, pcs) for _ in range(r.randint(1, 3))]
            if r.random() < 0.4:
                body += self.if_else(pc, pcs)
            procs.append(f"process P{k} {{\n" + "\n".join(body) + "\n}")
        lines += procs
        for k in range(r.randint(1, 2)):
            kind = r.choice(["invariant", "unreachable"])
            lines.append(f"{kind} p{k}: {self.bool_expr(1)};")
        return GenModel("\n".join(lines) + "\n", list(self.ints), list(self.atoms))


def random_model(seed: int) -> GenModel:
    """The model of ``seed`` (deterministic: the same seed gives the same text)."""
    return _Gen(random.Random(seed)).model()
