"""Four-valued model checking through two classical searches, and the combined verdict
(paper 004, §2.4 and §3.2).

The may System (``j = ⊥``) and the must System (``j = ⊤``) are searched exhaustively by the
explicit engine. For each property:

* **t** (``holds``) when the may System satisfies it: the over-approximation has no bad state,
  so no concrete state is bad;
* **f** (``violated``) when the must System violates it: every concrete state represented along
  the must-path has a successor in the next abstract state, so a concrete counterexample exists.
  It is built by executing the path's concrete commands from the initial state (IR commands are
  deterministic and the initial state is unique, so the solver has nothing left to choose),
  checked to stay inside the must-states' concretizations, and replayed on the concrete
  semantics before it is reported. When only the may System violates the property and its
  counterexample happens to replay concretely, that also gives **f** (``confirmed_by``
  ``may-trace``);
* **⊥** (``unknown``) otherwise, with the may System's counterexample as an *unconfirmed* trace
  that shows where the predicates are too weak.

``value`` in the JSON result is the lattice value; it is also the combination
``⊔_{j∈J} (j ⊓ (φ ⊒ j))`` of the two classical answers (:func:`bilattice.combine`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from absmc.engines.explicit.replay import ReplayError, replay, run_path
from absmc.engines.explicit.search import SearchOutcome, Violation, search
from absmc.engines.explicit.store import ExactStore
from absmc.engines.fourvalued.bilattice import BOT, TOP, Belnap, combine, negate
from absmc.engines.fourvalued.build import (
    ABSTRACT_ERROR,
    UNKNOWN_VALUE,
    AbstractModel,
    FourValuedAbstraction,
    build_abstraction,
)
from absmc.engines.fourvalued.effect import AbstractionIncomplete
from absmc.engines.options import CheckOptions, OptionError, Selection, select_properties
from absmc.engines.result import PropertyResult, Result, Stats, Trace, TraceStep, Verdict
from absmc.ir.compile import CompiledSystem, State, compile_expr_fn, compile_system
from absmc.ir.expr import Expr
from absmc.ir.sorts import BoolSort
from absmc.ir.system import NO_DEADLOCK, NO_MODEL_ERROR, System

METHOD = "fourvalued"


class UnsoundWitness(Exception):
    """A must-path left the concretization of its abstract states (a bug, never a user error)."""


@dataclass
class AbstractRun:
    """One classical search of an abstract System."""

    model: AbstractModel
    compiled: CompiledSystem
    outcome: SearchOutcome

    @property
    def complete(self) -> bool:
        return self.outcome.stopped is None

    def violation(self, name: str) -> Violation | None:
        """The shortest violation of the original property ``name`` found in this System."""
        if name != NO_MODEL_ERROR:
            return self.outcome.violations.get(name)
        found = [
            v
            for v in (
                self.outcome.violations.get(NO_MODEL_ERROR),
                self.outcome.violations.get(ABSTRACT_ERROR),
            )
            if v is not None
        ]
        return min(found, key=lambda v: len(v.path)) if found else None


def _kind(system: System, name: str) -> str:
    if name == NO_DEADLOCK:
        return "deadlock"
    if name == NO_MODEL_ERROR:
        return "model-error"
    return system.get_property(name).kind


def _search(model: AbstractModel, options: CheckOptions) -> AbstractRun:
    compiled = compile_system(model.system)
    outcome = search(
        compiled,
        ExactStore(),
        order=options.order,
        limits=options.limits,
        keep_going=True,
        check_deadlock=False,
        progress=options.progress,
    )
    return AbstractRun(model, compiled, outcome)


class _Decider:
    def __init__(
        self,
        system: System,
        abstraction: FourValuedAbstraction,
        may: AbstractRun,
        must: AbstractRun,
        compiled: CompiledSystem,
    ) -> None:
        self.system = system
        self.abstraction = abstraction
        self.may = may
        self.must = must
        self.compiled = compiled
        preds = abstraction.partition.predicates
        self.positions = [system.index_of[n] for n in may.model.concrete]
        self.pred_fns = [compile_expr_fn(system, p.expr) for p in preds]

    # -- concrete paths of abstract violations ------------------------------------------
    def candidates(self, run: AbstractRun, v: Violation) -> list[tuple[list[int], list[int]]]:
        """Concrete command paths for an abstract violation, each with the abstract prefix
        whose states the concrete run visits."""
        origin = run.model.origin
        base = [origin[i] for i in v.path]
        if v.property != ABSTRACT_ERROR:
            prefix = v.path[:-1] if v.property == NO_MODEL_ERROR else v.path
            return [(base, prefix)]
        last = run_path(run.compiled, v.path)[-1]
        out = []
        for ci, cond in run.model.failures.items():
            if compile_expr_fn(run.model.system, cond)(last):
                out.append(([*base, ci], list(v.path)))
        return out

    def check_inside(self, abstract_prefix: Sequence[int], concrete: Sequence[int]) -> None:
        """Every concrete state of the witness lies in the concretization of its must-state."""
        absd = run_path(self.must.compiled, abstract_prefix)
        conc = run_path(self.compiled, concrete[: len(abstract_prefix)])
        n = len(self.must.model.concrete)
        for k, (b, s) in enumerate(zip(absd, conc, strict=True)):
            if b[:n] != tuple(s[i] for i in self.positions):
                raise UnsoundWitness(f"step {k}: concrete variables differ from the must-state")
            for i, fn in enumerate(self.pred_fns):
                have = b[n + i]
                if have != UNKNOWN_VALUE and have != int(bool(fn(s))):
                    p = self.abstraction.partition.predicates[i].text
                    raise UnsoundWitness(f"step {k}: predicate {p} is {have} in the must-state")

    def witness(self, name: str, v: Violation) -> Trace:
        """The replayed concrete counterexample along a must-path."""
        errors: list[str] = []
        for path, prefix in self.candidates(self.must, v):
            self.check_inside(prefix, path)
            try:
                return replay(self.compiled, name, path)
            except ReplayError as err:
                errors.append(str(err))
        raise UnsoundWitness(f"the must-path of '{name}' does not replay: {'; '.join(errors)}")

    def try_may(self, name: str, v: Violation) -> tuple[Trace | None, str]:
        """Replay the may System's counterexample concretely; the trace, or why not."""
        why = "no candidate command"
        for path, _ in self.candidates(self.may, v):
            try:
                return replay(self.compiled, name, path), ""
            except ReplayError as err:
                why = str(err)
        return None, why

    def abstract_trace(self, v: Violation, why: str) -> Trace:
        """The may System's counterexample as a trace over abstract states (concrete variables
        and predicate values), marked as not replayed."""
        model = self.may.model
        path = v.path
        states = run_path(self.may.compiled, path[:-1] if v.property == NO_MODEL_ERROR else path)
        n = len(model.concrete)
        preds = self.abstraction.partition.predicates
        concrete = model.system.variables[:n]

        def state_dict(s: State) -> dict[str, int | bool]:
            d: dict[str, int | bool] = {
                v.name: bool(x) if isinstance(v.sort, BoolSort) else x
                for v, x in zip(concrete, s, strict=False)
            }
            for i, p in enumerate(preds):
                d[f"[{p.text}]"] = bool(s[n + i])
            return d

        steps = [TraceStep(0, state_dict(states[0]))]
        for k, ai in enumerate(path[: len(states) - 1], start=1):
            c = self.system.commands[model.origin[ai]]
            where = f"{c.span.file}:{c.span.line}" if c.span is not None else None
            steps.append(TraceStep(k, state_dict(states[k]), c.process, c.text(), where, c.index))
        note = f"unconfirmed: the concrete commands of this abstract path do not replay ({why})"
        if v.property == NO_MODEL_ERROR or v.property == ABSTRACT_ERROR:
            note += "; the last abstract state may let a command fail"
        return Trace(steps, replayed=False, note=note)

    # -- verdicts ----------------------------------------------------------------------
    def decide(self, name: str, stats: Stats) -> PropertyResult:
        """The result for one property. The two searches decide the negated (existential)
        property ``EF bad`` at ``j = ⊥`` (may System) and ``j = ⊤`` (must System); its value is
        their combination (§2.4) and the property's value is its negation."""
        kind = _kind(self.system, name)
        may_v = self.may.violation(name)
        must_v = self.must.violation(name)
        may_word = "violated" if may_v else ("holds" if self.may.complete else "unknown")
        must_word = "violated" if must_v else ("holds" if self.must.complete else "unknown")
        extra: dict[str, object] = {"may": may_word, "must": must_word}
        if must_v is not None and may_v is None and self.may.complete:
            raise UnsoundWitness(f"'{name}' is violated in the must- but not the may-System")
        if must_v is None and may_v is None and not self.may.complete:
            extra["value"] = Belnap.UNKNOWN.symbol
            reason = (
                f"value ⊥: the may-abstraction search is incomplete ({self.may.outcome.stopped})"
            )
            return PropertyResult(name, kind, METHOD, Verdict.UNKNOWN, reason, stats, extra=extra)
        value = negate(combine({BOT: may_v is not None, TOP: must_v is not None}))
        extra["value"] = value.symbol
        if value is Belnap.TRUE:
            reason = (
                f"value t: holds in the may-abstraction (over-approximation, "
                f"{self.may.outcome.states} abstract states)"
            )
            return PropertyResult(name, kind, METHOD, Verdict.HOLDS, reason, stats, extra=extra)
        if value is Belnap.FALSE:
            assert must_v is not None
            trace = self.witness(name, must_v)
            extra["confirmed_by"] = "must-system"
            reason = (
                f"value f: violated in the must-abstraction (under-approximation); concrete "
                f"counterexample of {len(trace.steps) - 1} steps replayed"
            )
            return PropertyResult(
                name, kind, METHOD, Verdict.VIOLATED, reason, stats, trace, 1, extra=extra
            )
        assert may_v is not None
        confirmed, why = self.try_may(name, may_v)
        if confirmed is not None:
            extra |= {"value": Belnap.FALSE.symbol, "confirmed_by": "may-trace"}
            reason = (
                f"value f: the may-abstraction's counterexample replays on the concrete "
                f"semantics ({len(confirmed.steps) - 1} steps); the must-abstraction did not "
                "establish it"
            )
            return PropertyResult(
                name, kind, METHOD, Verdict.VIOLATED, reason, stats, confirmed, 1, extra=extra
            )
        abstract = self.abstract_trace(may_v, why)
        extra["unconfirmed"] = why  # where the concrete replay of the may-trace fails
        reason = (
            f"value ⊥: violated in the may-abstraction only; its {len(abstract.steps) - 1}-step "
            "trace is not confirmed (the predicates are too weak to decide)"
        )
        if not self.must.complete:
            reason += f"; must-abstraction search incomplete ({self.must.outcome.stopped})"
        return PropertyResult(
            name, kind, METHOD, Verdict.UNKNOWN, reason, stats, abstract, extra=extra
        )


def _stats(
    abstraction: FourValuedAbstraction, may: AbstractRun, must: AbstractRun, total: float
) -> Stats:
    a = abstraction.stats
    part = abstraction.partition
    return Stats(
        states=may.outcome.states + must.outcome.states,
        transitions=may.outcome.transitions + must.outcome.transitions,
        max_depth=max(may.outcome.max_depth, must.outcome.max_depth),
        time_s=total,
        extra={
            "abstraction_time_s": round(a.time_s, 4),
            "smt_enumerations": a.enumerations,
            "smt_checks": a.checks,
            "smt_models": a.models,
            "abstracted_commands": a.abstracted_commands,
            "copied_commands": a.copied_commands,
            "abstracted_variables": len(part.abstracted),
            "tracked_predicates": len(part.predicates),
            "may_states": may.outcome.states,
            "may_transitions": may.outcome.transitions,
            "may_time_s": round(may.outcome.time_s, 4),
            "must_states": must.outcome.states,
            "must_transitions": must.outcome.transitions,
            "must_time_s": round(must.outcome.time_s, 4),
        },
    )


def _incomplete(system: System, selection: Selection, reason: str, total: float) -> Result:
    stats = Stats(time_s=total)
    results = [
        PropertyResult(
            name,
            _kind(system, name),
            METHOD,
            Verdict.UNKNOWN,
            f"value ⊥: {reason}",
            stats,
            extra={"value": Belnap.UNKNOWN.symbol},
        )
        for name in selection.names()
    ]
    return Result(system.file or system.name, METHOD, results)


def check_fourvalued(
    system: System,
    options: CheckOptions,
    predicates: Sequence[Expr] | None = None,
) -> Result:
    """Check ``system`` with Bonsai's four-valued abstraction (see module docstring).

    ``predicates`` default to the model's (``System.predicates``); with none, every variable
    stays concrete and the verdicts are those of exact search. The searches honour
    ``options.limits`` and ``options.order``. Raises ``OptionError`` for a bitstate store (both
    abstractions must be searched exhaustively) or unknown property names, ``ModelError`` for an
    unusable predicate.
    """
    if options.store != "exact":
        raise OptionError("--method fourvalued searches its abstractions with the exact store")
    selection = select_properties(system, options)
    t0 = time.monotonic()
    try:
        abstraction = build_abstraction(system, selection.user, selection.deadlock, predicates)
    except AbstractionIncomplete as err:
        return _incomplete(system, selection, str(err), time.monotonic() - t0)
    may = _search(abstraction.may, options)
    must = _search(abstraction.must, options)
    compiled = compile_system(system, selection.user)
    stats = _stats(abstraction, may, must, time.monotonic() - t0)
    decider = _Decider(system, abstraction, may, must, compiled)
    results = [decider.decide(name, stats) for name in selection.names()]
    notes = abstraction.partition.report()
    return Result(system.file or system.name, METHOD, results, notes)
