"""Source-level traces of the component: replay a path of step labels from the initial state
(re-execution: the environment's calls run again) and show each step as file:line, thread,
statement and the variables it changed (the kernel's ``Trace`` shape). The checks are the
kernel's replay module's (:mod:`absmc.kernel.replay.trace`: ``run_path``, ``deadlock_end``); only
the rows and notes are the component's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from absmc.component.machine import LABELS, ComponentSemantics
from absmc.component.values import UNBOUND, render
from absmc.ir.steps import State
from absmc.ir.system import NO_DEADLOCK
from absmc.kernel.replay.trace import ReplayError, deadlock_end, run_path
from absmc.kernel.run.result import StateValue, Trace, TraceStep


def state_view(sem: ComponentSemantics, s: State) -> dict[str, StateValue]:
    """The variables of ``s`` as text: tracked globals by name, each thread's status and
    the locals of its running function as ``THREAD.NAME``."""
    _, threads = sem.materialize(s)
    out: dict[str, StateValue] = {}
    ns = sem.prog.namespace
    for n in sem.prog.roots:
        if n in ns:
            out[n] = render(ns[n])
    for (name, status, fc, line), th in zip(sem.thread_view(s), threads, strict=True):
        where = f" at line {line}" if fc is not None else ""
        out[name] = f"{status}{where}"
        if th.frames and fc is not None:
            for slot, v in zip(fc.slots, th.frames[-1][2], strict=False):
                if not slot.startswith("$") and v is not UNBOUND:
                    out[f"{name}.{slot}"] = render(v)
    return out


def _row(sem: ComponentSemantics, k: int, before: State, after: State, label: int) -> TraceStep:
    tid = label // LABELS
    threads = cast(Any, before)[2]
    name = threads[tid][0]
    nxt = sem.next_instr(before, tid)
    if nxt is None:
        return TraceStep(k, state_view(sem, after), process=name, command_index=label)
    fc, ins = nxt
    status = threads[tid][2]
    text = ins.text
    if type(status) is tuple:
        text = f"{text}  (times out)" if status[0] == "W" else f"{text}  (reacquires the lock)"
    elif label % LABELS:
        text = f"{text}  (choice {label % LABELS})"
    return TraceStep(
        k,
        state_view(sem, after),
        process=name,
        command=text,
        source=f"{fc.file}:{ins.line}",
        command_index=label,
    )


def replay(sem: ComponentSemantics, prop: str, path: Sequence[int]) -> Trace:
    """Re-execute ``path`` from the initial state and check that it ends in a violation of
    ``prop`` (a failing last step for ``assert``/``no-uncaught-exception``; a state where
    every live thread is blocked for ``no-deadlock``). Raises ``ReplayError`` otherwise (for
    the component: an environment that answered differently)."""
    failing = prop != NO_DEADLOCK
    if failing and not path:
        raise ReplayError("a failing path needs a failing step")
    states = run_path(sem, path[:-1] if failing else path)
    note: str
    if failing:
        target, fails = sem.step(path[-1], states[-1])
        hits = [f for f in fails if f.property == prop]
        if not hits:
            raise ReplayError(f"the last step does not violate '{prop}'")
        if target is None:
            raise ReplayError("the failing step has no successor")
        states.append(target)
        note = hits[0].message
    else:
        deadlock_end(sem, states[-1])
        blocked = [
            f"{name} blocked at {fc.file}:{line}" if fc is not None else f"{name} {status}"
            for name, status, fc, line in sem.thread_view(states[-1])
            if status not in ("ended", "died")
        ]
        note = "deadlock: every live thread is blocked (" + "; ".join(blocked) + ")"
    rows = [TraceStep(0, state_view(sem, states[0]))]
    for k, label in enumerate(path, start=1):
        rows.append(_row(sem, k, states[k - 1], states[k], label))
    return Trace(tuple(rows), replayed=True, note=note)
