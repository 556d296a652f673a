"""``--method explicit``: exhaustive explicit-state search on the compiled semantics."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import cache
from typing import TYPE_CHECKING, Any, Literal, cast

from absmc.codegen.python import CompiledSystem, compile_system
from absmc.errors import OptionError
from absmc.ir.ltl import LtlProperty
from absmc.ir.system import Property, System
from absmc.kernel.explore.graph import bounded_graph
from absmc.kernel.explore.por import POR, PRIORITY_NOTE, AmpleSets, kept_off_by_priorities
from absmc.kernel.explore.search import Violation, search
from absmc.kernel.explore.store import (
    BitStateStore,
    ExactStore,
    HashCompactStore,
    Store,
    not_a_proof,
)
from absmc.kernel.replay.outcome import results_from_outcome
from absmc.kernel.replay.trace import command_text, replay
from absmc.kernel.run.options import (
    CheckOptions,
    Limits,
    Selection,
    property_kind,
    select_properties,
)
from absmc.kernel.run.result import PropertyResult, Result, Stats, Verdict

if TYPE_CHECKING:  # CTL, LTL and the partitioned search are imported when a run needs them
    from absmc.kernel.ltl.ltl import LtlOutcome

#: what runs the search (see :mod:`absmc.engines.explicit.native`)
Backend = Literal["python", "native", "auto"]

#: a product search in place of :func:`~absmc.kernel.ltl.ltl.search_ltl` (the native back end's:
#: :class:`absmc.native.ltl.NativeLtl`): ``(semantics, property, limits, deadlock) ->
#: outcome`` (the lasso in labels of ``semantics``), with safety checked on the way and the
#: store of the check's options, whose statistics (``store`` among them) are the outcome's
#: ``extra``
LtlSearch = Callable[[CompiledSystem, LtlProperty, Limits, bool], "LtlOutcome"]

#: a safety search in place of the Python one beside the product searches (the native back
#: end's): ``options -> results`` of the selection's safety properties (``None``: it cannot
#: serve the options, :func:`_safety` runs)
SafetySearch = Callable[[CheckOptions], list[PropertyResult] | None]


def make_store(options: CheckOptions) -> Store:
    """The store ``options`` ask for (raises ``ValueError`` for a bad bitstate size)."""
    if options.store == "bitstate":
        return BitStateStore(options.bitstate_bits, options.hash_functions)
    if options.store == "hash-compact":
        return HashCompactStore()
    return ExactStore()


def check_explicit(
    system: System,
    options: CheckOptions,
    backend: Backend = "python",
    workers: int = 1,
    ray: str | None = None,
    ltl_search: LtlSearch | None = None,
    safety_search: SafetySearch | None = None,
) -> Result:
    """Model check ``system`` by explicit-state search on ``backend`` (``python``, ``native``
    or ``auto``: :mod:`absmc.engines.explicit.native`; ``native`` raises ``OptionError`` when it
    cannot serve the options). CTL properties: by labelling the reachable graph
    (:mod:`absmc.engines.explicit.ctl`).

    With the exact store an unviolated property ``holds`` when the search exhausts the state
    space; with the bitstate or hash-compact store it stays ``unknown`` (hash collisions may
    have omitted states), and the reason gives SPIN's hash factor, the observed false matches
    and a bound on the probability of an omission, never a coverage percentage
    (:class:`~absmc.kernel.explore.store.BitStateStore`), or the expected number of hash collisions.
    ``ray`` (with ``python`` or ``auto``) and, on the Python back end, ``workers`` > 1 run the
    safety search hash-partitioned on the Python back end
    (:mod:`absmc.engines.explicit.parallel`; exact store, same counts and verdicts); on the
    native back end ``workers`` threads share one store (0: the machine's cores).
    Linear-time properties (``ltl`` blocks, never claims) are checked each by its own product
    search with a nested DFS (:mod:`absmc.kernel.ltl.ltl`), which also checks the safety
    properties; the separate safety search runs only when no product search covered the state
    space, and never with ``options.ltl`` (SPIN's ``-N``: :func:`_linear_time`); ``ltl_search``
    (with ``python``) runs those product searches instead (the native back end's), and
    ``safety_search`` the safety search beside them. Raises
    ``OptionError`` for unknown property names or an unsupported combination, ``ValueError``
    for a bad bitstate size.
    """
    result = _check(system, options, backend, workers, ray, ltl_search, safety_search)
    if options.reduce and kept_off_by_priorities(system):
        result = replace(result, notes=(*result.notes, PRIORITY_NOTE))
    return result


def _check(
    system: System,
    options: CheckOptions,
    backend: Backend,
    workers: int,
    ray: str | None,
    ltl_search: LtlSearch | None,
    safety_search: SafetySearch | None,
) -> Result:
    """:func:`check_explicit` without the result's notes."""
    selection = select_properties(system, options)
    if backend == "native" and ray is not None:
        raise OptionError("--ray runs on the Python back end (use --backend python)", "backend")
    if ray is not None:
        backend = "python"  # auto: the Ray search is the Python back end's partitioned one
    if backend != "python":
        # imported here: a run on the Python back end does not load cffi and the C generator
        from absmc.engines.explicit.native import check_with_backend

        return check_with_backend(
            system,
            options,
            selection,
            backend,
            lambda o, w=1, ltl=None, safety=None: _check(system, o, "python", w, None, ltl, safety),
            workers,
        )
    if ltl_search is not None and selection.ltl and not selection.ctl:
        # the product searches run in C: the Python back end serves only replays (a lasso,
        # a violation met on the way) and a safety search where C cannot; compiled on first
        # use (SPIN's mobile1: ~3 s of CPU for 3,091 commands, unused when every claim holds)
        compiled = cast(CompiledSystem, _Deferred(system, selection.user))
    else:
        compiled = compile_system(system, selection.user)
    options = replace(options, limits=options.limits.started())  # one deadline for all
    if selection.ltl:
        results = _linear_time(
            system, options, compiled, selection, workers, ray, ltl_search, safety_search
        )
    else:
        results = _safety(system, options, compiled, selection, workers, ray)
    if selection.ctl:
        from absmc.engines.explicit.ctl import check_ctl

        results += check_ctl(compiled, selection.ctl, options)
    graphs = []
    if options.graph_bound:
        graphs.append(
            bounded_graph(
                compiled,
                "explored state space",
                bound=options.graph_bound,
                command_text=lambda ci: command_text(system, ci),
            )
        )
    return Result(system.file or system.name, "explicit", tuple(results), graphs=graphs)


def _linear_time(
    system: System,
    options: CheckOptions,
    compiled: CompiledSystem,
    selection: Selection,
    workers: int = 1,
    ray: str | None = None,
    ltl_search: LtlSearch | None = None,
    safety_search: SafetySearch | None = None,
) -> list[PropertyResult]:
    """The linear-time properties, each by its own product search that also checks the safety
    properties on the way (docs/ltl.md, "What one product search checks"). With ``-N``
    (``options.ltl``: SPIN's semantics with a claim) only the claim is searched for, stopping at
    the first violation of any kind unless ``keep_going``, without the deadlock check, and the
    safety properties appear only where violated. Otherwise each product search goes on past
    safety violations; the safety properties not violated hold when one product search ended
    without a cycle or a limit over an automaton whose initial state loops on ``true`` (it
    visited every reachable state, :func:`~absmc.kernel.ltl.product.covers_every_state`), else the
    ordinary safety search decides them (:func:`_safety`, run before the product searches'
    results as before). ``ltl_search``: the product search to use (default
    :func:`~absmc.kernel.ltl.ltl.search_ltl`), ``safety_search`` the safety search (default
    :func:`_safety`). With ``options.reduce`` the Python product searches use partial-order
    reduction (:mod:`absmc.kernel.ltl.por`; the safe locations computed once, on first use)."""
    from absmc.kernel.ltl.ltl import ltl_result, search_ltl
    from absmc.kernel.ltl.product import covers_every_state

    @cache
    def product_ample() -> AmpleSets:
        """The product searches' safe locations (docs/reductions.md, "The LTL product
        search"): visible are the selected state properties' variables and those the guards of
        every ltl block of the model that may reduce read, as in the C back end's library."""
        from absmc.kernel.ltl.ltl import automaton_of
        from absmc.kernel.ltl.por import product_visible, stutter_refusal

        automata = [automaton_of(p) for p in system.ltl if stutter_refusal(p) is None]
        visible = product_visible(selection.user, automata)
        return AmpleSets(system, selection.user, compiled.commands_of, visible)

    claim_only = options.ltl is not None
    ltl_results: list[PropertyResult] = []
    met: dict[str, Violation] = {}  # each safety property's first violation in a product
    met_stats: dict[str, Stats] = {}
    covering: tuple[str, Stats] | None = None
    used = 0  # --max-states bounds all searches of the run together
    for prop in selection.ltl:
        deadlock = selection.deadlock and not claim_only
        if ltl_search is not None:  # its own store, and its statistics
            found = ltl_search(compiled, prop, options.limits.less(used), deadlock)
            extra = found.extra
            exact = extra["store"] == "exact"
        else:
            store, nested = make_store(options), make_store(options)
            found = search_ltl(
                compiled,
                prop,
                store,
                nested,
                options.limits.less(used),
                options.progress,
                weakly_fair=options.fairness == "weak",
                safety=True,
                deadlock=deadlock,
                keep_going=options.keep_going or not claim_only,
                spin_order=True,
                reduce=product_ample if options.reduce else None,
                hand_over=options.hand_over,
            )
            extra = {**store.stats(found.outcome.stopped), **found.extra}
            exact = store.exact
        out = found.outcome
        used += out.states
        if ltl_search is None and workers > 1:  # the partitioned search serves safety only
            extra["workers_note"] = (
                "one process: the Python back end searches each product sequentially "
                "(threads: --backend native, CNDFS)"
            )
        stats = Stats(out.states, out.transitions, out.max_depth, out.time_s, extra=extra)
        for name, v in found.violations.items():
            if name not in met:
                met[name], met_stats[name] = v, stats
        if (
            covering is None
            and exact
            and out.stopped is None
            and found.lasso is None
            and covers_every_state(found.automaton)
        ):
            covering = (prop.name, stats)
        ltl_results.append(
            ltl_result(compiled, prop, found, "explicit", stats, exact, _inexact(extra))
        )
    if claim_only or covering is not None:
        safety = _safety_from_products(compiled, selection, met, met_stats, covering, claim_only)
    else:
        limits = options.limits.less(used)
        found_safety = None
        if safety_search is not None:
            found_safety = safety_search(replace(options, limits=limits))
        if found_safety is not None:
            safety = found_safety
        else:
            safety = _safety(
                system, replace(options, limits=limits), compiled, selection, workers, ray
            )
    return [*safety, *ltl_results]


class _Deferred:
    """A :class:`CompiledSystem` of ``system`` made on first use of anything but its
    ``system``: every other attribute comes from it (:func:`compile_system` with
    ``properties``)."""

    def __init__(self, system: System, properties: tuple[Property, ...]) -> None:
        self.system = system
        self._properties = properties
        self._compiled: CompiledSystem | None = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_compiled", "_properties"):
            raise AttributeError(name)
        if self._compiled is None:
            self._compiled = compile_system(self.system, self._properties)
        return getattr(self._compiled, name)


def _safety_from_products(
    compiled: CompiledSystem,
    selection: Selection,
    met: dict[str, Violation],
    met_stats: dict[str, Stats],
    covering: tuple[str, Stats] | None,
    claim_only: bool,
) -> list[PropertyResult]:
    """The safety results the product searches decided: each violation met (replayed on
    ``compiled``), and, when a product search ``covering`` (its property's name and
    statistics) visited every reachable state, ``holds`` for the rest; with ``claim_only``
    (``-N``) only the violations."""
    out: list[PropertyResult] = []
    for name in selection.names():
        v = met.get(name)
        kind = property_kind(compiled.system, name)
        if v is not None:
            trace = replay(compiled, name, v.path)
            n = len(trace.steps) - 1
            reason = (
                f"{v.message}; counterexample of {n} step{'s' if n != 1 else ''} "
                "(met in a product search)"
            )
            stats = met_stats[name]
            out.append(
                PropertyResult(
                    name, kind, "explicit", Verdict.VIOLATED, reason, stats, trace, v.count
                )
            )
        elif not claim_only and covering is not None:
            prop, stats = covering
            reason = (
                f"no violation in the {stats.states:,} reachable product states of ltl "
                f"'{prop}' (its automaton follows every step from its initial state: every "
                "reachable state was checked)"
            )
            out.append(PropertyResult(name, kind, "explicit", Verdict.HOLDS, reason, stats))
    return out


def _inexact(stats: dict[str, Any]) -> str | None:
    """Why a product search with the store of ``stats`` (its ``Stats.extra``) that found no
    acceptance cycle proves nothing (``None``: an exact store)."""
    if stats.get("store") == "bitstate":
        return (
            f"bitstate search found no acceptance cycle (hash factor "
            f"{stats.get('hash_factor')}); not a proof"
        )
    if stats.get("store") == "hash-compact":
        return "hash-compact search found no acceptance cycle; not a proof"
    return None


def _safety(
    system: System,
    options: CheckOptions,
    compiled: CompiledSystem,
    selection: Selection,
    workers: int = 1,
    ray: str | None = None,
) -> list[PropertyResult]:
    """The safety search (state properties, assertions, deadlocks, model errors), in one
    process or hash-partitioned over ``workers`` processes or Ray actors."""
    store = make_store(options)
    if workers > 1 or ray is not None:
        from absmc.engines.explicit.parallel import run_partitioned

        outcome, pstats, used = run_partitioned(system, selection, compiled, options, workers, ray)
        extra: dict[str, Any] = {
            "store": "exact",
            "workers": used,
            "transport": "ray" if ray is not None else "processes",
            "messages": pstats.messages,
            "bytes_exchanged": pstats.bytes_sent,
            "states_per_worker": pstats.per_worker_states,
        }
    else:
        ample = (
            AmpleSets(system, compiled.properties, compiled.commands_of, races=True)
            if options.reduce
            else None
        )
        outcome = search(
            compiled,
            store,
            order=options.order,
            limits=options.limits,
            keep_going=options.keep_going,
            check_deadlock=selection.deadlock,
            progress=options.progress,
            hand_over=options.hand_over,
            reduce=ample,
        )
        extra = store.stats(outcome.stopped)
        if ample is not None and ample.active:  # absent when no reduction ran
            extra["reductions"] = [POR]
            extra["reduced_states"] = outcome.reduced
    stats = Stats(
        outcome.states, outcome.transitions, outcome.max_depth, outcome.time_s, extra=extra
    )
    detail = ""
    if "expected_collisions" in extra:
        detail = f"expected hash collisions {extra['expected_collisions']:.2g}"
    reason = not_a_proof(outcome.states, extra, detail)
    return results_from_outcome(
        compiled, selection, outcome, "explicit", stats, store.exact, reason
    )
