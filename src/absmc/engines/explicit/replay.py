"""Replay of counterexample paths on the compiled concrete semantics.

Every ``violated`` verdict's trace goes through :func:`replay` before it is reported: each
command of the path must be enabled in the state reached so far (among the compiled successors),
and the final state must really violate what the path claims.
"""

from __future__ import annotations

from collections.abc import Sequence

from absmc.engines.result import Trace, TraceStep
from absmc.ir.compile import CompiledSystem, State
from absmc.ir.system import NO_DEADLOCK, NO_MODEL_ERROR, System


class ReplayError(Exception):
    """A path does not execute on the concrete semantics (a bug in an engine, never a user
    error): raised with the step at which it failed."""


def command_source(system: System, index: int) -> str | None:
    """``FILE:LINE`` of a command's source, when known."""
    span = system.commands[index].span
    return f"{span.file}:{span.line}" if span is not None else None


def run_path(compiled: CompiledSystem, path: Sequence[int]) -> list[State]:
    """The states visited by executing ``path`` (command indices) from the initial state.

    Raises ``ReplayError`` when a command is not enabled where the path uses it, or causes a
    model error (the caller handles a final failing command separately).
    """
    state = compiled.initial
    states = [state]
    for k, ci in enumerate(path, start=1):
        succ = compiled.successors(state)
        errors = list(compiled.errors)
        compiled.errors.clear()
        nxt = next((t for c, t in succ if c == ci), None)
        if nxt is None:
            if any(c == ci for c, _ in errors):
                raise ReplayError(f"step {k}: command {ci} causes a model error")
            raise ReplayError(f"step {k}: command {ci} is not enabled")
        state = nxt
        states.append(state)
    return states


def to_trace(system: System, states: Sequence[State], path: Sequence[int]) -> Trace:
    """Build the user-facing trace of a replayed run (``len(states) == len(path) + 1``)."""
    steps = [TraceStep(0, system.state_dict(states[0]))]
    for k, ci in enumerate(path, start=1):
        cmd = system.commands[ci]
        steps.append(
            TraceStep(
                k,
                system.state_dict(states[k]),
                process=cmd.process,
                command=cmd.text(),
                source=command_source(system, ci),
                command_index=ci,
            )
        )
    return Trace(steps, replayed=True)


def replay(compiled: CompiledSystem, prop: str, path: Sequence[int]) -> Trace:
    """Replay a counterexample for property ``prop`` and return its trace.

    * a user property: the final state must violate it;
    * ``no-deadlock``: the final state must have no successor and not be a valid end state;
    * ``no-model-error``: the last command of ``path`` must cause a model error in the state
      before it (the trace ends in that state; ``note`` says what the command does wrong).

    Raises ``ReplayError`` when any of this fails.
    """
    system = compiled.system
    if prop == NO_MODEL_ERROR:
        if not path:
            raise ReplayError("a model-error path needs a failing command")
        states = run_path(compiled, path[:-1])
        last = states[-1]
        compiled.successors(last)
        errors = [m for c, m in compiled.errors if c == path[-1]]
        compiled.errors.clear()
        if not errors:
            raise ReplayError("the last command does not cause a model error")
        trace = to_trace(system, states, path[:-1])
        cmd = system.commands[path[-1]]
        where = command_source(system, path[-1])
        trace.note = (
            f"next, {cmd.process} executes '{cmd.text()}'"
            + (f" ({where})" if where else "")
            + f": {errors[0]}"
        )
        return trace
    states = run_path(compiled, path)
    last = states[-1]
    if prop == NO_DEADLOCK:
        succ = compiled.successors(last)
        compiled.errors.clear()
        if succ or compiled.valid_end(last):
            raise ReplayError("the final state of a deadlock trace has a successor")
        trace = to_trace(system, states, path)
        trace.note = "deadlock: no command is enabled in the last state"
        return trace
    names = [compiled.properties[k].name for k in compiled.violated(last)]
    if prop not in names:
        raise ReplayError(f"the final state does not violate '{prop}'")
    return to_trace(system, states, path)
