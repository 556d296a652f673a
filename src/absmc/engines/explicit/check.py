"""``--method explicit``: exhaustive explicit-state search on the compiled semantics."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from absmc.codegen.python import CompiledSystem, compile_system
from absmc.engines.explicit.ctl import check_ctl
from absmc.engines.explicit.parallel import run_partitioned
from absmc.errors import OptionError
from absmc.ir.system import System
from absmc.kernel.graph import bounded_graph
from absmc.kernel.ltl import ltl_result, search_ltl
from absmc.kernel.options import CheckOptions, Selection, select_properties
from absmc.kernel.outcome import results_from_outcome
from absmc.kernel.por import POR, AmpleSets
from absmc.kernel.result import PropertyResult, Result, Stats
from absmc.kernel.search import search
from absmc.kernel.store import BitStateStore, ExactStore, HashCompactStore, Store, not_a_proof
from absmc.kernel.trace import command_text

#: what runs the search (see :mod:`absmc.engines.explicit.native`)
Backend = Literal["python", "native", "auto"]


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
) -> Result:
    """Model check ``system`` by explicit-state search on ``backend`` (``python``, ``native``
    or ``auto``: :mod:`absmc.engines.explicit.native`; ``native`` raises ``OptionError`` when it
    cannot serve the options). CTL properties: by labelling the reachable graph
    (:mod:`absmc.engines.explicit.ctl`).

    With the exact store an unviolated property ``holds`` when the search exhausts the state
    space; with the bitstate or hash-compact store it stays ``unknown`` (hash collisions may
    have omitted states), and the reason gives SPIN's hash factor, the observed false matches
    and a bound on the probability of an omission, never a coverage percentage
    (:class:`~absmc.kernel.store.BitStateStore`), or the expected number of hash collisions.
    ``ray`` (with ``python`` or ``auto``) and, on the Python back end, ``workers`` > 1 run the
    safety search hash-partitioned on the Python back end
    (:mod:`absmc.engines.explicit.parallel`; exact store, same counts and verdicts); on the
    native back end ``workers`` threads share one store (0: the machine's cores).
    Linear-time properties (``ltl`` blocks, never claims) are checked each by its own product
    search with a nested DFS (:mod:`absmc.kernel.ltl`) after the safety search. Raises
    ``OptionError`` for unknown property names or an unsupported combination, ``ValueError``
    for a bad bitstate size.
    """
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
            lambda o, w=1: check_explicit(system, o, "python", w),
            workers,
        )
    compiled = compile_system(system, selection.user)
    options = replace(options, limits=options.limits.started())  # one deadline for all
    results = (
        _safety(system, options, compiled, selection, workers, ray) if selection.names() else []
    )
    # --max-states bounds the states of the safety search and the product searches together
    used = max((r.stats.states for r in results), default=0)
    for prop in selection.ltl:
        store, nested = make_store(options), make_store(options)
        found = search_ltl(
            compiled,
            prop,
            store,
            nested,
            options.limits.less(used),
            options.progress,
            weakly_fair=options.fairness == "weak",
        )
        out = found.outcome
        used += out.states
        stats = Stats(
            out.states,
            out.transitions,
            out.max_depth,
            out.time_s,
            extra=store.stats(out.stopped),
        )
        results.append(
            ltl_result(compiled, prop, found, "explicit", stats, store.exact, _inexact(store))
        )
    if selection.ctl:
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


def _inexact(store: Store) -> str | None:
    if isinstance(store, BitStateStore):
        return (
            f"bitstate search found no acceptance cycle (hash factor "
            f"{store.stats()['hash_factor']}); not a proof"
        )
    if isinstance(store, HashCompactStore):
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
            AmpleSets(system, compiled.properties, compiled.commands_of) if options.reduce else None
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
        extra["reductions"] = [POR] if ample is not None and ample.active else []
        if extra["reductions"]:
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
