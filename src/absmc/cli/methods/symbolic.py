"""``--method symbolic`` (paper 002): ``--widen-delay K``, ``--eg-bound K``, ``--no-restrict``,
``--max-rounds N``, and ``--predicate``/``--table``/``--refine`` shared with other methods."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from absmc.cli.args import CheckArgs
from absmc.cli.methods.base import MethodCli
from absmc.engines.symbolic import SymbolicOptions

F = TypeVar("F", bound=Callable[..., Any])


def options(f: F) -> F:
    """Add the method's click options to a command."""
    opts = [
        click.option(
            "--widen-delay",
            type=click.IntRange(0),
            default=2,
            show_default=True,
            metavar="K",
            help="[symbolic] Exact iterations of a least fixpoint before widening.",
        ),
        click.option(
            "--eg-bound",
            type=click.IntRange(1),
            default=20,
            show_default=True,
            metavar="K",
            help="[symbolic] Iterations after which a greatest fixpoint is truncated "
            "(over-approximation) and a least one stopped (under-approximation).",
        ),
        click.option(
            "--no-restrict",
            is_flag=True,
            help="[symbolic] Do not restrict fixpoints to the over-approximated reachable states.",
        ),
        click.option(
            "--max-rounds",
            type=click.IntRange(1),
            default=10,
            show_default=True,
            metavar="N",
            help="[symbolic] Refinement rounds of --refine before giving up (unknown).",
        ),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def build(args: CheckArgs) -> SymbolicOptions:
    """The engine's options (``--predicate`` is already in the model's predicates)."""
    return SymbolicOptions(
        widen_delay=args.widen_delay,
        eg_bound=args.eg_bound,
        restrict=not args.no_restrict,
        refine=args.refine,
        max_rounds=args.max_rounds,
    )


METHOD = MethodCli(
    "symbolic",
    frozenset(
        {"predicates", "widen_delay", "eg_bound", "no_restrict", "refine", "max_rounds", "table"}
    ),
    build,
)
