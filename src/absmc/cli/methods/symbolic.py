"""``--method symbolic`` (paper 002): ``--widen-delay K``, ``--eg-bound K``, ``--no-restrict``,
``--max-rounds N``, ``--composite split|bdd``, and ``--predicate``/``--table``/``--refine``
shared with other methods."""

from __future__ import annotations

from absmc.cli.args import CheckArgs
from absmc.cli.methods.base import MethodCli, names
from absmc.engines.symbolic import OPTIONS, SymbolicOptions


def build(args: CheckArgs) -> SymbolicOptions:
    """The engine's options (``--predicate`` is already in the model's predicates)."""
    return SymbolicOptions(
        widen_delay=args.widen_delay,
        eg_bound=args.eg_bound,
        restrict=not args.no_restrict,
        refine=args.refine,
        max_rounds=args.max_rounds,
        composite=str(args.value("composite")),
    )


METHOD = MethodCli("symbolic", names(OPTIONS) | {"predicates", "refine", "table"}, build)
