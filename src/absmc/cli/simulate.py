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
) -> int:
    """Run ``model`` once for at most ``steps`` steps, choosing among enabled commands at
    random (``seed``: reproducible), and print the run on ``out``. Returns the exit code: 1
    when the run violates a property (an assertion, an invariant, a model error, a deadlock),
    3 when Ctrl-C interrupted it (the run so far is printed), else 0. What the model prints
    (Promela's ``printf``) is written to ``out`` as the run goes, before the run's table (in
    JSON: ``"output"``)."""

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
@click.pass_context
def simulate_command(
    ctx: click.Context,
    model: str,
    steps: int,
    seed: int | None,
    defines: tuple[str, ...],
    as_json: bool,
) -> None:
    """Run MODEL once, choosing among enabled commands at random, and print the run."""
    debug = bool(ctx.obj and ctx.obj.get("debug"))
    sys.exit(run_simulate(model, sys.stdout, sys.stderr, steps, seed, defines, as_json, debug))
