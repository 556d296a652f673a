"""``--method fourvalued``: predicates come from ``--predicate`` (added to the model's seed
predicates before the check, :func:`absmc.cli.common.add_predicates`); ``--refine`` finds more
where a value is ⊥, for at most ``--max-iterations`` rounds."""

from __future__ import annotations

from absmc.cli.args import CheckArgs
from absmc.cli.methods.base import MethodCli
from absmc.engines.fourvalued import FourValuedOptions


def build(args: CheckArgs) -> FourValuedOptions:
    """The engine's options: ``--refine`` and ``--max-iterations``."""
    return FourValuedOptions(refine=args.refine, max_iterations=args.max_iterations)


METHOD = MethodCli(
    "fourvalued", frozenset({"predicates", "refine", "max_iterations", "table"}), build
)
