"""``--method explicit``: no options of its own."""

from __future__ import annotations

from absmc.cli.methods.base import MethodCli
from absmc.engines.explicit import ExplicitOptions

METHOD = MethodCli("explicit", frozenset(), lambda _args: ExplicitOptions())
