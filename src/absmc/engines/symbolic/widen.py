"""Standard widening of convex polyhedra (Cousot & Halbwachs, POPL 1978: "H79"), written on
isl sets, applied per control location (paper 002 §2, [4]; as ALV applies it).

``widen_location(old, new)`` widens two sets of one control location (a part of a composite
set, :mod:`~absmc.engines.symbolic.composite`, which keeps the locations apart): the set of
constraints of ``hull(old)`` that ``hull(new)`` satisfies (the standard widening; equalities
count as two inequalities). The result contains ``old ∪ new``, and an increasing chain widened
this way stabilizes (each location's constraint list only shrinks, and locations are finitely
many).
"""

from __future__ import annotations

from collections.abc import Callable

import islpy as isl

__all__ = ["widen_location"]


def widen_location(
    old: isl.Set, new: isl.Set, disjunctive: bool = False, tick: Callable[[], None] | None = None
) -> isl.Set:
    """``old ∇ new`` for two sets of one control location (``new`` nonempty, not inside
    ``old``): the H79 widening of their hulls.

    ``disjunctive``: widen each convex part (disjunct) of ``new`` against the hull of the parts
    of ``old`` it contains, keeping the others as they are (a powerset extension that keeps
    disjunctions such as ``a1 < a2 || a2 < a1``; not guaranteed to stabilize, so callers
    switch to the convex form after a few rounds). ``tick`` is called per disjunct (it may
    raise to stop a long widening)."""
    if not disjunctive:
        return _h79(old, new)
    out = isl.Set.empty(old.get_space())
    olds = old.coalesce().get_basic_sets()
    for nb in new.coalesce().get_basic_sets():
        if tick is not None:
            tick()
        inside = [isl.Set.from_basic_set(ob) for ob in olds if ob.is_subset(nb)]
        part = isl.Set.from_basic_set(nb)
        if inside:
            base = inside[0]
            for x in inside[1:]:
                base = base.union(x)
            part = _h79(base, part)
        out = out.union(part)
    return out.coalesce()


def _h79(old: isl.Set, new: isl.Set) -> isl.Set:
    """Constraints of the convex hull of ``old`` that the convex hull of ``new`` satisfies
    (``new`` nonempty). A constraint ``aff >= 0`` is satisfied when the minimum of ``aff``
    over the integer points of ``hull(new)`` is not negative (one integer optimization per
    constraint, not a subset test)."""
    ho = old.convex_hull()
    hn = isl.Set.from_basic_set(new.convex_hull())
    kept = isl.BasicSet.universe(ho.get_space())
    for c in ho.get_constraints():
        aff = c.get_aff()
        halves = [(c, aff)]
        if c.is_equality():
            halves = [
                (isl.Constraint.inequality_from_aff(aff), aff),
                (isl.Constraint.inequality_from_aff(aff.neg()), aff.neg()),
            ]
        for h, a in halves:
            if hn.min_val(a).is_nonneg():
                kept = kept.add_constraint(h)
    return isl.Set.from_basic_set(kept)
