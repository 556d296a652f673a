"""Counterexample paths to traces: replay on the concrete semantics, concretization of abstract
paths, and the rows a trace shows. Used by every method (explicit, under, types, fourvalued).

* :func:`replay` — every ``violated`` verdict's trace goes through it: each step of the path
  must be a step of the semantics in the state reached so far, and the final state (or the
  last step) must really violate what the path claims. Raises :class:`ReplayError` otherwise.
* :func:`concretize` — a path of an abstract System, given as the *concrete* command sequence
  of each step, mapped to step labels of the concrete semantics (optionally guided by a
  predicate on the concrete states, e.g. "lies in the abstract state's concretization"). A
  step with no concrete counterpart raises :class:`Unconfirmed` with the step number and why:
  an abstract trace is never silently continued from an old state.
* :func:`chain_rows` / :func:`run_path` — states along a path, one row per command of a chain.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from absmc.ir.steps import Failure, State
from absmc.ir.system import NO_DEADLOCK, NO_MODEL_ERROR, System
from absmc.kernel.initial import is_initial
from absmc.kernel.result import Trace, TraceStep
from absmc.kernel.semantics import Semantics

__all__ = [
    "ReplayError",
    "Unconfirmed",
    "chain_rows",
    "command_row",
    "command_source",
    "command_text",
    "concretize",
    "replay",
    "run_path",
    "to_trace",
]


class ReplayError(Exception):
    """A path does not execute on the semantics it was found on or mapped to: raised with the
    step at which it failed. For a path found by a concrete search this is a bug in an engine,
    never a user error."""


class Unconfirmed(ReplayError):
    """An abstract path has no concrete run: ``step`` (1-based) is the first step without a
    concrete counterpart, ``reason`` says why."""

    def __init__(self, step: int, reason: str) -> None:
        super().__init__(f"step {step}: {reason}")
        self.step = step
        self.reason = reason


def command_source(system: System, index: int) -> str | None:
    """``FILE:LINE`` of a command's source, when known."""
    span = system.commands[index].span
    return f"{span.file}:{span.line}" if span is not None else None


def command_text(system: System, index: int) -> str:
    """What a trace shows for a command: its source text when the front end gave one."""
    cmd = system.commands[index]
    return cmd.source_text if cmd.source_text is not None else cmd.text()


def command_row(system: System, k: int, state: State, ci: int, suffix: str = "") -> TraceStep:
    """Trace row ``k``: ``state`` (a concrete state of ``system``) after command ``ci``."""
    cmd = system.commands[ci]
    return TraceStep(
        k,
        system.state_dict(state),
        process=cmd.process,
        command=command_text(system, ci) + suffix,
        source=command_source(system, ci),
        command_index=ci,
    )


def run_path(sem: Semantics, path: Sequence[int], start: State | None = None) -> list[State]:
    """The states visited by executing ``path`` (step labels) from the initial state (or from
    ``start``, one of the initial states of an ``init:`` constraint).

    Raises ``ReplayError`` when a label is not among the steps where the path uses it, or
    causes a model error (the caller handles a final failing step separately).
    """
    if start is not None and not is_initial(sem.system, start):
        raise ReplayError("the start state is not an initial state")
    state = sem.initial if start is None else start
    states = [state]
    for k, ci in enumerate(path, start=1):
        succ, fails = sem.successors(state)
        nxt = next((t for c, t in succ if c == ci), None)
        if nxt is None:
            if any(f.label == ci and f.property == NO_MODEL_ERROR for f in fails):
                raise ReplayError(f"step {k}: command {ci} causes a model error")
            raise ReplayError(f"step {k}: command {ci} is not enabled")
        state = nxt
        states.append(state)
    return states


def chain_rows(sem: Semantics, state: State, commands: Sequence[int]) -> list[tuple[int, State]]:
    """Execute ``commands`` one by one from ``state`` (the commands of one step, a chain);
    ``(command, state after it)`` for each. Raises ``ReplayError`` when one is not enabled."""
    out: list[tuple[int, State]] = []
    for ci in commands:
        nxt, _ = sem.step(ci, state)
        if nxt is None:
            raise ReplayError(f"command {ci} of a chain is not enabled")
        out.append((ci, nxt))
        state = nxt
    return out


def to_trace(
    sem: Semantics, states: Sequence[State], path: Sequence[int], note: str | None = None
) -> Trace:
    """The user-facing trace of a replayed run (``len(states) == len(path) + 1``); a chain of
    commands (exclusive control) shows one row per command."""
    return Trace(tuple(_rows(sem, states, path)), replayed=True, note=note)


def _rows(sem: Semantics, states: Sequence[State], path: Sequence[int]) -> list[TraceStep]:
    system = sem.system
    steps = [TraceStep(0, system.state_dict(states[0]))]
    for i, label in enumerate(path):
        parts = chain_rows(sem, states[i], sem.commands_of(label))
        if parts[-1][1] != states[i + 1]:
            raise ReplayError(f"step {i + 1}: the chain does not reach the recorded state")
        for ci, st in parts:
            steps.append(command_row(system, len(steps), st, ci))
    return steps


def _failing(sem: Semantics, prop: str, path: Sequence[int], start: State | None) -> Trace:
    """Replay a path whose last label fails (a model error or a failed assertion)."""
    system = sem.system
    if not path:
        raise ReplayError("a failing path needs a failing command")
    states = run_path(sem, path[:-1], start)
    cmds = sem.commands_of(path[-1])
    prefix = chain_rows(sem, states[-1], cmds[:-1])
    state = prefix[-1][1] if prefix else states[-1]
    _, fails = sem.step(cmds[-1], state)
    errors = [f.message for f in fails if f.label == cmds[-1] and f.property == prop]
    if not errors:
        raise ReplayError(f"the last command does not violate '{prop}'")
    steps = _rows(sem, states, path[:-1])
    for ci, st in prefix:
        steps.append(command_row(system, len(steps), st, ci))
    cmd = system.commands[cmds[-1]]
    where = command_source(system, cmds[-1])
    note = (
        f"next, {cmd.process} executes '{command_text(system, cmds[-1])}'"
        + (f" ({where})" if where else "")
        + f": {errors[0]}"
    )
    return Trace(tuple(steps), replayed=True, note=note)


def is_failing_property(system: System, prop: str) -> bool:
    """Violations of ``prop`` are steps (model errors, ``assert`` properties), not states."""
    if prop == NO_MODEL_ERROR:
        return True
    if prop == NO_DEADLOCK:
        return False
    return system.get_property(prop).kind == "assert"


def replay(sem: Semantics, prop: str, path: Sequence[int], start: State | None = None) -> Trace:
    """Replay a counterexample for property ``prop`` on ``sem`` and return its trace (from
    ``sem.initial``, or from ``start`` when given: an initial state of an ``init:`` set).

    * a state property: the final state must violate it;
    * ``no-deadlock``: the final state must have no step, no command that is a model error
      there (the search does not count such a state as a deadlock either), and not be a valid
      end state;
    * ``no-model-error`` and ``assert`` properties: the last label of ``path`` must cause the
      failure in the state before it (the trace ends in that state; ``note`` says what the
      command does wrong).

    Raises ``ReplayError`` when any of this fails.
    """
    if is_failing_property(sem.system, prop):
        return _failing(sem, prop, path, start)
    states = run_path(sem, path, start)
    last = states[-1]
    if prop == NO_DEADLOCK:
        succ, fails = sem.successors(last)
        if succ or sem.valid_end(last):
            raise ReplayError("the final state of a deadlock trace has a successor")
        if any(f.property == NO_MODEL_ERROR for f in fails):
            raise ReplayError("in the final state of the deadlock trace a command is a model error")
        return to_trace(sem, states, path, "deadlock: no command is enabled in the last state")
    names = [sem.properties[k].name for k in sem.violated(last)]
    if prop not in names:
        raise ReplayError(f"the final state does not violate '{prop}'")
    return to_trace(sem, states, path)


def concretize(
    sem: Semantics,
    steps: Sequence[tuple[int, ...]],
    failing: str | None = None,
    fits: Callable[[int, State], bool] | None = None,
    guided: bool = False,
) -> tuple[list[int], str]:
    """Step labels of the concrete ``sem`` for a path given as the concrete command sequence of
    each step (one tuple per step: a chain of exclusive commands is one step).

    ``fits(k, s)`` (optional) must accept the concrete state ``s`` reached after step ``k``
    (``k = 0``: the initial state); e.g. "``s`` lies in the k-th abstract state". With
    ``guided``, a step whose commands have no fitting successor may take *any* successor that
    fits (a must-path of the four-valued method: every represented state has a successor in the
    next abstract state). With ``failing``, the last step fails that property (a model error or
    an assertion; ``guided``: any failure of it) and its failure's label is used.

    Returns the labels and, with ``failing``, the concrete failure's message. Raises
    :class:`Unconfirmed` at the first step without a concrete counterpart.
    """
    s = sem.initial
    if fits is not None and not fits(0, s):
        raise Unconfirmed(0, "the initial state is not in the first abstract state")
    out: list[int] = []
    commands_of = sem.commands_of
    for k, want in enumerate(steps, start=1):
        succ, fails = sem.successors(s)
        if failing is not None and k == len(steps):
            bad: list[Failure] = [f for f in fails if f.property == failing]
            hit = [f for f in bad if commands_of(f.label) == want] or (bad if guided else [])
            if not hit:
                raise Unconfirmed(k, f"the concrete step does not violate '{failing}'")
            out.append(hit[0].label)
            return out, hit[0].message
        same = [(lab, t) for lab, t in succ if commands_of(lab) == want]
        pick = next(((lab, t) for lab, t in same if fits is None or fits(k, t)), None)
        if pick is None and guided and fits is not None:
            pick = next(((lab, t) for lab, t in succ if fits(k, t)), None)
        if pick is None:
            if fits is not None and (same or guided):
                what = "no concrete successor lies in the abstract state"
            elif any(commands_of(f.label) == want for f in fails):
                what = f"the commands {list(want)} cause a model error"
            elif len(want) == 1:
                what = f"command {want[0]} is not enabled"
            else:
                what = f"the chain of commands {list(want)} is not a concrete step"
            raise Unconfirmed(k, what)
        out.append(pick[0])
        s = pick[1]
    return out, ""
