"""``--method under`` (paper 000): ``--seed-predicates``, ``--max-iterations``, ``--prover``,
``--concrete-after``, ``--local-predicates``, ``--table`` and ``--store range``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar, cast

import click

from absmc.cli.args import CheckArgs
from absmc.cli.methods.base import MethodCli
from absmc.engines.under import UnderOptions
from absmc.engines.under.options import SeedKind
from absmc.errors import OptionError

F = TypeVar("F", bound=Callable[..., Any])


def options(f: F) -> F:
    """Add the method's click options to a command."""
    opts = [
        click.option(
            "--seed-predicates",
            default="",
            metavar="guards,property",
            help="[under] Also seed with the atoms of all guards and/or of the properties.",
        ),
        click.option(
            "--max-iterations",
            type=click.IntRange(1),
            default=50,
            show_default=True,
            help="[under, fourvalued --refine] Refinement iterations before giving up (unknown).",
        ),
        click.option(
            "--prover",
            type=click.Choice(["z3", "none"]),
            default="z3",
            show_default=True,
            help="[under] z3: exactness checks; none: lightweight syntactic refinement.",
        ),
        click.option(
            "--concrete-after",
            type=click.IntRange(1),
            default=None,
            metavar="K",
            help="[under] Add concrete-state predicates for a command inexact K iterations in a "
            "row (makes refinement terminate on finite systems).",
        ),
        click.option(
            "--local-predicates",
            is_flag=True,
            help="[under] Attach new predicates to the program counter that produced them.",
        ),
        click.option(
            "--table",
            is_flag=True,
            help="[under, fourvalued, symbolic] Print the per-iteration (per-round) table.",
        ),
        click.option(
            "--refine",
            is_flag=True,
            help="[fourvalued] Find predicates where a value is ⊥: from the first step of the "
            "unconfirmed may-trace without a concrete run (weakest preconditions). [symbolic] "
            "CEGAAR: refine predicates (abstraction) or widening delay and EG bound "
            "(approximation) until conclusive.",
        ),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def build(args: CheckArgs) -> UnderOptions:
    """The engine's options (seed predicates from ``--predicate`` are already in the model's
    predicates). Raises ``OptionError`` for bad ``--seed-predicates``."""
    seeds = {s.strip() for s in args.seed_predicates.split(",") if s.strip()}
    if not seeds <= {"guards", "property"}:
        raise OptionError(
            f"takes guards and/or property, not {args.seed_predicates!r}", "seed_predicates"
        )
    store: Literal["abstract", "range"] = "range" if args.store == "range" else "abstract"
    return UnderOptions(
        seed_predicates=frozenset(cast(set[SeedKind], seeds)),
        max_iterations=args.max_iterations,
        prover="none" if args.prover == "none" else "z3",
        store=store,
        concrete_after=args.concrete_after,
        local_predicates=args.local_predicates,
    )


METHOD = MethodCli(
    "under",
    frozenset(
        {
            "predicates",
            "seed_predicates",
            "max_iterations",
            "prover",
            "concrete_after",
            "local_predicates",
            "table",
        }
    ),
    build,
    stores=frozenset({"range"}),
)
