"""Counter-example guided abstraction and approximation refinement, CEGAAR (paper 002 §4,
Fig. 2-11).

:func:`cegaar` keeps a breadth-first worklist of predicate sets, starting from the seed set
(the model's and ``--predicate``'s predicates; default: the atoms of the property and of the
guards that mention unbounded integers). Each round abstracts the System with the current set
(:class:`~absmc.engines.symbolic.abstract.PartialAbstraction`), computes the over-approximated
negation of the property and

* stops with ``holds`` when no abstract initial state satisfies it (Fig. 2, lines 22-23);
* stops with ``violated`` when a concrete witness is found and replayed;
* otherwise looks for the divergence point (Fig. 3-5, :func:`divergence`): the abstract
  witness of the first ``E[f U g]`` of the negation is simulated on concrete *sets* of states
  (``C_i = post(C_{i-1}) ∩ γ(Â_i)``); where ``C_i`` becomes empty, the *dead-end* states are
  ``C_{i-1}`` and the *bad* states those of ``γ(Â_{i-1})`` with a successor in ``γ(Â_i)``.
  No bad state: the divergence is due to approximation (APP: delay widening and raise the EG
  bound by the witness depth, same predicates). Otherwise due to abstraction (ABS): the
  refinement predicates are half-space interpolants separating dead-end from bad states (the
  constraints of the dead-end hull that no bad state satisfies, [15]); without one, all the
  dead-end constraints. Each refinement predicate extends the current set into a new worklist
  entry (Fig. 2, lines 31-33).

Every round is a row (``--table``; ``rounds`` in ``--json``): predicate set, refinement kind,
abstraction and fixpoint time, memory, conclusive or not.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from typing import Any

import islpy as isl

from absmc.engines.symbolic.abstract import PartialAbstraction
from absmc.engines.symbolic.budget import IslBudget
from absmc.engines.symbolic.composite import Split
from absmc.engines.symbolic.encode import Encoding
from absmc.engines.symbolic.fixpoint import Fixpoints
from absmc.ir.ctl import Atom, Formula, Until, subformulas
from absmc.ir.expr import Const, Expr, Var, atoms, const, free_vars, op
from absmc.ir.printer import format_expr
from absmc.ir.sorts import INT
from absmc.ir.system import System
from absmc.kernel.result import peak_rss_mb

__all__ = ["Divergence", "default_seeds", "divergence", "interpolants"]


@dataclass(frozen=True)
class Divergence:
    """Where an abstract witness leaves the concrete system: ``kind`` ``"abstraction"`` (with
    the ``deadend`` and ``bad`` concrete sets) or ``"approximation"``; ``depth`` the step."""

    kind: str
    depth: int
    deadend: isl.Set | None = None
    bad: isl.Set | None = None


def default_seeds(system: System, negf: Formula) -> tuple[Expr, ...]:
    """The atoms of the property and of the guards that mention an unbounded integer."""
    data = {v.name for v in system.data_vars}
    out: list[Expr] = []
    cands: list[Expr] = []
    for g in subformulas(negf):
        if isinstance(g, Atom):
            cands.extend(atoms(g.expr))
    for c in system.commands:
        cands.extend(atoms(c.guard))
    for a in cands:
        if free_vars(a) & data and a not in out and not isinstance(a, Var):
            out.append(a)
    return tuple(out)


def _first_until(f: Formula) -> Until | None:
    for g in reversed(subformulas(f)):  # parents after children: scan from the root
        if isinstance(g, Until):
            return g
    return None


def divergence(
    absn: Split, fix: Fixpoints, negf: Formula, max_depth: int = 64
) -> Divergence | None:
    """The divergence point of the abstract witness of the first ``E[f U g]`` of ``negf``
    (see the module doc); ``None`` when the concrete simulation reaches the target."""
    until = _first_until(negf)
    enc = absn.enc
    r = fix.restriction()
    if until is None:
        return Divergence("approximation", 1)
    left = fix.solve(until.left, True).states
    layers = [fix.solve(until.right, True).states]
    sp = fix.enc
    init = sp.initial
    while init.intersect(layers[-1]).is_empty():
        if len(layers) > max_depth:
            return Divergence("approximation", max_depth)
        nxt = layers[-1].union(left.intersect(fix.pre(layers[-1])).intersect(r)).coalesce()
        if nxt.is_subset(layers[-1]):
            # the abstract initial states reach the target only through widened states
            return Divergence("approximation", len(layers))
        layers.append(nxt)
    k = len(layers) - 1
    abs_cur = init.intersect(layers[k])
    conc = enc.initial.intersect(sp.concretize(abs_cur))
    for i in range(1, k + 1):
        abs_next = abs_cur.apply(sp.transition).intersect(layers[k - i])
        conc_next = conc.apply(enc.transition).intersect(sp.concretize(abs_next))
        if conc_next.is_empty():
            target = sp.concretize(abs_next)
            bad = sp.concretize(abs_cur).intersect(target.apply(enc.transition.reverse()))
            if bad.is_empty():
                return Divergence("approximation", i)
            return Divergence("abstraction", i, conc.coalesce(), bad.coalesce())
        abs_cur, conc = abs_next, conc_next
    if not fix.solve(until.right, True).exact:
        # the concrete run reaches the target's abstract states, but the target itself (an EG
        # truncated after the bound, a widened E[U]) was approximated: raise the bounds
        return Divergence("approximation", k + 1)
    return None


def interpolants(system: System, deadend: isl.Set, bad: isl.Set) -> tuple[list[Expr], str]:
    """Refinement predicates: half-space interpolants (constraints of the dead-end hull that
    exclude every bad state), else every dead-end constraint over an unbounded integer;
    ``(predicates, how)``."""
    hull = deadend.convex_hull()
    universe = isl.BasicSet.universe(hull.get_space())
    found: list[Expr] = []
    every: list[Expr] = []
    for c in hull.get_constraints():
        pred = _constraint_expr(system, c)
        if pred is None:
            continue
        every.append(pred)
        half = isl.Set.from_basic_set(universe.add_constraint(c))
        if half.intersect(bad).is_empty():
            found.append(pred)
    if found:
        return found, "half-space interpolant"
    return every, "dead-end constraints"


def _constraint_expr(system: System, c: isl.Constraint) -> Expr | None:
    """An isl constraint over ``v0..`` as an IR predicate (``None`` without an unbounded
    integer variable)."""
    terms: list[Expr] = []
    data = False
    for i, v in enumerate(system.variables):
        k = int(c.get_coefficient_val(isl.dim_type.set, i).to_python())
        if k == 0:
            continue
        data = data or not v.is_control
        ref = v.ref() if v.sort == INT or not v.is_control else Var(v.name, v.sort)
        terms.append(ref if k == 1 else op("*", const(k), ref))
    if not data or not terms:
        return None
    lhs = terms[0]
    for t in terms[1:]:
        lhs = op("+", lhs, t)
    k0 = int(c.get_constant_val().to_python())
    bound: Expr = const(-k0) if k0 else Const(0, INT)
    return op("==" if c.is_equality() else ">=", lhs, bound)


def round_row(
    n: int, preds: tuple[Expr, ...], kind: str, abs_s: float, fix_s: float, conclusive: bool
) -> dict[str, Any]:
    """One row of the ``--table`` / ``rounds`` output (paper 002 Table 2's columns)."""
    return {
        "round": n,
        "predicates": ", ".join(format_expr(p) for p in preds) or "(none)",
        "refinement": kind,
        "abstract_s": round(abs_s, 4),
        "fixpoint_s": round(fix_s, 4),
        "memory_mb": round(peak_rss_mb(), 1),
        "conclusive": conclusive,
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
                rows.append(round_row(n, preds, kind, abs_s, fix_s, True))
                return "holds", f"proved in round {n} with {len(preds)} predicates", None, rows
            trace = witness(fix)
            if trace is not None:
                rows.append(round_row(n, preds, kind, abs_s, fix_s, True))
                return "violated", f"concrete witness in round {n}", trace, rows
            rows.append(round_row(n, preds, kind, abs_s, fix_s, False))
            div = divergence(absn, fix, negf)
            if div is None:
                return "unknown", f"round {n}: no divergence point found to refine", None, rows
            if div.kind == "approximation":
                mode, kind = "APP", "APP"
                wd += div.depth
                eb += div.depth
                continue
            assert div.deadend is not None and div.bad is not None
            new, _how = interpolants(system, div.deadend, div.bad)
            mode, kind = "ABS", "ABS"
            work.extend(preds, new)
        except Exception as err:  # the time limit: the rounds so far are the statistics
            if not quota.explains(err):  # (a budget made here would re-arm the quota)
                raise
            if preds is not None and len(rows) == recorded:
                spent = time.monotonic() - t0  # in the abstraction (abs_s 0) or the fixpoints
                if abs_s == 0.0:
                    abs_s, spent = spent, 0.0
                rows.append(round_row(n, preds, kind, abs_s, spent, False))
            return "unknown", f"time limit reached in round {n}", None, rows
    return "unknown", f"refinement budget of {max_rounds} rounds (--max-rounds) ran out", None, rows
