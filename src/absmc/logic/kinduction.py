"""k-induction with bounded model checking (Sheeran, Singh, Stålmarck, FMCAD 2000, §3: base
case and induction step without the simple-path constraint), Houdini's invariant strengthening
(Flanagan, Leino, *Houdini, an annotation assistant for ESC/Java*, FME 2001: the largest
inductive subset of candidate facts), and the 1-inductive invariant that makes a k-inductive
proof a checkable certificate.

From a proof at depth ``k`` (no violation within ``k - 1`` steps of an initial state; every
path of ``k`` non-violating states, under the strengthening ``S``, continues without a
violation), ``W_0 = S ∧ ¬Bad`` and ``W_{j+1} = W_0 ∧ ⋀_c (enabled_c ⇒ W_j[s := f_c(s)])``
(the states from which no violation happens within ``j`` steps; commands are deterministic
updates ``f_c``, so the pre-image is a substitution) give the inductive invariant
``W_{k-1}``: a state in it, after one step, lies in ``W_{k-2}`` and by the induction step in
``W_{k-1}`` again.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import z3

from absmc.ir.expr import Expr
from absmc.logic.chc import Answer, Inconclusive, Proved, Refuted
from absmc.logic.interrupt import interruptible, watch
from absmc.logic.transition import BadCondition, TransitionSystem
from absmc.logic.z3conv import Z3Term

__all__ = ["MAX_CERTIFICATE_SIZE", "houdini", "k_induction"]

#: the largest certificate (characters of its SMT-LIB text) built from a k-inductive proof
MAX_CERTIFICATE_SIZE = 200_000


def _solver(ts: TransitionSystem, deadline: float | None) -> z3.Solver:
    s = z3.Solver(ctx=ts.ctx)
    if deadline is not None:
        s.set("timeout", max(1, int((deadline - time.monotonic()) * 1000)))
    return s


@interruptible
def houdini(ts: TransitionSystem, candidates: Sequence[Expr], deadline: float | None) -> list[Expr]:
    """The largest subset of ``candidates`` (state formulas) that holds initially and is
    inductive together (relative to the ranges); ``[]`` when the solver does not decide in
    time."""
    watch(ts.ctx)
    terms = {e: ts.term(e) for e in candidates}
    kept = _initial_subset(ts, list(candidates), terms, deadline)
    if not kept:
        return []
    # one literal per candidate, for the current (p) and the next (q) state: p_e assumes the
    # candidate now (assumed for the kept ones, refuted for the dropped ones), and one clause
    # built once asks that some assumed candidate fails after the step
    step = _solver(ts, deadline)
    step.add(ts.domain(), ts.transition())
    p = {e: z3.Bool(f"houdini_p{i}", ts.ctx) for i, e in enumerate(kept)}
    q = {e: z3.Bool(f"houdini_q{i}", ts.ctx) for i, e in enumerate(kept)}
    not_p = {e: z3.Not(p[e]) for e in kept}
    for e in kept:
        step.add(z3.Implies(p[e], terms[e]), q[e] == ts.term(e, primed=True))
    step.add(z3.Or(*[z3.And(p[e], z3.Not(q[e])) for e in kept]))
    dropped: list[Expr] = []
    while kept:
        answer = step.check(*[p[e] for e in kept], *[not_p[e] for e in dropped])
        if answer == z3.unsat:
            return kept
        if answer != z3.sat:
            return []
        m = step.model()
        still = []
        for e in kept:
            value = m.get_interp(q[e])
            if value is not None and z3.is_false(value):
                dropped.append(e)
            else:
                still.append(e)
        if len(still) == len(kept):  # pragma: no cover - a model falsifies some kept q
            return []
        kept = still
    return kept


def _initial_subset(
    ts: TransitionSystem, kept: list[Expr], terms: dict[Expr, Z3Term], deadline: float | None
) -> list[Expr]:
    """The candidates true in every initial state (models of ``Init`` that falsify some
    candidate remove every candidate they falsify)."""
    s = _solver(ts, deadline)
    s.add(ts.init())
    while kept:
        s.push()
        s.add(z3.Not(z3.And(*[terms[e] for e in kept])))
        answer = s.check()
        if answer == z3.unsat:
            s.pop()
            return kept
        if answer != z3.sat:
            s.pop()
            return []
        m = s.model()
        kept = [e for e in kept if z3.is_true(m.eval(terms[e], model_completion=True))]
        s.pop()
    return kept


@interruptible
def k_induction(
    ts: TransitionSystem,
    cond: BadCondition,
    strengthening: Z3Term,
    max_k: int,
    deadline: float | None,
) -> Answer:
    """Bounded model checking and k-induction for ``cond`` up to depth ``max_k`` (see the
    module doc); ``strengthening`` (a state formula over ``ts.current``) must be an inductive
    invariant that holds initially (e.g. from :func:`houdini`). Depth ``k`` checks the paths of
    ``k`` steps from an initial state (BMC) and ``k + 1``-induction; an ``Inconclusive`` answer
    carries the depth the search had reached (``max_k`` when it ran to the bound)."""
    watch(ts.ctx)
    bad = ts.bad(cond)
    base = _solver(ts, deadline)
    step = _solver(ts, deadline)
    xs = [ts.copy(f"b{0}")]
    ys = [ts.copy(f"i{0}")]
    base.add(ts.rename(ts.init(), xs[0]))
    step.add(ts.rename(z3.And(strengthening, ts.domain()), ys[0]))
    trans = ts.transition()
    for k in range(max_k + 1):
        if deadline is not None and time.monotonic() >= deadline:
            return Inconclusive(f"time limit reached at depth {k}", k)
        for s in (base, step):
            if deadline is not None:
                s.set("timeout", max(1, int((deadline - time.monotonic()) * 1000)))
        base.push()
        base.add(ts.rename(bad, xs[k]))
        answer = base.check()
        if answer == z3.sat:
            return _counterexample(ts, cond, base.model(), xs)
        base.pop()
        if answer != z3.unsat:
            return Inconclusive(f"bounded model checking at depth {k}: {base.reason_unknown()}", k)
        # induction step: k + 1 states without a violation, then a violation
        ys.append(ts.copy(f"i{k + 1}"))
        step.add(ts.rename(z3.Not(bad), ys[k]))
        step.add(ts.rename(trans, ys[k], ys[k + 1]))
        step.add(ts.rename(z3.And(strengthening, ts.domain()), ys[k + 1]))
        step.push()
        step.add(ts.rename(bad, ys[k + 1]))
        answer = step.check()
        step.pop()
        if answer == z3.unsat:
            inv = _invariant(ts, z3.And(strengthening, z3.Not(bad)), k)
            if inv is None:
                return Inconclusive(f"{k + 1}-inductive, but its certificate is too large")
            return Proved(inv, f"{k + 1}-induction")
        if answer != z3.sat:
            return Inconclusive(f"induction step at depth {k + 1}: {step.reason_unknown()}", k)
        xs.append(ts.copy(f"b{k + 1}"))
        base.add(ts.rename(trans, xs[k], xs[k + 1]))
    return Inconclusive(f"neither a counterexample nor a proof up to depth {max_k}", max_k)


def _invariant(ts: TransitionSystem, w0: Z3Term, k: int) -> Z3Term | None:
    """``W_k`` of the module doc (``None`` past :data:`MAX_CERTIFICATE_SIZE`)."""
    pre = [(ts.enabled(c), ts.next_values(c)) for c in ts.commands]
    w = w0
    for _ in range(k):
        parts = [w0]
        for enabled, values in pre:
            parts.append(
                z3.Implies(enabled, z3.substitute(w, *zip(ts.current, values, strict=True)))
            )
        w = z3.simplify(z3.And(*parts))
        if len(w.sexpr()) > MAX_CERTIFICATE_SIZE:
            return None
    return w


def _counterexample(
    ts: TransitionSystem, cond: BadCondition, m: z3.ModelRef, xs: Sequence[Sequence[Z3Term]]
) -> Answer:
    """The command path of a bounded model checking model over the states ``xs``."""
    states = [ts.state_of(m, x) for x in xs]
    path: list[int] = []
    for k in range(len(xs) - 1):
        for c in ts.commands:
            if z3.is_true(m.eval(ts.rename(ts.step(c), xs[k], xs[k + 1]), model_completion=True)):
                path.append(c.index)
                break
        else:
            return Inconclusive(f"no command makes step {k + 1} of the bounded counterexample")
    last = xs[-1]
    if cond.state is not None and z3.is_true(
        m.eval(ts.rename(ts.term(cond.state), last), model_completion=True)
    ):
        return Refuted(states[0], tuple(path))
    for ci, e in cond.steps:
        if z3.is_true(m.eval(ts.rename(ts.term(e), last), model_completion=True)):
            return Refuted(states[0], (*path, ci))
    return Inconclusive("the bounded counterexample violates nothing")
