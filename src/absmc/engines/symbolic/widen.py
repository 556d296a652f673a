"""Standard widening of convex polyhedra (Cousot & Halbwachs, POPL 1978: "H79"), written on
isl sets, applied per control location (paper 002 §2, [4]; as ALV applies it).

``widen(old, new)`` partitions both sets by the values of the control dimensions (finite
ranges and bools); at each location with an ``old`` part, the result is the set of
constraints of ``hull(old)`` that ``hull(new)`` satisfies (the standard widening; equalities
count as two inequalities), intersected with the location; a location new in ``new`` is kept
as it is. The result contains ``old ∪ new``, and an increasing chain widened this way
stabilizes (each location's constraint list only shrinks, and locations are finitely many).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import islpy as isl

__all__ = ["Locations", "widen"]


class Locations:
    """The control locations: one isl set per valuation of the control dimensions
    ``control`` (dimension index, lo, hi), or a single universal location when there are more
    than ``limit`` valuations."""

    def __init__(
        self, space_set: isl.Set, control: Sequence[tuple[int, int, int]], limit: int = 4096
    ) -> None:
        size = 1
        for _, lo, hi in control:
            size *= hi - lo + 1
        universe = isl.Set.universe(space_set.get_space())
        self.sets: list[isl.Set] = []
        if not control or size > limit:
            self.sets = [universe]
            return
        n = space_set.dim(isl.dim_type.set)
        names = [f"v{i}" for i in range(n)]
        tup = "[" + ", ".join(names) + "]"
        for values in itertools.product(*(range(lo, hi + 1) for _, lo, hi in control)):
            cond = " and ".join(f"v{i} = {x}" for (i, _, _), x in zip(control, values, strict=True))
            self.sets.append(isl.Set(f"{{ {tup} : {cond} }}"))


def widen(
    old: isl.Set,
    new: isl.Set,
    locations: Locations,
    disjunctive: bool = False,
    tick: Callable[[], None] | None = None,
) -> isl.Set:
    """The per-location standard widening ``old ∇ new`` (``new`` should contain ``old``).

    ``disjunctive``: widen each convex part (disjunct) of ``new`` against the hull of the parts
    of ``old`` it contains, keeping the others as they are (a powerset extension that keeps
    disjunctions such as ``a1 < a2 || a2 < a1``; not guaranteed to stabilize, so callers
    switch to the convex form after a few rounds). ``tick`` is called per location (it may
    raise to stop a long widening)."""
    out = isl.Set.empty(old.get_space())
    for loc in locations.sets:
        if tick is not None:
            tick()
        n_l = new.intersect(loc)
        if n_l.is_empty():
            continue
        o_l = old.intersect(loc)
        if o_l.is_empty() or n_l.is_subset(o_l):
            out = out.union(n_l)
            continue
        if not disjunctive:
            out = out.union(_h79(o_l, n_l).intersect(loc))
            continue
        olds = o_l.coalesce().get_basic_sets()
        for nb in n_l.coalesce().get_basic_sets():
            if tick is not None:
                tick()
            inside = [isl.Set.from_basic_set(ob) for ob in olds if ob.is_subset(nb)]
            part = isl.Set.from_basic_set(nb)
            if inside:
                base = inside[0]
                for x in inside[1:]:
                    base = base.union(x)
                part = _h79(base, part).intersect(loc)
            out = out.union(part)
    return out.coalesce()


def _h79(old: isl.Set, new: isl.Set) -> isl.Set:
    """Constraints of the convex hull of ``old`` that the convex hull of ``new`` satisfies."""
    ho = old.convex_hull()
    hn = isl.Set.from_basic_set(new.convex_hull())
    universe = isl.BasicSet.universe(ho.get_space())
    kept = universe
    for c in ho.get_constraints():
        halves = [c]
        if c.is_equality():
            aff = c.get_aff()
            halves = [
                isl.Constraint.inequality_from_aff(aff),
                isl.Constraint.inequality_from_aff(aff.neg()),
            ]
        for h in halves:
            half = isl.Set.from_basic_set(universe.add_constraint(h))
            if hn.is_subset(half):
                kept = kept.add_constraint(h)
    return isl.Set.from_basic_set(kept)
