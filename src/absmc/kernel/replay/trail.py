"""Saved counterexamples (trails): the file format and its reader; their replay up to the
violation they show is :func:`absmc.kernel.replay.trace.replay_violation` (the one replay module).

A *trail* is what ``absmc check`` writes beside a model when a property is violated (SPIN's
``model.pml.trail``; here ``MODEL.trail.json``): the JSON of the violated results
(:meth:`absmc.kernel.run.result.Result.to_json`, every violated property's ``trace``) plus the
``-D`` definitions and the fairness the run used. The same reader takes the JSON of ``check
--json`` and of ``simulate --json``.

:func:`~absmc.kernel.replay.trace.replay_violation` re-executes one saved trace on the concrete
semantics and confirms, on that semantics, the violation its last step shows: the failed
assertion or model error of the next command, the state that violates an invariant, the
deadlock, or (for a linear-time property) the accepting cycle of the lasso. A trace that no
longer replays (the model changed) raises :class:`~absmc.kernel.replay.trace.ReplayError` naming the
first row that differs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["TRAIL_FORMAT", "SavedTrace", "saved_traces", "trail_json"]

#: the ``format`` field of a trail file
TRAIL_FORMAT = "absmc-trail"


@dataclass(frozen=True)
class SavedTrace:
    """One trace of a saved JSON file: the ``property`` it violates (``None`` for a random run
    that ended without a violation), its ``kind`` when the file says it, the ``rows`` (``step``,
    ``process``, ``command``, ``source``, ``state``), the lasso's ``cycle_start`` and the
    file's ``note`` on the last step."""

    property: str | None
    kind: str | None
    rows: Sequence[Mapping[str, Any]]
    cycle_start: int | None = None
    note: str | None = None


def saved_traces(data: Any) -> list[SavedTrace]:
    """The traces of a saved JSON object: every result with a trace (``check --json``, a
    trail), or the run of ``simulate --json`` (``violated`` names its property, if any).
    An object of another shape has none (an empty list)."""
    if not isinstance(data, dict):
        return []
    if isinstance(data.get("trace"), list):
        violated = data.get("violated")
        return [SavedTrace(violated if isinstance(violated, str) else None, None, data["trace"])]
    out: list[SavedTrace] = []
    for r in data.get("results") or []:
        if not (isinstance(r, dict) and isinstance(r.get("trace"), list)):
            continue
        if r.get("verdict") not in (None, "violated"):
            continue  # an unconfirmed abstract trace shows no violation
        cycle = r.get("cycle_start")
        note = r.get("trace_note")
        out.append(
            SavedTrace(
                str(r.get("property")),
                str(r["kind"]) if isinstance(r.get("kind"), str) else None,
                r["trace"],
                cycle if isinstance(cycle, int) else None,
                note if isinstance(note, str) else None,
            )
        )
    return out


def trail_json(
    result_json: Mapping[str, Any], defines: Sequence[str], fairness: str = "none"
) -> dict[str, Any]:
    """The trail of a result (its JSON, :meth:`~absmc.kernel.run.result.Result.to_json`): the
    violated results with their traces, the ``-D`` definitions and the fairness used."""
    violated = [r for r in result_json.get("results", []) if r.get("verdict") == "violated"]
    out: dict[str, Any] = {
        "format": TRAIL_FORMAT,
        **{k: v for k, v in result_json.items() if k not in ("results", "graphs")},
        "defines": list(defines),
        "fairness": fairness,
        "results": violated,
    }
    return out
