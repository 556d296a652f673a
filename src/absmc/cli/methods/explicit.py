"""``--method explicit``: ``--backend python|native|auto``, ``--workers N`` and ``--ray
ADDRESS|auto`` (the hash-partitioned search, :mod:`absmc.engines.explicit.parallel`)."""

from __future__ import annotations

from absmc.cli.args import CheckArgs
from absmc.cli.methods.base import MethodCli, names
from absmc.engines.explicit import OPTIONS, ExplicitOptions


def build(args: CheckArgs) -> ExplicitOptions:
    """The engine's options."""
    backend = args.backend if args.backend in ("native", "auto") else "python"
    return ExplicitOptions(
        backend=backend,  # type: ignore[arg-type]
        workers=args.workers,
        ray=args.ray,
    )


METHOD = MethodCli("explicit", names(OPTIONS), build)
