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
``limit`` valuations (2^24 by default, beyond every
example model) there is one universal location ``()`` holding the flat set. The predicate bits
of an abstraction are control unless ``bit_limit`` is given (the checks do not give it)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import cached_property

import islpy as isl

from absmc.engines.symbolic.abstract import PartialAbstraction
from absmc.engines.symbolic.coalesce import coalesce_chunked
from absmc.engines.symbolic.encode import Encoding
from absmc.ir.expr import Expr, free_vars
from absmc.ir.steps import State

__all__ = ["CRel", "CSet", "DeadLoops", "Key", "Split"]

#: a control valuation (the values of the control dimensions, in dimension order)
Key = tuple[int, ...]
_SET = isl.dim_type.set
_IN, _OUT = isl.dim_type.in_, isl.dim_type.out


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

    def extend(self, other: CSet) -> CSet | None:
        """``self ∪ other`` coalesced, for a coalesced ``self``, or ``None`` when ``other ⊆
        self``: a part of ``other`` inside ``self``'s part at its location is skipped (a
        subset test, no union and coalesce), only the parts that grow are united and
        coalesced; the others stay the same objects."""
        out: dict[Key, isl.Set] | None = None
        mine = self.parts
        for k, p in other.parts.items():
            q = mine.get(k)
            if q is None:
                if p.is_empty():
                    continue
                u = p.coalesce()
            elif p.is_subset(q):
                continue
            else:
                u = q.union(p).coalesce()
            if out is None:
                out = dict(mine)
            out[k] = u
        return None if out is None else self._new(out)

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
            for dst, m in rel.edges_from(k):
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
    """A relation factored by command (or by any list of flat maps): each *factor* fixes only
    the control dimensions its map constrains (its *relevant* ones: a command's guard and
    assignments, predicate bits correlated with them) and frames the others (``x' = x``), so
    a source location's edges are computed from its relevant values alone, on first use, and
    one piece map serves every location that agrees on them. Plus a self-loop on the states of
    ``loops`` (the dead states of the totalized relation, the CTL convention). Without the
    factoring every command had one edge per valuation of *all* control dimensions (the
    edges of chardrv4: 32 commands times 8192 valuations)."""

    __slots__ = ("_edges", "factors", "loops", "reversed_")

    def __init__(
        self, factors: list[_Factor], loops: Mapping[Key, isl.Map], reversed_: bool = False
    ) -> None:
        self.factors = factors
        self.loops = loops
        self.reversed_ = reversed_
        self._edges: dict[Key, list[tuple[Key, isl.Map]]] = {}

    def edges_from(self, k: Key) -> list[tuple[Key, isl.Map]]:
        """The ``(target location, map)`` edges leaving location ``k`` (memoized)."""
        got = self._edges.get(k)
        if got is not None:
            return got
        out: list[tuple[Key, isl.Map]] = []
        for f in self.factors:
            pieces = (f.back if self.reversed_ else f.pieces).get(tuple(k[j] for j in f.where))
            if not pieces:
                continue
            for vals, m in pieces:
                dst = list(k)
                for j, v in zip(f.where, vals, strict=True):
                    dst[j] = v
                out.append((tuple(dst), m))
        loop = self.loops.get(k)
        if loop is not None:
            out.append((k, loop))
        self._edges[k] = out
        return out

    def reverse(self) -> CRel:
        """The inverse relation (the same factors, read backwards)."""
        return CRel(self.factors, self.loops, not self.reversed_)

    def with_loops(self, loops: Mapping[Key, isl.Map]) -> CRel:
        """The same factors with ``loops`` as the self-loops."""
        return CRel(self.factors, loops, self.reversed_)

    def n_pieces(self) -> int:
        """Piece maps over all factors."""
        return sum(len(es) for f in self.factors for es in f.pieces.values())


class DeadLoops(Mapping[Key, isl.Map]):
    """The self-loops of the totalized relation by location, each computed on first lookup
    (``dead(k)``: the dead states at location ``k``, ``None`` or empty when there are none):
    a fixpoint looks up only the locations it reaches, so the dead states of the others
    (most of the domain's locations) are never computed. Iterating gives the locations
    computed so far."""

    def __init__(self, dead: Callable[[Key], isl.Set | None], ident: isl.Map) -> None:
        self._dead = dead
        self._ident = ident
        self._memo: dict[Key, isl.Map | None] = {}

    def __getitem__(self, k: Key) -> isl.Map:
        if k in self._memo:
            got = self._memo[k]
        else:
            d = self._dead(k)
            got = None if d is None or d.is_empty() else self._ident.intersect_domain(d)
            self._memo[k] = got
        if got is None:
            raise KeyError(k)
        return got

    def __iter__(self) -> Iterator[Key]:
        return iter([k for k, m in self._memo.items() if m is not None])

    def __len__(self) -> int:
        return sum(1 for m in self._memo.values() if m is not None)


class _Factor:
    """One command's relation split on its relevant control dimensions: ``where`` are their
    positions in a location key; ``pieces`` maps their source values to ``(target values,
    map)`` pairs, ``back`` the target values to ``(source values, reversed map)``."""

    __slots__ = ("back", "pieces", "where")

    def __init__(
        self, where: tuple[int, ...], pieces: dict[Key, list[tuple[Key, isl.Map]]]
    ) -> None:
        self.where = where
        self.pieces = pieces
        back: dict[Key, list[tuple[Key, isl.Map]]] = {}
        for src, es in pieces.items():
            for dst, m in es:
                back.setdefault(dst, []).append((src, m.reverse()))
        self.back = back


class Split:
    """``base`` (a concrete encoding or a partial abstraction) with composite sets (see the
    module doc). ``base.control()`` gives the control dimensions."""

    def __init__(
        self,
        base: Encoding | PartialAbstraction,
        limit: int = 1 << 24,
        tick: Callable[[], None] | None = None,
        bit_limit: int | None = None,
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
        #: ``bit_limit`` valuations with them, when given: the bit valuations multiply the
        #: locations)
        self.loose_bits = (
            isinstance(base, PartialAbstraction) and bit_limit is not None and size > bit_limit
        )
        if isinstance(base, PartialAbstraction) and self.loose_bits:
            control = [c for c in control if c[0] < len(base.kept)]
            size >>= len(base.predicates)
        #: the control dimensions' positions (none: one universal location ``()``)
        self.ctrl = [i for i, _, _ in control] if control and size <= limit else []
        self._bounds = {i: (lo, hi) for i, lo, hi in control}
        self._empty = isl.Set.empty(base.domain.get_space())
        self._universe = isl.Set.universe(base.domain.get_space())
        self._keys: dict[State, Key] = {}
        self._dead_parts: dict[tuple[tuple[int, int], ...], dict[Key, isl.Set]] = {}

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

    def _factor(self, ci: int, m: isl.Map) -> _Factor:
        """Command ``ci``'s flat relation ``m`` split on its relevant control dimensions
        (:meth:`_relevant`), value by value (source, then target), until each basic map fixes
        them all; the pieces of one (source values, target values) pair united and coalesced
        in chunks."""
        dims = self._relevant(ci, m)
        where = tuple(self.ctrl.index(i) for i in dims)
        merged: dict[tuple[Key, Key], isl.Map] = {}
        stack = list(m.get_basic_maps())
        while stack:
            bm = stack.pop()
            values: list[int] = []
            for kind in (_IN, _OUT):
                for i in dims:
                    v = bm.plain_get_val_if_fixed(kind, i)
                    if v.is_nan():
                        lo, hi = self._bounds[i]
                        for x in range(lo, hi + 1):
                            part = bm.fix_val(kind, i, x)
                            if not part.is_empty():
                                stack.append(part)
                        break
                    values.append(int(v.to_python()))
                else:
                    continue
                break
            else:
                key = (tuple(values[: len(dims)]), tuple(values[len(dims) :]))
                got = merged.get(key)
                one = isl.Map.from_basic_map(bm)
                merged[key] = one if got is None else got.union(one)
        pieces: dict[Key, list[tuple[Key, isl.Map]]] = {}
        for (src, dst), pm in merged.items():
            pieces.setdefault(src, []).append((dst, coalesce_chunked(pm, self.tick)))
        return _Factor(where, pieces)

    def _relevant(self, ci: int, m: isl.Map) -> list[int]:
        """The control dimensions command ``ci``'s relation ``m`` does not frame: those of the
        variables its guard and assignments mention, and (on an abstraction) every other one
        for which ``m`` is not ``(∃x,x'. m) ∧ x' = x`` within the dimension's bounds — a
        predicate bit the command's guard or assignments constrain, or one correlated with
        such a bit through a shared abstracted variable (tested only where
        :meth:`PartialAbstraction.may_correlate` says a dimension can be). On the concrete
        encoding a variable the command does not mention is framed by construction (``x' =
        x`` and its bounds, :meth:`Encoding.relation_formula`)."""
        c = self.system.commands[ci]
        names = set(free_vars(c.guard))
        for n, e in c.updates:
            names.add(n)
            names |= set(free_vars(e))
        base = self.base
        if isinstance(base, PartialAbstraction):
            pos = {self.system.variables[i].name: p for p, i in enumerate(base.kept)}
        else:
            pos = {v.name: i for i, v in enumerate(self.system.variables)}
        said = {pos[n] for n in names if n in pos}
        out = []
        for i in self.ctrl:
            if i in said or (
                isinstance(base, PartialAbstraction)
                and base.may_correlate(i)
                and not _framed(m, i, *self._bounds[i])
            ):
                out.append(i)
        return out

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
        """The transition relation, one factor per command (built on first use, between
        commands ``tick`` is called: the time limit)."""
        base = self.base
        factors = []
        for ci in range(len(self.system.commands)):
            if self.tick is not None:
                self.tick()
            if isinstance(base, PartialAbstraction):
                m = base.relation(ci, self.tick)
            else:
                m = base.relations[ci]
            factors.append(self._factor(ci, m))
        return CRel(factors, {})

    @cached_property
    def dead(self) -> CSet:
        return self.cut(self.base.dead)

    def dead_at(self, k: Key) -> isl.Set | None:
        """The part of :attr:`dead` at location ``k`` (``None``: none), computed for that
        location alone (:meth:`Encoding.dead_at`); on an abstraction α of the concrete dead
        states at ``k``'s values of the kept control variables (memoized per such value)."""
        base = self.base
        if not self.ctrl:
            return base.dead
        if not isinstance(base, PartialAbstraction):
            return base.dead_at(dict(zip(self.ctrl, k, strict=True)))
        n = len(base.kept)
        fixed = {base.kept[p]: v for p, v in zip(self.ctrl, k, strict=True) if p < n}
        kc = tuple(sorted(fixed.items()))
        parts = self._dead_parts.get(kc)
        if parts is None:
            parts = self.cut(base.alpha(base.enc.dead_at(fixed))).parts
            self._dead_parts[kc] = parts
        return parts.get(k)

    @cached_property
    def total(self) -> CRel:
        """The transition relation with a self-loop on every dead state (the CTL convention),
        the loops computed per location on first use (:class:`DeadLoops`)."""
        ident = isl.Map.identity(self._universe.get_space().map_from_set())
        return self.transition.with_loops(DeadLoops(self.dead_at, ident))

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


def _framed(m: isl.Map, i: int, lo: int, hi: int) -> bool:
    """Whether ``m`` frames dimension ``i`` (``lo..hi``): ``m = (∃x,x'. m) ∧ x' = x ∧ lo <= x <=
    hi`` for ``x`` the ``i``-th input and ``x'`` the ``i``-th output dimension."""
    p = m.project_out(_IN, i, 1).project_out(_OUT, i, 1)
    p = p.insert_dims(_IN, i, 1).insert_dims(_OUT, i, 1).equate(_IN, i, _OUT, i)
    ctx = m.get_ctx()
    p = p.lower_bound_val(_IN, i, isl.Val.int_from_si(ctx, lo))
    p = p.upper_bound_val(_IN, i, isl.Val.int_from_si(ctx, hi))
    return bool(p.is_equal(m))
