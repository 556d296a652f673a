"""Checking a Python component inside its natively executed environment (Bao's thesis, ch. 2
and 3): the component's state machine (:mod:`absmc.component.machine`) searched by the
kernel's one search over one of its stores.

Verdicts: ``violated`` only with a trace that re-executes (:mod:`absmc.component.trace`);
``holds`` only from an exhaustive search with the exact store, when the environment answered
every repeated call alike (the environment's own state is not part of the component's state,
so a nondeterministic environment makes the search incomplete: said in the reason); otherwise
``unknown`` with the reason.
"""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from absmc.component.abstraction import PredicateAbstraction, RangeStore, compile_predicates
from absmc.component.machine import ASSERT_PROPERTY, UNCAUGHT_PROPERTY, ComponentSemantics
from absmc.component.memo import SMALL_MEMO_LIMIT, Memo
from absmc.component.native_replay import (
    CONFIRMED,
    NOT_APPLICABLE,
    REFUTED,
    confirm_on_cpython,
)
from absmc.component.program import build_program, load_program
from absmc.component.reduction import Reduction
from absmc.component.refinement import (
    ExactnessChecker,
    MatchStore,
    PredicateSet,
    guard_predicates,
    new_prover,
    parse_predicate,
)
from absmc.component.refinement import PredicateAbstraction as TPAbstraction
from absmc.component.trace import replay
from absmc.component.translate import Granularity
from absmc.errors import OptionError, UsageError
from absmc.ir.system import NO_DEADLOCK
from absmc.kernel.explore.search import CLOCK_EVERY, SearchOutcome, search
from absmc.kernel.explore.store import (
    BitStateStore,
    ExactStore,
    HashCompactStore,
    KeyedStore,
    Store,
    not_a_proof,
)
from absmc.kernel.replay.trace import ReplayError
from absmc.kernel.run.limits import time_limit
from absmc.kernel.run.options import Limits, Order, Progress, reduces
from absmc.kernel.run.result import PropertyResult, Result, Stats, Verdict

#: expansions between two clock reads with the reduction (each runs tens of steps)
REDUCED_CLOCK_EVERY = 32

#: the stores of a component check
STORES = ("exact", "hash-compact", "bitstate")

_KINDS = {ASSERT_PROPERTY: "assert", UNCAUGHT_PROPERTY: "exception", NO_DEADLOCK: "deadlock"}


@dataclass(frozen=True)
class ComponentOptions:
    """How to check a component: ``store`` (``exact``, ``hash-compact``, ``bitstate``),
    ``granularity`` (``statement`` or ``access``), search ``order``, ``limits``,
    ``keep_going``, ``check_deadlock``, bitstate size and hash functions, ``env_choices``
    (environment function -> its possible results, a list or a callable of the arguments),
    ``abstraction`` (``none``; ``predicates``: match on the control state and the values
    of the branch guards and ``predicates``, Python expressions, thesis ch. 2; ``range``:
    PA+NTP; ``prover``: PA+TP, refined with the prover, :mod:`absmc.component.refinement`),
    ``record_border`` (keep the environment calls for test generation), ``progress``,
    ``confirm`` (re-execute each violation's trace on CPython with the program file,
    :mod:`absmc.component.native_replay`; a trace that does not fail there is ``unknown``),
    ``reduce`` (partial-order reduction of the threads' interleavings,
    :mod:`absmc.component.reduction`; applies with ``abstraction="none"``; off unless asked
    for, :func:`absmc.kernel.run.options.reduces`)."""

    store: str = "exact"
    granularity: Granularity = "statement"
    order: Order = "bfs"
    limits: Limits = field(default_factory=Limits)
    keep_going: bool = False
    check_deadlock: bool = True
    bitstate_bits: int = 27
    hash_functions: int = 3
    env_choices: Mapping[Any, Any] = field(default_factory=dict)
    predicates: Sequence[str] = ()
    abstraction: str = "none"
    record_border: bool = False
    confirm: bool = True
    progress: Callable[[Progress], None] | None = None
    reduce: bool = reduces(None, program=True)


def _store(options: ComponentOptions) -> Store:
    if options.store == "bitstate":
        return BitStateStore(options.bitstate_bits, options.hash_functions)
    if options.store == "hash-compact":
        return HashCompactStore()
    if options.store == "exact":
        return ExactStore()
    raise OptionError(f"unknown store '{options.store}' (known: {', '.join(STORES)})", "store")


def check_semantics(sem: ComponentSemantics, options: ComponentOptions, model: str) -> Result:
    """Search ``sem`` and build the result (one entry per property: ``assert``,
    ``no-uncaught-exception`` and, unless disabled, ``no-deadlock``). What the program writes
    to standard output and error while it is explored is discarded (it runs many times).
    Raises ``OptionError`` for an unknown store or abstraction or a predicate that is not a
    Python expression."""
    with (
        contextlib.redirect_stdout(io.StringIO()),
        contextlib.redirect_stderr(io.StringIO()),
        sem.guarded(),
    ):
        result = _check(sem, options, model)
        if sem.stable_used and sem.stable_broken:
            # a library call received a component object: it might write attributes whose
            # reads were joined (absmc.component.stable) — search again without joining them
            sem.unstable = None
            sem.memo = Memo()
            result = _check(sem, options, model)
        return result


def _check(sem: ComponentSemantics, options: ComponentOptions, model: str) -> Result:
    # one deadline for every round of the check (kernel.run.limits)
    options = replace(options, limits=options.limits.started())
    if options.store in ("bitstate", "hash-compact"):
        sem.memo.limit = SMALL_MEMO_LIMIT
    # the reduction applies to the concrete search (the refinement rounds observe every
    # transition of the full graph)
    concrete = options.abstraction == "none" and not options.predicates
    if options.reduce and concrete:
        if sem.reduction is None:
            sem.reduction = Reduction(sem)
    else:
        sem.reduction = None
    if options.abstraction == "range":
        return _check_range(sem, options, model)
    if options.abstraction == "prover":
        return _check_prover(sem, options, model)
    store: Store
    abstraction: PredicateAbstraction | None = None
    if options.abstraction == "predicates" or options.predicates:
        abstraction = PredicateAbstraction(sem, compile_predicates(options.predicates))
        store = KeyedStore(abstraction.key, "predicate-abstract")
    elif options.abstraction != "none":
        raise OptionError(f"unknown abstraction '{options.abstraction}'", "abstraction")
    else:
        store = _store(options)
    try:
        outcome = search(
            sem,
            store,
            order=options.order,
            limits=options.limits,
            keep_going=options.keep_going,
            check_deadlock=options.check_deadlock,
            progress=options.progress,
            # an expansion with the reduction runs tens of steps: read the clock more often
            clock_every=REDUCED_CLOCK_EVERY if sem.reduction is not None else CLOCK_EVERY,
        )
    finally:
        sem.restore()
    stats = store.stats(outcome.stopped)
    incomplete = not_a_proof(outcome.states, stats)
    if abstraction is not None:
        incomplete = (
            f"no violation in {outcome.states:,} abstract states (predicate abstraction: "
            f"branch guards and {len(abstraction.predicates)} predicate(s)); matching on an "
            "abstraction may skip states: not a proof"
        )
    return _results(sem, options, outcome, stats, store.exact, incomplete, model)


def _results(
    sem: ComponentSemantics,
    options: ComponentOptions,
    outcome: SearchOutcome,
    store_stats: dict[str, Any],
    exact: bool,
    incomplete: str | None,
    model: str,
) -> Result:
    """The result of one search: violations replayed, ``holds`` when ``exact`` and complete
    and the environment deterministic, else ``unknown`` with ``incomplete`` or the stop."""
    extra: dict[str, Any] = dict(store_stats)
    extra["env_calls"] = sem.env_calls
    extra["memo_hits"] = sem.memo_hits
    extra["env_time_s"] = round(sem.env_time, 6)
    reduction = sem.reduction
    if reduction is not None:
        extra.update(reduction.stats())
    else:
        extra["reduction"] = "none"
    # traces replay on the full semantics: a trace's steps are real steps whatever the
    # reduction kept (the expanded sets need not be recomputed alike)
    sem.reduction = None
    stats = Stats(
        outcome.states, outcome.transitions, outcome.max_depth, outcome.time_s, extra=extra
    )
    nondet = sem.nondeterministic
    if nondet:
        incomplete = (
            "the environment is not deterministic: "
            + "; ".join(nondet)
            + (" — the search is not a proof")
        )
    names = [ASSERT_PROPERTY, UNCAUGHT_PROPERTY]
    if options.check_deadlock:
        names.append(NO_DEADLOCK)
    results: list[PropertyResult] = []
    try:
        for name in names:
            kind = _KINDS[name]
            v = outcome.violations.get(name)
            if v is not None:
                try:
                    trace = replay(sem, name, v.path)
                except ReplayError as e:
                    results.append(
                        PropertyResult(
                            name,
                            kind,
                            "component",
                            Verdict.UNKNOWN,
                            f"{v.message}; but its trace did not re-execute ({e}): the environment "
                            "answered differently",
                            stats,
                        )
                    )
                    continue
                steps = len(trace.steps) - 1
                reason = f"{v.message}; counterexample of {steps} step{'s' if steps != 1 else ''}"
                status, detail = (
                    confirm_on_cpython(sem, options.granularity, name, trace)
                    if options.confirm
                    else (NOT_APPLICABLE, "not asked for")
                )
                extra = {"cpython": status, "cpython_detail": detail}
                if status == REFUTED:
                    results.append(
                        PropertyResult(
                            name,
                            kind,
                            "component",
                            Verdict.UNKNOWN,
                            f"{v.message}; but its trace did not fail on CPython ({detail}): "
                            "not reported as a violation (an error of absmc's model; please "
                            "report it)",
                            stats,
                            trace,
                            extra=extra,
                        )
                    )
                    continue
                reason += (
                    f"; {detail}" if status == CONFIRMED else f"; not re-run on CPython: {detail}"
                )
                results.append(
                    PropertyResult(
                        name,
                        kind,
                        "component",
                        Verdict.VIOLATED,
                        reason,
                        stats,
                        trace,
                        v.count,
                        extra=extra,
                    )
                )
            elif outcome.stopped is None and exact and not nondet:
                results.append(
                    PropertyResult(
                        name,
                        kind,
                        "component",
                        Verdict.HOLDS,
                        f"no violation in the {outcome.states:,} reachable states of the component "
                        "(exhaustive search)",
                        stats,
                    )
                )
            else:
                reason = outcome.stopped or incomplete or "search incomplete"
                results.append(
                    PropertyResult(name, kind, "component", Verdict.UNKNOWN, reason, stats)
                )
    finally:
        sem.restore()
        sem.reduction = reduction
    notes = [f"environment nondeterminism: {n}" for n in nondet]
    return Result(model, "component", tuple(results), tuple(notes))


#: refinement rounds of the min/max range scheme before giving up
RANGE_ITERATIONS = 12


def _check_range(sem: ComponentSemantics, options: ComponentOptions, model: str) -> Result:
    """PA+NTP (thesis ch. 2; Kudra & Mercer): search matching on the control state, the branch
    guards, the user's predicates and equality predicates ``x == min`` added, round after
    round, for every integer whose values differed within one abstract state. A round in which
    no abstract state matched two different concrete states was an exact search: its ``holds``
    is a proof; a violation is replayed as always."""
    preds = compile_predicates(options.predicates)
    base = PredicateAbstraction(sem, preds)
    equalities: list[tuple[str, int]] = []
    rows: list[dict[str, Any]] = []
    total = 0.0
    deadline = options.limits.deadline
    result: Result | None = None
    for it in range(1, RANGE_ITERATIONS + 1):
        store = RangeStore(base.key, equalities)
        outcome = _round(sem, store, options, deadline, it)
        total += outcome.time_s
        rows.append(
            {
                "iteration": it,
                "abstract_states": outcome.states,
                "merged": store.merged,
                "equalities": len(equalities),
            }
        )
        exact = store.merged == 0
        more = store.refinement()
        why = None
        if not exact:
            why = (
                f"range refinement: {store.merged} abstract state(s) still merge different "
                f"concrete states after {it} round(s); not a proof"
            )
        result = _results(sem, options, outcome, store.stats(), exact, why, model)
        if result.verdict is Verdict.VIOLATED or outcome.stopped is not None or exact or not more:
            break
        equalities = equalities + more
    assert result is not None
    return _with_rows(result, rows, total)


def _round(
    sem: ComponentSemantics,
    store: object,
    options: ComponentOptions,
    deadline: float | None,
    it: int,
    clock_every: int = CLOCK_EVERY,
) -> SearchOutcome:
    """The search of refinement round ``it`` over ``store`` with the run's limits and the time
    left until ``deadline`` (``time.monotonic()`` seconds); a stop at the time limit names the
    round. The program's tracked globals are restored afterwards."""
    lim = options.limits
    try:
        outcome = search(
            sem,
            cast(Store, store),
            order=options.order,
            limits=lim,
            deadline=deadline,
            keep_going=options.keep_going,
            check_deadlock=options.check_deadlock,
            progress=options.progress,
            clock_every=clock_every,
        )
    finally:
        sem.restore()
    if outcome.stopped is not None and outcome.stopped.startswith("time limit"):
        outcome.stopped = time_limit(lim, f"(refinement round {it})")
    return outcome


#: refinement rounds of PA+TP before giving up
PROVER_ITERATIONS = 12


def _check_prover(sem: ComponentSemantics, options: ComponentOptions, model: str) -> Result:
    """PA+TP (thesis ch. 2.3, Fig. 2.2(a); paper 000 Figs. 2–3): rounds of the search over a
    predicate store; each transition is checked for exactness with the prover, and the
    weakest preconditions it could not decide become the next round's predicates. A round
    without violation proves ``holds`` when its search was exact (no abstract state matched
    two different concrete states) or every transition was checked exact; a violation is
    replayed as always. Raises ``OptionError`` for a predicate that is not an expression."""
    for text in options.predicates:
        parse_predicate(text)
    preds = PredicateSet(list(options.predicates))
    for fc in sem.prog.funcs:
        for text in guard_predicates(fc):
            preds.add(fc.index, text)
    prover = new_prover()
    rows: list[dict[str, Any]] = []
    total = 0.0
    deadline = options.limits.deadline
    prover.deadline = deadline
    result: Result | None = None
    for it in range(1, PROVER_ITERATIONS + 1):
        abstraction = TPAbstraction(sem, preds)
        store = MatchStore(abstraction)
        checker = ExactnessChecker(sem, abstraction, prover)
        sem.exec_log = []
        sem.on_transition = checker.transition
        try:
            # an expansion asks the prover: read the clock each time
            outcome = _round(sem, store, options, deadline, it, clock_every=1)
        finally:
            sem.exec_log = None
            sem.on_transition = None
        total += outcome.time_s
        added = 0
        for fid, texts in checker.new.items():
            for text in texts:
                added += preds.add(fid, text)
        rows.append(
            {
                "iteration": it,
                "abstract_states": outcome.states,
                "merged": store.merged,
                "predicates": store.stats()["predicates"],
                "checked": checker.checked,
                "unchecked": checker.unchecked,
                "imprecise": checker.imprecise,
                "new_predicates": added,
            }
        )
        by_prover = checker.unchecked == 0 and checker.imprecise == 0
        exact = store.merged == 0 or by_prover
        why = None
        if not exact:
            why = (
                f"PA+TP: {store.merged} abstract state(s) matched different concrete states and "
                f"{checker.imprecise} imprecise, {checker.unchecked} unchecked transition(s) "
                f"remain after {it} round(s); not a proof"
            )
        stats = store.stats()
        stats["prover_calls"] = prover.stats.calls
        result = _results(sem, options, outcome, stats, exact, why, model)
        if result.verdict is Verdict.VIOLATED or outcome.stopped is not None or exact or not added:
            break
    assert result is not None
    return _with_rows(result, rows, total)


def _with_rows(result: Result, rows: list[dict[str, Any]], total: float) -> Result:
    out = []
    for r in result.results:
        extra = dict(r.extra)
        extra["iterations_total_time_s"] = round(total, 6)
        out.append(
            PropertyResult(
                r.property,
                r.kind,
                r.method,
                r.verdict,
                r.reason,
                r.stats,
                r.trace,
                r.violations,
                tuple(rows),
                extra,
            )
        )
    return Result(result.model, result.method, tuple(out), result.notes)


def check(
    entry: Callable[..., Any],
    *args: Any,
    component: str | Sequence[str] = (),
    namespace: dict[str, Any] | None = None,
    kwargs: Mapping[str, Any] | None = None,
    options: ComponentOptions | None = None,
    **option_fields: Any,
) -> Result:
    """Model check the component ``component`` (names of functions, classes, ``Class.method``
    or the module's name, in ``entry``'s module: one name, ``"A,B"`` or a list) of the program
    that ``entry(*args)`` runs. The environment (everything else) runs natively, one atomic
    step per call.

    Options as :class:`ComponentOptions` (``options=``) or its fields as keywords (``store=
    "bitstate"``, ``granularity="access"``, ``limits=Limits(timeout=10)``, ...). Returns a
    :class:`~absmc.kernel.run.result.Result` with one entry per property (``assert``,
    ``no-uncaught-exception``, ``no-deadlock``). Raises ``Unsupported`` (a ``ModelError``
    naming file:line) for constructs the translator cannot handle, ``UsageError`` for unknown
    names, ``OptionError`` for a bad option. Example::

        import absmc.component
        result = absmc.component.check(main, component=["Account"], granularity="access")
        print(result.verdict)
    """
    opts = options if options is not None else ComponentOptions(**option_fields)
    component = component_names(component)
    ns = namespace if namespace is not None else getattr(entry, "__globals__", None)
    if ns is None:
        raise UsageError(f"the entry {entry!r} is not a Python function")
    prog, code = build_program(ns, entry, component, opts.granularity, opts.env_choices)
    sem = ComponentSemantics(prog, code, args, kwargs, record=opts.record_border)
    name = getattr(entry, "__module__", "") or ""
    file = getattr(getattr(entry, "__code__", None), "co_filename", name)
    return check_semantics(sem, opts, str(file))


def component_names(component: str | Sequence[str]) -> list[str]:
    """The component's names: a string is one name or several separated by commas."""
    items = [component] if isinstance(component, str) else list(component)
    return [n.strip() for item in items for n in item.split(",") if n.strip()]


def check_file(
    path: str | Path,
    entry: str,
    args: Sequence[Any],
    component: str | Sequence[str],
    options: ComponentOptions,
) -> tuple[Result, ComponentSemantics]:
    """Load the program at ``path`` and check it as :func:`check` does; also returns the
    semantics (for the environment's border states). Raises as :func:`check`, and
    ``ModelError`` for a syntax error or a failed import, ``ImportTimeout`` when importing
    takes longer than the time limit, ``UsageError`` for an unknown entry."""
    module = load_program(path, options.limits.timeout)
    ns = module.__dict__
    fn = ns.get(entry)
    if not callable(fn):
        raise UsageError(f"{path}: the program defines no function '{entry}' (--entry)")
    t0 = time.monotonic()
    component = component_names(component)
    prog, code = build_program(ns, fn, component, options.granularity, options.env_choices)
    sem = ComponentSemantics(prog, code, args, None, record=options.record_border)
    del t0
    return check_semantics(sem, options, str(path)), sem
