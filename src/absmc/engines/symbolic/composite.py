"""The composite representation: sets and relations split by control location (ALV, the
tool of paper 002, keeps the finite part of a state — control locations, booleans, predicate
bits — apart from the polyhedra over the integers; Bultan, Gerber, Pugh, CAV'97).

A :class:`CSet` maps each *control valuation* (a value of every finite-range, bool and
predicate-bit dimension: a location) to the isl set of the states with that valuation; a
:class:`CRel` maps a source location to its (target location, isl map) edges. The parts keep
every dimension (the control dimensions are fixed in each part), so a part is an ordinary set
of the flat space and :meth:`CSet.flat` is the union of the parts. What this saves against one
flat isl set: the widening per location needs no split (each part is one location), the image
of a part goes only through the edges leaving its location, and isl coalesces, compares and
hulls small per-location sets instead of one set whose disjuncts are spread over every
location (ticket2 with the predicates ``a1 <= s, a2 <= s``: 19 locations, 114 edges).

:class:`Split` wraps an :class:`~absmc.engines.symbolic.encode.Encoding` or a
:class:`~absmc.engines.symbolic.abstract.PartialAbstraction` with the interface
:class:`~absmc.engines.symbolic.fixpoint.Fixpoints` uses, returning composite sets. Beyond
``limit`` valuations (4096) there is one
universal location ``()`` holding the flat set, so the fixpoints compute the same sets as the
flat widening per location did.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cached_property

import islpy as isl

from absmc.engines.symbolic.abstract import PartialAbstraction
from absmc.engines.symbolic.coalesce import coalesce_chunked
from absmc.engines.symbolic.encode import Encoding
from absmc.ir.expr import Expr
from absmc.ir.steps import State

__all__ = ["CRel", "CSet", "Key", "Split"]

#: a control valuation (the values of the control dimensions, in dimension order)
Key = tuple[int, ...]
_SET = isl.dim_type.set


class CSet:
    """A set of states as ``{location: isl.Set}`` (parts may be empty until
    :meth:`coalesce`); ``empty`` is the empty flat set of the space."""

    __slots__ = ("empty", "parts")

    def __init__(self, parts: dict[Key, isl.Set], empty: isl.Set) -> None:
        self.parts = parts
        self.empty = empty

    def _new(self, parts: dict[Key, isl.Set]) -> CSet:
        return CSet(parts, self.empty)

    def union(self, other: CSet) -> CSet:
        out = dict(self.parts)
        for k, p in other.parts.items():
            mine = out.get(k)
            out[k] = p if mine is None else mine.union(p)
        return self._new(out)

    def merge(self, other: CSet) -> CSet:
        """``self ∪ other`` coalesced, for a coalesced ``self``: only the parts ``other``
        touches are united and coalesced (the others stay the same objects), empty ones
        dropped."""
        out = dict(self.parts)
        for k, p in other.parts.items():
            mine = out.get(k)
            u = p if mine is None else mine.union(p)
            if u.is_empty():
                out.pop(k, None)
            else:
                out[k] = u.coalesce()
        return self._new(out)

    def intersect(self, other: CSet) -> CSet:
        o = other.parts
        return self._new({k: p.intersect(o[k]) for k, p in self.parts.items() if k in o})

    def intersect_flat(self, s: isl.Set) -> CSet:
        """Each part intersected with the flat set ``s``."""
        return self._new({k: p.intersect(s) for k, p in self.parts.items()})

    def subtract(self, other: CSet) -> CSet:
        """``self \\ other`` (a part identical to ``other``'s, the same object, is left out)."""
        o = other.parts
        return self._new(
            {
                k: (p.subtract(o[k]) if k in o else p)
                for k, p in self.parts.items()
                if o.get(k) is not p
            }
        )

    def coalesce(self) -> CSet:
        """The same set with coalesced parts and no empty part."""
        out = {}
        for k, p in self.parts.items():
            if not p.is_empty():
                out[k] = p.coalesce()
        return self._new(out)

    def is_empty(self) -> bool:
        return all(p.is_empty() for p in self.parts.values())

    def is_subset(self, other: CSet) -> bool:
        o = other.parts
        for k, p in self.parts.items():
            q = o.get(k)
            if q is p:
                continue
            if not (p.is_empty() if q is None else p.is_subset(q)):
                return False
        return True

    def apply(self, rel: CRel) -> CSet:
        """The image under ``rel`` (each part through the edges leaving its location)."""
        out: dict[Key, isl.Set] = {}
        for k, p in self.parts.items():
            for dst, m in rel.edges.get(k, ()):
                img = p.apply(m)
                mine = out.get(dst)
                out[dst] = img if mine is None else mine.union(img)
        return self._new(out)

    def n_basic_set(self) -> int:
        """Disjuncts over all parts."""
        return sum(p.n_basic_set() for p in self.parts.values())

    def flat(self) -> isl.Set:
        """The union of the parts (one isl set)."""
        out = self.empty
        for p in self.parts.values():
            out = out.union(p)
        return out.coalesce()

    def map_parts(self, f: Callable[[Key, isl.Set], isl.Set]) -> CSet:
        """``{k: f(k, part)}``."""
        return self._new({k: f(k, p) for k, p in self.parts.items()})


class CRel:
    """A relation as ``{source location: [(target location, isl.Map)]}``."""

    __slots__ = ("edges",)

    def __init__(self, edges: dict[Key, list[tuple[Key, isl.Map]]]) -> None:
        self.edges = edges

    @staticmethod
    def of(
        pairs: Iterable[tuple[Key, Key, isl.Map]], tick: Callable[[], None] | None = None
    ) -> CRel:
        """The relation of ``(source, target, map)`` edges (maps of the same pair united and
        coalesced; ``tick`` is called between isl operations, it may raise to stop)."""
        merged: dict[tuple[Key, Key], isl.Map] = {}
        for src, dst, m in pairs:
            got = merged.get((src, dst))
            merged[(src, dst)] = m if got is None else got.union(m)
        edges: dict[Key, list[tuple[Key, isl.Map]]] = {}
        for (src, dst), m in merged.items():
            edges.setdefault(src, []).append((dst, coalesce_chunked(m, tick)))
        return CRel(edges)

    def reverse(self) -> CRel:
        return CRel.of((dst, src, m.reverse()) for src, es in self.edges.items() for dst, m in es)

    def n_edges(self) -> int:
        return sum(len(es) for es in self.edges.values())

    def n_basic_map(self) -> int:
        """Disjuncts over all edges."""
        return sum(m.n_basic_map() for es in self.edges.values() for _, m in es)


class Split:
    """``base`` (a concrete encoding or a partial abstraction) with composite sets (see the
    module doc). ``base.control()`` gives the control dimensions."""

    def __init__(
        self,
        base: Encoding | PartialAbstraction,
        limit: int = 4096,
        tick: Callable[[], None] | None = None,
        bit_limit: int = 1024,
    ) -> None:
        #: called between the commands while the relations are built (it may raise to stop)
        self.tick = tick
        self.base = base
        self.system = base.system
        control = base.control()
        size = 1
        for _, lo, hi in control:
            size *= hi - lo + 1
        #: whether the predicate bits are dimensions of the parts, not control (beyond
        #: ``bit_limit`` valuations with them: the bit valuations multiply the locations
        #: and edges)
        self.loose_bits = isinstance(base, PartialAbstraction) and size > bit_limit
        if isinstance(base, PartialAbstraction) and self.loose_bits:
            control = [c for c in control if c[0] < len(base.kept)]
            size >>= len(base.predicates)
        #: the control dimensions' positions (none: one universal location ``()``)
        self.ctrl = [i for i, _, _ in control] if control and size <= limit else []
        self._bounds = {i: (lo, hi) for i, lo, hi in control}
        self._empty = isl.Set.empty(base.domain.get_space())
        self._universe = isl.Set.universe(base.domain.get_space())
        self._keys: dict[State, Key] = {}

    # -- locations -------------------------------------------------------------------------
    @property
    def abstraction(self) -> PartialAbstraction | None:
        """The partial abstraction this splits, or ``None`` for the concrete encoding."""
        return self.base if isinstance(self.base, PartialAbstraction) else None

    @property
    def enc(self) -> Encoding:
        """The concrete encoding."""
        return self.base.enc if isinstance(self.base, PartialAbstraction) else self.base

    def cut(self, s: isl.Set) -> CSet:
        """The composite form of the flat set ``s``: each basic set is split on the first
        control dimension it does not fix, value by value, until all are fixed; the fixed
        values are its location."""
        if not self.ctrl:
            return CSet({(): s}, self._empty)
        parts: dict[Key, isl.Set] = {}
        stack = [isl.Set.from_basic_set(b) for b in s.get_basic_sets()]
        while stack:
            part = stack.pop()
            fixed = part.get_plain_multi_val_if_fixed()
            values: list[int] = []
            for i in self.ctrl:
                v = fixed.get_val(i)
                if v.is_nan():
                    lo, hi = self._bounds[i]
                    pieces = (part.fix_val(_SET, i, x) for x in range(lo, hi + 1))
                    stack += [p for p in pieces if not p.is_empty()]
                    break
                values.append(int(v.to_python()))
            else:
                k = tuple(values)
                got = parts.get(k)
                parts[k] = part if got is None else got.union(part)
        return CSet({k: p.coalesce() for k, p in sorted(parts.items())}, self._empty)

    def cut_relation(self, maps: Iterable[isl.Map]) -> CRel:
        """The composite form of flat relations (united): each basic map is split on the
        first control dimension (source, then target) that it does not fix, value by value,
        until all are fixed; the fixed values are its edge's locations."""
        pairs: list[tuple[Key, Key, isl.Map]] = []
        for m in maps:
            if self.tick is not None:
                self.tick()
            if not self.ctrl:
                pairs.append(((), (), m))
                continue
            stack = list(m.get_basic_maps())
            while stack:
                bm = stack.pop()
                split = self._unfixed(bm)
                if isinstance(split, tuple):
                    kind, i = split
                    lo, hi = self._bounds[i]
                    for v in range(lo, hi + 1):
                        part = bm.fix_val(kind, i, v)
                        if not part.is_empty():
                            stack.append(part)
                    continue
                width = len(self.ctrl)
                src, dst = tuple(split[:width]), tuple(split[width:])
                pairs.append((src, dst, isl.Map.from_basic_map(bm)))
        return CRel.of(pairs, self.tick)

    def _unfixed(self, bm: isl.BasicMap) -> tuple[isl.dim_type, int] | list[int]:
        """The first control dimension ``bm`` does not fix, or the values of all (source
        dimensions, then target ones)."""
        values: list[int] = []
        for kind in (isl.dim_type.in_, isl.dim_type.out):
            for i in self.ctrl:
                v = bm.plain_get_val_if_fixed(kind, i)
                if v.is_nan():
                    return (kind, i)
                values.append(int(v.to_python()))
        return values

    # -- the interface Fixpoints uses -------------------------------------------------------
    @property
    def exact(self) -> bool:
        return self.base.exact

    @cached_property
    def domain(self) -> CSet:
        return self.cut(self.base.domain)

    @cached_property
    def initial(self) -> CSet:
        return self.cut(self.base.initial)

    def atom(self, e: Expr, over: bool, within: CSet) -> CSet:
        """The states of an atom (approximated by ``over`` for an abstraction) within
        ``within``."""
        return within.intersect_flat(self.base.atom(e, over))

    @cached_property
    def transition(self) -> CRel:
        base = self.base
        if not isinstance(base, PartialAbstraction):
            return self.cut_relation(base.relations)
        maps = []
        for ci in range(len(self.system.commands)):
            if self.tick is not None:
                self.tick()
            maps.append(base.relation(ci, self.tick))
        return self.cut_relation(maps)

    @cached_property
    def dead(self) -> CSet:
        return self.cut(self.base.dead)

    @cached_property
    def total(self) -> CRel:
        """The transition relation with a self-loop on every dead state (the CTL convention)."""
        ident = isl.Map.identity(self._universe.get_space().map_from_set())
        loops = [(k, k, ident.intersect_domain(p)) for k, p in self.dead.parts.items()]
        pairs = [(s, d, m) for s, es in self.transition.edges.items() for d, m in es]
        return CRel.of(pairs + loops, self.tick)

    @cached_property
    def inverse(self) -> CRel:
        return self.total.reverse()

    # -- concrete states -------------------------------------------------------------------
    def concretize(self, s: CSet) -> isl.Set:
        """The concrete states (a flat set of the concrete encoding) ``s`` stands for."""
        return self.base.concretize(s.flat())

    def contains(self, s: CSet, state: State) -> bool:
        """Whether the concrete ``state`` (its abstraction) lies in ``s``."""
        k = self._keys.get(state)
        if k is None:
            vals = self.base.values_of(state)
            k = self._keys[state] = tuple(vals[i] for i in self.ctrl)
        part = s.parts.get(k)
        return part is not None and bool(self.base.abstract_of(state).is_subset(part))
