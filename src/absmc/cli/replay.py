"""``absmc replay MODEL [TRAIL]``: replay a saved counterexample up to its violation (SPIN's
``spin -t -p``), and the trail files ``absmc check`` writes (SPIN's ``model.pml.trail``).

A violation makes ``absmc check`` write ``MODEL.trail.json`` beside the model (``--trail
FILE`` elsewhere, ``--no-trail`` or ``ABSMC_NO_TRAIL=1`` not at all): every violated
property's trace (:mod:`absmc.kernel.replay.trail`). ``absmc replay`` re-executes one of them
(``-N NAME``; default the first) on the model, prints its steps and ends with the violation —
the failed assertion or model error of the next command, the state that violates an
invariant, the deadlock, the lasso's cycle — confirmed on the concrete semantics (exit 1). A
trail that no longer replays (the model changed) is refused with the first row that differs
(exit 2). ``--stop-at N`` replays N steps; ``-i`` then goes on interactively
(:mod:`absmc.cli.interactive`). ``simulate --replay FILE`` is the same replay.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

import click

from absmc.cli.common import (
    CONTEXT,
    DEFINES,
    INTERACTIVE,
    STOP_AT,
    TRACE_PROPERTY,
    add_options,
    console,
    echo,
    guarded,
    load,
)
from absmc.errors import UsageError
from absmc.kernel.run.result import Result

#: the suffix of the trail file ``check`` writes beside a model
TRAIL_SUFFIX = ".trail.json"


def trail_path(model: str) -> str:
    """Where ``absmc check MODEL`` writes its trail by default: ``MODEL.trail.json``."""
    return model + TRAIL_SUFFIX


def trails_off() -> bool:
    """``ABSMC_NO_TRAIL`` set (non-empty, not ``0``): no trail files, as ``--no-trail``."""
    return os.environ.get("ABSMC_NO_TRAIL", "") not in ("", "0")


def write_trail(
    result: Result, defines: tuple[str, ...], fairness: str, path: str, err: TextIO
) -> str | None:
    """Write the trail of a result with a violation to ``path`` and return ``path``; ``None``
    when nothing is violated with a trace, or when the file cannot be written (then a note on
    ``err``: the check's verdict stands)."""
    from absmc.kernel.replay.trail import trail_json

    data = result.to_json()
    if not any(r.get("verdict") == "violated" and r.get("trace") for r in data["results"]):
        return None
    text = json.dumps(trail_json(data, defines, fairness), indent=1, ensure_ascii=False)
    try:
        Path(path).write_text(text + "\n", encoding="utf-8")
    except OSError as e:
        echo(err, f"absmc: note: the trail was not written: cannot write '{path}': {e.strerror}")
        return None
    return path


def _read(saved: str, default: bool) -> Any:
    """The JSON of ``saved`` (``default``: the trail beside the model, not named by the
    user). Raises ``UsageError`` when it cannot be read."""
    try:
        with open(saved, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        if not default:
            raise UsageError(f"cannot read the trace file '{saved}': no such file") from None
        raise UsageError(
            f"no trail '{saved}' (absmc check writes one when a property is violated)"
        ) from None
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot read the trace file '{saved}': {e}") from None


def run_replay(
    model: str,
    saved: str | None,
    out: TextIO,
    err: TextIO,
    name: str | None = None,
    defines: tuple[str, ...] = (),
    debug: bool = False,
    stop_at: int | None = None,
    interactive: bool = False,
    stdin: TextIO | None = None,
) -> int:
    """Replay the trace of property ``name`` (default: the first) saved in ``saved`` (a
    trail, ``check --json`` or ``simulate --json``; default ``MODEL.trail.json``) on
    ``model`` and print it, ending with the violation it shows. ``defines`` default to the
    trail's. With ``stop_at``, replay that many steps only, then with ``interactive`` go on
    choosing steps read from ``stdin``. Returns 1 when the replay ends in a confirmed
    violation, 0 when it shows none (a random run, a replay stopped early), 2 when the trace
    does not replay or the file has none."""

    def body() -> int:
        from absmc.codegen.python import compile_system
        from absmc.kernel.replay.trace import ReplayError, replay_saved, replay_violation
        from absmc.kernel.replay.trail import saved_traces
        from absmc.report.text import trace_table

        if model.endswith(".py"):
            raise UsageError(
                "a Python program's counterexample is re-executed and shown by absmc check "
                "itself; replay applies to models"
            )
        path = saved if saved is not None else trail_path(model)
        data = _read(path, saved is None)
        traces = saved_traces(data)
        if not traces:
            raise UsageError(f"'{path}' holds no trace")
        if name is not None:
            picked = [t for t in traces if t.property == name]
            if not picked:
                have = ", ".join(str(t.property) for t in traces)
                raise UsageError(f"'{path}' has no trace of '{name}' (it has: {have})")
        else:
            picked = traces
        chosen = picked[0]
        saved_defs = data.get("defines") if isinstance(data, dict) else None
        defs = defines or tuple(str(d) for d in saved_defs or ())
        # the trace replays on the System it was found on: with the reductions the check
        # built into it (its statistics name them; older trails have none)
        results = data.get("results", []) if isinstance(data, dict) else []
        reduced = any(
            isinstance(r, dict)
            and isinstance(r.get("stats"), dict)
            and r["stats"].get("reductions")
            for r in results
        )
        # ... and with the process slots the check added (registry.run_growing)
        added = max(
            (
                int(r["stats"].get("process_slots_added", 0))
                for r in results
                if isinstance(r, dict) and isinstance(r.get("stats"), dict)
            ),
            default=0,
        )
        system = load(model, defs, reduce=reduced, extra_slots=added)
        from rich.text import Text  # rich only when a trace is shown, not for check's trails

        sem = compile_system(system)
        con = console(out)
        what = f"trace of '{chosen.property}'" if chosen.property else "random run"
        if stop_at is not None:
            rows = list(chosen.rows)[: stop_at + 1]
            try:
                part = replay_saved(sem, rows)
            except ReplayError as e:
                raise UsageError(f"the trace of '{path}' does not replay on {model}: {e}") from None
            n = len(part.steps) - 1
            con.print(trace_table(part, f"{model}: {what} replayed up to step {n}"))
            if not interactive:
                echo(out, f"stopped at step {n} of {len(chosen.rows) - 1}")
                return 0
            from absmc.cli.interactive import interact

            last = part.steps[-1].state
            state = tuple(int(last[v.name]) for v in system.variables)
            return interact(sem, state, n, out, stdin if stdin is not None else sys.stdin)
        weak = isinstance(data, dict) and data.get("fairness") == "weak"
        try:
            ending = replay_violation(sem, chosen, weak)
        except ReplayError as e:
            raise UsageError(f"the trace of '{path}' does not replay on {model}: {e}") from None
        trace = ending.trace
        n = len(trace.steps) - 1
        table = trace_table(trace, f"{model}: {what} replayed ({n} step{'s' if n != 1 else ''})")
        if ending.failing is not None:
            from absmc.kernel.replay.trace import command_source, command_text

            ci = ending.failing
            table.add_row(
                str(n + 1),
                Text(system.commands[ci].process or ""),
                Text(command_text(system, ci)),
                command_source(system, ci) or "",
                Text("✗ fails", style="bold red"),
            )
        con.print(table)
        others = [t.property for t in traces if t is not chosen and t.property]
        if ending.violation is None:
            echo(out, "the run ends without a violation")
            return 0
        mark = "⟲" if trace.cycle_start is not None else "✗"
        con.print(Text(f"{mark} {ending.violation}", style="bold red"))
        if others and name is None:
            echo(out, f"also in {path}: {', '.join(others)} (replay one with -N NAME)")
        return 1

    return guarded(body, err, debug)


@click.command("replay", context_settings=CONTEXT)
@click.argument("model", type=click.Path(dir_okay=False))
@click.argument("trail", required=False, type=click.Path(dir_okay=False))
@add_options((TRACE_PROPERTY, DEFINES, STOP_AT, INTERACTIVE))
@click.pass_context
def replay_command(
    ctx: click.Context,
    model: str,
    trail: str | None,
    name: str | None,
    defines: tuple[str, ...],
    stop_at: int | None,
    interactive: bool,
) -> None:
    """Replay a counterexample of MODEL saved in TRAIL (default MODEL.trail.json, written by
    absmc check; or a check --json / simulate --json file) and show its violation.

    Exit codes: 1 the violation is confirmed on the model, 0 the trace shows none, 2 the trace
    does not replay (the model changed: the first differing row is named) or usage error.
    """
    debug = bool(ctx.obj and ctx.obj.get("debug"))
    if interactive and stop_at is None:
        stop_at = 0
    sys.exit(
        run_replay(
            model,
            trail,
            sys.stdout,
            sys.stderr,
            name,
            defines,
            debug,
            stop_at,
            interactive,
            sys.stdin,
        )
    )
