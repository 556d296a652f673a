"""The shape of a method's command-line side (one :class:`MethodCli` per engine module)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from absmc.cli.args import CheckArgs
from absmc.option import Option


@dataclass(frozen=True)
class MethodCli:
    """How the CLI serves one engine: ``params`` are the method-specific :class:`CheckArgs`
    fields it reads, ``stores`` the ``--store`` values beyond ``exact``/``bitstate`` it
    translates into its own options, ``build`` makes the engine's options (raising
    ``UsageError``/``OptionError``, ``ModelError`` or ``OSError``)."""

    engine: str
    params: frozenset[str]
    build: Callable[[CheckArgs], object]
    stores: frozenset[str] = frozenset()


def names(options: Iterable[Option]) -> frozenset[str]:
    """The parameter names of ``options`` (a method's :attr:`MethodCli.params`)."""
    return frozenset(o.name for o in options)
