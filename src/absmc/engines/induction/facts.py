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
two processes (:func:`_distinct`); counting invariants ``x - y == d_1(loc_1) + ...``
(:func:`counting_candidates`). At most :data:`MAX_CANDIDATES`. When the concrete sample closes
(a finite system), its reachable set is a proof of its own (:func:`reachable_proof`).
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

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
from absmc.ir.sorts import BOOL, INT, IntSort, RangeSort, Sort
from absmc.ir.steps import State
from absmc.ir.system import Property, System
from absmc.logic.chc import Proved
from absmc.logic.kinduction import houdini
from absmc.logic.transition import BadCondition, TransitionSystem

__all__ = [
    "MAX_CANDIDATES",
    "Strengthening",
    "candidates",
    "counting_candidates",
    "reachable_proof",
    "reachable_set",
    "related_pairs",
    "strengthening",
]

#: the most candidate facts Houdini starts from
MAX_CANDIDATES = 6000
#: the most concrete states sampled to drop false candidates before Houdini
SAMPLE_STATES = 3000
#: control variables with at most this many values give implications ``pc == v => a``
MAX_CONTROL_VALUES = 8
#: a process's locations for counting candidates: tuples of at most this many control variables
MAX_LOCATION_VARIABLES = 3


class Strengthening(NamedTuple):
    """What :func:`strengthening` found: Houdini's ``facts`` and, when the concrete sample
    closed, the exact ``reachable`` set (:func:`reachable_set`; else ``None``)."""

    facts: list[Expr]
    reachable: Expr | None


def strengthening(system: System, ts: TransitionSystem, budget: Budget) -> Strengthening:
    """Houdini's inductive subset of :func:`candidates`, after dropping the candidates that
    some concretely reachable state falsifies (a breadth-first search of at most
    :data:`SAMPLE_STATES` states from a few initial states: cheap, and most false candidates go
    there instead of in a solver query). When that search saw every initial state and closed
    (a finite system of at most :data:`SAMPLE_STATES` reachable states), also the disjunction
    of the reachable states if Houdini confirms it inductive: the exact reachable set, a
    certificate of every safety property that holds (:func:`reachable_proof`). It is not one
    of the facts: as a strengthening of k-induction's simple paths it makes a pigeonhole
    problem of every step query."""
    cands = candidates(system)
    props = tuple(Property(f"candidate{i}", "invariant", e) for i, e in enumerate(cands))
    sem = compile_system(system.with_(properties=props), props)
    alive = [True] * len(cands)
    starts, every_start = initial_states(ts, budget)
    seen = set(starts)
    frontier = list(seen)
    closed = every_start
    while frontier and not budget.expired():
        nxt = []
        for s in frontier:
            for k in sem.violated(s):
                alive[k] = False
            for _, t in sem.successors(s)[0]:
                if t in seen:
                    continue
                if len(seen) >= SAMPLE_STATES:
                    closed = False
                    continue
                seen.add(t)
                nxt.append(t)
        frontier = nxt
        if len(seen) >= SAMPLE_STATES and not closed:
            break
    for s in frontier:
        for k in sem.violated(s):
            alive[k] = False
    kept = [e for e, ok in zip(cands, alive, strict=True) if ok]
    reachable = None
    if closed and not frontier and all(len(st) == len(system.variables) for st in seen):
        exact = reachable_set(system, sorted(seen))
        if houdini(ts, [exact], budget.deadline) == [exact]:
            reachable = exact
    return Strengthening(houdini(ts, kept, budget.deadline), reachable)


def reachable_proof(
    ts: TransitionSystem, reachable: Expr, cond: BadCondition, budget: Budget
) -> Proved | None:
    """``reachable`` (an inductive invariant, :func:`strengthening`) as the proof of
    ``cond`` when no state in it is bad; ``None`` when one is or the solver does not decide."""
    inv = ts.term(reachable)
    s = z3.Solver(ctx=ts.ctx)
    left = budget.left()
    if left is not None:
        s.set("timeout", max(1, int(left * 1000)))
    s.add(ts.domain(), inv, ts.bad(cond))
    if s.check() != z3.unsat:
        return None
    return Proved(inv, "the reachable set of a closed concrete search")


def reachable_set(system: System, states: list[State]) -> Expr:
    """The disjunction over ``states`` of ``x1 == v1 && ... && xn == vn`` (one conjunct per
    variable of ``system``, in its order)."""
    cubes: list[Expr] = []
    for st in states:
        eqs = [
            op("==", v.ref(), const(bool(x) if v.sort == BOOL else x))
            for v, x in zip(system.variables, st, strict=True)
        ]
        cubes.append(eqs[0] if len(eqs) == 1 else op("&&", *eqs))
    if not cubes:
        return const(False)
    return cubes[0] if len(cubes) == 1 else op("||", *cubes)


def initial_states(
    ts: TransitionSystem, budget: Budget, count: int = 4
) -> tuple[list[State], bool]:
    """Up to ``count`` distinct initial states (models of the initial condition), and whether
    they are all of them (the solver found no other)."""
    s = z3.Solver(ctx=ts.ctx)
    left = budget.left()
    if left is not None:
        s.set("timeout", max(1, int(left * 1000)))
    s.add(ts.init())
    out: list[State] = []
    while len(out) < count:
        answer = s.check()
        if answer != z3.sat:
            return out, answer == z3.unsat
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
    return out, False


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
    counting = counting_candidates(system, names)
    every = basic + counting + persisted + guarded + _distinct(system, owners, names)
    return list(dict.fromkeys(every))[:MAX_CANDIDATES]


def counting_candidates(system: System, names: set[str]) -> list[Expr]:
    """``x - y == d_1(pc_1) + ... + d_n(pc_n)`` for two integers ``x``, ``y`` that commands
    change only by constant increments (``x := x + c``), where ``d_P(v)`` is how far process
    ``P`` at ``pc_P == v`` has moved ``x - y`` since its control variable's initial value: the
    potential of ``x - y`` along the edges of ``P``'s control graph (the classic counting
    invariant of ticket and semaphore protocols, e.g. ``rt - rs`` = the number of processes
    holding a runway ticket; with pairwise distinct tickets it gives deadlock freedom by
    pigeonhole). Also ``x == c + d_1(pc_1) + ...`` for such an ``x`` with a fixed initial
    value ``c``. Empty for a pair when some process's control graph has no consistent
    potential (or a command changes ``x`` or ``y`` otherwise, or leaves its location open)."""
    mentioned = free_vars(system.init_constraint) if system.init_constraint is not None else set()
    terms: list[tuple[dict[int, int], Var]] = []
    for x in sorted(names):
        inc = _increments(system, x)
        if inc is not None:
            terms.append((inc, Var(x, INT)))
    out: list[Expr] = []
    for (ix, ex), (iy, ey) in itertools.combinations(terms, 2):
        delta = {k: ix.get(k, 0) - iy.get(k, 0) for k in set(ix) | set(iy)}
        total = _potential_sum(system, delta)
        if total is not None:
            out.append(op("==", op("-", ex, ey), total))
    fixed = _init_values(system)
    for inc, ex in terms:
        if ex.name in mentioned and ex.name not in fixed:
            continue
        total = _potential_sum(system, inc)
        if total is not None:
            start = fixed.get(ex.name, int(system.by_name[ex.name].init))
            out.append(op("==", op("-", ex, const(start)) if start else ex, total))
    return out


def _init_values(system: System) -> dict[str, int]:
    """The variables the ``init:`` constraint fixes by a conjunct ``x == c``."""
    out: dict[str, int] = {}
    if system.init_constraint is None:
        return out
    for c in conjuncts(system.init_constraint):
        if isinstance(c, Op) and c.op == "==":
            a, b = c.args
            if isinstance(a, Var) and isinstance(b, Const):
                out[a.name] = int(b.value)
            elif isinstance(b, Var) and isinstance(a, Const):
                out[b.name] = int(a.value)
    return out


def _increments(system: System, name: str) -> dict[int, int] | None:
    """Command index -> the constant ``c`` of its update ``name := name + c`` (commands that do
    not assign ``name`` are absent); ``None`` when some command assigns it otherwise or no
    command changes it."""
    out: dict[int, int] = {}
    for c in system.commands:
        for n, rhs in c.updates:
            if n != name:
                continue
            step = _step_of(rhs, name)
            if step is None:
                return None
            out[c.index] = step
    return out if any(out.values()) else None


def _step_of(rhs: Expr, name: str) -> int | None:
    """``c`` when ``rhs`` is ``name + c``, ``c + name`` or ``name - c`` (``name``: 0)."""
    if isinstance(rhs, Var) and rhs.name == name:
        return 0
    if not (isinstance(rhs, Op) and rhs.op in ("+", "-") and len(rhs.args) == 2):
        return None
    a, b = rhs.args
    if isinstance(a, Var) and a.name == name and isinstance(b, Const):
        return int(b.value) if rhs.op == "+" else -int(b.value)
    if rhs.op == "+" and isinstance(b, Var) and b.name == name and isinstance(a, Const):
        return int(a.value)
    return None


def _potential_sum(system: System, delta: dict[int, int]) -> Expr | None:
    """``d_1(pc_1) + ... + d_n(pc_n)`` (as nested ``ite``) for the commands' effects
    ``delta`` (command index -> change), or ``None`` (see :func:`counting_candidates`)."""
    by_process: dict[str, list[int]] = {}
    for c in system.commands:
        by_process.setdefault(c.process, []).append(c.index)
    parts: list[Expr] = []
    for proc, indices in by_process.items():
        if not any(delta.get(i, 0) for i in indices):
            continue
        term = _process_potential(system, proc, indices, delta)
        if term is None:
            return None
        parts.append(term)
    if not parts:
        return None
    total = parts[0]
    for p in parts[1:]:
        total = op("+", total, p)
    return total


def _process_potential(
    system: System, proc: str, indices: list[int], delta: dict[int, int]
) -> Expr | None:
    """``d_P`` of one process as ``ite(loc == l1, d1, ite(...))`` over its locations: the
    tuples of values of its small control variables (those only it assigns). For each command
    and each pair of a location its guard's equalities ``pc == v`` allow and a location its
    updates lead to (a variable assigned a non-constant: any value), ``d(to) - d(from)`` is
    its change; ``d`` of the initial location is 0."""
    owners = _owners(system)
    controls = [
        v
        for v in system.variables
        if owners.get(v.name) == proc
        and isinstance(v.sort, RangeSort)
        and v.sort.hi - v.sort.lo < MAX_CONTROL_VALUES
    ]
    if not controls or len(controls) > MAX_LOCATION_VARIABLES:
        return None
    domains = [_domain(v.sort) for v in controls]
    edges: list[tuple[tuple[int, ...], tuple[int, ...], int]] = []
    for i in indices:
        c = system.commands[i]
        fixed: dict[str, int] = {}
        for g in conjuncts(c.guard):
            if (
                isinstance(g, Op)
                and g.op == "=="
                and isinstance(g.args[0], Var)
                and isinstance(g.args[1], Const)
            ):
                fixed[g.args[0].name] = int(g.args[1].value)
        updates = dict(c.updates)
        sources = [
            dom if v.name not in fixed else (fixed[v.name],)
            for v, dom in zip(controls, domains, strict=True)
        ]
        for src in itertools.product(*sources):
            targets: list[tuple[int, ...]] = []
            for v, dom, now in zip(controls, domains, src, strict=True):
                rhs = updates.get(v.name)
                if rhs is None:
                    targets.append((now,))
                elif isinstance(rhs, Const):
                    targets.append((int(rhs.value),))
                else:
                    targets.append(tuple(dom))
            for dst in itertools.product(*targets):
                edges.append((src, dst, delta.get(i, 0)))
    d: dict[tuple[int, ...], int] = {tuple(int(v.init) for v in controls): 0}
    changed = True
    while changed:
        changed = False
        for v0, w0, k in edges:
            for a, b, step in ((v0, w0, k), (w0, v0, -k)):
                if a in d:
                    if b not in d:
                        d[b] = d[a] + step
                        changed = True
                    elif d[b] != d[a] + step:
                        return None
    term: Expr = const(0)
    for loc, k in sorted(d.items(), reverse=True):
        if k != 0:
            at = [op("==", v.ref(), const(x)) for v, x in zip(controls, loc, strict=True)]
            cond = at[0] if len(at) == 1 else op("&&", *at)
            term = op("ite", cond, const(k), term)
    return term


def _domain(sort: Sort) -> range:
    """The values of a range sort (empty for another sort)."""
    return range(sort.lo, sort.hi + 1) if isinstance(sort, RangeSort) else range(0)


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
