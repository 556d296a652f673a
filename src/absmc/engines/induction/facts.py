"""Cheap invariants for the induction engines: Houdini's inductive subset (Flanagan, Leino,
FME 2001; :func:`absmc.logic.kinduction.houdini`) of candidate facts over the model's
variables, after dropping the candidates that concretely reachable states falsify.

Candidates: every unbounded integer compared with its declared initial value (``x >= c``,
``x <= c``) unless the ``init:`` constraint mentions it; the order (``x <= y``, ``x < y``, both
ways) of every pair of integers that meet in an atom or an assignment
(:func:`related_pairs`); the conjuncts of the ``init:`` constraint and the integer atoms of the
guards and properties, and ``x != c`` for each of their equalities ``x == c``; each fact about a
variable of one process under each value of that process's small control variables
(``pc == v => a``); each integer conjunct ``g`` of a command's guard at the location ``v'`` the
command moves its process to (``pc == v' => g``: the guard persists); and distinct tickets of
two processes (:func:`_distinct`). At most :data:`MAX_CANDIDATES`.
"""

from __future__ import annotations

import itertools

import z3

from absmc.codegen.python import compile_system
from absmc.engines.induction.check import Budget
from absmc.ir.expr import (
    Const,
    Expr,
    Op,
    Var,
    atoms,
    conjuncts,
    const,
    free_vars,
    op,
    subexpressions,
)
from absmc.ir.sorts import INT, IntSort, RangeSort
from absmc.ir.steps import State
from absmc.ir.system import Property, System
from absmc.logic.kinduction import houdini
from absmc.logic.transition import TransitionSystem

__all__ = ["MAX_CANDIDATES", "candidates", "related_pairs", "strengthening_facts"]

#: the most candidate facts Houdini starts from
MAX_CANDIDATES = 6000
#: the most concrete states sampled to drop false candidates before Houdini
SAMPLE_STATES = 3000
#: control variables with at most this many values give implications ``pc == v => a``
MAX_CONTROL_VALUES = 8


def strengthening_facts(system: System, ts: TransitionSystem, budget: Budget) -> list[Expr]:
    """Houdini's inductive subset of :func:`candidates`, after dropping the candidates that
    some concretely reachable state falsifies (a breadth-first search of at most
    :data:`SAMPLE_STATES` states from a few initial states: cheap, and most false candidates go
    there instead of in a solver query)."""
    cands = candidates(system)
    props = tuple(Property(f"candidate{i}", "invariant", e) for i, e in enumerate(cands))
    sem = compile_system(system.with_(properties=props), props)
    alive = [True] * len(cands)
    seen = set(initial_samples(ts, budget))
    frontier = list(seen)
    while frontier and len(seen) < SAMPLE_STATES and not budget.expired():
        nxt = []
        for s in frontier:
            for k in sem.violated(s):
                alive[k] = False
            for _, t in sem.successors(s)[0]:
                if t not in seen and len(seen) < SAMPLE_STATES:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    for s in frontier:
        for k in sem.violated(s):
            alive[k] = False
    kept = [e for e, ok in zip(cands, alive, strict=True) if ok]
    return houdini(ts, kept, budget.deadline)


def initial_samples(ts: TransitionSystem, budget: Budget, count: int = 4) -> list[State]:
    """Up to ``count`` distinct initial states (models of the initial condition)."""
    s = z3.Solver(ctx=ts.ctx)
    left = budget.left()
    if left is not None:
        s.set("timeout", max(1, int(left * 1000)))
    s.add(ts.init())
    out: list[State] = []
    while len(out) < count and s.check() == z3.sat:
        state = ts.state_of(s.model())
        out.append(state)
        s.add(
            z3.Or(
                *[
                    x != (v if not z3.is_bool(x) else bool(v))
                    for x, v in zip(ts.current, state, strict=True)
                ],
                ts.ctx,
            )
        )
    return out


def candidates(system: System) -> list[Expr]:
    """The candidate facts of the module doc."""
    ints = [v for v in system.variables if isinstance(v.sort, IntSort)]
    names = {v.name for v in ints}
    mentioned = free_vars(system.init_constraint) if system.init_constraint is not None else set()
    basic: list[Expr] = []
    for v in ints:
        if v.name not in mentioned:
            basic += [op(">=", v.ref(), const(v.init)), op("<=", v.ref(), const(v.init))]
    for x, y in related_pairs(system, names):
        vx, vy = Var(x, INT), Var(y, INT)
        basic += [op("<=", vx, vy), op("<=", vy, vx), op("<", vx, vy), op("<", vy, vx)]
    if system.init_constraint is not None:
        basic += [c for c in conjuncts(system.init_constraint) if _linear(c)]
    exprs = [c.guard for c in system.commands] + [p.expr for p in system.properties]
    for e in exprs:
        for a in atoms(e):
            if free_vars(a) & names and not isinstance(a, Const) and _linear(a):
                basic.append(a)
                if isinstance(a, Op) and a.op == "==":
                    basic.append(op("!=", *a.args))
    basic = list(dict.fromkeys(basic))
    owners = _owners(system)
    guarded: list[Expr] = []
    for v in system.variables:
        proc = owners.get(v.name)
        if not (isinstance(v.sort, RangeSort) and v.sort.hi - v.sort.lo < MAX_CONTROL_VALUES):
            continue
        # a control variable guards the facts about the variables of its own process
        local = [
            a
            for a in basic
            if proc is not None and any(owners.get(n) == proc for n in free_vars(a))
        ]
        for value in range(v.sort.lo, v.sort.hi + 1):
            at = op("==", v.ref(), const(value))
            guarded += [op("=>", at, a) for a in local]
    persisted = _persisted_guards(system, names)
    return list(dict.fromkeys(basic + persisted + guarded + _distinct(system, owners, names)))[
        :MAX_CANDIDATES
    ]


def _persisted_guards(system: System, names: set[str]) -> list[Expr]:
    """``pc == v' => g`` for each conjunct ``g`` over integers of the guard of a command that
    moves its process's small control variable ``pc`` to ``v'`` (the condition under which a
    process entered a location, e.g. bakery's ``pc1 == 2 => (a2 == 0 || a1 < a2)``: it stays
    true while the process is there when the other processes' steps keep it)."""
    out: list[Expr] = []
    for c in system.commands:
        for n, rhs in c.updates:
            v = system.by_name[n]
            small = isinstance(v.sort, RangeSort) and v.sort.hi - v.sort.lo < MAX_CONTROL_VALUES
            if not (small and isinstance(rhs, Const)):
                continue
            at = op("==", v.ref(), rhs)
            for g in conjuncts(c.guard):
                if free_vars(g) & names and _linear(g):
                    out.append(op("=>", at, g))
    return out


def _distinct(system: System, owners: dict[str, str], names: set[str]) -> list[Expr]:
    """``pc_P == v && pc_Q == w => x != y`` for local integers ``x`` of ``P`` and ``y`` of
    ``Q`` assigned the same right-hand side (tickets drawn from one dispenser), under every
    pair of values of the two processes' small control variables."""
    rhs: dict[str, set[Expr]] = {}
    for c in system.commands:
        for n, e in c.updates:
            if n in names and owners.get(n) == c.process:
                rhs.setdefault(n, set()).add(e)
    controls: dict[str, list[tuple[str, range]]] = {}
    for v in system.variables:
        proc = owners.get(v.name)
        small = isinstance(v.sort, RangeSort) and v.sort.hi - v.sort.lo < MAX_CONTROL_VALUES
        if proc is not None and small:
            assert isinstance(v.sort, RangeSort)
            controls.setdefault(proc, []).append((v.name, range(v.sort.lo, v.sort.hi + 1)))
    out: list[Expr] = []
    for x, y in itertools.combinations(sorted(rhs), 2):
        p, q = owners[x], owners[y]
        if p == q or not (rhs[x] & rhs[y]):
            continue
        for (cp, vp), (cq, vq) in itertools.product(controls.get(p, []), controls.get(q, [])):
            for a, b in itertools.product(vp, vq):
                both = op(
                    "&&",
                    op("==", Var(cp, system.by_name[cp].sort), const(a)),
                    op("==", Var(cq, system.by_name[cq].sort), const(b)),
                )
                out.append(op("=>", both, op("!=", Var(x, INT), Var(y, INT))))
    return out


def _linear(e: Expr) -> bool:
    """No multiplication, division or remainder (facts Spacer and Houdini handle well)."""
    return not any(isinstance(x, Op) and x.op in ("*", "/", "%") for x in subexpressions(e))


def related_pairs(system: System, names: set[str]) -> list[tuple[str, str]]:
    """Pairs of integer variables that meet in an atom of a guard, a property or the ``init:``
    constraint, or in an assignment (one assigned from an expression over the other)."""
    out: dict[tuple[str, str], None] = {}

    def add(group: set[str]) -> None:
        ordered = sorted(group & names)
        for x, y in itertools.combinations(ordered, 2):
            out[(x, y)] = None

    exprs = [c.guard for c in system.commands] + [p.expr for p in system.properties]
    if system.init_constraint is not None:
        exprs.append(system.init_constraint)
    for e in exprs:
        for a in atoms(e):
            add(set(free_vars(a)))
    for c in system.commands:
        for n, rhs in c.updates:
            add({n, *free_vars(rhs)})
    return list(out)


def _owners(system: System) -> dict[str, str]:
    """Variable -> the one process whose commands assign it (variables several processes
    assign are shared and have none)."""
    by: dict[str, set[str]] = {}
    for c in system.commands:
        for n, _ in c.updates:
            by.setdefault(n, set()).add(c.process)
    return {n: next(iter(ps)) for n, ps in by.items() if len(ps) == 1}
