"""Weak fairness for acceptance cycles (SPIN's ``-f``), as one more product.

SPIN's weak fairness: a cycle counts only when every process, somewhere on the cycle, either
executes a step or is blocked (a process that stays enabled forever without moving makes the
cycle unfair). That is a generalized Büchi condition — one set per process, plus the property
automaton's accepting states — and SPIN checks it with its k-copy (Choueka flag) construction
(Holzmann, *The SPIN Model Checker*, 2004, ch. 8). :class:`FairSemantics` is that construction
over a product (:class:`~absmc.kernel.ltl.product.ProductSemantics`): a counter ``c`` in
``0 .. k + 1`` (``k`` processes) is appended to the product state; copy 0 waits for an
accepting automaton state, copy ``i`` (1 .. k) for process ``i - 1`` to execute or be blocked,
copy ``k + 1`` is the accepting copy and returns to copy 0. An accepting cycle of this product
is exactly a weakly fair accepting cycle of the original one; the nested DFS searches it
unchanged.

Labels: ``product label * (k + 2) + c'`` (:func:`fair_decode`). The product's failures and
state properties (its ``safety``) pass through unchanged but for the labels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from absmc.ir.steps import Expansion, Failure, Failures, State
from absmc.kernel.ltl.product import STUTTER, ProductSemantics, decode
from absmc.kernel.model.semantics import ModelWrapper


def fair_decode(label: int, processes: int) -> tuple[int, int]:
    """``(product label, counter after the step)`` of a fair-product label."""
    return label // (processes + 2), label % (processes + 2)


class FairSemantics(ModelWrapper):
    """``product`` with SPIN's weak-fairness counter (see the module docstring) over
    ``processes`` processes, ``process_of[g]`` the process of the base's transition group
    ``g`` (for a System: :func:`absmc.kernel.ltl.irproduct.fair_product`); properties and state
    checks are the product's (:class:`~absmc.kernel.model.semantics.ModelWrapper`)."""

    def __init__(
        self, product: ProductSemantics, processes: int, process_of: Sequence[int]
    ) -> None:
        super().__init__(product)
        self.product = product
        self.k = processes
        self.process_of = list(process_of)

    @property
    def initial(self) -> State:
        return (*self.product.initial, 0)

    def initial_states(self) -> list[State]:
        return [self.initial]

    def movers(self, label: int) -> set[int]:
        """The processes that execute in the system step of product label ``label``."""
        ci, _ = decode(label, self.product.size)
        if ci == STUTTER:
            return set()
        return {self.process_of[c] for c in self.product.base.commands_of(ci)}

    def enabled(self, s: State) -> set[int]:
        """The processes with a step in system state ``s``."""
        succ, _ = self.product.base.successors(s)
        out: set[int] = set()
        for ci, _t in succ:
            out |= {self.process_of[c] for c in self.product.base.commands_of(ci)}
        return out

    def successors(self, fs: State) -> Expansion:
        ps, c = fs[:-1], fs[-1]
        succ, fails = self.product.successors(ps)
        k, width = self.k, self.k + 2
        if fails:
            fails = tuple(Failure(f[0] * width, f[1], f[2]) for f in fails)
        if not succ:
            return [], fails
        out = []
        if c == 0:
            nc = 1 if self.product.is_accepting(ps) else 0
            out = [(label * width + nc, (*t, nc)) for label, t in succ]
        elif c == k + 1:
            out = [(label * width, (*t, 0)) for label, t in succ]
        else:
            proc = c - 1
            blocked = proc not in self.enabled(ps[:-1])
            for label, t in succ:
                nc = c + 1 if blocked or proc in self.movers(label) else c
                out.append((label * width + nc, (*t, nc)))
        return out, fails

    def step(self, label: int, fs: State) -> tuple[State | None, Failures]:
        raise NotImplementedError("fair product steps are replayed on the base semantics")

    def ok(self, fs: State) -> bool:
        return self.product.ok(fs[:-1])

    def violated(self, fs: State) -> list[int]:
        return self.product.violated(fs[:-1])

    def valid_end(self, fs: State) -> bool:
        return True

    def commands_of(self, label: int) -> tuple[int, ...]:
        return self.product.commands_of(label // (self.k + 2))

    def describe_state(self, fs: State) -> Mapping[str, object]:
        """The product's description, and the fairness counter as ``@fair``."""
        return {**self.product.describe_state(fs[:-1]), "@fair": fs[-1]}

    def describe_step(self, label: int) -> str:
        return self.product.describe_step(label // (self.k + 2))

    @property
    def dependencies(self) -> None:
        """Unknown (as the product's)."""
        return None

    def is_accepting(self, fs: State) -> bool:
        """The accepting copy ``k + 1``."""
        return fs[-1] == self.k + 1
