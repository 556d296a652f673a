"""``--method fourvalued``: predicates come from ``--predicate`` (added to the model's seed
predicates before the check, :func:`absmc.cli.common.add_predicates`)."""

from __future__ import annotations

from absmc.cli.methods.base import MethodCli
from absmc.engines.fourvalued import FourValuedOptions

METHOD = MethodCli("fourvalued", frozenset({"predicates"}), lambda _args: FourValuedOptions())
