"""``absmc abstract``: help with choosing a type-based abstraction (paper 001, §5.1-5.2)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, TextIO

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from absmc.cli.common import CONTEXT, console, defines_option, guarded, load, write_text
from absmc.cli.methods import typeabs as types_cli
from absmc.errors import OptionError, UsageError
from absmc.ir.system import Property, System


@dataclass(frozen=True)
class AbstractArgs:
    """The arguments of ``absmc abstract``: a property to ``suggest`` for and/or to ``slice``
    for, and/or bindings (``abstract``, ``rest``, ``basl``) whose inferred typing to show."""

    model: str
    suggest_prop: str | None = None
    slice_prop: str | None = None
    abstract: tuple[str, ...] = ()
    rest: str = "concrete"
    basl: tuple[str, ...] = ()
    output: str | None = None
    defines: tuple[str, ...] = ()


def run_abstract(args: AbstractArgs, out: TextIO, err: TextIO, debug: bool = False) -> int:
    """Print the suggestion, the slice and/or the inferred abstract types on ``out``; returns
    the exit code (2 for nothing asked, unknown properties, bad bindings)."""

    def body() -> int:
        system = load(args.model, args.defines)
        if not (args.suggest_prop or args.slice_prop or args.abstract or args.rest == "point"):
            raise UsageError("give --suggest PROPERTY, --slice PROPERTY or --abstract VAR=DOMAIN")

        def prop_named(name: str) -> Property:
            try:
                return system.get_property(name)
            except KeyError:
                known = ", ".join(p.name for p in system.properties) or "none"
                raise OptionError(f"the model has no property '{name}' (it has: {known})") from None

        con = console(out)
        if args.slice_prop:
            from absmc.engines.typeabs.select import slice_system
            from absmc.ir.printer import format_system

            sl = slice_system(system, [prop_named(args.slice_prop)])
            head = (
                f"// slice of {args.model} for {args.slice_prop}: removed "
                f"{len(sl.removed_commands)} commands, variables "
                f"{', '.join(sl.removed_variables) or 'none'}\n"
            )
            write_text(head + format_system(sl.system), args.output, out)
        if args.suggest_prop:
            _print_suggestion(con, system, prop_named(args.suggest_prop), args.model)
        if args.abstract or args.rest == "point":
            from absmc.engines.typeabs.check import typing_of

            types = types_cli.types_options(args.abstract, args.rest, args.basl)
            typing = typing_of(system, types)
            table = Table(title="abstract type inference", title_justify="left")
            for col in ("variable", "domain", "why"):
                table.add_column(col)
            for v, d in typing.domains.items():
                table.add_row(v, str(d), typing.reasons.get(v, ""))
            con.print(table)
            concrete = [v.name for v in system.variables if v.name not in typing.domains]
            con.print(f"concrete: {', '.join(concrete) or 'none'}")
        return 0

    return guarded(body, err, debug)


def _print_suggestion(out: Console, system: System, prop: Property, model: str) -> None:
    from absmc.engines.typeabs.select import suggest

    sg = suggest(system, prop)
    dep = sg.dependence
    out.print(Text(f"{model}: property {prop.name}", style="bold"))
    out.print(f"refers to: {', '.join(dep.roots) or 'no variable'}")
    out.print(
        f"depends on (data and control): {', '.join(dep.relevant)}; "
        f"{len(dep.controlling)} controlling conditionals"
    )
    table = Table(
        title="candidates (most frequent in controlling conditionals first)", title_justify="left"
    )
    for col in ("variable", "role", "in conditionals", "compared", "values from", "suggest", "why"):
        table.add_column(col)
    for c in sg.candidates:
        table.add_row(
            c.name,
            c.role,
            str(c.occurrences),
            ", ".join(c.compared) or "-",
            ", ".join(c.sources) or "-",
            c.domain or "-",
            c.reason,
        )
    out.print(table)
    if sg.bindings:
        args = " ".join(f"--abstract {v}={d}" for v, d in sg.bindings)
        out.print(Text(f"suggested: {args}", style="bold"))
    else:
        out.print("suggested: nothing to abstract (no integer variable influences it)")
    sl = sg.slice
    if sl is None:
        out.print("no slice: the model has atomic sequences or timeout")
        return
    out.print(
        f"slice for {prop.name}: keeps {len(sl.system.commands)} of {len(system.commands)} "
        f"commands and {len(sl.system.variables)} of {len(system.variables)} variables"
        + (f"; removes {', '.join(sl.removed_variables)}" if sl.removed_variables else "")
    )


@click.command("abstract", context_settings=CONTEXT)
@click.argument("model", type=click.Path(dir_okay=False))
@click.option(
    "--suggest",
    "suggest_prop",
    metavar="PROPERTY",
    default=None,
    help="Rank the variables PROPERTY depends on and suggest abstractions (paper 001, 5.1).",
)
@click.option(
    "--slice",
    "slice_prop",
    metavar="PROPERTY",
    default=None,
    help="Print the cone-of-influence slice of MODEL for PROPERTY as GCL.",
)
@types_cli.options
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="With --slice: write the slice to this file.",
)
@defines_option
@click.pass_context
def abstract_command(ctx: click.Context, /, **params: Any) -> None:
    """Help with type-based abstraction of MODEL.

    --suggest PROPERTY follows the data and control dependences of PROPERTY's variables,
    ranks the variables of the controlling conditionals by how often they occur, suggests a
    domain from the comparisons (x == 0, x > 0: signs) and shows what a slice removes.
    --slice PROPERTY prints the sliced model. --abstract VAR=DOMAIN reports what abstract
    type inference makes of the bindings.

    \b
    Examples:
      absmc abstract examples/gcl/deos.gcl --suggest time_partitioning
      absmc abstract examples/gcl/deos.gcl --abstract period_id=signs
    """
    debug = bool(ctx.obj and ctx.obj.get("debug"))
    sys.exit(run_abstract(AbstractArgs(**params), sys.stdout, sys.stderr, debug))
