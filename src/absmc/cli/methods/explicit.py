"""``--method explicit``: ``--backend python|native|auto``."""

from __future__ import annotations

from absmc.cli.methods.base import MethodCli
from absmc.engines.explicit import ExplicitOptions

METHOD = MethodCli(
    "explicit",
    frozenset({"backend"}),
    lambda args: ExplicitOptions(
        backend="native"
        if args.backend == "native"
        else "auto"
        if args.backend == "auto"
        else "python"
    ),
)
