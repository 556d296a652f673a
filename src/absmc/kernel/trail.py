"""Saved counterexamples (trails) and their replay up to the violation they show.

A *trail* is what ``absmc check`` writes beside a model when a property is violated (SPIN's
``model.pml.trail``; here ``MODEL.trail.json``): the JSON of the violated results
(:meth:`absmc.kernel.result.Result.to_json`, every violated property's ``trace``) plus the
``-D`` definitions and the fairness the run used. The same reader takes the JSON of ``check
--json`` and of ``simulate --json``.

:func:`replay_violation` re-executes one saved trace on the concrete semantics and confirms,
on that semantics, the violation its last step shows: the failed assertion or model error of
the next command, the state that violates an invariant, the deadlock, or (for a linear-time
property) the accepting cycle of the lasso. A trace that no longer replays (the model
changed) raises :class:`~absmc.kernel.trace.ReplayError` naming the first row that differs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from absmc.ir.expr import FALSE
from absmc.ir.ltl import NON_PROGRESS, LtlProperty, non_progress_property
from absmc.ir.system import NO_DEADLOCK, NO_MODEL_ERROR
from absmc.kernel.irsemantics import IRSemantics
from absmc.kernel.result import Trace
from absmc.kernel.trace import (
    ReplayError,
    command_source,
    command_text,
    is_failing_property,
    replay_lasso_rows,
    replay_rows,
    replay_saved,
    replay_trace,
)

__all__ = [
    "TRAIL_FORMAT",
    "Ending",
    "SavedTrace",
    "failing_step",
    "replay_violation",
    "saved_traces",
    "trail_json",
]

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


@dataclass(frozen=True)
class Ending:
    """How a replayed trace ends: the ``trace`` (replayed), the ``violation`` it shows (one
    sentence; ``None`` when it shows none), and for a failed assertion or a model error the
    ``failing`` command (its index) that the last state executes next."""

    trace: Trace
    violation: str | None
    failing: int | None = None


def _ltl_property(sem: IRSemantics, name: str) -> LtlProperty | None:
    found = next((p for p in sem.system.ltl if p.name == name), None)
    if found is None and name == NON_PROGRESS:
        return non_progress_property(FALSE)
    return found


def failing_step(
    sem: IRSemantics, trace: Trace, prop: str, note: str | None = None
) -> tuple[int, str] | None:
    """The command that fails ``prop`` (an assertion or ``no-model-error``) in the last state
    of ``trace`` and its message: ``(command index, message)``, or ``None``. Where several
    commands fail it there (model errors of two processes), the one whose text ``note`` (the
    saved trace's note on its last step) names is preferred."""
    if not trace.steps:
        return None
    system = sem.system
    state = tuple(int(trace.steps[-1].state[v.name]) for v in system.variables)
    found: list[tuple[int, str]] = []
    for ci in range(len(system.commands)):
        _, fails = sem.step(ci, state)
        found += [(ci, f.message) for f in fails if f.property == prop]
    named = [x for x in found if note and f"'{command_text(system, x[0])}'" in note]
    best = named or found
    return best[0] if best else None


def replay_violation(sem: IRSemantics, saved: SavedTrace, weakly_fair: bool = False) -> Ending:
    """Replay ``saved`` on ``sem`` (a compiled System with all its properties) and confirm the
    violation it ends in (module docstring). Rows are matched by command text and state
    (:func:`~absmc.kernel.trace.replay_saved`); then the violation is checked as the search
    checks it (:func:`~absmc.kernel.trace.replay_trace`; for a linear-time property
    :func:`~absmc.kernel.trace.replay_lasso_rows` with the property's automaton, Spot's
    translation of its negation). Raises ``ReplayError`` at the first row that differs or when
    the end is not a violation of ``saved.property``."""
    system = sem.system
    rows = replay_saved(sem, saved.rows, saved.cycle_start)
    prop = saved.property
    if prop is None:
        return Ending(rows, None)
    ltl = _ltl_property(sem, prop)
    if ltl is not None:
        from absmc.kernel.ltl import automaton_of

        done = replay_lasso_rows(sem, automaton_of(ltl), rows, weakly_fair)
        c = done.cycle_start
        return Ending(
            done,
            f"the steps from step {c} on repeat forever: an accepting run of the violation "
            f"automaton of '{prop}'",
        )
    if any(p.name == prop for p in system.ctl):
        replay_rows(sem, rows)
        return Ending(
            rows,
            f"the run is the witness that '{prop}' fails (replayed; the formula is not "
            "rechecked along it)",
        )
    if is_failing_property(system, prop):
        try:
            done = replay_trace(sem, prop, rows)
        except ReplayError:
            if len(rows.steps) < 2:
                raise
            # a random run keeps the assertion's own step: its last row is the failing command
            head = Trace(rows.steps[:-1], replayed=True)
            done = replay_trace(sem, prop, head)
        hit = failing_step(sem, done, prop, saved.note or done.note)
        if hit is None:  # replay_trace found it: the search's failure is a chain's last command
            return Ending(done, done.note or f"'{prop}' is violated by the next step")
        ci, message = hit
        cmd = system.commands[ci]
        where = command_source(system, ci)
        what = "model error: " if prop == NO_MODEL_ERROR else ""
        text = f"{cmd.process} executes '{command_text(system, ci)}'" + (
            f" ({where})" if where else ""
        )
        return Ending(done, f"{what}step {len(done.steps)}: {text}: {message}", ci)
    done = replay_trace(sem, prop, rows)
    n = len(done.steps) - 1
    if prop == NO_DEADLOCK:
        return Ending(done, f"deadlock: no command is enabled in the state of step {n}")
    kind = system.get_property(prop).kind
    return Ending(done, f"the state of step {n} violates {kind} '{prop}'")


def trail_json(
    result_json: Mapping[str, Any], defines: Sequence[str], fairness: str = "none"
) -> dict[str, Any]:
    """The trail of a result (its JSON, :meth:`~absmc.kernel.result.Result.to_json`): the
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
