"""The synchronous product of a System's semantics with a Büchi automaton (an LTL property's
violation automaton or a ``never`` claim), as a :class:`~absmc.kernel.semantics.Semantics`, so
that the one search of :mod:`absmc.kernel.search` explores it.

* A product state is the system state with the automaton state appended: ``s + (q,)``.
* From ``(s, q)`` the automaton moves first, reading ``s`` (an edge ``q -> q'`` whose guard holds
  in ``s``), then the system takes one step ``s -> t``: the successor is ``(t, q')`` (SPIN's
  synchronous product with a never claim).
* Stuttering (SPIN's semantics with a never claim): a system state without steps repeats
  forever: ``(s, q) -> (s, q')`` — valid end state or not (SPIN 6 disables the invalid-end-state
  check when a claim is present and stutters every terminal state; absmc still reports an
  invalid end state as a deadlock, in the safety search). Without ``stutter`` (non-progress
  cycles, SPIN's ``-l``), a terminal state has no product successor.
* Labels: ``(system label + 1) * |Q| + q'`` (:func:`encode`, :func:`decode`); the system label
  ``STUTTER`` (-1) is a stutter step.
* Failures of the system (model errors, assertions) are not reported here: absmc checks the
  safety properties in their own search (docs/ltl.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from absmc.codegen.python import compile_expr_fn
from absmc.ir.ltl import Automaton
from absmc.ir.steps import NO_FAILURES, Expansion, Failures, State
from absmc.ir.system import Property, System
from absmc.kernel.semantics import Semantics

#: the system label of a stutter step
STUTTER: Final = -1


def encode(label: int, target: int, size: int) -> int:
    """The product label of system label ``label`` (or :data:`STUTTER`) with automaton edge
    target ``target`` (``size`` automaton states)."""
    return (label + 1) * size + target


def decode(plabel: int, size: int) -> tuple[int, int]:
    """``(system label or STUTTER, automaton target)`` of a product label."""
    return plabel // size - 1, plabel % size


def guard_fn(system: System, guard: Any) -> Callable[[State], bool]:
    """An edge guard as a predicate on system states (a failing evaluation, such as a
    division by zero, makes the guard false)."""
    fn = compile_expr_fn(system, guard)

    def holds(s: State) -> bool:
        try:
            return bool(fn(s))
        except (ZeroDivisionError, IndexError, ValueError, OverflowError):
            return False

    return holds


class ProductSemantics:
    """``base`` × ``automaton`` (see the module docstring). Implements the search's part of
    :class:`~absmc.kernel.semantics.Semantics`; ``step`` is not offered (replay goes through
    :func:`absmc.kernel.trace.replay_lasso` on the base semantics)."""

    def __init__(self, base: Semantics, automaton: Automaton, stutter: bool = True) -> None:
        self.base = base
        self.stutter = stutter
        self.automaton = automaton
        self.size = automaton.size
        system = base.system
        cache: dict[Any, Callable[[State], bool]] = {}
        self.edges: list[list[tuple[int, Callable[[State], bool]]]] = []
        for es in automaton.edges:
            row = []
            for e in es:
                fn = cache.get(e.guard)
                if fn is None:
                    fn = cache[e.guard] = guard_fn(system, e.guard)
                row.append((e.target, fn))
            self.edges.append(row)
        self.accepting = automaton.accepting
        self.final = automaton.final

    @property
    def system(self) -> System:
        return self.base.system

    @property
    def properties(self) -> tuple[Property, ...]:
        return ()

    @property
    def state_checks(self) -> bool:
        return False

    @property
    def initial(self) -> State:
        return (*self.base.initial, self.automaton.initial)

    def initial_states(self) -> list[State]:
        return [self.initial]

    def moves(self, ps: State) -> list[int]:
        """The automaton states reachable by one claim move from product state ``ps``."""
        s = ps[:-1]
        return [t for t, g in self.edges[ps[-1]] if g(s)]

    def successors(self, ps: State) -> Expansion:
        """The product steps of ``ps`` (no failures: see the module docstring)."""
        s = ps[:-1]
        size = self.size
        targets = [t for t, g in self.edges[ps[-1]] if g(s)]
        if not targets:
            return [], NO_FAILURES
        succ, _ = self.base.successors(s)
        if not succ:
            if not self.stutter:
                return [], NO_FAILURES
            return [((STUTTER + 1) * size + q, (*s, q)) for q in targets], NO_FAILURES
        return [((ci + 1) * size + q, (*t, q)) for q in targets for ci, t in succ], NO_FAILURES

    def step(self, label: int, ps: State) -> tuple[State | None, Failures]:
        raise NotImplementedError("product steps are replayed on the base semantics")

    def ok(self, ps: State) -> bool:
        return True

    def violated(self, ps: State) -> list[int]:
        return []

    def valid_end(self, ps: State) -> bool:
        return True

    def commands_of(self, label: int) -> tuple[int, ...]:
        ci, _ = decode(label, self.size)
        return () if ci == STUTTER else self.base.commands_of(ci)

    def is_accepting(self, ps: State) -> bool:
        """The automaton part of ``ps`` is accepting."""
        return ps[-1] in self.accepting
