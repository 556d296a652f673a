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

from collections.abc import Iterable, Sequence

import islpy as isl

from absmc.engines.symbolic.encode import Encoding
from absmc.ir.expr import free_vars
from absmc.ir.system import Command

__all__ = ["ControlSpace", "dead_locations"]


class ControlSpace:
    """Control dimensions of ``enc`` (finite ranges and bools; all of them, or the variable
    indices ``only``) as an isl space of their own: ``project`` maps a concrete state ``[v0,
    ..]`` to its location ``[c0, ..]``; ``size`` is the number of locations."""

    def __init__(self, enc: Encoding, only: Iterable[int] | None = None) -> None:
        self.enc = enc
        keep = None if only is None else set(only)
        self.dims = [d for d in enc.control() if keep is None or d[0] in keep]
        names = [enc.names[i] for i, _, _ in self.dims]
        self.project = isl.Map(
            f"{{ {enc.tuple_of(enc.names)} -> {enc.tuple_of(names)} }}"
        ).intersect_domain(enc.domain)
        cn = [f"c{j}" for j in range(len(self.dims))]
        bounds = " and ".join(f"{lo} <= c{j} <= {hi}" for j, (_, lo, hi) in enumerate(self.dims))
        self.universe = isl.Set(f"{{ {enc.tuple_of(cn)} : {bounds or 'true'} }}")
        self.size = 1
        for _, lo, hi in self.dims:
            self.size *= hi - lo + 1

    def relation(self, m: isl.Map) -> isl.Map:
        """A concrete relation's control flow: location -> location."""
        return m.apply_domain(self.project).apply_range(self.project).coalesce()

    def lift(self, locations: isl.Set, extra: int = 0) -> isl.Set:
        """The concrete states (followed by ``extra`` free dimensions) at ``locations``."""
        out = locations.apply(self.project.reverse())
        if extra:
            out = out.add_dims(isl.dim_type.set, extra)
        return out.coalesce()

    def point(self, state: Sequence[int]) -> isl.Set:
        """The location of a concrete state."""
        return isl.Set("{ [" + ", ".join(str(state[i]) for i, _, _ in self.dims) + "] }")


def _mentions(c: Command) -> tuple[set[str], set[str]]:
    """The variables command ``c`` reads (guard, assigned expressions, error and assert
    conditions) and those it assigns."""
    r = set(free_vars(c.guard))
    for _, e in c.updates:
        r |= set(free_vars(e))
    for _, e in c.asserts:
        r |= set(free_vars(e))
    for e, _ in c.errors:
        r |= set(free_vars(e))
    return r, {n for n, _ in c.updates}


def dead_locations(
    enc: Encoding, variables: Sequence[int], observed: set[str], limit: int = 1 << 10
) -> tuple[ControlSpace, isl.Set] | None:
    """The control locations where every variable (index) in ``variables`` is dead, given
    that the properties read the variables ``observed`` (live everywhere): a set of the
    returned :class:`ControlSpace`, whose dimensions are the control variables that the
    commands reading or assigning one of ``variables`` mention (the flow projected onto them
    over-approximates the flow, so the liveness). ``None`` where nothing is known dead: a
    variable in ``observed``, variables that the commands of more than one process mention
    (shared ones, as a semaphore: dead, if ever, only where every process is away from it,
    locations the runs hardly reach, while the collapse costs each relation a case split;
    chardrv2's ``lock``: 1.7 -> 3.2 s of CPU), more than ``limit`` locations in that space
    (the fixpoint's cost), or a command with a SPIN feature whose enabledness depends on
    other commands (``timeout``) or on a process (``exclusive``). The relations are
    ``enc.relations``."""
    system = enc.system
    names = {system.variables[i].name for i in variables}
    if names & observed or any(c.flags or c.exclusive for c in system.commands):
        return None
    uses = [_mentions(c) for c in system.commands]
    owners = {c.process for c, (r, w) in zip(system.commands, uses, strict=True) if (r | w) & names}
    if len(owners) > 1:
        return None
    index = {v.name: i for i, v in enumerate(system.variables)}
    dims: set[int] = set()
    for r, w in uses:
        if (r | w) & names:
            dims |= {index[n] for n in r | w if system.variables[index[n]].is_control}
    space = ControlSpace(enc, dims)
    if not space.dims or space.size > limit:
        return None
    flows = [space.relation(m) for m in enc.relations]
    empty = isl.Set.empty(space.universe.get_space())
    dead = space.universe
    for name in sorted(names):
        live = empty
        for (r, _), f in zip(uses, flows, strict=True):
            if name in r:
                live = live.union(f.domain())
        live = live.coalesce()
        keep = [f for (_, w), f in zip(uses, flows, strict=True) if name not in w]
        while True:
            grown = live
            for f in keep:
                grown = grown.union(live.apply(f.reverse()))
            grown = grown.coalesce()
            if grown.is_subset(live):
                break
            live = grown
        dead = dead.subtract(live)
    dead = dead.coalesce()
    return None if dead.is_empty() else (space, dead)
