"""Four-valued model checking through two classical searches, and the combined verdict
(paper 004, §2.4 and §3.2).

The may System (``j = ⊥``) and the must System (``j = ⊤``) are searched exhaustively by the
explicit engine. For each property:

* **t** (``holds``) when the may System satisfies it: the over-approximation has no bad state,
  so no concrete state is bad;
* **f** (``violated``) when the must System violates it: every concrete state represented along
  the must-path has a successor in the next abstract state, so a concrete counterexample exists.
  It is built step by step from the initial state (IR commands are deterministic and the
  initial state is unique, so the solver has nothing left to choose): of the concrete
  successors (a step may be an atomic chain, see ``codegen.python``) one that executes the same
  concrete commands as the abstract step and lies in the next must-state's concretization is
  taken (any successor in the concretization if the chains differ, e.g. where the concrete
  chain was cut at a repeated state); for a failing transition (model error, assertion) the
  concrete error entry of the same property. The concrete path of successor labels is replayed
  by :func:`absmc.kernel.replay.trace.replay` before it is reported. When only the may
  System violates the property and its commands, step by step, replay concretely, that also
  gives **f** (``confirmed_by`` ``may-trace``);
* **⊥** (``unknown``) otherwise, with the may System's counterexample as an *unconfirmed* trace
  that shows where the predicates are too weak.

``value`` in the JSON result is the lattice value; it is also the combination
``⊔_{j∈J} (j ⊓ (φ ⊒ j))`` of the two classical answers (:func:`bilattice.combine`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass

from absmc.codegen.python import CompiledSystem, State, compile_expr_fn, compile_system
from absmc.engines.fourvalued.bilattice import BOT, TOP, Belnap, combine, negate
from absmc.engines.fourvalued.build import (
    HELPER,
    UNKNOWN_VALUE,
    AbstractModel,
    FourValuedAbstraction,
    build_abstraction,
)
from absmc.engines.fourvalued.effect import AbstractionIncomplete
from absmc.engines.fourvalued.ltl import LassoRefutation, check_ltl, ltl_atoms
from absmc.ir.arrays import expand_system
from absmc.ir.expr import Expr
from absmc.ir.intsem import IntegerTooLarge
from absmc.ir.sorts import BoolSort
from absmc.ir.system import NO_DEADLOCK, NO_MODEL_ERROR, System
from absmc.kernel.explore.graph import bounded_graph
from absmc.kernel.explore.search import SearchOutcome, Violation, search
from absmc.kernel.explore.store import ExactStore
from absmc.kernel.ltl.lasso import refuse_ltl_options
from absmc.kernel.replay.trace import (
    ReplayError,
    chain_rows,
    concretize,
    is_failing_property,
    replay,
    run_path,
)
from absmc.kernel.run.limits import time_limit
from absmc.kernel.run.options import (
    CheckOptions,
    Selection,
    property_kind,
    select_properties,
)
from absmc.kernel.run.result import PropertyResult, Result, Stats, Trace, TraceStep, Verdict
from absmc.logic.prover import Prover

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
        """The first violation of the property ``name`` found in this System."""
        return self.outcome.violations.get(name)

    def concrete_commands(self, label: int) -> tuple[int, ...]:
        """The concrete commands an abstract step (a command or a chain label) stands for."""
        origin = self.model.origin
        return tuple(origin[i] for i in self.compiled.commands_of(label) if origin[i] != HELPER)


def _not_searched(model: AbstractModel, reason: str) -> AbstractRun:
    """The run of a search that a used-up limit kept from starting (no state, ``reason``)."""
    return AbstractRun(model, compile_system(model.system), SearchOutcome(stopped=reason))


def _search(model: AbstractModel, options: CheckOptions, deadlock: bool) -> AbstractRun:
    compiled = compile_system(model.system)
    outcome = search(
        compiled,
        ExactStore(),
        order=options.order,
        limits=options.limits,
        keep_going=True,
        # an abstracted System checks deadlock as a property (possibly / definitely dead)
        check_deadlock=deadlock and model.exact,
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
        #: per property decided ⊥: the may-path's concrete commands per step and where its
        #: concrete replay failed (what a refinement starts from)
        self.unconfirmed: dict[str, tuple[list[tuple[int, ...]], ReplayError]] = {}

    def loops(self) -> bool:
        """Some atomic chain of the (abstracted) may System was cut at a repeated state. A
        concrete chain that loops forever leaves its state without successor — a deadlock
        that no state condition shows; its abstraction loops in the may System too, so without
        a cut there is no such deadlock (exact Systems check deadlock the built-in way)."""
        return not self.may.model.exact and self.may.compiled.cut_chains > 0

    # -- concrete runs of abstract paths ------------------------------------------------
    def inside(self, abstract: State, s: State) -> bool:
        """The concrete state ``s`` lies in the concretization of the abstract state."""
        n = len(self.positions)
        if abstract[:n] != tuple(s[i] for i in self.positions):
            return False
        for i, fn in enumerate(self.pred_fns):
            have = abstract[n + i]
            if have != UNKNOWN_VALUE and have != int(bool(fn(s))):
                return False
        return True

    def concrete_path(
        self, run: AbstractRun, name: str, path: Sequence[int], guided: bool
    ) -> list[int]:
        """Concrete step labels for the abstract ``path`` of ``run`` that violates ``name``
        (:func:`absmc.kernel.replay.trace.concretize`). Each step takes the concrete successor
        executing the same concrete commands; ``guided`` (must-paths) requires it to lie in the next
        abstract state's concretization and otherwise takes any successor that does. Raises
        ``Unconfirmed`` (a ``ReplayError``) where no successor fits."""
        failing = is_failing_property(self.system, name)
        body = list(path[:-1]) if failing else list(path)
        states = run_path(run.compiled, body)
        steps = [run.concrete_commands(label) for label in path]

        def fits(k: int, s: State) -> bool:
            return self.inside(states[k], s)

        labels, _ = concretize(
            self.compiled,
            steps,
            failing=name if failing else None,
            fits=fits if guided else None,
            guided=guided,
        )
        return labels

    def witness(self, name: str, v: Violation) -> Trace:
        """The replayed concrete counterexample along a must-path."""
        try:
            return replay(self.compiled, name, self.concrete_path(self.must, name, v.path, True))
        except ReplayError as err:
            raise UnsoundWitness(f"the must-path of '{name}' has no concrete run: {err}") from None

    def try_may(self, name: str, v: Violation) -> tuple[Trace | None, str]:
        """Replay the may System's counterexample concretely; the trace, or why not (also
        recorded in :attr:`unconfirmed`)."""
        try:
            path = self.concrete_path(self.may, name, v.path, False)
            return replay(self.compiled, name, path), ""
        except ReplayError as err:
            steps = [self.may.concrete_commands(label) for label in v.path]
            self.unconfirmed[name] = (steps, err)
            return None, str(err)
        except IntegerTooLarge as err:  # the concrete run is too big to build
            return None, f"its concrete replay was not built: {err}"

    def abstract_trace(self, v: Violation, why: str) -> Trace:
        """The may System's counterexample as a trace over abstract states (concrete variables
        and predicate values; one row per concrete command of an atomic chain), marked as not
        replayed."""
        run = self.may
        model = run.model
        failing = is_failing_property(self.system, v.property)
        path = v.path
        body = path[:-1] if failing else path
        states = run_path(run.compiled, body)
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

        def row(k: int, s: State, ci: int) -> TraceStep:
            c = self.system.commands[ci]
            where = f"{c.span.file}:{c.span.line}" if c.span is not None else None
            text = c.source_text or c.text()
            return TraceStep(k, state_dict(s), c.process, text, where, ci)

        steps = [TraceStep(0, state_dict(states[0]))]
        note = f"unconfirmed: this abstract path has no concrete run ({why})"

        def rows(s: State, commands: Sequence[int]) -> None:
            for ai, t in chain_rows(run.compiled, s, commands):
                if model.origin[ai] != HELPER:
                    steps.append(row(len(steps), t, model.origin[ai]))

        try:
            for i, label in enumerate(body):
                rows(states[i], run.compiled.commands_of(label))
            if failing:
                chain = run.compiled.commands_of(path[-1])
                rows(states[-1], chain[:-1])
                last = self.system.commands[model.origin[chain[-1]]]
                what = "fail" if v.property == NO_MODEL_ERROR else f"violate {v.property}"
                note += f"; next, '{last.source_text or last.text()}' may {what}"
        except ReplayError as err:
            note += f"; the abstract trace itself breaks off at row {len(steps)}: {err}"
        return Trace(tuple(steps), replayed=False, note=note)

    # -- verdicts ----------------------------------------------------------------------
    def decide(self, name: str, stats: Stats) -> PropertyResult:
        """The result for one property. The two searches decide the negated (existential)
        property ``EF bad`` at ``j = ⊥`` (may System) and ``j = ⊤`` (must System); its value is
        their combination (§2.4) and the property's value is its negation."""
        kind = property_kind(self.system, name)
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
        if value is Belnap.TRUE and name == NO_DEADLOCK and self.loops():
            extra["value"] = Belnap.UNKNOWN.symbol
            extra["undecided"] = "looping atomic chain"
            reason = (
                "value ⊥: no abstract state is possibly deadlocked, but an atomic chain of the "
                "may-abstraction came back to a state it had passed: a process may loop forever "
                "inside atomic (no successor: a deadlock), which the abstract deadlock "
                "condition does not see"
            )
            return PropertyResult(name, kind, METHOD, Verdict.UNKNOWN, reason, stats, extra=extra)
        if value is Belnap.TRUE:
            reason = (
                f"value t: holds in the may-abstraction (over-approximation, "
                f"{self.may.outcome.states:,} abstract states)"
            )
            if self.may.model.exact:
                reason = (
                    f"value t: nothing is abstracted; no violation in the "
                    f"{self.may.outcome.states:,} reachable states (exhaustive search)"
                )
            return PropertyResult(name, kind, METHOD, Verdict.HOLDS, reason, stats, extra=extra)
        if value is Belnap.FALSE:
            assert must_v is not None
            try:
                trace = self.witness(name, must_v)
            except IntegerTooLarge as err:  # the concrete run exists but is too big to build
                extra["undecided"] = "concrete witness too large"
                reason = f"value f, but its concrete witness was not built: {err}"
                return PropertyResult(
                    name, kind, METHOD, Verdict.UNKNOWN, reason, stats, extra=extra
                )
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
    same = may is must
    return Stats(
        states=may.outcome.states + (0 if same else must.outcome.states),
        transitions=may.outcome.transitions + (0 if same else must.outcome.transitions),
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
            "must_time_s": round(0.0 if same else must.outcome.time_s, 4),
        },
    )


def _incomplete(system: System, selection: Selection, reason: str, total: float) -> Result:
    stats = Stats(time_s=total)
    results = [
        PropertyResult(
            name,
            property_kind(system, name),
            METHOD,
            Verdict.UNKNOWN,
            f"value ⊥: {reason}",
            stats,
            extra={"value": Belnap.UNKNOWN.symbol},
        )
        for name in selection.all_names()
    ]
    return Result(system.file or system.name, METHOD, tuple(results))


def _graph(
    system: System, abstraction: FourValuedAbstraction, may: AbstractRun, options: CheckOptions
) -> dict[str, object]:
    """The may-System's first states (:func:`absmc.kernel.explore.graph.bounded_graph`): concrete
    variables and the tracked predicates (``!p`` where false)."""
    model = may.model
    preds = abstraction.partition.predicates
    n = len(model.concrete)

    def label(s: State) -> str:
        parts = [f"{name}={s[i]}" for i, name in enumerate(model.concrete)]
        if model.exact:
            return "\n".join(parts)
        for i, p in enumerate(preds):
            parts.append(p.text if s[n + i] else f"!({p.text})")
        return "\n".join(parts)

    def text(ai: int) -> str:
        ci = model.origin[ai]
        if ci == HELPER:
            return model.system.commands[ai].label or "helper"
        c = system.commands[ci]
        return c.source_text or c.text()

    title = "explored state space" if model.exact else "may-abstraction (abstract states)"
    kind = "concrete" if model.exact else "abstract"
    assert options.graph_bound is not None
    return bounded_graph(may.compiled, title, kind, options.graph_bound, label, text)


@dataclass
class Round:
    """One four-valued check: its ``result``, the ⊥ properties' unconfirmed may-paths
    (:attr:`_Decider.unconfirmed`), the ``tracked`` predicates and both state counts."""

    result: Result
    unconfirmed: dict[str, tuple[list[tuple[int, ...]], ReplayError]]
    tracked: tuple[Expr, ...]
    abstracted: frozenset[str]
    may_states: int
    must_states: int
    #: per ⊥ LTL property whose lasso ran concretely but left the automaton: the edge guard
    #: that failed after the unconfirmed steps (where a refinement starts instead of ``bad``)
    conditions: dict[str, Expr] = dataclasses.field(default_factory=dict)


def check_fourvalued(
    system: System,
    options: CheckOptions,
    predicates: Sequence[Expr] | None = None,
    shortcut: bool = True,
) -> Result:
    """Check ``system`` with Bonsai's four-valued abstraction (see module docstring).

    ``predicates`` default to the model's (``System.predicates``); with none, every variable
    stays concrete and the verdicts (and state counts) are those of exact search: both
    abstractions are the concrete System, searched once (``shortcut``; without it they are
    built and searched the general way). The searches honour ``options.limits`` and
    ``options.order`` with the exact store (the registry refuses others: both abstractions
    must be searched exhaustively). Raises ``OptionError`` for unknown property names,
    ``ModelError`` for an unusable predicate or an assertion that cannot be abstracted.
    """
    return check_round(system, options, predicates, shortcut).result


def check_round(
    system: System,
    options: CheckOptions,
    predicates: Sequence[Expr] | None = None,
    shortcut: bool = True,
) -> Round:
    """:func:`check_fourvalued` with what a refinement needs of the run (:class:`Round`)."""
    system = expand_system(system)  # array reads as case splits (ir.arrays)
    selection = select_properties(system, options)
    if selection.ltl:
        refuse_ltl_options(options, METHOD)
    t0 = time.monotonic()
    # one deadline for the whole round: the abstraction's prover calls (past it: unknown,
    # never valid), both searches and the ltl product searches
    options = dataclasses.replace(options, limits=options.limits.started(t0))
    timeout = options.limits.timeout
    prover = Prover(deadline=options.limits.deadline)
    try:
        abstraction = build_abstraction(
            system,
            selection.user,
            selection.deadlock,
            predicates,
            prover,
            shortcut=shortcut,
            ltl_atoms=ltl_atoms(selection.ltl),
        )
    except AbstractionIncomplete as err:
        spent = time.monotonic() - t0
        why = str(err)
        if timeout is not None and (options.limits.expired() or prover.deadline_reached):
            why = time_limit(options.limits, "while building the abstraction")
        return Round(_incomplete(system, selection, why, spent), {}, (), frozenset(), 0, 0)
    may = _search(abstraction.may, options, selection.deadlock)
    must = may
    if not abstraction.must.exact:
        # --max-states bounds both searches together
        used_up = options.limits.exhausted_reason(may.outcome.states)
        if used_up is None:
            limits = options.limits.less(may.outcome.states)
            more = dataclasses.replace(options, limits=limits)
            must = _search(abstraction.must, more, selection.deadlock)
        else:
            must = _not_searched(abstraction.must, used_up)
    compiled = compile_system(system, selection.user)
    stats = _stats(abstraction, may, must, time.monotonic() - t0)
    decider = _Decider(system, abstraction, may, must, compiled)
    results = [decider.decide(name, stats) for name in selection.names()]
    lassos: dict[str, LassoRefutation] = {}
    if selection.ltl:
        limits = options.limits
        ltl_results, lassos = check_ltl(
            abstraction, compiled, selection.ltl, limits, (may.compiled, must.compiled)
        )
        results += ltl_results
    notes = abstraction.partition.report()
    graphs = [] if not options.graph_bound else [_graph(system, abstraction, may, options)]
    result = Result(system.file or system.name, METHOD, tuple(results), tuple(notes), graphs)
    part = abstraction.partition
    return Round(
        result,
        {**decider.unconfirmed, **{n: (r.steps, r.error) for n, r in lassos.items()}},
        tuple(p.expr for p in part.predicates),
        part.abstracted,
        may.outcome.states,
        must.outcome.states,
        {n: r.condition for n, r in lassos.items() if r.condition is not None},
    )
