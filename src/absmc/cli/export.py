"""``absmc export``: a model, or its abstraction, in another language."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, TextIO

import click

from absmc.cli.args import declared
from absmc.cli.common import (
    CONTEXT,
    add_predicates,
    click_option,
    defines_option,
    echo,
    guarded,
    load,
    write_text,
)
from absmc.cli.methods import typeabs as types_cli
from absmc.engines.typeabs import TypesOptions
from absmc.errors import UsageError
from absmc.ir.system import System


@dataclass(frozen=True)
class ExportArgs:
    """The arguments of ``absmc export``: ``target`` is ``promela`` or ``gcl``, ``method``
    ``concrete``, ``types`` or ``fourvalued``."""

    model: str
    target: str
    output: str | None = None
    defines: tuple[str, ...] = ()
    method: str = "concrete"
    abstract: tuple[str, ...] = ()
    rest: str = "concrete"
    basl: tuple[str, ...] = ()
    predicates: tuple[str, ...] = ()


def abstract_model_text(system: System, types: TypesOptions, target: str) -> str:
    """The abstract System of ``system`` under ``types`` as Promela or GCL, with a comment
    naming the abstracted variables and their tokens (Bandera's verifier code generation).
    GCL goes through the GCL exporter (:func:`absmc.lang.gcl.export.to_gcl`: its checks and
    renaming); raises ``ExportError`` for what GCL cannot express."""
    from absmc.engines.typeabs import build_abstraction
    from absmc.lang.gcl.export import to_gcl
    from absmc.lang.promela.export import to_promela

    abstraction = build_abstraction(system, types)
    abstract = abstraction.export_system()
    legend = [
        f"{v}: {d} ({', '.join(f'{i}={t}' for i, t in enumerate(d.tokens))})"
        for v, d in abstraction.domains.items()
    ]
    head = [
        f"abstraction of {system.file or system.name} (absmc --method types)",
        *legend,
        f"{abstraction.choose_count} of {len(abstract.commands)} commands resolve a choose",
    ]
    if target == "promela":
        text = to_promela(abstract)
        first, _, rest = text.partition("\n")
        comment = "\n".join(f"/* {h.replace('*/', '* /')} */" for h in head)
        return f"{first}\n{comment}\n{rest}"
    body = to_gcl(abstract)
    return "\n".join(f"// {h}" for h in head) + "\n" + body


def run_export(args: ExportArgs, out: TextIO, err: TextIO, debug: bool = False) -> int:
    """Write the model (``concrete``) or its abstraction in ``args.target`` to ``args.output``
    or ``out``; returns the exit code (0, or 2 for what the target cannot express)."""

    def body() -> int:
        if args.method != "types" and (args.abstract or args.basl):
            raise UsageError("--abstract and --basl need --method types")
        system = add_predicates(load(args.model, args.defines), args.predicates)
        if args.method == "fourvalued":
            from absmc.engines.fourvalued.export import export_abstractions, export_paths

            texts = export_abstractions(system, args.target)
            if args.output is None:
                echo(out, "".join(texts.values()), nl=False)
            for kind, path in export_paths(args.output).items():
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(texts[kind])
                echo(err, f"wrote the {kind}-abstraction to {path}")
            return 0
        if args.method == "types":
            types = types_cli.types_options(args.abstract, args.rest, args.basl)
            text = abstract_model_text(system, types, args.target)
        elif args.target == "promela":
            from absmc.lang.promela.export import to_promela

            text = to_promela(system)
        else:
            from absmc.lang.gcl.export import to_gcl

            text = to_gcl(system)
        write_text(text, args.output, out)
        return 0

    return guarded(body, err, debug)


@click.command("export", context_settings=CONTEXT)
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
@defines_option
@click.option(
    "--method",
    type=click.Choice(["concrete", "types", "fourvalued"]),
    default="concrete",
    show_default=True,
    help="concrete = the model itself; types = its type-based abstraction (--abstract ...); "
    "fourvalued = its may- and must-abstraction (--predicate ...).",
)
@types_cli.options
@click_option(declared("predicates"))
@click.pass_context
def export_command(ctx: click.Context, /, **params: Any) -> None:
    """Write MODEL in another language.

    --to promela writes a model SPIN accepts with the same reachable states (one process, one
    d_step per guarded command); --to gcl prints the model as guarded commands (refusing what
    GCL cannot express: atomic sequences, timeout, assertions, wrap-around, bitwise operators).
    With --method types the abstract model is written instead (abstracted variables over token
    numbers; the abstract properties as assertions). With --method fourvalued, both abstract
    models are written (to FILE.may.EXT and FILE.must.EXT with -o).
    """
    debug = bool(ctx.obj and ctx.obj.get("debug"))
    sys.exit(run_export(ExportArgs(**params), sys.stdout, sys.stderr, debug))
