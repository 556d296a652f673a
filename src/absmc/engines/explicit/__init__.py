"""Explicit-state model checking (the SPIN-style baseline every abstraction is checked against).

:func:`check_explicit` compiles the System, searches it (BFS or DFS, exact or bitstate store)
and turns what the search found into a :class:`~absmc.engines.result.Result` whose
counterexamples were replayed on the compiled semantics.
"""

from __future__ import annotations

from dataclasses import dataclass

from absmc.engines.engine import Capabilities, Engine
from absmc.engines.explicit.replay import replay
from absmc.engines.explicit.search import SearchOutcome, search
from absmc.engines.explicit.store import BitStateStore, ExactStore, KeyedStore, Store
from absmc.engines.options import (
    CheckOptions,
    Limits,
    Progress,
    Selection,
    property_kind,
    select_properties,
)
from absmc.engines.result import PropertyResult, Result, Stats, Verdict
from absmc.ir.compile import CompiledSystem, compile_system
from absmc.ir.system import System

__all__ = [
    "ENGINE",
    "BitStateStore",
    "ExactStore",
    "ExplicitOptions",
    "KeyedStore",
    "Limits",
    "Progress",
    "Store",
    "check_explicit",
    "make_store",
    "results_from_outcome",
    "search",
]


def make_store(options: CheckOptions) -> Store:
    """The store ``options`` ask for (raises ``ValueError`` for a bad bitstate size)."""
    if options.store == "bitstate":
        return BitStateStore(options.bitstate_bits, options.hash_functions)
    return ExactStore()


def results_from_outcome(
    compiled: CompiledSystem,
    selection: Selection,
    outcome: SearchOutcome,
    method: str,
    stats: Stats,
    exhaustive: bool,
    incomplete_reason: str | None = None,
) -> list[PropertyResult]:
    """One ``PropertyResult`` per selected property from a search outcome. Violations are
    replayed (raising ``ReplayError`` if one does not replay). A property without violation
    ``holds`` only when the search was ``exhaustive`` and not stopped; otherwise it is
    ``unknown`` with ``outcome.stopped`` or ``incomplete_reason`` as the reason."""
    system = compiled.system
    out: list[PropertyResult] = []
    for name in selection.names():
        kind = property_kind(system, name)
        v = outcome.violations.get(name)
        if v is not None:
            trace = replay(compiled, name, v.path)
            steps = len(trace.steps) - 1
            reason = f"{v.message}; counterexample of {steps} step{'s' if steps != 1 else ''}"
            out.append(
                PropertyResult(name, kind, method, Verdict.VIOLATED, reason, stats, trace, v.count)
            )
        elif outcome.stopped is None and exhaustive:
            out.append(
                PropertyResult(
                    name,
                    kind,
                    method,
                    Verdict.HOLDS,
                    f"no violation in the {outcome.states} reachable states (exhaustive search)",
                    stats,
                )
            )
        else:
            reason = outcome.stopped or incomplete_reason or "search incomplete"
            out.append(PropertyResult(name, kind, method, Verdict.UNKNOWN, reason, stats))
    return out


def check_explicit(system: System, options: CheckOptions) -> Result:
    """Model check ``system`` by explicit-state search.

    With the exact store an unviolated property ``holds`` when the search exhausts the state
    space; with the bitstate store it stays ``unknown`` (hash collisions may have omitted
    states), and the reason gives SPIN's hash factor and the expected coverage. Raises
    ``OptionError`` for unknown property names, ``ValueError`` for a bad bitstate size.
    """
    selection = select_properties(system, options)
    compiled = compile_system(system, selection.user)
    store = make_store(options)
    outcome = search(
        compiled,
        store,
        order=options.order,
        limits=options.limits,
        keep_going=options.keep_going,
        check_deadlock=selection.deadlock,
        progress=options.progress,
    )
    extra = store.stats()
    stats = Stats(
        outcome.states, outcome.transitions, outcome.max_depth, outcome.time_s, extra=extra
    )
    exhaustive = isinstance(store, ExactStore)
    reason = None
    if isinstance(store, BitStateStore):
        hf = extra["hash_factor"]
        reason = (
            f"bitstate search found no violation in {outcome.states} states "
            f"(hash factor {hf}, expected coverage {extra['expected_coverage']:.2%}); not a proof"
        )
    results = results_from_outcome(
        compiled, selection, outcome, "explicit", stats, exhaustive, reason
    )
    return Result(system.file or system.name, "explicit", results)


@dataclass(frozen=True)
class ExplicitOptions:
    """Explicit search has no options of its own (order, store and limits are shared:
    :class:`~absmc.engines.options.CheckOptions`)."""


def _check(system: System, options: CheckOptions, _own: ExplicitOptions) -> Result:
    return check_explicit(system, options)


#: the registry entry (:mod:`absmc.engines.registry`)
ENGINE = Engine(
    name="explicit",
    options_type=ExplicitOptions,
    capabilities=Capabilities(stores=frozenset({"exact", "bitstate"})),
    description="exhaustive explicit-state search (exact or bitstate store)",
    check=_check,
)
