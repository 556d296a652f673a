"""Counter-example guided abstraction and approximation refinement, CEGAAR (paper 002 §4,
Fig. 2-11).

:func:`run_cegaar` keeps a breadth-first worklist of predicate sets, starting from the seed
set (the model's and ``--predicate``'s predicates; default: :func:`default_seeds`, from the
property alone: its atoms and those of the guards it depends on). Each round abstracts the
System with the current set (:class:`~absmc.engines.symbolic.abstract.PartialAbstraction`),
computes the over-approximated negation of the property and

* stops with ``holds`` when no abstract initial state satisfies it (Fig. 2, lines 22-23);
* stops with ``violated`` when a concrete witness is found and replayed;
* otherwise looks for the divergence point over the whole witness of the negation
  (:class:`WitnessWalk`, Figs. 3-11: ``EX``, ``E[U]``, ``EG``, ``&&``, ``||``, atoms): the
  abstract witness is followed on sets of abstract states beside the exact concrete sets
  reached along it (``C_i = post(C_{i-1}) ∩ γ(Â_i)``); where ``C_i`` becomes empty, the
  *dead-end* states are ``C_{i-1}`` and the *bad* states those of ``γ(Â_{i-1})`` with a
  successor in ``γ(Â_i)`` that share a dead-end state's kept (concrete) values. No bad state:
  the divergence is due to approximation (APP: delay widening and raise the EG bound by the
  witness depth, same predicates). Otherwise due to abstraction (ABS): the refinement
  predicate is a half-space interpolant separating dead-end from bad states
  (:func:`interpolants`, [15]); without one, every candidate half-space of the dead end. Each
  refinement predicate extends the current set into a new worklist entry (Fig. 2, lines
  31-33).

Every round is a row (``--table``; ``rounds`` in ``--json``): predicate set, refinement kind,
abstraction and fixpoint time, memory, the abstracted variables and Table 2's ``P?``,
conclusive or not.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from typing import Any

import islpy as isl

from absmc.engines.symbolic.abstract import PartialAbstraction
from absmc.engines.symbolic.budget import IslBudget
from absmc.engines.symbolic.composite import CSet, Split
from absmc.engines.symbolic.encode import Encoding
from absmc.engines.symbolic.fixpoint import Fixpoints
from absmc.ir.ctl import And, Atom, Formula, Not, Or, Temporal, Until, subformulas
from absmc.ir.expr import Const, Expr, Var, atoms, const, free_vars, neg, op
from absmc.ir.printer import format_expr
from absmc.ir.sorts import INT
from absmc.ir.system import System
from absmc.kernel.run.result import peak_rss_mb

__all__ = ["INVALID", "Divergence", "WitnessWalk", "default_seeds", "divergence", "interpolants"]


@dataclass(frozen=True)
class Divergence:
    """Where an abstract witness leaves the concrete system: ``kind`` ``"abstraction"`` (with
    the ``deadend`` and ``bad`` concrete sets) or ``"approximation"``; ``depth`` the step."""

    kind: str
    depth: int
    deadend: isl.Set | None = None
    bad: isl.Set | None = None


def default_seeds(system: System, negf: Formula, enc: Encoding | None = None) -> tuple[Expr, ...]:
    """The seed predicates of one property, from the property alone (whichever other
    properties are checked): its atoms over an unbounded integer, and the atoms over an
    unbounded integer of the guards it depends on —

    * a safety property (no ``EG`` in the negation): the guards of the commands that can
      change the truth of one of its atoms (a pair of the command's relation with the atom
      false before and true after, or the reverse; with ``enc`` None, the commands assigning
      a variable of an atom);
    * a liveness property (an ``EG`` in the negation: an infinite path, on which every
      process may keep moving): the guards of every command in its cone of influence (the
      commands assigning a variable of an atom, then of those commands' guards and
      right-hand sides, to a fixpoint).

    Not every guard of every process for safety: airportSM-bk2's taxiway exclusion gets the
    four bakery atoms of the taxiway entries (abstracting ``b1, b2``; the runway's tickets
    stay concrete), where all guards would add ``r1 <= rs, r2 <= rs`` and make the run about
    twice as costly (2 rounds either way; docs/symbolic.md, *the seed rule measured*). A
    liveness seed keeps the whole cone of influence: a refinement predicate is written over
    an already abstracted variable, so the seed must abstract every integer the witness needs
    (from plane 1's guards alone, airportSM-bk2's landing runs 10 rounds out)."""
    data = {v.name for v in system.data_vars}
    out: list[Expr] = []

    def add(cands: tuple[Expr, ...]) -> None:
        for a in cands:
            if free_vars(a) & data and a not in out and not isinstance(a, Var):
                out.append(a)

    props = [g.expr for g in subformulas(negf) if isinstance(g, Atom)]
    for e in props:
        add(atoms(e))
    commands = system.commands
    if any(isinstance(g, Temporal) and g.op == "EG" for g in subformulas(negf)):
        watched: set[str] = set().union(*(free_vars(e) for e in props)) if props else set()
        used: set[int] = set()
        while True:
            new = [
                i
                for i, c in enumerate(commands)
                if i not in used and any(n in watched for n, _ in c.updates)
            ]
            if not new:
                break
            used.update(new)
            for i in new:
                c = commands[i]
                watched |= free_vars(c.guard)
                for n, e in c.updates:
                    if n in watched:
                        watched |= free_vars(e)
        chosen = sorted(used)
    else:
        chosen = [i for i, c in enumerate(commands) if _changes(system, enc, i, props)]
    for i in chosen:
        add(atoms(commands[i].guard))
    return tuple(out)


def _changes(system: System, enc: Encoding | None, ci: int, props: list[Expr]) -> bool:
    """Whether command ``ci`` can change the truth of one of the atoms ``props``."""
    c = system.commands[ci]
    written = {n for n, _ in c.updates}
    for e in props:
        for a in atoms(e) or (e,):
            if not free_vars(a) & written:
                continue
            if enc is None:
                return True
            yes, no = enc.states(a), enc.states(neg(a))
            rel = enc.relations[ci]
            if not rel.intersect_domain(yes).intersect_range(no).is_empty():
                return True
            if not rel.intersect_domain(no).intersect_range(yes).is_empty():
                return True
    return False


#: the answer of a witness walk whose abstract states do not satisfy the formula
INVALID = "invalid"


class WitnessWalk:
    """Divergence detection over the whole abstract witness of an ECTL formula (paper 002
    Figs. 3-11): :meth:`walk` follows the formula's witness tree from the abstract initial
    states ``Â`` with the concrete set ``C ⊆ γ(Â)`` reached along it (``C_i =
    post(C_{i-1}) ∩ γ(Â_i)``, on sets of states, not one model per step), ``EX`` one step
    (Fig. 7), ``E[f U g]`` down the layers of the abstract ``E[U]`` with ``f``'s witness at
    every step (Fig. 8), ``EG f`` along the abstract ``EG`` set until the concrete sets cycle
    (Fig. 9), ``&&`` both subformulas (Fig. 10), ``||`` the left one and, when it does not
    hold there, the right one (Fig. 11), an atom checked on the concrete set. Returns the
    first :class:`Divergence`, ``None`` (no divergence: the witness is matched concretely) or
    :data:`INVALID`. Raises :class:`Deadline` through the fixpoints' ``tick``."""

    def __init__(self, fix: Fixpoints, max_depth: int = 64) -> None:
        self.fix = fix
        sp = fix.enc
        assert isinstance(sp, Split)  # CEGAAR's rounds use the split sets
        self.sp: Split = sp
        self.conc = fix.enc.enc
        absn = fix.enc.abstraction
        self.abstracted = [] if absn is None else list(absn.abstracted)
        self.max_depth = max_depth
        self.depth = 0
        self._back: isl.Map | None = None

    # -- helpers ---------------------------------------------------------------------------
    def gamma(self, a: CSet) -> isl.Set:
        """γ of an abstract composite set: a flat set of concrete states (Eq. 2)."""
        return self.sp.concretize(a)

    def back(self) -> isl.Map:
        """The inverse of the totalized concrete relation (built once)."""
        if self._back is None:
            self._back = self.conc.total.reverse()
        return self._back

    def sol(self, f: Formula) -> CSet:
        """The round's over-approximated solution set of ``f`` (memoized by the fixpoints)."""
        s = self.fix.solve(f, True).states
        assert isinstance(s, CSet)
        return s

    def same_kept(self, s: isl.Set) -> isl.Set:
        """The concrete states that agree with one of ``s`` on every kept (not abstracted)
        dimension."""
        for i in reversed(self.abstracted):
            s = s.project_out(isl.dim_type.set, i, 1).insert_dims(isl.dim_type.set, i, 1)
        return s

    def split(self, dead: isl.Set, bad: isl.Set) -> Divergence:
        """ABS with the dead-end and the bad states that share the dead-end's kept values
        (only the abstracted dimensions can tell them apart); APP when there are none (the
        kept values came from an approximation, Fig. 5 line 10)."""
        bad = bad.intersect(self.same_kept(dead)).coalesce()
        if bad.is_empty():
            return Divergence("approximation", self.depth)
        return Divergence("abstraction", self.depth, dead.coalesce(), bad)

    def step(self, a: CSet, c: isl.Set, target: CSet) -> tuple[CSet, isl.Set] | Divergence:
        """One step of the witness into ``target`` (Fig. 5): the abstract successors and the
        concrete ones among them, or the divergence where the concrete set dies."""
        self.fix.tick()
        self.depth += 1
        nxt = a.apply(self.sp.total).intersect(target).coalesce()
        if nxt.is_empty():
            return Divergence("approximation", self.depth)
        cn = c.apply(self.conc.total).intersect(self.gamma(nxt)).coalesce()
        if not cn.is_empty():
            return nxt, cn
        for k, p in a.parts.items():
            ak = CSet({k: p}, a.empty)
            gk = self.gamma(ak)
            dead = c.intersect(gk)
            if dead.is_empty():
                continue
            for d, q in ak.apply(self.sp.total).intersect(nxt).coalesce().parts.items():
                into = self.gamma(CSet({d: q}, a.empty)).apply(self.back())
                div = self.split(dead, gk.intersect(into))
                if div.kind == "abstraction":
                    return div
        return Divergence("approximation", self.depth)

    # -- Figs. 6-11 ------------------------------------------------------------------------
    def walk(self, f: Formula, a: CSet, c: isl.Set) -> Divergence | str | None:
        """The witness of ``f`` from ``a`` (abstract) and ``c`` (concrete, ``c ⊆ γ(a)``)."""
        a = a.intersect(self.sol(f)).coalesce()  # Fig. 6: validity
        if a.is_empty():
            return INVALID
        c = c.intersect(self.gamma(a)).coalesce()
        if c.is_empty():
            return INVALID
        e = f.expr if isinstance(f, Atom) else None
        if isinstance(f, Not) and isinstance(f.arg, Atom):
            e = neg(f.arg.expr)
        if e is not None:
            truth = self.conc.states(e)
            if c.intersect(truth).is_empty():
                return self.split(c, self.gamma(a).intersect(truth))
            return None
        if isinstance(f, Not):
            pushed = push_negation(f)
            if pushed == f:
                return None  # a universal subformula: not walked
            return self.walk(pushed, a, c)
        if isinstance(f, And):
            got = self.walk(f.left, a, c)
            return got if got is not None else self.walk(f.right, a, c)
        if isinstance(f, Or):
            got = self.walk(f.left, a, c)
            return self.walk(f.right, a, c) if got == INVALID else got
        if isinstance(f, Until):
            return self._until(f, a, c)
        assert isinstance(f, Temporal)
        if f.op == "EX":
            st = self.step(a, c, self.sol(f.arg))
            return st if isinstance(st, Divergence) else self.walk(f.arg, *st)
        return self._globally(f, a, c)

    def _until(self, f: Until, a: CSet, c: isl.Set) -> Divergence | str | None:
        """Fig. 8: the layers ``L_0 = g``, ``L_{j+1} = L_j ∪ (f ∩ pre(L_j))`` of the abstract
        ``E[f U g]`` (exact images: a state only in the widened solution is reached by none),
        then down them from the first layer holding concrete states."""
        left, right = self.sol(f.left), self.sol(f.right)
        r = self.fix.restriction()
        assert isinstance(r, CSet)
        layers = [right]
        while True:
            self.fix.tick()
            hit = a.intersect(layers[-1])
            if not hit.is_empty() and not c.intersect(self.gamma(hit)).is_empty():
                break
            back = self.fix.pre(layers[-1])
            assert isinstance(back, CSet)
            nxt = layers[-1].union(left.intersect(back).intersect(r))
            nxt = nxt.coalesce()
            if len(layers) > self.max_depth or nxt.is_subset(layers[-1]):
                # the abstract states reach the target only through widened states
                return Divergence("approximation", self.depth + len(layers))
            layers.append(nxt)
        j = len(layers) - 1
        a = a.intersect(layers[j]).coalesce()
        c = c.intersect(self.gamma(a)).coalesce()
        while True:
            there = a.intersect(right).coalesce()
            if not there.is_empty():
                ct = c.intersect(self.gamma(there)).coalesce()
                if not ct.is_empty():
                    return self.walk(f.right, there, ct)
            got = self.walk(f.left, a, c)
            if got is not None or j == 0:
                return Divergence("approximation", self.depth) if got == INVALID else got
            j -= 1
            st = self.step(a, c, layers[j])
            if isinstance(st, Divergence):
                return st
            a, c = st

    def _globally(self, f: Temporal, a: CSet, c: isl.Set) -> Divergence | str | None:
        """Fig. 9: along the abstract ``EG`` set, ``f``'s witness at every state, until the
        concrete sets close a cycle (no divergence) or the depth runs out (approximation)."""
        target = self.sol(f)
        seen = c
        for _ in range(self.max_depth):
            got = self.walk(f.arg, a, c)
            if got is not None:
                return Divergence("approximation", self.depth) if got == INVALID else got
            st = self.step(a, c, target)
            if isinstance(st, Divergence):
                return st
            a, c = st
            if c.is_subset(seen):
                return None
            seen = seen.union(c).coalesce()
        return Divergence("approximation", self.depth)


def push_negation(f: Not) -> Formula:
    """``!f`` with the negation moved below ``!``, ``&&`` and ``||`` (De Morgan), so that the
    walk sees the conjunctions and disjunctions of an ENF formula such as ``!(!p || !EG q)``;
    a negated atom or temporal formula stays."""
    g = f.arg
    if isinstance(g, Not):
        return push_negation(g.arg) if isinstance(g.arg, Not) else g.arg
    if isinstance(g, Or):
        return And(_neg(g.left), _neg(g.right))
    if isinstance(g, And):
        return Or(_neg(g.left), _neg(g.right))
    return f


def _neg(f: Formula) -> Formula:
    return push_negation(Not(f)) if not isinstance(f, Not) else f.arg


def divergence(
    absn: Split, fix: Fixpoints, negf: Formula, max_depth: int = 64
) -> Divergence | None:
    """The divergence point of the abstract witness of ``negf`` from the abstract initial
    states (:class:`WitnessWalk`, Fig. 3); ``None`` when the whole witness is matched by
    concrete states and no approximation was used. With approximations (widening, truncated
    ``EG``) and no divergence found: an approximation divergence (raise the bounds)."""
    walk = WitnessWalk(fix, max_depth)
    a0 = absn.initial.intersect(walk.sol(negf)).coalesce()
    c0 = absn.enc.initial.intersect(walk.gamma(a0)).coalesce()
    got = walk.walk(negf, a0, c0)
    if isinstance(got, Divergence):
        return got
    if fix.stats.widenings or fix.stats.truncations or got == INVALID:
        return Divergence("approximation", max(walk.depth, 1))
    return None


def interpolants(
    system: System, deadend: isl.Set, bad: isl.Set, abstracted: frozenset[str] = frozenset()
) -> tuple[list[Expr], str]:
    """Refinement predicates: half-space interpolants [15] — half-spaces that contain every
    dead-end state and no bad state — else every candidate half-space of the dead-end over an
    abstracted variable; ``(predicates, how)``. The candidates: the constraints of the
    dead-end hull (an equality gives two half-spaces; control variables fixed in the hull
    replaced by their values) and the tightest bounds over the dead-end of ``x``, ``x - y``
    and ``x + y`` for the unbounded integers ``x, y`` (octagonal templates: a dead end of one
    state, bakery2's ``a1 = 2, a2 = 1`` against the bad ``a1 = a2``, has only coordinate
    equalities in its hull, while ``a1 >= a2 + 1`` separates). With ``abstracted``, only
    half-spaces over at least one abstracted variable, written on the left-hand side (the side
    a predicate abstracts, :mod:`~absmc.engines.symbolic.abstract`). Simplest first (fewest
    variables, then smallest coefficients)."""
    hull = deadend.convex_hull()
    flat = isl.Set.from_basic_set(hull)
    fixed: dict[int, int] = {}
    for i, v in enumerate(system.variables):
        if v.is_control:
            val = flat.plain_get_val_if_fixed(isl.dim_type.set, i)
            if not val.is_nan():
                fixed[i] = int(val.to_python())
    space = deadend.get_space()
    halves: list[tuple[dict[int, int], int]] = []
    for c in hull.get_constraints():
        coefs = {
            i: int(c.get_coefficient_val(isl.dim_type.set, i).to_python())
            for i in range(len(system.variables))
        }
        k0 = int(c.get_constant_val().to_python())
        for i, x in fixed.items():
            k0 += coefs.pop(i) * x
        coefs = {i: k for i, k in coefs.items() if k}
        if not coefs or any(system.variables[i].is_control for i in coefs):
            continue
        for sign in (1, -1) if c.is_equality() else (1,):
            halves.append(({i: sign * k for i, k in coefs.items()}, sign * k0))
    data = [i for i, v in enumerate(system.variables) if not v.is_control]
    templates: list[dict[int, int]] = []
    for n, i in enumerate(data):
        templates += [{i: 1}, {i: -1}]
        for j in data[n + 1 :]:
            templates += [{i: 1, j: -1}, {i: -1, j: 1}, {i: 1, j: 1}, {i: -1, j: -1}]
    separating: list[tuple[dict[int, int], int]] = []
    for t in templates:
        if abstracted and not any(system.variables[i].name in abstracted for i in t):
            continue
        aff = isl.Aff.zero_on_domain(isl.LocalSpace.from_space(space))
        for i, k in t.items():
            aff = aff.set_coefficient_val(isl.dim_type.in_, i, k)
        lo = deadend.min_val(aff)
        if lo.is_neginfty() or lo.is_nan():
            continue
        low = int(lo.to_python())
        halves.append((dict(t), -low))  # t >= low: the dead end's own bound
        top = bad.max_val(aff)
        if top.is_infty() or top.is_nan():
            continue
        # t >= k separates for every k in (max over bad, min over dead]: the k nearest 0
        # (small constants generalize beyond the dead end, Jhala & McMillan's observation [20])
        k = min(max(0, int(top.to_python()) + 1), low)
        if int(top.to_python()) < low:
            separating.append((dict(t), -k))
    found: list[tuple[tuple[int, int], Expr]] = []
    every: list[tuple[tuple[int, int], Expr]] = []
    for n, (coefs, k0) in enumerate(halves + separating):
        if abstracted and not any(system.variables[i].name in abstracted for i in coefs):
            continue
        pred = _half_space_expr(system, coefs, k0, abstracted)
        if pred is None:
            continue
        key = (len(coefs), sum(abs(k) for k in coefs.values()) + abs(k0))
        if all(p != pred for _, p in every):
            every.append((key, pred))
        if any(p == pred for _, p in found):
            continue
        if n >= len(halves) or _half_space(space, coefs, k0).intersect(bad).is_empty():
            found.append((key, pred))
    if found:  # one compact predicate, as [15] computes (the simplest separating one)
        return [min(found, key=lambda x: x[0])[1]], "half-space interpolant"
    return [p for _, p in sorted(every, key=lambda x: x[0])], "dead-end constraints"


def _half_space(space: isl.Space, coefs: dict[int, int], k0: int) -> isl.Set:
    """``sum coefs[i]·x_i + k0 >= 0`` in ``space``."""
    c = isl.Constraint.inequality_alloc(isl.LocalSpace.from_space(space))
    for i, k in coefs.items():
        c = c.set_coefficient_val(isl.dim_type.set, i, isl.Val.int_from_si(space.get_ctx(), k))
    c = c.set_constant_val(isl.Val.int_from_si(space.get_ctx(), k0))
    return isl.Set.universe(space).add_constraint(c)


def _half_space_expr(
    system: System, coefs: dict[int, int], k0: int, abstracted: frozenset[str]
) -> Expr | None:
    """``sum coefs[i]·x_i + k0 >= 0`` as an IR predicate ``lhs >= rhs`` (or ``<=`` with the
    signs turned) with the abstracted variables on the left (all of them when none is
    abstracted); ``None`` without an unbounded integer variable."""
    names = {i: system.variables[i].name for i in coefs}
    if not any(not system.variables[i].is_control for i in coefs):
        return None
    left = [next((i for i in coefs if names[i] in abstracted), next(iter(coefs)))]
    right = [i for i in coefs if i not in left]
    flip = coefs[left[0]] < 0
    s = -1 if flip else 1

    def total(ids: list[int], factor: int, k: int) -> Expr:
        terms: list[Expr] = []
        for i in ids:
            ref = system.variables[i].ref()
            m = factor * coefs[i]
            terms.append(ref if m == 1 else op("*", const(m), ref))
        out: Expr | None = None
        for t in terms:
            out = t if out is None else op("+", out, t)
        if k or out is None:
            kk: Expr = const(k) if k else Const(0, INT)
            out = kk if out is None else op("+", out, kk)
        return out

    lhs = total(left, s, 0)
    rhs = total(right, -s, -s * k0)
    return op("<=" if flip else ">=", lhs, rhs)


def round_row(
    n: int,
    preds: tuple[Expr, ...],
    kind: str,
    abs_s: float,
    fix_s: float,
    conclusive: bool,
    system: System | None = None,
) -> dict[str, Any]:
    """One row of the ``--table`` / ``rounds`` output (paper 002 Table 2's columns): the
    round, its predicate set, ``refinement`` (``seed``, ``ABS`` or ``APP``: how this round's
    set or bounds came about), abstraction and fixpoint seconds, peak memory (MiB),
    ``abstracted`` (the variables the set abstracts) and ``P?`` (Table 2's column: ``Yes``
    when some unbounded integer stays concrete — a partial abstraction — ``No`` when the set
    abstracts every one), whether the round was conclusive."""
    row: dict[str, Any] = {
        "round": n,
        "predicates": ", ".join(format_expr(p) for p in preds) or "(none)",
        "refinement": kind,
        "abstract_s": round(abs_s, 4),
        "fixpoint_s": round(fix_s, 4),
        "memory_mb": round(peak_rss_mb(), 1),
    }
    if system is not None:
        names = abstracted_names(system, preds)
        ints = [v.name for v in system.data_vars if not v.is_control]
        row["abstracted"] = ", ".join(x for x in ints if x in names) or "-"
        row["P?"] = "Yes" if any(x not in names for x in ints) else "No"
    row["conclusive"] = conclusive
    return row


def abstracted_names(system: System, preds: tuple[Expr, ...]) -> set[str]:
    """The unbounded integer variables a predicate set abstracts (the rule of
    :mod:`~absmc.engines.symbolic.abstract`)."""
    if not preds:
        return set()
    return {
        v.name
        for i, v in enumerate(system.variables)
        if i in PartialAbstraction.abstracted_of(system, preds)
    }


class Worklist:
    """The BFS worklist of predicate sets (Fig. 2, lines 7-8 and 31-33), never repeating a
    set."""

    def __init__(self, seeds: tuple[Expr, ...]) -> None:
        self.queue: deque[tuple[Expr, ...]] = deque([seeds])
        self.seen: set[frozenset[Expr]] = {frozenset(seeds)}

    def pop(self) -> tuple[Expr, ...] | None:
        return self.queue.popleft() if self.queue else None

    def extend(self, base: tuple[Expr, ...], new: list[Expr]) -> int:
        added = 0
        for q in new:
            s = frozenset((*base, q))
            if q in base or s in self.seen:
                continue
            self.seen.add(s)
            self.queue.append((*base, q))
            added += 1
        return added


def abstraction_of(
    enc: Encoding, preds: tuple[Expr, ...], deadline: float | None = None
) -> tuple[Split, float]:
    """The partial abstraction (composite) and the seconds it took to build its relations.
    Raises :class:`Deadline` past ``deadline`` (checked between commands) and isl's quota
    error inside an operation that would overrun it (:class:`IslBudget`)."""
    t0 = time.monotonic()
    absn = Split(PartialAbstraction(enc, preds), tick=IslBudget(deadline).tick)
    _ = absn.total
    _ = absn.initial
    return absn, time.monotonic() - t0


def run_cegaar(
    system: System,
    enc: Encoding,
    negf: Formula,
    seeds: tuple[Expr, ...],
    widen_delay: int,
    eg_bound: int,
    restrict: bool,
    max_rounds: int,
    deadline: float | None,
    witness: Any,
) -> tuple[str, str, Any, list[dict[str, Any]]]:
    """The CEGAAR loop of Fig. 2: ``(verdict, reason, trace, rounds)`` with verdict
    ``holds``, ``violated`` or ``unknown``. ``witness(fix)`` tries a concrete witness on a
    round's fixpoints and returns a replayed trace or ``None``."""
    work = Worklist(seeds)
    quota = IslBudget(deadline)
    rows: list[dict[str, Any]] = []
    preds: tuple[Expr, ...] | None = None
    wd, eb = widen_delay, eg_bound
    mode = "ABS"
    kind = "seed"
    absn: Split | None = None
    abs_s = 0.0
    for n in range(1, max_rounds + 1):
        recorded = len(rows)
        t0 = time.monotonic()
        try:
            if mode == "ABS" or absn is None:
                preds = work.pop()
                if preds is None:
                    return "unknown", "no predicate set left to try (worklist empty)", None, rows
                wd, eb = widen_delay, eg_bound
                abs_s = 0.0
                absn, abs_s = abstraction_of(enc, preds, deadline)
            assert preds is not None
            t0 = time.monotonic()
            fix = Fixpoints(absn, wd, eb, restrict, deadline=deadline)
            sol = fix.solve(negf, over=True)
            conclusive = fix.enc.initial.intersect(sol.states).is_empty()
            fix_s = time.monotonic() - t0
            if conclusive:
                rows.append(round_row(n, preds, kind, abs_s, fix_s, True, system))
                return "holds", f"proved in round {n} with {len(preds)} predicates", None, rows
            trace = witness(fix)
            if trace is not None:
                rows.append(round_row(n, preds, kind, abs_s, fix_s, True, system))
                return "violated", f"concrete witness in round {n}", trace, rows
            rows.append(round_row(n, preds, kind, abs_s, fix_s, False, system))
            div = divergence(absn, fix, negf)
            if div is None:
                return "unknown", f"round {n}: no divergence point found to refine", None, rows
            if div.kind == "approximation":
                mode, kind = "APP", "APP"
                wd += div.depth
                eb += div.depth
                continue
            assert div.deadend is not None and div.bad is not None
            names = frozenset(abstracted_names(system, preds))
            new, _how = interpolants(system, div.deadend, div.bad, names)
            mode, kind = "ABS", "ABS"
            work.extend(preds, new)
        except Exception as err:  # the time limit: the rounds so far are the statistics
            if not quota.explains(err):  # (a budget made here would re-arm the quota)
                raise
            if preds is not None and len(rows) == recorded:
                spent = time.monotonic() - t0  # in the abstraction (abs_s 0) or the fixpoints
                if abs_s == 0.0:
                    abs_s, spent = spent, 0.0
                rows.append(round_row(n, preds, kind, abs_s, spent, False, system))
            return "unknown", f"time limit reached in round {n}", None, rows
    return "unknown", f"refinement budget of {max_rounds} rounds (--max-rounds) ran out", None, rows
