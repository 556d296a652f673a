"""Random small Promela models as text (seeded ``random.Random``), for differential tests of
the Promela front end's reductions (SPIN's dead-variable reset: :mod:`tests.test_promela_deadvars`).

Each model has two or three active processes with local variables and parameters-like locals
that are read and written in every way SPIN's data-flow analysis distinguishes: conditions,
assignments (also ``v = 0``), sends and receives (also ``eval``), ``assert``, ``printf``,
``if``/``do`` with ``else`` and ``break``, ``atomic`` and ``d_step`` blocks, ``goto`` and
labels, and a global or two. Values stay below 4 (``% 4``), so state spaces are small; asserts
and blocking receives give violations and deadlocks.
"""

from __future__ import annotations

import random

LOCALS = ("x", "y", "z")
GLOBALS = ("g", "h")


class _Gen:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.labels = 0

    def var(self) -> str:
        r = self.rng
        return r.choice(LOCALS) if r.random() < 0.75 else r.choice(GLOBALS)

    def expr(self, depth: int = 1) -> str:
        r = self.rng
        if depth <= 0 or r.random() < 0.4:
            return self.var() if r.random() < 0.75 else str(r.randint(0, 3))
        op = r.choice(["+", "-", "*"])
        return f"(({self.expr(depth - 1)} {op} {self.expr(depth - 1)}) % 4)"

    def cond(self) -> str:
        r = self.rng
        op = r.choice(["==", "!=", "<", ">="])
        return f"{self.expr()} {op} {self.expr(0)}"

    def stmt(self, depth: int) -> str:
        r = self.rng
        k = r.randrange(14 if depth > 0 else 8)
        if k <= 2:
            v = self.var()
            rhs = "0" if r.random() < 0.15 else self.expr()
            return f"{v} = {rhs}"
        if k == 3:
            return f"({self.cond()})"
        if k == 4:
            return f"assert({self.cond()})" if r.random() < 0.5 else f"assert({self.var()} < 4)"
        if k == 5:
            return f'printf("%d\\n", {self.var()})'
        if k == 6:
            return f"c!{self.expr()}" if r.random() < 0.5 else f"nfull(c) -> c!{self.var()}"
        if k == 7:
            if r.random() < 0.3:
                return f"c?eval({self.var()})"
            return f"nempty(c) -> c?{r.choice(LOCALS)}"
        if k in (8, 9):  # options start with a simple statement (one `else` per state)
            opts = [f"{self.stmt(0)}; {self.seq(depth - 1)}" for _ in range(r.randint(1, 3))]
            if r.random() < 0.4:
                opts.append("else -> " + self.seq(depth - 1))
            body = " ".join(f":: {o}" for o in opts)
            return f"if {body} fi"
        if k == 10:
            opts = [f"{self.cond()} -> {self.seq(depth - 1)}" for _ in range(r.randint(1, 2))]
            opts.append(f"{r.choice(['else', self.cond()])} -> break")
            body = " ".join(f":: {o}" for o in opts)
            return f"do {body} od"
        if k == 11:
            return f"atomic {{ {self.seq(depth - 1)} }}"
        if k == 12:
            # a guard first, then assignments (pan stops at a d_step that blocks inside)
            parts = [f"({self.cond()})"] if r.random() < 0.4 else []
            parts += [f"{self.var()} = {self.expr()}" for _ in range(r.randint(1, 3))]
            return f"d_step {{ {'; '.join(parts)} }}"
        self.labels += 1
        lab = f"L{self.labels}"
        return f"{lab}: {self.var()} = {self.expr()}; if :: {self.cond()} -> goto {lab} :: skip fi"

    def seq(self, depth: int) -> str:
        return "; ".join(self.stmt(depth) for _ in range(self.rng.randint(1, 3)))

    def model(self) -> str:
        r = self.rng
        lines = ["byte g, h;", "chan c = [2] of { byte };"]
        for p in range(r.randint(2, 3)):
            decls = " ".join(f"byte {v} = {r.randint(0, 2)};" for v in LOCALS)
            body = "; ".join(self.seq(2) for _ in range(r.randint(1, 3)))
            lines.append(f"active proctype P{p}() {{ {decls} {body} }}")
        return "\n".join(lines) + "\n"


def random_promela(seed: int) -> str:
    """The Promela text of ``seed`` (deterministic: the same seed gives the same text)."""
    return _Gen(random.Random(seed)).model()
