"""``--method explicit``: exhaustive explicit-state search on the compiled semantics."""

from __future__ import annotations

from absmc.engines.explicit.ctl import check_ctl
from absmc.ir.compile import compile_system
from absmc.ir.system import System
from absmc.kernel.options import CheckOptions, select_properties
from absmc.kernel.outcome import results_from_outcome
from absmc.kernel.result import Result, Stats
from absmc.kernel.search import search
from absmc.kernel.store import BitStateStore, ExactStore, HashCompactStore, Store


def make_store(options: CheckOptions) -> Store:
    """The store ``options`` ask for (raises ``ValueError`` for a bad bitstate size)."""
    if options.store == "bitstate":
        return BitStateStore(options.bitstate_bits, options.hash_functions)
    if options.store == "hash-compact":
        return HashCompactStore()
    return ExactStore()


def check_explicit(system: System, options: CheckOptions) -> Result:
    """Model check ``system`` by explicit-state search (CTL properties: by labelling the
    reachable graph, :mod:`absmc.engines.explicit.ctl`).

    With the exact store an unviolated property ``holds`` when the search exhausts the state
    space; with the bitstate or hash-compact store it stays ``unknown`` (hash collisions may
    have omitted states), and the reason gives SPIN's hash factor and the expected coverage (or
    the expected number of hash collisions). Raises ``OptionError`` for unknown property names,
    ``ValueError`` for a bad bitstate size.
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
    reason = None
    if isinstance(store, BitStateStore):
        hf = extra["hash_factor"]
        reason = (
            f"bitstate search found no violation in {outcome.states} states "
            f"(hash factor {hf}, expected coverage {extra['expected_coverage']:.2%}); not a proof"
        )
    elif isinstance(store, HashCompactStore):
        reason = (
            f"hash-compact search found no violation in {outcome.states} states "
            f"(expected hash collisions {extra['expected_collisions']:.2g}); not a proof"
        )
    results = results_from_outcome(
        compiled, selection, outcome, "explicit", stats, store.exact, reason
    )
    if selection.ctl:
        results += check_ctl(compiled, selection.ctl, options)
    return Result(system.file or system.name, "explicit", tuple(results))
