"""Concrete witnesses of existential CTL formulas (counterexamples of CTL properties).

A CTL property fails when an initial state satisfies the negation of its formula. In
existential normal form (:func:`absmc.ir.ctl.to_enf`) that negation is built from atoms,
``!``, ``&&``, ``||``, ``EX``, ``E[f U g]`` and ``EG``; a counterexample is tree-like (Clarke,
Jha, Lu, Veith, LICS 2002). :func:`witness_path` follows *one* path of that tree on the
concrete semantics — the path of the first temporal operator met at each state — the way
GenAbsWitness walks an abstract witness (paper 002 §4.1, Fig. 3-11):

* ``EX f``: a successor where ``f`` holds;
* ``E[f U g]``: a breadth-first search through states where ``f`` holds to one where ``g``
  holds (the shortest way);
* ``EG f``: a run through states where ``EG f`` holds until a state repeats (a lasso) or a
  state without successor is reached (it stays there: the deadlock convention of
  :mod:`absmc.ir.ctl`).

Which states satisfy a subformula is asked from ``holds(formula, state)`` — exact labels (the
explicit method) or the symbolic method's solution sets. Atoms are always evaluated on the
concrete state. Every search is bounded (``budget`` states); when it runs out or no concrete
state fits, :class:`NoWitness` says where. Paths are replayed by
:func:`absmc.kernel.replay.trace.replay_witness`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from absmc.ir.ctl import And, Atom, Formula, Not, Or, Temporal, Until
from absmc.ir.evaluate import EvalError, env_of, evaluate
from absmc.ir.steps import State
from absmc.kernel.model.irsemantics import IRSemantics

__all__ = ["NoWitness", "Witness", "atom_holds", "witness_path"]

Holds = Callable[[Formula, State], bool]


class NoWitness(Exception):
    """No concrete witness was found: ``reason`` says for which operator and why (a search
    budget ran out, or no concrete successor lies in the solution set: an approximation or an
    abstraction added states that have no concrete counterpart)."""

    def __init__(self, reason: str, depth: int = 0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.depth = depth


@dataclass(frozen=True)
class Witness:
    """A concrete run from ``start``: step ``labels``; ``loop`` is the index of the state the
    last state equals (a lasso), ``dead`` says the run ends in a state without successor;
    neither: a finite prefix suffices (an ``EF``/``EX`` witness)."""

    start: State
    labels: tuple[int, ...]
    loop: int | None = None
    dead: bool = False


def atom_holds(sem: IRSemantics, expr: object, state: State) -> bool:
    """An atom's value on a concrete state (an evaluation error counts as false)."""
    from absmc.ir.expr import Expr

    assert isinstance(expr, Expr)
    try:
        return bool(evaluate(expr, env_of(sem.system, state)))
    except (EvalError, ZeroDivisionError):
        return False


def witness_path(
    sem: IRSemantics, start: State, formula: Formula, holds: Holds, budget: int = 100_000
) -> Witness:
    """A concrete run from ``start`` along which the ENF ``formula`` is witnessed (see the
    module doc). ``holds`` answers for temporal subformulas; atoms are evaluated concretely.
    Raises :class:`NoWitness` when ``start`` does not satisfy ``formula`` or a search fails."""
    w = _Walker(sem, holds, budget)
    labels, _states, loop, dead = w.walk(start, formula)
    return Witness(start, tuple(labels), loop, dead)


class _Walker:
    def __init__(self, sem: IRSemantics, holds: Holds, budget: int) -> None:
        self.sem = sem
        self.holds = holds
        self.budget = budget

    def sat(self, f: Formula, s: State) -> bool:
        if isinstance(f, Atom):
            return atom_holds(self.sem, f.expr, s)
        if isinstance(f, Not) and isinstance(f.arg, Atom):
            return not atom_holds(self.sem, f.arg.expr, s)
        if isinstance(f, And):
            return self.sat(f.left, s) and self.sat(f.right, s)
        if isinstance(f, Or):
            return self.sat(f.left, s) or self.sat(f.right, s)
        return self.holds(f, s)

    def succ(self, s: State) -> list[tuple[int, State]]:
        steps, _ = self.sem.successors(s)
        return list(steps)

    def walk(self, s: State, f: Formula) -> tuple[list[int], list[State], int | None, bool]:
        """``(labels, states, loop, dead)`` of a witness of ``f`` from ``s``."""
        if not self.sat(f, s):
            raise NoWitness("the state does not satisfy the formula")
        if isinstance(f, (Atom, Not)):
            # atoms, and negated temporal formulas (universal: the state itself suffices)
            return [], [s], None, False
        if isinstance(f, And):
            first = f.left if _temporal(f.left) else f.right
            return self.walk(s, first)
        if isinstance(f, Or):
            pick = f.left if self.sat(f.left, s) else f.right
            return self.walk(s, pick)
        if isinstance(f, Temporal) and f.op == "EX":
            steps = self.succ(s)
            if not steps:
                steps = [(-1, s)]  # a dead state is its own successor
            for lab, t in steps:
                if self.sat(f.arg, t):
                    rest = self.walk(t, f.arg)
                    return self._join([lab] if lab >= 0 else [], [s], rest, dead=lab < 0)
            raise NoWitness("EX: no concrete successor satisfies the operand", 1)
        if isinstance(f, Until):
            return self.until(s, f)
        if isinstance(f, Temporal) and f.op == "EG":
            return self.globally(s, f)
        raise NoWitness(f"not an existential normal form: {type(f).__name__}")

    def _join(
        self,
        labels: list[int],
        states: list[State],
        rest: tuple[list[int], list[State], int | None, bool],
        dead: bool = False,
    ) -> tuple[list[int], list[State], int | None, bool]:
        rl, rs, loop, rdead = rest
        if dead:
            # the dead state stutters: the rest of the witness starts at the same state
            return rl, rs, loop, True if not rl else rdead
        # ``states``: the states the ``labels`` leave (one per label); ``rest`` starts in the
        # state the last label reaches, so its state k is state k + len(labels) of the run
        off = len(labels)
        return labels + rl, states + rs, None if loop is None else loop + off, rdead

    def until(self, s: State, f: Until) -> tuple[list[int], list[State], int | None, bool]:
        parent: dict[State, tuple[State, int] | None] = {s: None}
        queue = deque([s])
        while queue:
            u = queue.popleft()
            if self.sat(f.right, u):
                labels: list[int] = []
                states = [u]
                node = u
                while parent[node] is not None:
                    prev, lab = parent[node]  # type: ignore[misc]
                    labels.append(lab)
                    states.append(prev)
                    node = prev
                labels.reverse()
                states.reverse()
                return self._join(labels, states[:-1], self.walk(u, f.right))
            if not self.sat(f.left, u):
                continue
            for lab, t in self.succ(u):
                if t not in parent:
                    if len(parent) >= self.budget:
                        raise NoWitness(f"E[U]: no target within {self.budget} states", 1)
                    parent[t] = (u, lab)
                    queue.append(t)
        raise NoWitness("E[U]: no concrete path reaches the target", 1)

    def globally(self, s: State, f: Temporal) -> tuple[list[int], list[State], int | None, bool]:
        states = [s]
        labels: list[int] = []
        where = {s: 0}
        cur = s
        while len(states) <= self.budget:
            steps = self.succ(cur)
            if not steps:
                return labels, states, None, True
            # prefer a successor already on the run (closes the lasso), else the first in EG
            inside = [(lab, t) for lab, t in steps if self.sat(f, t)]
            if not inside:
                raise NoWitness("EG: no concrete successor stays in the solution set", len(states))
            back = next(((lab, t) for lab, t in inside if t in where), None)
            lab, t = back if back is not None else inside[0]
            labels.append(lab)
            if t in where:
                states.append(t)
                return labels, states, where[t], False
            where[t] = len(states)
            states.append(t)
            cur = t
        raise NoWitness(f"EG: the run did not close a loop within {self.budget} steps", self.budget)


def _temporal(f: Formula) -> bool:
    """Whether a temporal operator occurs in ``f``."""
    if isinstance(f, Atom):
        return False
    if isinstance(f, Not):
        return _temporal(f.arg)
    if isinstance(f, (And, Or)):
        return _temporal(f.left) or _temporal(f.right)
    return True
