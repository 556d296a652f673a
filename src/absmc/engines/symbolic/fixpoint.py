"""Approximate symbolic fixpoints on Presburger sets (paper 002 §2; Bultan, Gerber, Pugh CAV'97).

* :meth:`Fixpoints.reachable` — forward reachability ``μZ. Init ∪ post(Z)``, widened per
  control location after ``widen_delay`` exact iterations (an over-approximation ``Reach⁺``
  when widening was applied, exact otherwise).
* :meth:`Fixpoints.solve` — the states satisfying an ENF CTL formula (``EX``, ``E[U]``,
  ``EG``, ``!``, ``&&``, ``||``, atoms) as an **over**- or **under**-approximation, chosen by
  polarity: ``!f`` over = complement of ``f`` under and vice versa; least fixpoints (``E[U]``)
  over-approximated by widening after ``widen_delay`` iterations, under-approximated by
  stopping after ``eg_bound`` iterations; greatest fixpoints (``EG``) over-approximated by
  stopping after ``eg_bound`` iterations (an iterate of a decreasing chain contains the
  fixpoint), under-approximated by the empty set when they do not converge within the bound
  (the trivial dual widening). Every set is restricted to ``Reach⁺`` unless ``restrict`` is
  off (paper 002 Theorem 3.1: restriction to an over-approximation of the reachable states
  preserves verified ACTL properties).

Results are memoized per (subformula, polarity) with a flag saying whether the set is exact
(no approximation applied in it or below it). Statistics: iterations per operator, widenings
applied, disjuncts of the final sets.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, Self

import islpy as isl

from absmc.engines.symbolic.abstract import PartialAbstraction
from absmc.engines.symbolic.budget import Deadline, IslBudget
from absmc.engines.symbolic.composite import CSet, Split
from absmc.engines.symbolic.composite_bdd import BddSplit, BSet
from absmc.engines.symbolic.encode import Encoding
from absmc.engines.symbolic.widen import widen_location
from absmc.ir.ctl import And, Atom, Formula, Not, Or, Temporal, Until
from absmc.ir.expr import Expr
from absmc.ir.steps import State

__all__ = ["Deadline", "Fixpoints", "Solution"]


class AnySet(Protocol):
    """A composite set of either representation (``--composite split``: :class:`CSet`,
    ``bdd``: :class:`BSet`): the operations the fixpoints use."""

    def union(self, other: Self) -> Self: ...
    def extend(self, other: Self) -> Self | None: ...
    def intersect(self, other: Self) -> Self: ...
    def subtract(self, other: Self) -> Self: ...
    def coalesce(self) -> Self: ...
    def is_empty(self) -> bool: ...
    def is_subset(self, other: Self) -> bool: ...
    def apply(self, rel: Any) -> Self: ...
    def n_basic_set(self) -> int: ...
    def flat(self) -> isl.Set: ...


class Model(Protocol):
    """An encoding with composite sets (:class:`Split` or :class:`BddSplit`): what the
    fixpoints, the verdicts and the witness walk use. The relations are the
    representation's own (``apply``'s argument)."""

    loose_bits: bool

    @property
    def exact(self) -> bool: ...
    @property
    def abstraction(self) -> PartialAbstraction | None: ...
    @property
    def enc(self) -> Encoding: ...
    @property
    def domain(self) -> AnySet: ...
    @property
    def initial(self) -> AnySet: ...
    @property
    def transition(self) -> Any: ...
    @property
    def inverse(self) -> Any: ...
    @property
    def total(self) -> Any: ...
    def atom(self, e: Expr, over: bool, within: Any) -> AnySet: ...
    def concretize(self, s: Any) -> isl.Set: ...
    def contains(self, s: Any, state: State) -> bool: ...


@dataclass(frozen=True)
class Solution:
    """A solution set (composite, :mod:`~absmc.engines.symbolic.composite`) and whether it is
    exact (on the states within ``Reach⁺``)."""

    states: AnySet
    exact: bool


@dataclass
class FixStats:
    """Fixpoint statistics (``--json``'s ``fixpoint``)."""

    iterations: dict[str, int] = field(default_factory=dict)
    widenings: int = 0
    truncations: int = 0
    reach_iterations: int = 0
    reach_exact: bool = True
    time_s: float = 0.0

    def count(self, op: str, n: int) -> None:
        self.iterations[op] = self.iterations.get(op, 0) + n


class Fixpoints:
    """Fixpoint computations over one encoding (see the module doc)."""

    def __init__(
        self,
        enc: Encoding | PartialAbstraction | Split | BddSplit,
        widen_delay: int = 2,
        eg_bound: int = 20,
        restrict: bool = True,
        max_iterations: int = 500,
        deadline: float | None = None,
        heartbeat: Callable[[int], None] | None = None,
    ) -> None:
        self.enc: Model = enc if isinstance(enc, (Split, BddSplit)) else Split(enc)
        #: called between isl operations with the reachability iterations so far
        #: (``--progress``)
        self.heartbeat = heartbeat
        self.widen_delay = widen_delay
        self.eg_bound = eg_bound
        self.restrict = restrict
        self.max_iterations = max_iterations
        self.deadline = deadline
        #: widenings per fixpoint done disjunct by disjunct before the convex (H79) form
        self.disjunctive_rounds = 8
        self.stats = FixStats()
        self._memo: dict[tuple[Formula, bool], Solution] = {}
        self._reach: Solution | None = None
        self._size: int | str | None = None
        self.budget = IslBudget(deadline)

    def widen(
        self, old: AnySet, new: AnySet, iteration: int, within: AnySet | None = None
    ) -> AnySet:
        """``old ∇ new`` per control location (each part of ``new`` that grew, against the
        same location's part of ``old``; see
        :func:`~absmc.engines.symbolic.widen.widen_location`): disjunct by disjunct in the
        first ``disjunctive_rounds`` widenings, then convex. A widened part is intersected
        with ``within``'s part (the others lie inside it already), or with the domain's when
        the predicate bits are dimensions of the parts (:attr:`Split.loose_bits`). On
        :class:`BSet` sets the same, once per pair of polyhedra that meet
        (:meth:`BSet.widen_with`)."""
        disjunctive = iteration <= self.widen_delay + self.disjunctive_rounds
        self.stats.widenings += 1
        if isinstance(new, BSet):
            assert isinstance(old, BSet) and (within is None or isinstance(within, BSet))

            def pair(q: isl.Set, p: isl.Set) -> isl.Set:
                self.tick()
                return widen_location(q, p, disjunctive, self.tick)

            return new.widen_with(old, pair, within)
        assert isinstance(old, CSet) and isinstance(new, CSet)
        o = old.parts
        if within is None and self.enc.loose_bits:
            within = self.enc.domain  # the bits of a widened part stay 0/1
        assert within is None or isinstance(within, CSet)
        bounds = None if within is None else within.parts

        def one(k: tuple[int, ...], p: isl.Set) -> isl.Set:
            q = o.get(k)
            if q is None or q is p or p.is_subset(q):
                return p
            self.tick()
            w = widen_location(q, p, disjunctive, self.tick)
            bound = None if bounds is None else bounds.get(k)
            return w if bound is None else w.intersect(bound).coalesce()

        return new.map_parts(one)

    def tick(self) -> None:
        """Between isl operations: raise :class:`Deadline` past the deadline, else give isl the
        operation quota of the remaining time (:mod:`absmc.engines.symbolic.budget`)."""
        self.budget.tick()
        if self.heartbeat is not None:
            self.heartbeat(self.stats.reach_iterations)

    # -- images ----------------------------------------------------------------------------
    def post(self, s: AnySet) -> AnySet:
        """Successors (exact)."""
        return s.apply(self.enc.transition)

    def pre(self, s: AnySet) -> AnySet:
        """Predecessors under the totalized relation (exact)."""
        return s.apply(self.enc.inverse)

    # -- reachability ----------------------------------------------------------------------
    def reachable(self) -> Solution:
        """``Reach⁺``: the (over-approximated) reachable states, computed once."""
        if self._reach is not None:
            return self._reach
        r = self.enc.initial
        front = r  # the states added by the last iteration (see _frontier)
        exact = True
        i = 0
        while True:
            self.tick()
            i += 1
            grown = r.extend(self.post(front))
            if grown is None:  # the image lies inside r
                break
            nxt = grown
            if i > self.widen_delay:
                nxt = self.widen(r, nxt, i)
                exact = False
            if i >= self.max_iterations:
                # give up on precision: the whole state space is an over-approximation
                r, exact = self.enc.domain, False
                break
            front = _frontier(nxt, r)
            r = nxt
            self.stats.reach_iterations, self.stats.reach_exact = i, exact  # partial figures
        self.stats.reach_iterations = i
        self.stats.reach_exact = exact
        self._reach = Solution(r, exact)
        return self._reach

    def reach_size(self, max_operations: int = 2_000_000) -> int | str | None:
        """The number of (abstract) states in the computed ``Reach⁺``: an int when it is
        bounded and isl counts it within ``max_operations``, ``"unbounded"``, ``"not counted"``
        (too costly), or ``None`` before reachability ran."""
        if self._reach is None:
            return None
        if self._size is None:
            self._size = self._count(self._reach.states, max_operations)
        return self._size

    @staticmethod
    def _count(r: AnySet, max_operations: int) -> int | str:
        # the parts lie at distinct locations: the count is their sum
        ctx = isl.DEFAULT_CONTEXT
        try:
            ctx.reset_operations()
            ctx.set_max_operations(max_operations)
            if isinstance(r, BSet):
                return r.count(max_operations)
            assert isinstance(r, CSet)
            if not all(p.is_bounded() for p in r.parts.values()):
                return "unbounded"
            return sum(int(p.count_val().to_python()) for p in r.parts.values())
        except isl.Error:
            return "not counted"
        finally:
            ctx.set_max_operations(0)

    def restriction(self) -> AnySet:
        return self.reachable().states if self.restrict else self.enc.domain

    # -- CTL -------------------------------------------------------------------------------
    def solve(self, f: Formula, over: bool = True) -> Solution:
        """The states satisfying ENF ``f``: an over-approximation when ``over``, else an
        under-approximation (see the module doc)."""
        key = (f, over)
        got = self._memo.get(key)
        if got is not None:
            return got
        self.tick()
        r = self.restriction()
        if isinstance(f, Atom):
            sol = Solution(self.enc.atom(f.expr, over, r).coalesce(), self.enc.exact)
        elif isinstance(f, Not):
            inner = self.solve(f.arg, not over)
            sol = Solution(r.subtract(inner.states).coalesce(), inner.exact)
        elif isinstance(f, (And, Or)):
            a, b = self.solve(f.left, over), self.solve(f.right, over)
            s = a.states.intersect(b.states) if isinstance(f, And) else a.states.union(b.states)
            sol = Solution(s.coalesce(), a.exact and b.exact)
        elif isinstance(f, Temporal) and f.op == "EX":
            inner = self.solve(f.arg, over)
            sol = Solution(self.pre(inner.states).intersect(r).coalesce(), inner.exact)
        elif isinstance(f, Until) and f.path == "E":
            sol = self._eu(f, over, r)
        elif isinstance(f, Temporal) and f.op == "EG":
            sol = self._eg(f, over, r)
        else:
            raise ValueError(f"not an ENF formula: {f!r}")
        self._memo[key] = sol
        return sol

    def _eu(self, f: Until, over: bool, r: AnySet) -> Solution:
        a, b = self.solve(f.left, over), self.solve(f.right, over)
        z = b.states
        front = z
        exact = a.exact and b.exact
        i = 0
        while True:
            self.tick()
            i += 1
            grown = z.extend(a.states.intersect(self.pre(front)).intersect(r))
            if grown is None:
                break
            nxt = grown
            if over and i > self.widen_delay:
                nxt = self.widen(z, nxt, i, within=r)
                exact = False
            elif not over and i >= self.eg_bound:
                z, exact = nxt, False  # stopped early: an under-approximation
                self.stats.truncations += 1
                break
            if i >= self.max_iterations:
                z, exact = (r if over else z), False
                break
            front = _frontier(nxt, z)
            z = nxt
        self.stats.count("EU", i)
        return Solution(z, exact)

    def _eg(self, f: Temporal, over: bool, r: AnySet) -> Solution:
        a = self.solve(f.arg, over)
        z: AnySet = a.states
        exact = a.exact
        removed: AnySet | None = None
        i = 0
        while True:
            self.tick()
            i += 1
            nxt: AnySet
            if isinstance(z, CSet) and isinstance(removed, CSet):
                nxt = self._eg_step(z, removed)
            else:  # the first step, or a BDD set (no per-location edges)
                nxt = z.intersect(self.pre(z)).coalesce()
            if z.is_subset(nxt):
                break
            removed = z.subtract(nxt).coalesce()
            z = nxt
            if i >= self.eg_bound:
                self.stats.truncations += 1
                if over:
                    exact = False  # a decreasing iterate contains the fixpoint
                else:
                    z, exact = a.states.subtract(a.states), False  # empty
                break
        self.stats.count("EG", i)
        return Solution(z, exact)

    def _eg_step(self, z: CSet, removed: CSet) -> CSet:
        """``z ∩ pre(z)`` when ``z = z_prev ∩ pre(z_prev)`` and ``removed = z_prev \\ z``: a
        state of ``z`` without a successor in ``removed`` keeps its successor in ``z``, so
        only the predecessors of ``removed`` need their successors looked at (the dual of
        the semi-naive least fixpoint)."""
        back = self.pre(removed)
        assert isinstance(back, CSet)
        cand = z.intersect(back).coalesce()
        if cand.is_empty():
            return z
        parts: dict[tuple[int, ...], isl.Set] = {}
        for k, p in cand.parts.items():
            for dst, m in self.enc.total.edges_from(k):
                q = z.parts.get(dst)
                if q is not None:
                    d = m.intersect_domain(p).intersect_range(q).domain()
                    parts[k] = d if k not in parts else parts[k].union(d)
        keep = CSet(parts, z.empty)
        return z.subtract(cand).union(keep).coalesce()


def _frontier(new: AnySet, old: AnySet) -> AnySet:
    """The states of ``new`` not in ``old``: the only ones whose image the next iteration
    needs. For ``Z' = Z ∪ f(Z)`` with ``f`` distributive over union (post, pre, intersected
    with fixed sets) and every iterate containing ``Z ∪ f(Z)`` of the one before (also after a
    widening, which only enlarges), ``f(Z_i) ⊆ Z_i ∪ f(Z_i \\ Z_{i-1})``, so the image of the
    frontier suffices (the semi-naive iteration of Datalog evaluation). Fewer disjuncts go
    through the image and the coalescing; the iterates are the same sets."""
    return new.subtract(old).coalesce()
