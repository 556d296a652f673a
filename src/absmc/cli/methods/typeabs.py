"""``--method types`` (paper 001): ``--abstract VAR=DOMAIN``, ``--rest``, ``--basl FILE``, also
taken by ``absmc export --method types`` and ``absmc abstract``. The bindings and BASL files are
parsed here (:mod:`absmc.lang.domains`, :mod:`absmc.lang.basl`); the engine gets the results."""

from __future__ import annotations

from absmc.cli.common import add_options, read_basl
from absmc.cli.methods.base import MethodCli, names
from absmc.engines.typeabs import OPTIONS, TypesOptions
from absmc.lang.domains import parse_bindings

#: ``--abstract VAR=DOMAIN`` (repeatable), ``--rest concrete|point`` and ``--basl FILE``
#: (repeatable), as a decorator of a command (``absmc export``, ``absmc abstract``)
options = add_options(OPTIONS)


def types_options(abstract: tuple[str, ...], rest: str, basl: tuple[str, ...]) -> TypesOptions:
    """The engine's options: bindings parsed, BASL files read and parsed. Raises
    ``OptionError`` (malformed binding), ``ModelError`` (BASL syntax) and ``OSError``."""
    return TypesOptions(
        parse_bindings(abstract), "point" if rest == "point" else "concrete", read_basl(basl)
    )


METHOD = MethodCli(
    "types",
    names(OPTIONS),
    lambda args: types_options(args.abstract, args.rest, args.basl),
)
