"""``absmc simulate``: one random run of a model."""

from __future__ import annotations

import json
import sys
import time
from typing import Any, TextIO

import click
from rich.text import Text

from absmc.cli.common import CONTEXT, console, defines_option, echo, guarded, load


def run_simulate(
    model: str,
    out: TextIO,
    err: TextIO,
    steps: int = 100,
    seed: int | None = None,
    defines: tuple[str, ...] = (),
    as_json: bool = False,
    debug: bool = False,
    replay: str | None = None,
) -> int:
    """With ``replay`` (a JSON file written by ``check --json`` or ``simulate --json``), re-run
    its trace on ``model`` instead (:func:`run_replay`). Otherwise run ``model`` once for at
    most ``steps`` steps, choosing among enabled commands at random (``seed``: reproducible),
    and print the run on ``out``. Returns the exit code: 1 when the run violates a property
    (an assertion, an invariant, a model error, a deadlock), 3 when Ctrl-C interrupted it (the
    run so far is printed), else 0. What the model prints (Promela's ``printf``) is written
    to ``out`` as the run goes, before the run's table (in JSON: ``"output"``)."""

    if replay is not None:
        return run_replay(model, replay, out, err, defines, debug)

    def body() -> int:
        from absmc.kernel.simulate import simulate as run_simulation

        system = load(model, defines)
        t0 = time.monotonic()

        def show(text: str) -> None:
            out.write(text)
            out.flush()

        run = run_simulation(system, steps, seed, None if as_json else show)
        if as_json:
            payload: dict[str, Any] = {
                "model": model,
                "seed": run.seed,
                "ending": run.ending,
                "steps": run.steps,
                "violated": run.violated,
                "interrupted": run.interrupted,
                "output": run.output,
                "time_s": round(time.monotonic() - t0, 6),
                "trace": [s.to_json() for s in run.trace.steps],
            }
            echo(out, json.dumps(payload, indent=2, ensure_ascii=False))
        else:
            from absmc.report.text import trace_table

            if run.output and not run.output.endswith("\n"):
                out.write("\n")
            con = console(out)
            n = run.steps
            rows = len(run.trace.steps) - 1
            what = f"{n} step{'s' if n != 1 else ''}"
            if rows != n:
                what += f" ({rows} commands: atomic chains show one row per command)"
            con.print(trace_table(run.trace, f"{model}: random run of {what} (seed {run.seed})"))
            con.print(Text(run.ending, style="bold"))
        if run.violated is not None:
            return 1
        return 3 if run.interrupted else 0

    return guarded(body, err, debug)


def run_replay(
    model: str,
    saved: str,
    out: TextIO,
    err: TextIO,
    defines: tuple[str, ...] = (),
    debug: bool = False,
) -> int:
    """Replay the first trace of ``saved`` (JSON of ``check --json``: the first result with a
    trace, a lasso's ``cycle_start`` included; or of ``simulate --json``) on ``model`` and
    print it. Returns 0 when it replays; a trace that does not replay, or a file without a
    trace, is a usage error (exit 2)."""

    def body() -> int:
        from absmc.codegen.python import compile_system
        from absmc.errors import UsageError
        from absmc.kernel.trace import ReplayError, replay_saved
        from absmc.report.text import trace_table

        try:
            with open(saved, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            raise UsageError(f"cannot read the trace file '{saved}': {e}") from None
        rows, cycle, what = _saved_trace(data)
        if rows is None:
            raise UsageError(f"'{saved}' holds no trace")
        system = load(model, defines)
        try:
            trace = replay_saved(compile_system(system), rows, cycle)
        except ReplayError as e:
            raise UsageError(f"the trace of '{saved}' does not replay on {model}: {e}") from None
        con = console(out)
        n = len(trace.steps) - 1
        con.print(trace_table(trace, f"{model}: {what} replayed ({n} steps)"))
        if cycle is not None:
            con.print(Text(f"⟲ the last state is the state of step {cycle}: a lasso"))
        return 0

    return guarded(body, err, debug)


def _saved_trace(data: Any) -> tuple[list[dict[str, Any]] | None, int | None, str]:
    if not isinstance(data, dict):
        return None, None, ""
    if isinstance(data.get("trace"), list):
        return data["trace"], None, "random run"
    for r in data.get("results") or []:
        if isinstance(r, dict) and isinstance(r.get("trace"), list):
            cycle = r.get("cycle_start")
            return (
                r["trace"],
                cycle if isinstance(cycle, int) else None,
                f"trace of '{r.get('property')}'",
            )
    return None, None, ""


@click.command("simulate", context_settings=CONTEXT)
@click.argument("model", type=click.Path(dir_okay=False))
@click.option(
    "--steps",
    type=click.IntRange(0),
    default=100,
    show_default=True,
    help="Maximum number of steps.",
)
@click.option("--seed", type=int, default=None, help="Random seed (printed, for reproduction).")
@defines_option
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON.")
@click.option(
    "--replay",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE.json",
    help="Replay the trace saved in FILE.json (check --json or simulate --json; a lasso's "
    "cycle included) instead of a random run.",
)
@click.pass_context
def simulate_command(
    ctx: click.Context,
    model: str,
    steps: int,
    seed: int | None,
    defines: tuple[str, ...],
    as_json: bool,
    replay: str | None,
) -> None:
    """Run MODEL once, choosing among enabled commands at random, and print the run."""
    debug = bool(ctx.obj and ctx.obj.get("debug"))
    sys.exit(
        run_simulate(model, sys.stdout, sys.stderr, steps, seed, defines, as_json, debug, replay)
    )
