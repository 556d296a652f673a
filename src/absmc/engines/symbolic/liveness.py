"""Dead data variables per control location, for collapsing predicate bits (partial predicate
abstraction, paper 002 §3.1).

A data variable ``x`` is *live* at a control location (a valuation of the finite-range and bool
variables) when some path from it reads ``x`` — in a guard, an assigned expression, a command's
error or assert condition, or a property — before a command assigns it; otherwise it is *dead*
there (classical live-variable analysis, on the control locations instead of a program's
statements). Computed backwards with isl on the commands' relations projected onto the control
dimensions (an over-approximation of the control flow, so of liveness: a location called dead
is dead)::

    Live_x = ⋃ {dom(Rc_c) : c reads x}  ∪  ⋃ {Rc_c⁻¹(Live_x) : c does not assign x}

iterated to its least fixpoint (the control space is finite). A predicate bit whose abstracted
variables are all dead at a location carries no information that a later step can use: the
value it stands for is assigned again before it is read, and the assignment defines the bit
anew. :class:`~absmc.engines.symbolic.abstract.PartialAbstraction` gives such a bit one value
there (0) instead of both, which is what ALV's BDDs get for free (a don't-care bit costs
nothing; as two locations of the composite sets it doubles them).
"""

from __future__ import annotations

from collections.abc import Iterable

import islpy as isl

from absmc.engines.symbolic.encode import Encoding
from absmc.ir.expr import free_vars

__all__ = ["ControlSpace", "dead_locations"]


class ControlSpace:
    """The control dimensions of ``enc`` (finite ranges and bools) as an isl space of their
    own: ``project`` maps a concrete state ``[v0, ..]`` to its location ``[c0, ..]``."""

    def __init__(self, enc: Encoding) -> None:
        self.enc = enc
        self.dims = enc.control()  # (index, lo, hi)
        names = [enc.names[i] for i, _, _ in self.dims]
        self.project = isl.Map(
            f"{{ {enc.tuple_of(enc.names)} -> {enc.tuple_of(names)} }}"
        ).intersect_domain(enc.domain)
        cn = [f"c{j}" for j in range(len(self.dims))]
        bounds = " and ".join(f"{lo} <= c{j} <= {hi}" for j, (_, lo, hi) in enumerate(self.dims))
        self.universe = isl.Set(f"{{ {enc.tuple_of(cn)} : {bounds or 'true'} }}")

    def relation(self, m: isl.Map) -> isl.Map:
        """A concrete relation's control flow: location -> location."""
        return m.apply_domain(self.project).apply_range(self.project).coalesce()

    def lift(self, locations: isl.Set, extra: int = 0) -> isl.Set:
        """The concrete states (followed by ``extra`` free dimensions) at ``locations``."""
        out = locations.apply(self.project.reverse())
        if extra:
            out = out.add_dims(isl.dim_type.set, extra)
        return out.coalesce()

    def point(self, values: Iterable[int]) -> isl.Set:
        """One location."""
        return isl.Set("{ [" + ", ".join(str(v) for v in values) + "] }")


def dead_locations(
    enc: Encoding, variables: Iterable[int], observed: set[str]
) -> dict[int, isl.Set]:
    """Per variable index in ``variables``: the control locations (a set of ``ControlSpace``)
    where that variable is dead, given that the properties read the variables ``observed``
    (live everywhere). Empty sets for every variable when a command has a SPIN feature whose
    enabledness depends on other commands (``timeout``) or on a process (``exclusive``).

    Raises nothing; the relations are ``enc.relations`` (built if not yet)."""
    system = enc.system
    todo = [i for i in variables]
    space = ControlSpace(enc)
    empty = isl.Set.empty(space.universe.get_space())
    if any(c.flags or c.exclusive for c in system.commands) or not space.dims:
        return {i: empty for i in todo}
    flows = [space.relation(m) for m in enc.relations]
    reads: list[set[str]] = []
    writes: list[set[str]] = []
    for c in system.commands:
        r = set(free_vars(c.guard))
        for _, e in c.updates:
            r |= set(free_vars(e))
        for _, e in c.asserts:
            r |= set(free_vars(e))
        for e, _ in c.errors:
            r |= set(free_vars(e))
        reads.append(r)
        writes.append({n for n, _ in c.updates})
    out: dict[int, isl.Set] = {}
    for i in todo:
        name = system.variables[i].name
        if name in observed:
            out[i] = empty
            continue
        live = empty
        for ci, f in enumerate(flows):
            if name in reads[ci]:
                live = live.union(f.domain())
        live = live.coalesce()
        keep = [f for ci, f in enumerate(flows) if name not in writes[ci]]
        while True:
            grown = live
            for f in keep:
                grown = grown.union(live.apply(f.reverse()))
            grown = grown.coalesce()
            if grown.is_subset(live):
                break
            live = grown
        out[i] = space.universe.subtract(live).coalesce()
    return out
