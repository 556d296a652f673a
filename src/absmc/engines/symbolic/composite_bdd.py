"""ALV's composite representation: the finite part of a state in BDDs, the integers in
polyhedra (Bultan, Gerber, Pugh, CAV'97; Yavuz-Kahveci and Bultan, *Composite model
checking*; paper 002 §5, the tool its tables were measured with).

A :class:`BSet` is a disjunction of pairs ``(b, P)``: ``b`` a BDD over the bits of the
*control* dimensions (finite ranges, bools, and on an abstraction the predicate bits), ``P``
an isl set over the other (integer) dimensions. The pairs' BDDs are kept pairwise disjoint
and their polyhedra pairwise distinct (two pairs with the same polyhedron are one pair whose
BDD is the OR of theirs, as ALV merges them), so a :class:`BSet` is a function from control
valuations to polyhedra — the same object as :class:`~absmc.engines.symbolic.composite.CSet`
(``{valuation: set}``) with the valuations that share a polyhedron stored once. Every
operation is the per-valuation one of :class:`CSet` (union, intersection, difference, subset
test, H79 widening per location), computed once per pair of polyhedra with the BDD of the
valuations where the pair meets; so a fixpoint computes the same sets at every valuation as
the split representation, with one isl operation per distinct polyhedron rather than per
location.

A relation (:class:`BRel`) is factored by command as :class:`~absmc.engines.symbolic.
composite.CRel` is: each command's pieces (its relevant control values before and after, an
isl map over the integers) are grouped by integer map, and each group is one BDD over the
relevant dimensions' current and next bits. The image of a pair through a group is ``(∃x.
b ∧ R)[x'/x]`` beside ``P.apply(M)``. The dead states (the self-loops of the totalized
relation) are computed on the set a pre-image is taken of: concretely ``S`` minus each
command's enabled states, on an abstraction ``S ∩ α(dead ∩ γ(S))``.

:class:`BddSplit` wraps a :class:`~absmc.engines.symbolic.encode.Encoding` or a
:class:`~absmc.engines.symbolic.abstract.PartialAbstraction` with the interface
:class:`~absmc.engines.symbolic.fixpoint.Fixpoints` uses (``--composite bdd``). The BDDs
come from ``dd.cudd`` (CUDD) when it is installed, else ``dd.autoref`` (pure Python)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import cached_property
from typing import Any

import islpy as isl

from absmc.engines.symbolic.abstract import PartialAbstraction
from absmc.engines.symbolic.composite import Key, Split
from absmc.engines.symbolic.encode import Encoding
from absmc.ir.expr import Expr
from absmc.ir.steps import State

try:  # CUDD through dd's Cython binding; the pure-Python package otherwise
    from dd import cudd as _dd
except ImportError:  # pragma: no cover - depends on the installed wheel
    from dd import autoref as _dd

__all__ = ["BDD_BACKEND", "BRel", "BSet", "BddSplit", "Control"]

#: the BDD package in use (``"dd.cudd"`` or ``"dd.autoref"``)
BDD_BACKEND = _dd.__name__

_SET = isl.dim_type.set
_IN, _OUT = isl.dim_type.in_, isl.dim_type.out
#: a BDD node of the manager (``dd``'s ``Function``)
Node = Any


class Control:
    """The BDD variables of the control dimensions: dimension ``j`` of ``ctrl`` (position
    ``ctrl[j]`` of the flat space, values ``lo..hi``) is ``value - lo`` in binary, bit ``i``
    the variable ``c{j}_{i}``, its next-state copy ``c{j}_{i}n`` declared right after it
    (interleaved, as relational products want). ``space`` is the flat isl space; the integer
    dimensions are the others, in order (:attr:`ints`)."""

    def __init__(self, space: isl.Space, ctrl: list[tuple[int, int, int]]) -> None:
        self.bdd = _dd.BDD()
        # a fixed, interleaved order: CUDD's dynamic reordering cost more than it saved on
        # these small diagrams (its sifting ran in the middle of the fixpoints)
        self.bdd.configure(reordering=False)
        self.space = space
        self.ctrl = [i for i, _, _ in ctrl]
        self.bounds = [(lo, hi) for _, lo, hi in ctrl]
        n = space.dim(_SET)
        cset = set(self.ctrl)
        #: the integer dimensions' positions in the flat space
        self.ints = [i for i in range(n) if i not in cset]
        self.width = [max(1, (hi - lo).bit_length()) for lo, hi in self.bounds]
        self.cur: list[list[str]] = []
        self.nxt: list[list[str]] = []
        for j, w in enumerate(self.width):
            self.cur.append([f"c{j}_{i}" for i in range(w)])
            self.nxt.append([f"c{j}_{i}n" for i in range(w)])
            for i in range(w):
                self.bdd.declare(self.cur[j][i], self.nxt[j][i])
        self.n_bits = sum(self.width)
        self._cubes: dict[tuple[int, int, bool], Node] = {}
        self._index: dict[int, list[str]] = {}
        ispace = isl.Set.universe(space)
        for i in reversed(self.ctrl):
            ispace = ispace.project_out(_SET, i, 1)
        #: the universe of the integer dimensions
        self.iuniverse: isl.Set = ispace
        self.iempty: isl.Set = isl.Set.empty(ispace.get_space())
        #: memo of unions of two polyhedra (by their keys)
        self.unions: dict[tuple[str, str], tuple[str, isl.Set]] = {}

    @cached_property
    def all_cur(self) -> list[str]:
        """Every current-state control bit."""
        return [n for names in self.cur for n in names]

    def index_vars(self, side: int, n: int) -> list[str]:
        """The index bits of ``side`` for ``n`` indices."""
        return self._index_vars(side, max(1, (n - 1).bit_length()))

    def _index_vars(self, side: int, width: int) -> list[str]:
        names = self._index.setdefault(side, [])
        while len(names) < width:
            names.append(f"i{side}_{len(names)}")
            self.bdd.declare(names[-1])
        return names[:width]

    def index_cube(self, side: int, i: int, n: int) -> Node:
        """Index bits of ``side`` spell ``i`` (of ``n`` indices)."""
        names = self._index_vars(side, max(1, (n - 1).bit_length()))
        out = self.bdd.true
        for k, name in enumerate(names):
            v = self.bdd.var(name)
            out &= v if (i >> k) & 1 else ~v
        return out

    def index_pairs(self, both: Node, na: int, nb: int) -> Iterator[tuple[int, int]]:
        """The ``(i, j)`` index pairs (of ``na`` and ``nb`` indices) in ``both``, a BDD over
        the index bits of sides 0 and 1."""
        wa = self._index_vars(0, max(1, (na - 1).bit_length()))
        wb = self._index_vars(1, max(1, (nb - 1).bit_length()))
        for m in self.bdd.pick_iter(both, care_vars=set(wa) | set(wb)):
            i = sum(1 << k for k, n in enumerate(wa) if m[n])
            j = sum(1 << k for k, n in enumerate(wb) if m[n])
            yield i, j

    @cached_property
    def valid(self) -> Node:
        """The valuations within every dimension's range."""
        out = self.bdd.true
        for j, (lo, hi) in enumerate(self.bounds):
            if (hi - lo + 1) != 1 << self.width[j]:
                one = self.bdd.false
                for v in range(lo, hi + 1):
                    one |= self.cube(j, v)
                out &= one
        return out

    def cube(self, j: int, v: int, primed: bool = False) -> Node:
        """Dimension ``j`` has value ``v`` (its next-state copy when ``primed``)."""
        got = self._cubes.get((j, v, primed))
        if got is None:
            names = self.nxt[j] if primed else self.cur[j]
            x = v - self.bounds[j][0]
            got = self.bdd.true
            for i, name in enumerate(names):
                bit = self.bdd.var(name)
                got &= bit if (x >> i) & 1 else ~bit
            self._cubes[(j, v, primed)] = got
        return got

    def key_cube(self, where: Iterable[int], values: Iterable[int], primed: bool = False) -> Node:
        """Dimensions ``where`` have ``values``."""
        out = self.bdd.true
        for j, v in zip(where, values, strict=True):
            out &= self.cube(j, v, primed)
        return out

    def holds(self, b: Node, key: Key) -> bool:
        """Whether the valuation ``key`` (every control dimension) lies in ``b``."""
        assign: dict[str, bool] = {}
        for j, v in enumerate(key):
            x = v - self.bounds[j][0]
            for i, name in enumerate(self.cur[j]):
                assign[name] = bool((x >> i) & 1)
        if not assign:
            return bool(b == self.bdd.true)
        return bool(self.bdd.let(assign, b) == self.bdd.true)

    def count(self, b: Node) -> int:
        """The valuations in ``b`` (a BDD over the current bits)."""
        if b == self.bdd.false:
            return 0
        return int(self.bdd.count(b, nvars=self.n_bits))

    # -- isl <-> BDD -----------------------------------------------------------------------
    def linear(self, terms: list[tuple[int, bool, int]], const: int, eq: bool) -> Node:
        """``Σ c·x_j + const >= 0`` (``= 0`` when ``eq``) for ``terms = [(j, primed, c)]``
        (``x_j`` the next-state copy when ``primed``): the dimensions' values tried in
        turn, memoized on the partial sum."""
        memo: dict[tuple[int, int], Node] = {}

        def rec(t: int, acc: int) -> Node:
            if t == len(terms):
                ok = acc == 0 if eq else acc >= 0
                return self.bdd.true if ok else self.bdd.false
            got = memo.get((t, acc))
            if got is not None:
                return got
            j, primed, c = terms[t]
            lo, hi = self.bounds[j]
            out = self.bdd.false
            for v in range(lo, hi + 1):
                rest = rec(t + 1, acc + c * v)
                if rest != self.bdd.false:
                    out |= self.cube(j, v, primed) & rest
            memo[(t, acc)] = out
            return out

        return rec(0, const)

    def control_bdd(self, bs: isl.BasicSet) -> Node:
        """The valuations of a basic set over the flat space whose constraints involve no
        integer dimension (and that has no existential variable)."""
        out = self.valid
        pos = {p: j for j, p in enumerate(self.ctrl)}
        ints = self.ints
        ndiv = bs.dim(isl.dim_type.div)
        for c in bs.get_constraints():
            if any(not c.get_coefficient_val(_SET, p).is_zero() for p in ints) or any(
                not c.get_coefficient_val(isl.dim_type.div, d).is_zero() for d in range(ndiv)
            ):
                continue  # a constraint of the integer part
            terms = []
            for p, j in pos.items():
                k = c.get_coefficient_val(_SET, p)
                if not k.is_zero():
                    terms.append((j, False, int(k.to_python())))
            const = int(c.get_constant_val().to_python())
            if not terms:
                ok = const == 0 if c.is_equality() else const >= 0
                if not ok:
                    return self.bdd.false
                continue
            out &= self.linear(terms, const, c.is_equality())
        return out

    def to_int(self, s: isl.Set) -> isl.Set:
        """``s`` (fixed, or independent, on the control dimensions) with them projected out."""
        for i in reversed(self.ctrl):
            s = s.project_out(_SET, i, 1)
        return s

    @cached_property
    def _projection(self) -> isl.Map:
        """The flat space to the integer dimensions (an isl map)."""
        m = isl.Map.from_domain_and_range(isl.Set.universe(self.space), self.iuniverse)
        for k, i in enumerate(self.ints):
            m = m.equate(_IN, i, _OUT, k)
        return m

    def lift(self, p: isl.Set) -> isl.Set:
        """A set over the integer dimensions as a set of the flat space (control free)."""
        return p.apply(self._projection.reverse())

    def cubes(self, b: Node) -> Iterator[dict[str, bool]]:
        """Disjoint partial assignments whose union is ``b`` (paths of the diagram)."""
        bdd = self.bdd
        if b == bdd.false:
            return
        if b == bdd.true:
            yield {}
            return
        v = b.var
        for val in (False, True):
            for rest in self.cubes(bdd.let({v: val}, b)):
                rest[v] = val
                yield rest

    def flat_of(self, b: Node, p: isl.Set) -> isl.Set:
        """The pair ``(b, p)`` as a set of the flat space."""
        lifted = self.lift(p)
        out = isl.Set.empty(self.space)
        for cube in self.cubes(b):
            part = lifted
            for j, names in enumerate(self.cur):
                lo, hi = self.bounds[j]
                fixed = [(i, cube[n]) for i, n in enumerate(names) if n in cube]
                if not fixed and (hi - lo + 1) == 1 << self.width[j]:
                    ctx = part.get_ctx()
                    part = part.lower_bound_val(_SET, self.ctrl[j], isl.Val.int_from_si(ctx, lo))
                    part = part.upper_bound_val(_SET, self.ctrl[j], isl.Val.int_from_si(ctx, hi))
                    continue
                vals = [
                    v
                    for v in range(lo, hi + 1)
                    if all(bool(((v - lo) >> i) & 1) == x for i, x in fixed)
                ]
                one = isl.Set.empty(self.space)
                for v in vals:
                    one = one.union(part.fix_val(_SET, self.ctrl[j], v))
                part = one
            out = out.union(part)
        return out.coalesce()


def _key(p: isl.Set) -> str:
    return str(p)


class BSet:
    """A set of states as disjoint ``(BDD, polyhedron)`` pairs (see the module doc), keyed
    by the polyhedron's text. ``pairs`` holds no false BDD and no empty polyhedron; it is
    not changed once the set is made (the coded forms are memoized)."""

    __slots__ = ("_coded", "_support", "ctl", "pairs")

    def __init__(self, ctl: Control, pairs: dict[str, tuple[Node, isl.Set]]) -> None:
        self.ctl = ctl
        self.pairs = pairs
        self._support: Node | None = None
        self._coded: dict[int, tuple[Node, list[tuple[str, Node, isl.Set]]]] = {}

    @staticmethod
    def build(ctl: Control, items: Iterable[tuple[Node, isl.Set]]) -> BSet:
        """The union of ``(BDD, polyhedron)`` items that may overlap: items with equal
        polyhedra are OR-ed first, then the rest united pairwise in a balanced tree."""
        false = ctl.bdd.false
        ispace = ctl.iuniverse.get_space()
        grouped: dict[str, tuple[Node, isl.Set]] = {}
        for b, p in items:
            if b == false or p.is_empty():
                continue
            # one naming of the integer dimensions (the keys are the polyhedra's texts)
            p = p.coalesce().reset_space(ispace)
            k = _key(p)
            got = grouped.get(k)
            grouped[k] = (b, p) if got is None else (got[0] | b, got[1])
        sets = [BSet(ctl, {k: bp}) for k, bp in grouped.items()]
        if not sets:
            return BSet(ctl, {})
        while len(sets) > 1:
            sets = [
                sets[i].union(sets[i + 1]) if i + 1 < len(sets) else sets[i]
                for i in range(0, len(sets), 2)
            ]
        return sets[0]

    def _new(self, items: Iterable[tuple[str, Node, isl.Set]]) -> BSet:
        """Disjoint items, merged by key."""
        out: dict[str, tuple[Node, isl.Set]] = {}
        false = self.ctl.bdd.false
        for k, b, p in items:
            if b == false:
                continue
            got = out.get(k)
            out[k] = (b, p) if got is None else (got[0] | b, p)
        return BSet(self.ctl, out)

    @property
    def support(self) -> Node:
        """The valuations where the set has states."""
        if self._support is None:
            self._support = _disjunction(self.ctl, [b for b, _ in self.pairs.values()])
        return self._support

    def coded(self, side: int) -> tuple[Node, list[tuple[str, Node, isl.Set]]]:
        """The pairs as one BDD over the control bits and index bits of ``side`` (0 or 1):
        ``⋁ b_i ∧ [index = i]``, and the pairs in index order (a multi-terminal diagram
        written with plain BDD variables: one relational operation finds which pairs of two
        sets meet, instead of one conjunction per pair of pairs)."""
        got = self._coded.get(side)
        if got is None:
            items = [(k, b, p) for k, (b, p) in self.pairs.items()]
            ctl = self.ctl
            n = len(items)
            out = _disjunction(
                ctl, [b & ctl.index_cube(side, i, n) for i, (_, b, _) in enumerate(items)]
            )
            got = self._coded[side] = (out, items)
        return got

    def meet(self, other: BSet) -> Iterator[tuple[str, Node, isl.Set, str, Node, isl.Set, Node]]:
        """The pairs of ``self`` and ``other`` whose BDDs meet, with the BDD where they do:
        ``(ka, a, p, kb, b, q, a ∧ b)``."""
        false = self.ctl.bdd.false
        if len(self.pairs) * len(other.pairs) <= 32:
            for ka, (a, p) in self.pairs.items():
                for kb, (b, q) in other.pairs.items():
                    c = a & b
                    if c != false:
                        yield ka, a, p, kb, b, q, c
            return
        fa, la = self.coded(0)
        fb, lb = other.coded(1)
        ctl = self.ctl
        both = ctl.bdd.exist(ctl.all_cur, fa & fb)
        for i, j in ctl.index_pairs(both, len(la), len(lb)):
            ka, a, p = la[i]
            kb, b, q = lb[j]
            yield ka, a, p, kb, b, q, a & b

    def _union_of(self, ka: str, p: isl.Set, kb: str, q: isl.Set) -> tuple[str, isl.Set]:
        memo = self.ctl.unions
        got = memo.get((ka, kb))
        if got is None:
            if q.is_subset(p):
                got = (ka, p)
            elif p.is_subset(q):
                got = (kb, q)
            else:
                u = p.union(q).coalesce()
                got = (_key(u), u)
            if len(memo) > 200_000:
                memo.clear()
            memo[(ka, kb)] = got
        return got

    def union(self, other: BSet) -> BSet:
        if not other.pairs:
            return self
        if not self.pairs:
            return other
        items: list[tuple[str, Node, isl.Set]] = []
        false = self.ctl.bdd.false
        for ka, _, p, kb, _, q, c in self.meet(other):
            if ka == kb:
                items.append((ka, c, p))
            else:
                ku, u = self._union_of(ka, p, kb, q)
                items.append((ku, c, u))
        theirs, mine = other.support, self.support
        for ka, (a, p) in self.pairs.items():
            rest = a & ~theirs
            if rest != false:
                items.append((ka, rest, p))
        for kb, (b, q) in other.pairs.items():
            rest = b & ~mine
            if rest != false:
                items.append((kb, rest, q))
        return self._new(items)

    def extend(self, other: BSet) -> BSet | None:
        """``self ∪ other``, or ``None`` when ``other ⊆ self``."""
        return None if other.is_subset(self) else self.union(other)

    def intersect(self, other: BSet) -> BSet:
        items = []
        for ka, _, p, kb, _, q, c in self.meet(other):
            if ka == kb:
                items.append((ka, c, p))
                continue
            r = p.intersect(q)
            if not r.is_empty():
                r = r.coalesce()
                items.append((_key(r), c, r))
        return self._new(items)

    def subtract(self, other: BSet) -> BSet:
        items = []
        false = self.ctl.bdd.false
        theirs = other.support
        for ka, (a, p) in self.pairs.items():
            rest = a & ~theirs
            if rest != false:
                items.append((ka, rest, p))
        for ka, _, p, kb, _, q, c in self.meet(other):
            if ka == kb:
                continue
            r = p.subtract(q)
            if not r.is_empty():
                r = r.coalesce()
                items.append((_key(r), c, r))
        return self._new(items)

    def coalesce(self) -> BSet:
        """The same set (the polyhedra are kept coalesced)."""
        return self

    def is_empty(self) -> bool:
        return not self.pairs

    def is_subset(self, other: BSet) -> bool:
        false = self.ctl.bdd.false
        theirs = other.support
        for a, _ in self.pairs.values():
            if a & ~theirs != false:
                return False
        return all(ka == kb or p.is_subset(q) for ka, _, p, kb, _, q, _ in self.meet(other))

    def apply(self, rel: BRel) -> BSet:
        """The image under ``rel``."""
        return rel.image(self)

    def n_basic_set(self) -> int:
        """Disjuncts over all polyhedra."""
        return sum(p.n_basic_set() for _, p in self.pairs.values())

    def n_pairs(self) -> int:
        return len(self.pairs)

    def flat(self) -> isl.Set:
        """The set in the flat isl space (each BDD path as values of the control
        dimensions)."""
        out = isl.Set.empty(self.ctl.space)
        for b, p in self.pairs.values():
            out = out.union(self.ctl.flat_of(b, p))
        return out.coalesce()

    def widen_with(
        self, old: BSet, f: Callable[[isl.Set, isl.Set], isl.Set], within: BSet | None
    ) -> BSet:
        """``f(old part, new part)`` where a valuation's polyhedron grew (intersected with
        ``within``), the new polyhedron elsewhere: the per-location widening of
        :meth:`Fixpoints.widen` once per pair of polyhedra."""
        false = self.ctl.bdd.false
        kept: list[tuple[str, Node, isl.Set]] = []
        widened: list[tuple[Node, isl.Set]] = []
        before = old.support
        for kb, (b, q) in self.pairs.items():
            rest = b & ~before
            if rest != false:
                kept.append((kb, rest, q))
        for ka, _, p, kb, _, q, c in old.meet(self):
            if ka == kb or q.is_subset(p):
                kept.append((kb, c, q))
            else:
                widened.append((c, f(p, q)))
        out = self._new(kept)
        if widened:
            w = BSet.build(self.ctl, widened)
            out = out.union(w if within is None else w.intersect(within))
        return out

    def count(self, max_operations: int) -> int | str:
        """The states (valuations times integer points), see :meth:`Fixpoints.reach_size`."""
        if not all(p.is_bounded() for _, p in self.pairs.values()):
            return "unbounded"
        return sum(
            self.ctl.count(b) * int(p.count_val().to_python()) for b, p in self.pairs.values()
        )


class _Group:
    """The pieces of one command with one integer map ``m``: ``rel`` the BDD of their
    (source, target) values over the relevant dimensions ``where``."""

    __slots__ = ("back", "m", "rel")

    def __init__(self, rel: Node, m: isl.Map) -> None:
        self.rel = rel
        self.m = m
        self.back = m.reverse()


class _BFactor:
    __slots__ = ("cur", "groups", "nxt", "ren", "ren_back")

    def __init__(self, ctl: Control, where: tuple[int, ...], groups: list[_Group]) -> None:
        self.groups = groups
        self.cur = [n for j in where for n in ctl.cur[j]]
        self.nxt = [n for j in where for n in ctl.nxt[j]]
        self.ren = dict(zip(self.nxt, self.cur, strict=True))
        self.ren_back = dict(zip(self.cur, self.nxt, strict=True))


class BRel:
    """A relation as command factors of grouped pieces (see the module doc), read forwards
    or backwards; ``loops`` gives the states of a set that are dead (their self-loops)."""

    def __init__(
        self,
        ctl: Control,
        factors: list[_BFactor],
        loops: Callable[[BSet], BSet] | None = None,
        reversed_: bool = False,
    ) -> None:
        self.ctl = ctl
        self.factors = factors
        self.loops = loops
        self.reversed_ = reversed_

    def image(self, s: BSet) -> BSet:
        """The image (the pre-image when reversed) of ``s``, dead states' loops included.
        Beyond a few pairs the set is taken index-coded (:meth:`BSet.coded`): one
        relational product per group gives the targets of every pair at once."""
        items = self._coded_images(s) if len(s.pairs) > 4 else self._images(s)
        out = BSet.build(self.ctl, items)
        if self.loops is not None:
            out = out.union(self.loops(s))
        return out

    def _coded_images(self, s: BSet) -> list[tuple[Node, isl.Set]]:
        ctl = self.ctl
        bdd = ctl.bdd
        false = bdd.false
        coded, pairs = s.coded(0)
        n = len(pairs)
        index = ctl.index_vars(0, n)
        items: list[tuple[Node, isl.Set]] = []
        for f in self.factors:
            renamed = bdd.let(f.ren_back, coded) if self.reversed_ and f.cur else coded
            for g in f.groups:
                if not f.cur:
                    c = coded & g.rel
                elif self.reversed_:
                    c = bdd.exist(f.nxt, renamed & g.rel)
                else:
                    c = bdd.let(f.ren, bdd.exist(f.cur, coded & g.rel))
                if c == false:
                    continue
                which = bdd.exist(ctl.all_cur, c)
                for m in bdd.pick_iter(which, care_vars=set(index)):
                    i = sum(1 << k for k, name in enumerate(index) if m[name])
                    region = bdd.exist(index, c & ctl.index_cube(0, i, n))
                    img = pairs[i][2].apply(g.back if self.reversed_ else g.m)
                    if not img.is_empty():
                        items.append((region, img))
        return items

    def _images(self, s: BSet) -> list[tuple[Node, isl.Set]]:
        bdd = self.ctl.bdd
        false = bdd.false
        items: list[tuple[Node, isl.Set]] = []
        for f in self.factors:
            for g in f.groups:
                for b, p in s.pairs.values():
                    if not f.cur:  # a command on the integers only
                        c = b & g.rel
                    elif self.reversed_:
                        c = bdd.exist(f.nxt, bdd.let(f.ren_back, b) & g.rel)
                    else:
                        c = bdd.let(f.ren, bdd.exist(f.cur, b & g.rel))
                    if c == false:
                        continue
                    img = p.apply(g.back if self.reversed_ else g.m)
                    if not img.is_empty():
                        items.append((c, img))
        return items

    def reverse(self) -> BRel:
        return BRel(self.ctl, self.factors, self.loops, not self.reversed_)

    def with_loops(self, loops: Callable[[BSet], BSet]) -> BRel:
        return BRel(self.ctl, self.factors, loops, self.reversed_)

    def n_groups(self) -> int:
        return sum(len(f.groups) for f in self.factors)


class BddSplit:
    """``base`` (a concrete encoding or a partial abstraction) with :class:`BSet` sets: the
    interface :class:`~absmc.engines.symbolic.fixpoint.Fixpoints` uses, as
    :class:`~absmc.engines.symbolic.composite.Split` has it."""

    #: the bits are control (BDD variables), never dimensions of the polyhedra
    loose_bits = False

    def __init__(
        self, base: Encoding | PartialAbstraction, tick: Callable[[], None] | None = None
    ) -> None:
        self.base = base
        self.system = base.system
        self.tick = tick
        #: the command factoring of the split representation (its relevant dimensions and
        #: pieces), reused
        self._split = Split(base, tick=tick)
        space = base.domain.get_space()
        self.ctl = Control(space, base.control())
        self._atoms: dict[tuple[Expr, bool], BSet] = {}
        self._conc: BddSplit | None = None

    @property
    def abstraction(self) -> PartialAbstraction | None:
        return self.base if isinstance(self.base, PartialAbstraction) else None

    @property
    def enc(self) -> Encoding:
        return self.base.enc if isinstance(self.base, PartialAbstraction) else self.base

    @property
    def exact(self) -> bool:
        return self.base.exact

    # -- flat sets to pairs ----------------------------------------------------------------
    def cut(self, s: isl.Set) -> BSet:
        """The :class:`BSet` of the flat set ``s``: a basic set whose constraints keep the
        control and the integer dimensions apart is one pair (its control constraints as a
        BDD); any other is split on a control dimension of a mixed constraint, value by
        value."""
        ctl = self.ctl
        items: list[tuple[Node, isl.Set]] = []
        cpos = set(ctl.ctrl)
        stack = list(s.get_basic_sets())
        while stack:
            bs = stack.pop()
            if bs.is_empty():
                continue
            mixed = _mixed(bs, cpos, ctl.ints)
            if mixed is None:
                items.append((ctl.control_bdd(bs), ctl.to_int(isl.Set.from_basic_set(bs))))
                continue
            j = ctl.ctrl.index(mixed)
            lo, hi = ctl.bounds[j]
            for v in range(lo, hi + 1):
                part = bs.fix_val(_SET, mixed, v)
                if not part.is_empty():
                    stack.append(part)
        return BSet.build(ctl, items)

    @cached_property
    def domain(self) -> BSet:
        return self.cut(self.base.domain)

    @cached_property
    def initial(self) -> BSet:
        return self.cut(self.base.initial)

    def atom(self, e: Expr, over: bool, within: BSet) -> BSet:
        got = self._atoms.get((e, over))
        if got is None:
            got = self._atoms[(e, over)] = self.cut(self.base.atom(e, over))
        return within.intersect(got)

    # -- relations -------------------------------------------------------------------------
    def _factor(self, ci: int, m: isl.Map) -> tuple[_BFactor, BSet]:
        """Command ``ci``'s flat relation ``m`` as grouped pieces, and its enabled states.
        The control dimensions it frames (:meth:`Split._relevant`) are projected out (the
        BDD leaves their variables alone); a basic map is split value by value only on a
        relevant control dimension that one of its constraints ties to an integer (or an
        existential variable); its other constraints on the relevant dimensions become a BDD
        over their current and next bits, its integer part an isl map (ALV: guards and
        assignments on finite variables as BDDs, on integers as polyhedra)."""
        ctl = self.ctl
        rel = set(self._split._relevant(ci, m))
        where = tuple(j for j, i in enumerate(ctl.ctrl) if i in rel)
        # the framed control dimensions out, on both sides (exact: m frames them)
        dims = list(range(m.dim(_IN)))
        for i in reversed(ctl.ctrl):
            if i not in rel:
                m = m.project_out(_IN, i, 1).project_out(_OUT, i, 1)
                dims.pop(i)
        # dims[k]: the flat position of the k-th remaining dimension
        ctrl_of = {k: ctl.ctrl.index(i) for k, i in enumerate(dims) if i in rel}
        ints = [k for k, i in enumerate(dims) if i not in rel]
        false = ctl.bdd.false
        valid = ctl.bdd.true
        for j in where:
            lo, hi = ctl.bounds[j]
            for primed in (False, True):
                valid &= ctl.linear([(j, primed, 1)], -lo, False)
                valid &= ctl.linear([(j, primed, -1)], hi, False)
        rels: dict[str, Node] = {}
        maps: dict[str, isl.Map] = {}
        stack = list(m.get_basic_maps())
        while stack:
            if self.tick is not None and len(stack) % 64 == 0:
                self.tick()
            bm = stack.pop()
            if bm.is_empty():
                continue
            split = _mixed_map(bm, ctrl_of, ints)
            if split is not None:
                kind, k = split
                lo, hi = ctl.bounds[ctrl_of[k]]
                for v in range(lo, hi + 1):
                    part = bm.fix_val(kind, k, v)
                    if not part.is_empty():
                        stack.append(part)
                continue
            b = valid
            ndiv = bm.dim(isl.dim_type.div)
            for c in bm.get_constraints():
                terms = []
                other = any(
                    not c.get_coefficient_val(kd, k).is_zero() for kd in (_IN, _OUT) for k in ints
                ) or any(
                    not c.get_coefficient_val(isl.dim_type.div, d).is_zero() for d in range(ndiv)
                )
                if other:
                    continue
                for k, j in ctrl_of.items():
                    for kd, primed in ((_IN, False), (_OUT, True)):
                        x = c.get_coefficient_val(kd, k)
                        if not x.is_zero():
                            terms.append((j, primed, int(x.to_python())))
                const = int(c.get_constant_val().to_python())
                if not terms:
                    if not (const == 0 if c.is_equality() else const >= 0):
                        b = false
                        break
                    continue
                b &= ctl.linear(terms, const, c.is_equality())
            if b == false:
                continue
            im = isl.Map.from_basic_map(bm)
            for k in sorted(ctrl_of, reverse=True):
                im = im.project_out(_IN, k, 1).project_out(_OUT, k, 1)
            im = im.coalesce()
            key = str(im)
            maps[key] = im
            rels[key] = rels[key] | b if key in rels else b
        groups = [_Group(rels[k], maps[k]) for k in rels]
        factor = _BFactor(ctl, where, groups)
        enabled = [(ctl.bdd.exist(factor.nxt, g.rel), g.m.domain()) for g in groups]
        return factor, BSet.build(ctl, enabled)

    @cached_property
    def _built(self) -> tuple[list[_BFactor], list[BSet]]:
        base = self.base
        factors, enabled = [], []
        for ci in range(len(self.system.commands)):
            if self.tick is not None:
                self.tick()
            if isinstance(base, PartialAbstraction) and base.frames(ci):
                m = _framing(base, ci)
            elif isinstance(base, PartialAbstraction):
                # not coalesced: the bits' constraints of each basic map go into a BDD and
                # its integer part is grouped by text (airportSM-bk4's first taxiway
                # command: 167 of 205 s were the chunked coalescing of its 16 bits)
                m = base.relation(ci, self.tick, coalesce=False)
            else:
                m = base.relations[ci]
            f, en = self._factor(ci, m)
            factors.append(f)
            enabled.append(en)
        return factors, enabled

    @cached_property
    def transition(self) -> BRel:
        return BRel(self.ctl, self._built[0])

    @cached_property
    def total(self) -> BRel:
        """The transition relation with a self-loop on every dead state (the CTL
        convention)."""
        return self.transition.with_loops(self.dead_within)

    @cached_property
    def inverse(self) -> BRel:
        return self.total.reverse()

    def dead_within(self, s: BSet) -> BSet:
        """The dead states of ``s``: concretely ``s`` minus each command's enabled states;
        on an abstraction the states of ``s`` whose concretization has a dead state,
        ``s ∩ α(dead ∩ γ(s))``."""
        base = self.base
        if not isinstance(base, PartialAbstraction):
            out = s
            for en in self._built[1]:
                if out.is_empty():
                    break
                if self.tick is not None:
                    self.tick()
                out = out.subtract(en)
            return out
        if s.is_empty():
            return s
        if self._conc is None:
            self._conc = BddSplit(base.enc, self.tick)
        conc = self._conc
        dead = conc.dead_within(conc.cut(base.concretize(s.flat())))
        if dead.is_empty():
            return BSet(self.ctl, {})
        return s.intersect(self.cut(base.alpha(dead.flat())))

    # -- concrete states -------------------------------------------------------------------
    def concretize(self, s: BSet) -> isl.Set:
        return self.base.concretize(s.flat())

    def contains(self, s: BSet, state: State) -> bool:
        vals = self.base.values_of(state)
        key = tuple(vals[i] for i in self.ctl.ctrl)
        point = None
        for b, p in s.pairs.values():
            if self.ctl.holds(b, key):
                if point is None:
                    point = self.ctl.to_int(self.base.abstract_of(state))
                return bool(point.is_subset(p))
        return False


def _framing(base: PartialAbstraction, ci: int) -> isl.Map:
    """A framing command's abstract relation (:meth:`PartialAbstraction.frames`) without the
    restriction of its source bits to :attr:`PartialAbstraction.consistent`: ``T`` on the
    kept variables, every bit ``0 <= b = b' <= 1``. On the states of the abstract domain it
    is the abstract relation (a framing command keeps a consistent state consistent, both
    ways), and the fixpoints intersect every image with the domain or the reachable states;
    the BDDs keep the bits, so the ``2^k`` valuations of the consistency set (airportSM-bk4's
    sixteen bakery atoms: 308) are never written out as isl disjuncts and coalesced."""
    nk, k = len(base.kept), len(base.predicates)
    rel = base.enc.relations[ci]
    for i in reversed(base.abstracted):
        rel = rel.project_out(_IN, i, 1).project_out(_OUT, i, 1)
    rel = rel.add_dims(_IN, k).add_dims(_OUT, k)
    ctx = rel.get_ctx()
    zero, one = isl.Val.int_from_si(ctx, 0), isl.Val.int_from_si(ctx, 1)
    for j in range(k):
        rel = rel.equate(_IN, nk + j, _OUT, nk + j)
        rel = rel.lower_bound_val(_IN, nk + j, zero).upper_bound_val(_IN, nk + j, one)
    return rel.coalesce()


def _disjunction(ctl: Control, nodes: list[Node]) -> Node:
    """The OR of ``nodes``, in a balanced tree (each OR of two small diagrams, rather than
    one growing diagram OR-ed with every node in turn)."""
    if not nodes:
        return ctl.bdd.false
    while len(nodes) > 1:
        nodes = [
            nodes[i] | nodes[i + 1] if i + 1 < len(nodes) else nodes[i]
            for i in range(0, len(nodes), 2)
        ]
    return nodes[0]


def _mixed(bs: isl.BasicSet, cpos: set[int], ints: list[int]) -> int | None:
    """A control dimension that a constraint of ``bs`` ties to an integer dimension (or to
    an existential variable), ``None`` when there is none."""
    ndiv = bs.dim(isl.dim_type.div)
    for c in bs.get_constraints():
        ctrl = [p for p in cpos if not c.get_coefficient_val(_SET, p).is_zero()]
        if not ctrl:
            continue
        if any(not c.get_coefficient_val(_SET, p).is_zero() for p in ints) or any(
            not c.get_coefficient_val(isl.dim_type.div, d).is_zero() for d in range(ndiv)
        ):
            return min(ctrl)
    return None


def _mixed_map(
    bm: isl.BasicMap, ctrl_of: dict[int, int], ints: list[int]
) -> tuple[isl.dim_type, int] | None:
    """A control dimension (its side and position) that a constraint of ``bm`` ties to an
    integer dimension or an existential variable, ``None`` when there is none."""
    ndiv = bm.dim(isl.dim_type.div)
    for c in bm.get_constraints():
        ctrl = [
            (kd, k)
            for kd in (_IN, _OUT)
            for k in ctrl_of
            if not c.get_coefficient_val(kd, k).is_zero()
        ]
        if not ctrl:
            continue
        if any(
            not c.get_coefficient_val(kd, k).is_zero() for kd in (_IN, _OUT) for k in ints
        ) or any(not c.get_coefficient_val(isl.dim_type.div, d).is_zero() for d in range(ndiv)):
            return ctrl[0]
    return None
