"""``absmc simulate``: one random run of a model."""

from __future__ import annotations

import json
import sys
import time
from typing import Any, TextIO

import click
from rich.text import Text

from absmc.cli.common import (
    CONTEXT,
    EXIT_USAGE,
    INTERACTIVE,
    STOP_AT,
    TRACE_PROPERTY,
    click_option,
    console,
    defines_option,
    echo,
    guarded,
    load,
)
from absmc.kernel.run.result import SCHEMA_VERSION


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
    name: str | None = None,
    stop_at: int | None = None,
    interactive: bool = False,
    stdin: TextIO | None = None,
) -> int:
    """With ``replay`` (a trail, or a JSON file written by ``check --json`` or ``simulate
    --json``), replay the trace of property ``name`` (default the first) on ``model`` up to its
    violation instead (:func:`absmc.cli.replay.run_replay`; ``stop_at``: that many steps only;
    with ``interactive``, then go on interactively). With ``interactive`` alone, a person
    chooses every step, read from ``stdin`` (:mod:`absmc.cli.interactive`). Otherwise run
    ``model`` once for at most ``steps`` steps, choosing among enabled commands at random
    (``seed``: reproducible), and print the run on ``out``. Returns the exit code: 1 when the
    run violates a property (an assertion, an invariant, a model error, a deadlock), 3 when
    Ctrl-C interrupted it (the run so far is printed), else 0. What the model prints
    (Promela's ``printf``) is written to ``out`` as the run goes, before the run's table (in
    JSON: ``"output"``)."""

    if replay is not None:
        from absmc.cli.replay import run_replay

        if as_json:
            echo(err, "absmc: error: --replay prints the replayed trace as text; drop --json")
            return EXIT_USAGE
        if interactive and stop_at is None:
            stop_at = 0
        return run_replay(
            model, replay, out, err, name, defines, debug, stop_at, interactive, stdin
        )
    if name is not None or stop_at is not None:
        echo(err, "absmc: error: -N/--property and --stop-at apply to --replay")
        return EXIT_USAGE
    if interactive:
        if as_json:
            echo(err, "absmc: error: -i (interactive) writes no JSON; drop --json")
            return EXIT_USAGE
        return run_interactive(model, out, err, steps, defines, debug, stdin)

    def body() -> int:
        from absmc.kernel.replay.simulate import simulate as run_simulation

        system = load(model, defines)
        t0 = time.monotonic()

        def show(text: str) -> None:
            out.write(text)
            out.flush()

        run = run_simulation(system, steps, seed, None if as_json else show)
        if as_json:
            payload: dict[str, Any] = {
                "schema_version": SCHEMA_VERSION,
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

    return guarded(body, err, debug, out if as_json else None)


def run_interactive(
    model: str,
    out: TextIO,
    err: TextIO,
    steps: int = 100,
    defines: tuple[str, ...] = (),
    debug: bool = False,
    stdin: TextIO | None = None,
) -> int:
    """``simulate -i``: a person chooses each of at most ``steps`` steps from the initial
    state (:func:`absmc.cli.interactive.interact`). Returns 1 when the run ends in a
    violation, else 0."""

    def body() -> int:
        from absmc.cli.interactive import interact
        from absmc.codegen.python import compile_system

        system = load(model, defines)
        sem = compile_system(system)
        state = sem.initial
        echo(out, f"{model}: interactive run")
        values = " ".join(f"{n}={v}" for n, v in system.state_dict(state).items())
        echo(out, f"   0  initial state  {values}")
        bad = sem.violated(state)
        if bad:
            echo(out, f"✗ the initial state violates '{sem.properties[bad[0]].name}'")
            return 1
        return interact(sem, state, 0, out, stdin if stdin is not None else sys.stdin, steps)

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
@click.option(
    "--replay",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE.json",
    help="Replay a saved trace up to its violation instead of a random run (a trail "
    "MODEL.trail.json, check --json or simulate --json; as absmc replay).",
)
@click_option(
    TRACE_PROPERTY, "With --replay: the property whose trace to replay (default: the first)."
)
@click_option(
    STOP_AT, "With --replay: replay the first N steps only (with -i: then go on interactively)."
)
@click_option(
    INTERACTIVE,
    "Choose each step yourself among the enabled ones, typed on standard input (SPIN's "
    "-i; at most --steps steps).",
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
    name: str | None,
    stop_at: int | None,
    interactive: bool,
) -> None:
    """Run MODEL once, choosing among enabled commands at random (or, with -i, as you choose),
    and print the run; with --replay, replay a saved counterexample up to its violation."""
    debug = bool(ctx.obj and ctx.obj.get("debug"))
    sys.exit(
        run_simulate(
            model,
            sys.stdout,
            sys.stderr,
            steps,
            seed,
            defines,
            as_json,
            debug,
            replay,
            name,
            stop_at,
            interactive,
            sys.stdin,
        )
    )
