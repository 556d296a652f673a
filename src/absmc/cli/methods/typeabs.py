"""``--method types`` (paper 001): ``--abstract VAR=DOMAIN``, ``--rest``, ``--basl FILE``, also
taken by ``absmc export --method types`` and ``absmc abstract``. The bindings and BASL files are
parsed here (:mod:`absmc.lang.domains`, :mod:`absmc.lang.basl`); the engine gets the results."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from absmc.cli.common import read_basl
from absmc.cli.methods.base import MethodCli
from absmc.engines.typeabs import TypesOptions
from absmc.lang.domains import parse_bindings

F = TypeVar("F", bound=Callable[..., Any])


def options(f: F) -> F:
    """Add ``--abstract VAR=DOMAIN`` (repeatable), ``--rest concrete|point`` and ``--basl FILE``
    (repeatable) to a command."""
    f = click.option(
        "--basl",
        "basl",
        multiple=True,
        type=click.Path(dir_okay=False),
        metavar="FILE",
        help="BASL file defining abstractions usable in --abstract (repeatable).",
    )(f)
    f = click.option(
        "--rest",
        type=click.Choice(["concrete", "point"]),
        default="concrete",
        show_default=True,
        help="--method types: integer variables type inference does not reach stay concrete "
        "or become point.",
    )(f)
    f = click.option(
        "--abstract",
        "abstract",
        multiple=True,
        metavar="VAR=DOMAIN",
        help="--method types: abstract VAR with DOMAIN: signs, range(l,u), set(v,...), "
        "modulo(k), point or a BASL abstraction (repeatable).",
    )(f)
    return f


def types_options(abstract: tuple[str, ...], rest: str, basl: tuple[str, ...]) -> TypesOptions:
    """The engine's options: bindings parsed, BASL files read and parsed. Raises
    ``OptionError`` (malformed binding), ``ModelError`` (BASL syntax) and ``OSError``."""
    return TypesOptions(
        parse_bindings(abstract), "point" if rest == "point" else "concrete", read_basl(basl)
    )


METHOD = MethodCli(
    "types",
    frozenset({"abstract", "rest", "basl"}),
    lambda args: types_options(args.abstract, args.rest, args.basl),
)
