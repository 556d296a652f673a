"""``--method kind``: k-induction and bounded model checking (:mod:`absmc.logic.kinduction`)
with Houdini's strengthening from cheap candidate facts, under the verdict rules of
:mod:`~absmc.engines.induction.check`.

Candidates (state formulas over the model's variables): every unbounded integer compared
with its declared initial value (``x >= c``, ``x <= c``) unless the ``init:`` constraint
mentions it, the order of every pair of unbounded integers (``x <= y``, ``x < y`` both
ways), the conjuncts of the ``init:`` constraint and the integer atoms of the guards and
properties; and each of these under each value of a control variable (``pc == v => a``).
At most :data:`MAX_CANDIDATES`, simplest first.
"""

from __future__ import annotations

import itertools

import z3

from absmc.engines.induction.check import Budget, check_induction
from absmc.engines.induction.options import KindOptions
from absmc.ir.expr import Const, Expr, Var, atoms, conjuncts, const, free_vars, op
from absmc.ir.sorts import INT, IntSort, RangeSort
from absmc.ir.compile import compile_system
from absmc.ir.steps import State
from absmc.ir.system import Property, System
from absmc.kernel.options import CheckOptions
from absmc.kernel.result import Result
from absmc.logic.chc import Answer
from absmc.logic.kinduction import houdini, k_induction
from absmc.logic.transition import BadCondition, TransitionSystem

__all__ = ["MAX_CANDIDATES", "candidates", "check_kind"]

#: the most candidate facts Houdini starts from
MAX_CANDIDATES = 6000
#: the most concrete states sampled to drop false candidates before Houdini
SAMPLE_STATES = 3000
#: control variables with at most this many values give implications ``pc == v => a``
MAX_CONTROL_VALUES = 8


def check_kind(system: System, options: CheckOptions, own: KindOptions) -> Result:
    """``--method kind`` (see the module doc). Raises ``CertificateError`` (internal) when an
    invariant fails its check."""
    strengthening: dict[int, z3.ExprRef] = {}

    def solve(ts: TransitionSystem, cond: BadCondition, budget: Budget) -> Answer:
        key = id(ts)
        if key not in strengthening:
            facts = strengthening_facts(system, ts, budget) if own.strengthen else []
            strengthening[key] = z3.And(*[ts.term(e) for e in facts], z3.BoolVal(True, ts.ctx))
        depth = budget.max_depth if budget.max_depth is not None else own.max_k
        return k_induction(ts, cond, strengthening[key], depth, budget.deadline)

    return check_induction(system, options, "kind", solve)


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
        s.add(z3.Or(*[x != (v if not z3.is_bool(x) else bool(v)) for x, v in zip(ts.current, state, strict=True)], ts.ctx))
    return out


def candidates(system: System) -> list[Expr]:
    """The candidate facts of the module doc."""
    ints = [v for v in system.variables if isinstance(v.sort, IntSort)]
    mentioned = free_vars(system.init_constraint) if system.init_constraint is not None else set()
    basic: list[Expr] = []
    for v in ints:
        if v.name not in mentioned:
            basic += [op(">=", v.ref(), const(v.init)), op("<=", v.ref(), const(v.init))]
    for a, b in itertools.combinations(ints, 2):
        x, y = Var(a.name, INT), Var(b.name, INT)
        basic += [op("<=", x, y), op("<=", y, x), op("<", x, y), op("<", y, x)]
    if system.init_constraint is not None:
        basic += list(conjuncts(system.init_constraint))
    exprs = [c.guard for c in system.commands] + [p.expr for p in system.properties]
    names = {v.name for v in ints}
    for e in exprs:
        for a in atoms(e):
            if free_vars(a) & names and not isinstance(a, Const):
                basic.append(a)
    basic = list(dict.fromkeys(basic))
    controls = [
        v
        for v in system.variables
        if isinstance(v.sort, RangeSort) and v.sort.hi - v.sort.lo < MAX_CONTROL_VALUES
    ]
    guarded: list[Expr] = []
    for v in controls:
        assert isinstance(v.sort, RangeSort)
        for value in range(v.sort.lo, v.sort.hi + 1):
            at = op("==", v.ref(), const(value))
            guarded += [op("=>", at, a) for a in basic]
    return (basic + guarded)[:MAX_CANDIDATES]
