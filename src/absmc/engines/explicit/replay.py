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


def command_text(system: System, index: int) -> str:
    """What a trace shows for a command: its source text when the front end gave one."""
    cmd = system.commands[index]
    return cmd.source_text if cmd.source_text is not None else cmd.text()


def run_path(compiled: CompiledSystem, path: Sequence[int]) -> list[State]:
    """The states visited by executing ``path`` (successor labels) from the initial state.

    Raises ``ReplayError`` when a label is not among the successors where the path uses it, or
    causes a model error (the caller handles a final failing command separately).
    """
    state = compiled.initial
    states = [state]
    for k, ci in enumerate(path, start=1):
        succ = compiled.successors(state)
        errors = list(compiled.errors)
        compiled.errors.clear()
        nxt = next((t for c, t in succ if c == ci), None)
        if nxt is None:
            if any(c == ci and p == NO_MODEL_ERROR for c, _, p in errors):
                raise ReplayError(f"step {k}: command {ci} causes a model error")
            raise ReplayError(f"step {k}: command {ci} is not enabled")
        state = nxt
        states.append(state)
    return states


def _expand_step(compiled: CompiledSystem, state: State, label: int) -> list[tuple[int, State]]:
    """The single commands (with the states after each) of the step ``label`` from ``state``."""
    out: list[tuple[int, State]] = []
    for ci in compiled.expand(label):
        nxt = compiled.step(ci, state)
        compiled.errors.clear()
        if nxt is None:
            raise ReplayError(f"command {ci} of a chain is not enabled")
        out.append((ci, nxt))
        state = nxt
    return out


def to_trace(compiled: CompiledSystem, states: Sequence[State], path: Sequence[int]) -> Trace:
    """Build the user-facing trace of a replayed run (``len(states) == len(path) + 1``); a chain
    of commands (exclusive control) shows one row per command."""
    system = compiled.system
    steps = [TraceStep(0, system.state_dict(states[0]))]
    k = 0
    for i, label in enumerate(path):
        parts = _expand_step(compiled, states[i], label)
        if parts[-1][1] != states[i + 1]:
            raise ReplayError(f"step {i + 1}: the chain does not reach the recorded state")
        for ci, st in parts:
            k += 1
            cmd = system.commands[ci]
            steps.append(
                TraceStep(
                    k,
                    system.state_dict(st),
                    process=cmd.process,
                    command=command_text(system, ci),
                    source=command_source(system, ci),
                    command_index=ci,
                )
            )
    return Trace(steps, replayed=True)


def _failing(compiled: CompiledSystem, prop: str, path: Sequence[int]) -> Trace:
    """Replay a path whose last label fails (a model error or a failed assertion)."""
    system = compiled.system
    if not path:
        raise ReplayError("a failing path needs a failing command")
    states = run_path(compiled, path[:-1])
    last = states[-1]
    cmds = compiled.expand(path[-1])
    state = last
    prefix: list[tuple[int, State]] = []
    for ci in cmds[:-1]:
        nxt = compiled.step(ci, state)
        compiled.errors.clear()
        if nxt is None:
            raise ReplayError("a chain before the failing command is not enabled")
        prefix.append((ci, nxt))
        state = nxt
    compiled.errors.clear()
    compiled.step(cmds[-1], state)
    errors = [m for c, m, p in compiled.errors if c == cmds[-1] and p == prop]
    compiled.errors.clear()
    if not errors:
        raise ReplayError(f"the last command does not violate '{prop}'")
    trace = to_trace(compiled, states, path[:-1])
    k = len(trace.steps) - 1
    for ci, st in prefix:
        k += 1
        trace.steps.append(
            TraceStep(
                k,
                system.state_dict(st),
                process=system.commands[ci].process,
                command=command_text(system, ci),
                source=command_source(system, ci),
                command_index=ci,
            )
        )
    cmd = system.commands[cmds[-1]]
    where = command_source(system, cmds[-1])
    trace.note = (
        f"next, {cmd.process} executes '{command_text(system, cmds[-1])}'"
        + (f" ({where})" if where else "")
        + f": {errors[0]}"
    )
    return trace


def replay(compiled: CompiledSystem, prop: str, path: Sequence[int]) -> Trace:
    """Replay a counterexample for property ``prop`` and return its trace.

    * a state property: the final state must violate it;
    * ``no-deadlock``: the final state must have no successor, not be a valid end state, and
      no command may be a model error there (the search does not report such a state as a
      deadlock either);
    * ``no-model-error`` and ``assert`` properties: the last label of ``path`` must cause the
      error in the state before it (the trace ends in that state; ``note`` says what the
      command does wrong).

    Raises ``ReplayError`` when any of this fails.
    """
    system = compiled.system
    kind = system.get_property(prop).kind if prop not in (NO_MODEL_ERROR, NO_DEADLOCK) else None
    if prop == NO_MODEL_ERROR or kind == "assert":
        return _failing(compiled, prop, path)
    states = run_path(compiled, path)
    last = states[-1]
    if prop == NO_DEADLOCK:
        succ = compiled.successors(last)
        # as in the search: a state where a command is a model error is not a deadlock
        failed = any(p == NO_MODEL_ERROR for _, _, p in compiled.errors)
        compiled.errors.clear()
        if succ or compiled.valid_end(last):
            raise ReplayError("the final state of a deadlock trace has a successor")
        if failed:
            raise ReplayError("in the final state of a deadlock trace a command fails")
        trace = to_trace(compiled, states, path)
        trace.note = "deadlock: no command is enabled in the last state"
        return trace
    names = [compiled.properties[k].name for k in compiled.violated(last)]
    if prop not in names:
        raise ReplayError(f"the final state does not violate '{prop}'")
    return to_trace(compiled, states, path)
