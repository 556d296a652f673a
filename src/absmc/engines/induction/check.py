"""The verdict rules both induction engines share, and ``--method pdr``.

For each selected safety property (:func:`absmc.logic.transition.bad_condition`) a solver
(Spacer here, k-induction in :mod:`~absmc.engines.induction.kind`) answers with

* an inductive invariant: read back as an IR expression (the certificate, printed in the
  model's syntax and written to ``--json`` as ``certificate``) and checked with a fresh solver
  (:func:`absmc.logic.certificate.check_certificate`: initiation, consecution, safety) before
  the verdict is ``holds``. A certificate that fails the check raises
  :class:`~absmc.logic.certificate.CertificateError` (an internal error, exit 4), never a
  proof; one the check cannot decide gives ``unknown``;
* a counterexample (initial state and commands): replayed on the concrete semantics
  (:func:`absmc.kernel.replay.trace.replay`; for ``ctl`` the final state must falsify the formula)
  before the verdict is ``violated``;
* or nothing: ``unknown`` with the solver's reason (a solver ``unknown`` is never a proof).

The run's limits are read in one place, :class:`Budget` (``--timeout`` today).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import z3

from absmc.codegen.python import compile_system
from absmc.engines.engine import is_safety_ctl
from absmc.engines.induction.options import PdrOptions
from absmc.ir.evaluate import EvalError, evaluate
from absmc.ir.expr import Expr
from absmc.ir.printer import format_expr
from absmc.ir.system import System
from absmc.kernel.model.initial import is_initial
from absmc.kernel.model.irsemantics import IRSemantics
from absmc.kernel.replay.trace import ReplayError, replay, run_path, to_trace
from absmc.kernel.run.options import CheckOptions, property_kind, select_properties
from absmc.kernel.run.result import PropertyResult, Result, Stats, Trace, Verdict
from absmc.logic.certificate import (
    CertificateError,
    check_certificate,
    from_z3,
    state_variables,
)
from absmc.logic.chc import Answer, Inconclusive, Proved, Refuted, spacer
from absmc.logic.transition import BadCondition, NotSafety, TransitionSystem, bad_condition

__all__ = ["Budget", "check_induction", "check_pdr"]

#: a second pass over the properties that ran out of their time share needs this many seconds
SECOND_PASS_MIN_S = 2.0
#: seconds kept for the certificate check when the solver ran into the time limit
CHECK_RESERVE_S = 0.1


@dataclass(frozen=True)
class Budget:
    """The run's limits as the induction engines use them: ``deadline`` (monotonic s, or
    ``None``), ``max_depth`` (bound of BMC and k-induction, or ``None``) and the
    ``timeout`` it came from (for messages)."""

    deadline: float | None
    max_depth: int | None
    timeout: float | None
    shared: bool = False

    @staticmethod
    def of(options: CheckOptions) -> Budget:
        """The budget of a run with ``options`` starting now: the check's deadline when it is
        fixed (the registry's, or a portfolio member's time slice), else ``--timeout`` from
        now."""
        limits = options.limits
        return Budget(limits.end(time.monotonic()), limits.max_depth, limits.timeout)

    def left(self) -> float | None:
        """Seconds left (``None``: no limit; at least a millisecond)."""
        if self.deadline is None:
            return None
        return max(0.001, self.deadline - time.monotonic())

    def expired(self) -> bool:
        """Whether the time limit has passed."""
        return self.deadline is not None and time.monotonic() >= self.deadline

    def share(self, parts: int) -> Budget:
        """The budget of one of ``parts`` properties still to check: an equal share of the
        time left (what a property leaves unused goes to the next ones)."""
        left = self.left()
        if left is None or parts <= 1:
            return self
        return Budget(time.monotonic() + left / parts, self.max_depth, self.timeout, True)

    def reason(self) -> str:
        """Why a run stopped at the time limit."""
        if self.shared:
            return f"its share of the time limit of {self.timeout:g} s ran out"
        return f"time limit of {self.timeout:g} s reached"


Solve = Callable[[TransitionSystem, BadCondition, Budget], Answer]


def check_pdr(system: System, options: CheckOptions, own: PdrOptions) -> Result:
    """``--method pdr``: every selected safety property by Spacer (see the module doc).
    Raises ``CertificateError`` (internal) when an invariant fails its check."""
    from absmc.engines.induction.facts import reachable_proof, strengthening

    background: dict[int, tuple[z3.ExprRef, Expr | None]] = {}

    def solve(ts: TransitionSystem, cond: BadCondition, budget: Budget) -> Answer:
        if not own.strengthen:
            return spacer(ts, cond, budget.left())
        if id(ts) not in background:
            got = strengthening(system, ts, budget)
            facts = z3.And(*[ts.term(e) for e in got.facts], z3.BoolVal(True, ts.ctx))
            background[id(ts)] = (facts, got.reachable)
        facts, reachable = background[id(ts)]
        if reachable is not None:
            proof = reachable_proof(ts, reachable, cond, budget)
            if proof is not None:
                return proof
        return spacer(ts, cond, budget.left(), facts)

    return check_induction(system, options, "pdr", solve)


def check_induction(system: System, options: CheckOptions, method: str, solve: Solve) -> Result:
    """Check the selected safety properties of ``system`` with ``solve`` under the verdict
    rules of the module doc; ``method`` names the engine in the results."""
    budget = Budget.of(options)
    selection = select_properties(system, options)
    names = [(n, property_kind(system, n)) for n in selection.names()]
    notes: list[str] = []
    for p in selection.ctl:
        if is_safety_ctl(p.formula):
            names.append((p.name, "ctl"))
        else:
            at = f" ({p.span})" if p.span is not None else ""
            notes.append(
                f"skipped CTL property '{p.name}'{at}: only AG of a state formula is checked "
                "(liveness is not reduced to safety, see docs/pdr.md)"
            )
    ts = TransitionSystem(system)
    sem = cache(lambda: compile_system(system, selection.user))
    results: list[PropertyResult | None] = [None] * len(names)

    def early(r: PropertyResult) -> PropertyResult:
        if options.decided is not None and r.verdict is not Verdict.UNKNOWN:
            options.decided(r)
        return r

    # no-deadlock last: it is seldom inductive without strong invariants, and the properties
    # before it are reported (CheckOptions.decided) as soon as they are decided
    order = sorted(range(len(names)), key=lambda i: names[i][1] == "deadlock")
    for j, i in enumerate(order):
        n, k = names[i]
        mine = budget.share(len(names) - j)
        results[i] = early(_check_one(system, ts, sem, n, k, method, solve, mine))
    # a second pass gives what the first one left of the time to the properties that ran out
    # of their share
    again = [i for i in order if results[i].reason.startswith("its share")]  # type: ignore[union-attr]
    for j, i in enumerate(again):
        if budget.left() is not None and budget.left() < SECOND_PASS_MIN_S:  # type: ignore[operator]
            break
        n, k = names[i]
        mine = budget.share(len(again) - j)
        results[i] = early(_check_one(system, ts, sem, n, k, method, solve, mine))
    done = tuple(r for r in results if r is not None)
    return Result(system.file or system.name, method, done, tuple(notes))


def _check_one(
    system: System,
    ts: TransitionSystem,
    sem: Callable[[], IRSemantics],
    name: str,
    kind: str,
    method: str,
    solve: Solve,
    budget: Budget,
) -> PropertyResult:
    t0 = time.monotonic()
    extra: dict[str, Any] = {}

    def result(verdict: Verdict, reason: str, trace: Trace | None = None) -> PropertyResult:
        stats = Stats(time_s=time.monotonic() - t0)
        return PropertyResult(name, kind, method, verdict, reason, stats, trace, extra=extra)

    try:
        cond = bad_condition(system, name, kind)
    except NotSafety as err:
        return result(Verdict.UNKNOWN, f"not checked: {err}")
    if budget.expired():
        return result(Verdict.UNKNOWN, budget.reason())
    try:
        if cond.state is None and not cond.steps:  # nothing can go wrong: true is inductive
            answer: Answer = Proved(z3.BoolVal(True, ts.ctx), "no error condition")
        else:
            answer = solve(ts, cond, budget)
    except z3.Z3Exception as err:
        why = budget.reason() if budget.expired() else f"solver error: {err}"
        return result(Verdict.UNKNOWN, why)
    if isinstance(answer, Inconclusive):
        why = answer.reason
        if budget.expired():
            at = f" at depth {answer.depth}" if answer.depth is not None else ""
            why = budget.reason() + at
        return result(Verdict.UNKNOWN, why)
    if isinstance(answer, Refuted):
        try:
            trace = _replay(sem(), name, kind, cond, answer)
        except ReplayError as err:
            return result(Verdict.UNKNOWN, f"the counterexample did not replay: {err}")
        n = len(answer.path)
        return result(
            Verdict.VIOLATED, f"counterexample of {n} step{'s' if n != 1 else ''} ({method})", trace
        )
    return _certified(system, cond, answer, budget, extra, result)


def _certified(
    system: System,
    cond: BadCondition,
    proof: Proved,
    budget: Budget,
    extra: dict[str, Any],
    result: Callable[[Verdict, str], PropertyResult],
) -> PropertyResult:
    """``holds`` once the invariant of ``proof`` passes the independent check."""
    try:
        invariant = readable(proof.invariant, system)
    except ValueError as err:
        return result(Verdict.UNKNOWN, f"{proof.detail}: invariant not readable: {err}")
    text = format_expr(invariant)
    left = budget.left()
    timeout = None if left is None else max(left, CHECK_RESERVE_S)
    check = check_certificate(system, cond, invariant, timeout)
    extra["certificate"] = {
        "invariant": text,
        "found_by": proof.detail,
        "checked": check.valid,
        "check_time_s": round(check.time_s, 6),
    }
    if check.failed is not None:
        raise CertificateError(
            f"the inductive invariant for '{cond.name}' ({proof.detail}) fails "
            f"{check.failed}: {text}"
        )
    if not check.valid:
        return result(
            Verdict.UNKNOWN, f"{proof.detail}; certificate check undecided: {check.undecided}"
        )
    return result(
        Verdict.HOLDS,
        f"inductive invariant ({proof.detail}), checked: initiation, consecution, safety",
    )


def readable(invariant: z3.ExprRef, system: System) -> Expr:
    """``invariant`` (Z3, over the state variables) as an IR expression: simplified, and with
    quantifiers eliminated (Spacer's answers may keep an existential from model-based
    projection). Raises ``ValueError`` when it cannot be read."""
    simplified = z3.simplify(invariant)
    variables = state_variables(system)
    try:
        return from_z3(simplified, variables)
    except ValueError:
        goal = z3.Goal(ctx=simplified.ctx)
        goal.add(simplified)
        try:
            ctx = simplified.ctx
            done = z3.Then(z3.Tactic("qe", ctx), z3.Tactic("simplify", ctx), ctx=ctx)(goal)
        except z3.Z3Exception as err:
            raise ValueError(f"quantifier elimination failed: {err}") from err
        parts = [f for g in done for f in g]
        return from_z3(z3.simplify(z3.And(*parts, simplified.ctx)), variables)


def _replay(sem: IRSemantics, name: str, kind: str, cond: BadCondition, cex: Refuted) -> Trace:
    """The counterexample re-executed on the concrete semantics (raises ``ReplayError``)."""
    path = list(cex.path)
    if kind != "ctl":
        return replay(sem, name, path, cex.start)
    if not is_initial(sem.system, cex.start):
        raise ReplayError("the counterexample does not start in an initial state")
    states = run_path(sem, path, cex.start)
    env = dict(zip((v.name for v in sem.system.variables), states[-1], strict=True))
    assert cond.state is not None
    try:
        bad = bool(evaluate(cond.state, env))
    except (EvalError, ZeroDivisionError) as err:
        raise ReplayError(f"the formula cannot be evaluated in the last state: {err}") from err
    if not bad:
        raise ReplayError("the last state satisfies the formula under AG")
    return to_trace(sem, states, path, "witness of the negation: a reachable state violates it")
