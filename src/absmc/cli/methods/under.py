"""``--method under`` (paper 000): ``--seed-predicates``, ``--max-iterations``, ``--prover``,
``--concrete-after``, ``--local-predicates``, ``--table`` and ``--store range``."""

from __future__ import annotations

from typing import Literal, cast

from absmc.cli.args import CheckArgs
from absmc.cli.methods.base import MethodCli, names
from absmc.engines.under import OPTIONS, UnderOptions
from absmc.engines.under.options import SeedKind
from absmc.errors import OptionError


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
    names(OPTIONS) | {"predicates", "max_iterations", "table"},
    build,
    stores=frozenset({"range"}),
)
