"""The ``absmc`` command line.

Exit codes (stable, for scripts): 0 every checked property holds, 1 some property is violated,
2 usage error or error in the model, 3 unknown (a limit was reached or the method could not
decide), 4 internal error (a bug in absmc: please report it).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

import click
from rich.console import Console
from rich.live import Live
from rich.text import Text

from absmc import __version__
from absmc.cli_types import abstract, domains, types_from, types_options
from absmc.cli_under import under_from, under_options
from absmc.ir.span import ModelError
from absmc.ir.system import System
from absmc.kernel.options import CheckOptions, Limits, OptionError, Progress
from absmc.kernel.result import Result, peak_rss_mb

if TYPE_CHECKING:
    from absmc.engines.typeabs import TypesOptions
    from absmc.engines.under import UnderOptions

EXIT_MODEL_ERROR = 2
EXIT_INTERNAL = 4

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class UsageProblem(Exception):
    """A problem with how absmc was called (reported in one line, exit 2)."""


def _stderr() -> Console:
    return Console(stderr=True, highlight=False, soft_wrap=True)


def _stdout() -> Console:
    width = None if sys.stdout.isatty() else 160
    return Console(highlight=False, width=width)


def _fail(message: str, code: int = EXIT_MODEL_ERROR) -> NoReturn:
    click.echo(message, err=True)
    sys.exit(code)


def run_guarded(fn: Callable[[], int]) -> int:
    """Run ``fn`` turning every error into a one-line message and an exit code; never a
    traceback (unless ``ABSMC_DEBUG=1``)."""
    try:
        return fn()
    except ModelError as err:
        _fail(err.render())
    except (OptionError, UsageProblem, ValueError) as err:
        _fail(f"absmc: error: {err}")
    except OSError as err:
        name = f" '{err.filename}'" if err.filename else ""
        _fail(f"absmc: error: cannot read{name}: {err.strerror or err}")
    except KeyboardInterrupt:
        _fail("absmc: interrupted", 130)
    except Exception as err:
        if os.environ.get("ABSMC_DEBUG"):
            traceback.print_exc()
        _fail(
            f"absmc: internal error: {type(err).__name__}: {err} "
            "(this is a bug in absmc; set ABSMC_DEBUG=1 for the traceback)",
            EXIT_INTERNAL,
        )


def load(model: str, defines: tuple[str, ...] = ()) -> System:
    """Load a model file with the front end its extension names."""
    from absmc.lang.loader import load_model

    defs: dict[str, str] = {}
    for d in defines:
        name, _, value = d.partition("=")
        if not name:
            raise UsageProblem(f"bad definition '-D {d}' (expected NAME or NAME=VALUE)")
        defs[name] = value or "1"
    return load_model(model, defs or None)


def add_predicates(system: System, predicates: tuple[str, ...]) -> System:
    """``system`` with the ``--predicate`` expressions (GCL expression syntax) added to its seed
    predicates. A bad expression is a ``ModelError`` located in ``--predicate``."""
    if not predicates:
        return system
    from absmc.lang.gcl import parse_gcl_expr

    extra = tuple(parse_gcl_expr(text, system, "--predicate") for text in predicates)
    for text, e in zip(predicates, extra, strict=True):
        if not e.is_bool:
            raise UsageProblem(f"--predicate {text!r} is not a bool expression")
    return system.with_(predicates=system.predicates + extra)


_predicate_option = click.option(
    "--predicate",
    "predicates",
    multiple=True,
    metavar="EXPR",
    help="Add a predicate for abstraction (repeatable; GCL expression syntax, e.g. 'x < y').",
)


class ProgressLine:
    """The progress report on stderr: a rich live line rewritten in place on a terminal, one
    printed line per report otherwise (``--progress`` into a log)."""

    def __init__(self) -> None:
        self.console = Console(stderr=True, highlight=False)
        self.live: Live | None = None

    def __call__(self, p: Progress) -> None:
        rate = p.states / p.elapsed_s if p.elapsed_s > 0 else 0.0
        line = Text.assemble(
            ("states ", "dim"),
            f"{p.states:,}",
            ("  transitions ", "dim"),
            f"{p.transitions:,}",
            ("  depth ", "dim"),
            f"{p.depth:,}",
            ("  states/s ", "dim"),
            f"{rate:,.0f}",
            ("  memory ", "dim"),
            f"{peak_rss_mb():,.0f} MB",
            ("  elapsed ", "dim"),
            f"{p.elapsed_s:,.0f} s",
        )
        if not self.console.is_terminal:
            self.console.print(line.plain, soft_wrap=True)
            return
        if self.live is None:
            self.live = Live(line, console=self.console, transient=True, auto_refresh=False)
            self.live.start()
        self.live.update(line, refresh=True)

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None


@click.group(context_settings=CONTEXT)
@click.version_option(__version__, prog_name="absmc")
def cli() -> None:
    """absmc — model checking with abstraction.

    absmc explores the state space of a guarded-command (.gcl) or Promela model and says, for
    each property, whether it holds (a proof), is violated (a real bug, with a counterexample
    replayed on the concrete semantics) or is unknown (a limit was reached).

    \b
    Examples:
      absmc check examples/gcl/rax.gcl              # find the RAX deadlock
      absmc check examples/gcl/peterson.gcl --json  # machine-readable result
      absmc check model.gcl --order dfs --store bitstate --bitstate-bits 30
      absmc simulate examples/gcl/philosophers.gcl --steps 20 --seed 1

    Exit codes: 0 holds, 1 violated, 2 usage or model error, 3 unknown, 4 internal error.
    """


@cli.command(context_settings=CONTEXT)
@click.argument("model", type=click.Path(dir_okay=False))
@click.option(
    "--method",
    type=click.Choice(["explicit", "under", "types", "fourvalued"]),
    default="explicit",
    show_default=True,
    help="Checking method: explicit = exhaustive explicit-state search; under = concrete "
    "search with abstract matching and refinement (Pasareanu et al., CAV 2005); types = "
    "type-based data abstraction with choose-free search (needs --abstract VAR=DOMAIN); "
    "fourvalued = Bonsai's may/must predicate abstraction (value t / f / ⊥).",
)
@_predicate_option
@click.option(
    "--property",
    "properties",
    multiple=True,
    metavar="NAME",
    help="Check only this property (repeatable). Built-in: no-deadlock, no-model-error.",
)
@click.option(
    "--order",
    type=click.Choice(["bfs", "dfs"]),
    default="bfs",
    show_default=True,
    help="Search order (BFS gives shortest counterexamples).",
)
@click.option(
    "--store",
    type=click.Choice(["exact", "bitstate", "range"]),
    default="exact",
    show_default=True,
    help="State store: exact set, or bitstate hashing (less memory, may miss states); "
    "[under] range = Kudra & Mercer's min/max refinement, no prover.",
)
@click.option(
    "--bitstate-bits",
    type=click.IntRange(3, 40),
    default=27,
    show_default=True,
    metavar="LOG2",
    help="Bitstate array size: 2^LOG2 bits.",
)
@click.option(
    "--hash-functions",
    type=click.IntRange(1, 32),
    default=3,
    show_default=True,
    metavar="K",
    help="Number of bitstate hash functions (SPIN's -k).",
)
@click.option(
    "--max-states",
    type=click.IntRange(1),
    default=None,
    metavar="N",
    help="Stop after storing N states (verdict unknown).",
)
@click.option(
    "--max-depth",
    type=click.IntRange(0),
    default=None,
    metavar="N",
    help="Do not explore beyond N steps from the initial state (verdict unknown).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(0, min_open=True),
    default=None,
    metavar="SECONDS",
    help="Stop after this much wall time (verdict unknown).",
)
@click.option(
    "--keep-going", is_flag=True, help="Continue after a violation and count them all (SPIN's -c0)."
)
@click.option("--no-deadlock", is_flag=True, help="Do not report states without successors.")
@click.option(
    "-D",
    "defines",
    multiple=True,
    metavar="NAME[=VALUE]",
    help="Preprocessor definition for Promela models (as spin -D).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Progress line on stderr (default: when stderr is a terminal).",
)
@under_options
@types_options
def check(
    model: str,
    method: str,
    predicates: tuple[str, ...],
    properties: tuple[str, ...],
    order: str,
    store: str,
    bitstate_bits: int,
    hash_functions: int,
    max_states: int | None,
    max_depth: int | None,
    timeout: float | None,
    keep_going: bool,
    no_deadlock: bool,
    defines: tuple[str, ...],
    as_json: bool,
    progress: bool | None,
    seed_predicates: str,
    max_iterations: int,
    prover: str,
    concrete_after: int | None,
    local_predicates: bool,
    table: bool,
    abstract: tuple[str, ...],
    rest: str,
    basl: tuple[str, ...],
) -> None:
    """Check the properties of MODEL.

    Checks every invariant and unreachable property of the model, plus the built-in
    no-deadlock (some command is always enabled) and no-model-error (no out-of-range
    assignment, no division by zero). Prints one verdict per property, statistics, and a
    counterexample table for each violation.
    """

    def body() -> int:
        if store == "range" and method != "under":
            raise UsageProblem("--store range applies to --method under only")
        if predicates and method not in ("under", "fourvalued"):
            raise UsageProblem("--predicate applies to --method under and --method fourvalued")
        system = add_predicates(load(model, defines), predicates)
        show_progress = progress if progress is not None else sys.stderr.isatty()
        line = ProgressLine() if show_progress else None
        options = CheckOptions(
            properties=list(properties) or None,
            order=order,  # type: ignore[arg-type]
            store=store,  # type: ignore[arg-type]
            bitstate_bits=bitstate_bits,
            hash_functions=hash_functions,
            limits=Limits(max_states, max_depth, timeout),
            keep_going=keep_going,
            check_deadlock=not no_deadlock,
            progress=line,
        )
        under = None
        if method == "under":
            under = under_from(
                system,
                store,
                seed_predicates,
                max_iterations,
                prover,
                concrete_after,
                local_predicates,
            )
            options.store = "exact"
        elif seed_predicates or concrete_after or local_predicates or table:
            raise UsageProblem(
                "--seed-predicates, --concrete-after, --local-predicates and --table apply to "
                "--method under"
            )
        try:
            result = run_method(method, system, options, under, types_from(abstract, rest, basl))
        finally:
            if line is not None:
                line.close()
        result = dataclasses.replace(result, model=model)
        emit(result, as_json, show_iterations=table)
        return result.exit_code

    sys.exit(run_guarded(body))


def run_method(
    method: str,
    system: System,
    options: CheckOptions,
    under: UnderOptions | None = None,
    types: TypesOptions | None = None,
) -> Result:
    """Dispatch to the engine of ``method`` with its method-specific options."""
    if method == "explicit":
        if types is not None and (types.abstract or types.basl):
            raise UsageProblem("--abstract and --basl need --method types")
        from absmc.engines.explicit import check_explicit

        return check_explicit(system, options)
    if method == "under":
        from absmc.engines.under import UnderOptions, check_under

        return check_under(system, options, under or UnderOptions())
    if method == "types":
        from absmc.engines.typeabs import TypesOptions, check_types

        return check_types(system, options, types or TypesOptions())
    if method == "fourvalued":
        from absmc.engines.fourvalued import check_fourvalued

        return check_fourvalued(system, options)
    raise UsageProblem(f"unknown method '{method}'")  # pragma: no cover - click checks


def emit(result: Result, as_json: bool, show_iterations: bool = False) -> None:
    """Print a result as JSON or as text."""
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
    else:
        from absmc.report.text import render_result

        render_result(result, _stdout(), show_iterations)


@cli.command(context_settings=CONTEXT)
@click.argument("model", type=click.Path(dir_okay=False))
@click.option(
    "--steps",
    type=click.IntRange(0),
    default=100,
    show_default=True,
    help="Maximum number of steps.",
)
@click.option("--seed", type=int, default=None, help="Random seed (printed, for reproduction).")
@click.option(
    "-D",
    "defines",
    multiple=True,
    metavar="NAME[=VALUE]",
    help="Preprocessor definition for Promela models.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON.")
def simulate(
    model: str, steps: int, seed: int | None, defines: tuple[str, ...], as_json: bool
) -> None:
    """Run MODEL once, choosing among enabled commands at random, and print the run."""

    def body() -> int:
        from absmc.kernel.simulate import simulate as run_simulation

        system = load(model, defines)
        t0 = time.monotonic()
        run = run_simulation(system, steps, seed)
        if as_json:
            payload: dict[str, Any] = {
                "model": model,
                "seed": run.seed,
                "ending": run.ending,
                "time_s": round(time.monotonic() - t0, 6),
                "trace": [s.to_json() for s in run.trace.steps],
            }
            click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
        else:
            from absmc.report.text import trace_table

            out = _stdout()
            n = len(run.trace.steps) - 1
            out.print(trace_table(run.trace, f"{model}: random run of {n} steps (seed {run.seed})"))
            out.print(Text(run.ending, style="bold"))
        return 0

    sys.exit(run_guarded(body))


@cli.command(context_settings=CONTEXT)
@click.argument("model", type=click.Path(dir_okay=False))
@click.option(
    "--to", "target", type=click.Choice(["promela", "gcl"]), required=True, help="Output language."
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Write to this file instead of standard output.",
)
@click.option(
    "-D",
    "defines",
    multiple=True,
    metavar="NAME[=VALUE]",
    help="Preprocessor definition for Promela models.",
)
@click.option(
    "--method",
    type=click.Choice(["concrete", "types", "fourvalued"]),
    default="concrete",
    show_default=True,
    help="concrete = the model itself; types = its type-based abstraction (--abstract ...); "
    "fourvalued = its may- and must-abstraction (--predicate ...).",
)
@types_options
@_predicate_option
def export(
    model: str,
    target: str,
    output: str | None,
    defines: tuple[str, ...],
    method: str,
    abstract: tuple[str, ...],
    rest: str,
    basl: tuple[str, ...],
    predicates: tuple[str, ...],
) -> None:
    """Write MODEL in another language.

    --to promela writes a model SPIN accepts with the same reachable states (one process, one
    d_step per guarded command); --to gcl prints the model as guarded commands. With
    --method types the abstract model is written instead (abstracted variables over token
    numbers; the abstract properties as assertions). With --method fourvalued, both abstract
    models are written (to FILE.may.EXT and FILE.must.EXT with -o).
    """

    def body() -> int:
        system = add_predicates(load(model, defines), predicates)
        if method == "fourvalued":
            from absmc.engines.fourvalued.export import export_abstractions, export_paths

            texts = export_abstractions(system, target)
            if output is None:
                click.echo("".join(texts.values()), nl=False)
            for kind, path in export_paths(output).items():
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(texts[kind])
                click.echo(f"wrote the {kind}-abstraction to {path}", err=True)
            return 0
        if method == "types":
            from absmc.cli_types import abstract_model_text

            text = abstract_model_text(system, types_from(abstract, rest, basl), target)
        elif abstract or basl:
            raise UsageProblem("--abstract and --basl need --method types")
        elif target == "promela":
            from absmc.lang.promela.export import to_promela

            text = to_promela(system)
        else:
            from absmc.lang.gcl.export import to_gcl

            text = to_gcl(system)
        if output is None:
            click.echo(text, nl=False)
        else:
            with open(output, "w", encoding="utf-8") as fh:
                fh.write(text)
        return 0

    sys.exit(run_guarded(body))


cli.add_command(domains)
cli.add_command(abstract)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="absmc")


if __name__ == "__main__":  # pragma: no cover
    main()
