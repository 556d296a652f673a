"""``--method component`` (chosen for a ``.py`` program; paper 003): ``--entry FUNC [ARGS]...``,
``--component NAME[,NAME...]``, ``--granularity``, ``--emit-tests``, ``--predicate`` and the
stores ``range`` (PA+NTP) and ``predicates`` (PA+TP, refined with the prover)."""

from __future__ import annotations

import ast
from typing import Any

from absmc.cli.args import CheckArgs, flag_of
from absmc.cli.methods.base import MethodCli, names
from absmc.component.options import OPTIONS
from absmc.engines.component import ProgramOptions
from absmc.errors import UsageError


def parse_arg(text: str) -> Any:
    """An entry argument: a Python literal (``3``, ``[1, 2]``, ``'a'``), else the string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def build(args: CheckArgs) -> ProgramOptions:
    """The program's options: the entry's arguments parsed as Python literals, the abstraction
    named by ``--store range``/``--store predicates`` (or ``predicates`` when ``--predicate``
    is given with another store). Raises ``UsageError`` for ``-D`` (a model's preprocessor)."""
    if not args.is_default("defines"):
        raise UsageError(f"{flag_of('defines')} applies to models, not to Python programs")
    abstraction = {"range": "range", "predicates": "prover"}.get(args.store, "none")
    predicates = tuple(p for p in args.predicates if p != "guards")
    if args.predicates and abstraction == "none":
        abstraction = "predicates"
    return ProgramOptions(
        entry=args.entry,
        component=args.component,
        args=tuple(parse_arg(a) for a in args.entry_args),
        granularity=args.granularity,
        emit_tests=args.emit_tests,
        abstraction=abstraction,
        predicates=predicates,
    )


METHOD = MethodCli(
    "component",
    names(OPTIONS) | {"entry_args", "predicates"},
    build,
    stores=frozenset({"range", "predicates"}),
)
