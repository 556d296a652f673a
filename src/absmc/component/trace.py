"""Source-level traces of the component: how its trace rows and deadlock notes look (each step
as file:line, thread, statement and the variables it changed, in the kernel's ``Trace`` shape).
The replay itself is the kernel's one replay module's (:func:`replay`, which calls
:func:`absmc.kernel.replay.trace.replay_path`: a re-execution, the environment's calls run
again); the re-execution on CPython (:mod:`absmc.component.native_replay`) confirms it
further."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from absmc.component.machine import LABELS, ComponentSemantics
from absmc.component.values import UNBOUND, render
from absmc.ir.steps import State
from absmc.kernel.replay.trace import replay_path
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


def deadlock_note(sem: ComponentSemantics, last: State) -> str:
    """What a deadlock trace's note says: where each live thread of ``last`` is blocked."""
    blocked = [
        f"{name} blocked at {fc.file}:{line}" if fc is not None else f"{name} {status}"
        for name, status, fc, line in sem.thread_view(last)
        if status not in ("ended", "died")
    ]
    return "deadlock: every live thread is blocked (" + "; ".join(blocked) + ")"


def replay(sem: ComponentSemantics, prop: str, path: Sequence[int]) -> Trace:
    """Re-execute ``path`` from the initial state through the kernel's replay
    (:func:`absmc.kernel.replay.trace.replay_path`: it ends in a violation of ``prop``, a
    failing last step for ``assert``/``no-uncaught-exception``, a state where every live
    thread is blocked for ``no-deadlock``) with the component's rows. Raises ``ReplayError``
    otherwise (for the component: an environment that answered differently)."""
    return replay_path(
        sem,
        prop,
        path,
        row=lambda k, before, after, label: _row(sem, k, before, after, label),
        deadlock_note=lambda last: deadlock_note(sem, last),
    )
