"""From a search outcome to per-property results (the verdict rules of every method that
searches concrete states)."""

from __future__ import annotations

from absmc.kernel.explore.search import SearchOutcome
from absmc.kernel.model.irsemantics import IRSemantics
from absmc.kernel.replay.trace import replay
from absmc.kernel.run.options import Selection, property_kind
from absmc.kernel.run.result import PropertyResult, Stats, Verdict


def results_from_outcome(
    semantics: IRSemantics,
    selection: Selection,
    outcome: SearchOutcome,
    method: str,
    stats: Stats,
    exhaustive: bool,
    incomplete_reason: str | None = None,
) -> list[PropertyResult]:
    """One ``PropertyResult`` per selected property from a search outcome. Violations are
    replayed on ``semantics`` (raising ``ReplayError`` if one does not replay). A property
    without violation ``holds`` only when the search was ``exhaustive`` (an exact store, or an
    exact abstraction) and not stopped; otherwise it is ``unknown`` with ``outcome.stopped`` or
    ``incomplete_reason`` as the reason."""
    system = semantics.system
    out: list[PropertyResult] = []
    for name in selection.names():
        kind = property_kind(system, name)
        v = outcome.violations.get(name)
        if v is not None:
            trace = replay(semantics, name, v.path)
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
                    f"no violation in the {outcome.states:,} reachable states (exhaustive search)",
                    stats,
                )
            )
        else:
            reason = outcome.stopped or incomplete_reason or "search incomplete"
            out.append(PropertyResult(name, kind, method, Verdict.UNKNOWN, reason, stats))
    return out
