"""Interactive simulation (SPIN's ``spin -i``): a person chooses each step among the enabled
ones, reading the choice from a stream (standard input on the command line).

Each round lists the enabled steps of the current state — one per process command, or per
atomic chain (the commands a process executes under exclusive control, shown with their
count) — marking the steps that fail an assertion or are a model error; the person types
the number of one (``q`` or the end of the input stops the run). The run ends at a valid end
state, at a deadlock, at the first violation (a failed assertion, a model error, a state that
violates an invariant) or after ``max_steps`` steps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TextIO

from absmc.cli.common import echo
from absmc.ir.steps import State
from absmc.ir.system import NO_MODEL_ERROR
from absmc.kernel.model.irsemantics import IRSemantics
from absmc.kernel.replay.trace import chain_rows, command_source, command_text
from absmc.kernel.run.result import StateValue


@dataclass(frozen=True)
class Choice:
    """One enabled step: its ``label``, the state it reaches (``None`` for a model error) and
    the failure it meets (``(property, message)``), if any."""

    label: int
    target: State | None
    failure: tuple[str, str] | None


def choices(sem: IRSemantics, state: State) -> list[Choice]:
    """The steps a person may choose in ``state``: every successor (with the assertion it
    fails, if any) and every step that is a model error, in the semantics' order."""
    succ, fails = sem.successors(state)
    failed = {f.label: (f.property, f.message) for f in fails}
    out = [Choice(label, t, failed.get(label)) for label, t in succ]
    seen = {label for label, _ in succ}
    for f in fails:
        if f.property == NO_MODEL_ERROR and f.label not in seen:
            seen.add(f.label)
            out.append(Choice(f.label, None, (f.property, f.message)))
    return out


def describe(sem: IRSemantics, choice: Choice) -> str:
    """A choice as one line: process, command text (an atomic chain: its first command and the
    count), source line and the failure it meets."""
    system = sem.system
    cmds = sem.commands_of(choice.label)
    first = cmds[0]
    text = command_text(system, first)
    if len(cmds) > 1:
        text += f" … (atomic: {len(cmds)} commands)"
    where = command_source(system, first)
    line = f"{system.commands[first].process or '-'}: {text}" + (f"  [{where}]" if where else "")
    if choice.failure is not None:
        prop, message = choice.failure
        what = "model error" if prop == NO_MODEL_ERROR else f"violates '{prop}'"
        line += f"  ✗ {what}: {message}"
    return line


def _values(values: Mapping[str, StateValue]) -> str:
    return " ".join(f"{n}={v}" for n, v in values.items())


def _read_choice(n: int, out: TextIO, stdin: TextIO) -> int | None:
    """The 0-based index the person types (1..n), or ``None`` for ``q`` or end of input."""
    while True:
        echo(out, f"select 1-{n} (q to stop): ", nl=False)
        line = stdin.readline()
        if not line:
            echo(out, "")
            return None
        text = line.strip()
        if not stdin.isatty():  # typed ahead or piped: show what was read
            echo(out, text)
        if text in ("q", "quit"):
            return None
        if text.isdigit() and 1 <= int(text) <= n:
            return int(text) - 1
        echo(out, f"'{text}' is not a choice")


def interact(
    sem: IRSemantics,
    state: State,
    step: int,
    out: TextIO,
    stdin: TextIO,
    max_steps: int | None = None,
) -> int:
    """Run interactively from ``state`` (``step`` rows already shown) and print each chosen
    step's rows on ``out``. Returns the exit code: 1 when the run ends in a violation (a
    failed assertion, a model error, an invariant, a deadlock), else 0."""
    system = sem.system
    taken = 0
    while max_steps is None or taken < max_steps:
        options = choices(sem, state)
        if not options:
            if sem.valid_end(state):
                echo(out, "valid end state reached")
                return 0
            echo(out, "✗ deadlock: no command is enabled")
            return 1
        echo(out, f"enabled steps after step {step}:")
        for i, c in enumerate(options, start=1):
            echo(out, f"  {i}. {describe(sem, c)}")
        picked = _read_choice(len(options), out, stdin)
        if picked is None:
            echo(out, f"stopped by the user after step {step}")
            return 0
        choice = options[picked]
        if choice.target is None:
            assert choice.failure is not None
            echo(out, f"✗ model error: {describe(sem, choice)}")
            return 1
        before = system.state_dict(state)
        for ci, after in chain_rows(sem, state, sem.commands_of(choice.label)):
            step += 1
            now = system.state_dict(after)
            changed = {n: v for n, v in now.items() if before.get(n) != v}
            where = command_source(system, ci)
            echo(
                out,
                f"{step:>4}  {system.commands[ci].process or '-'}: {command_text(system, ci)}"
                + (f"  [{where}]" if where else "")
                + f"  {_values(changed)}",
            )
            before = now
        state = choice.target
        taken += 1
        if choice.failure is not None:
            echo(out, f"✗ {choice.failure[1]}")
            return 1
        bad: Sequence[int] = sem.violated(state)
        if bad:
            p = sem.properties[bad[0]]
            echo(out, f"✗ the state of step {step} violates {p.kind} '{p.name}'")
            return 1
    echo(out, f"stopped after {taken} steps (the step bound)")
    return 0
