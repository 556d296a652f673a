"""The syntax of abstraction names and ``VAR=DOMAIN`` bindings (``--abstract``, ``--show``).

Only syntax: a :class:`DomainSpec` says what was written (``signs``, ``range(0,1)``, a BASL
abstraction's name); :func:`absmc.engines.typeabs.domains.resolve_domain` turns it into a
domain (paper 001, §4.2) and reports unknown names and bad parameters.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from absmc.errors import OptionError, UsageError

_CALL = re.compile(r"^\s*([A-Za-z_]+)\s*(?:\(\s*(.*?)\s*\))?\s*$")


class DomainError(UsageError, ValueError):
    """A domain specification that names no domain or has bad parameters (a usage error)."""


@dataclass(frozen=True)
class DomainSpec:
    """A written abstraction: ``text`` as written (stripped; a BASL abstraction is looked up by
    it), ``name`` the lower-cased library form's name (``None`` when ``text`` is not of the
    form ``name`` or ``name(args)``), ``params`` its integer arguments (``None``: no
    parentheses)."""

    text: str
    name: str | None = None
    params: tuple[int, ...] | None = None

    def __str__(self) -> str:
        return self.text


#: a binding of a variable to a written abstraction
Binding = tuple[str, DomainSpec]


def parse_domain_spec(text: str) -> DomainSpec:
    """``text`` (``signs``, ``range(0, 1)``, ``set(3,5)``, ``modulo(2)``, ``point``, a BASL
    name) as a :class:`DomainSpec`. Raises :class:`DomainError` for a non-integer argument."""
    s = text.strip()
    m = _CALL.match(s)
    if m is None:
        return DomainSpec(s)
    args = m.group(2)
    params = _ints(args, s) if args is not None else None
    return DomainSpec(s, m.group(1).lower(), params)


def _ints(args: str, spec: str) -> tuple[int, ...]:
    if not args:
        return ()
    out = []
    for a in args.split(","):
        a = a.strip()
        try:
            out.append(int(a))
        except ValueError:
            raise DomainError(f"'{spec}': '{a}' is not an integer") from None
    return tuple(out)


def parse_bindings(items: Iterable[str]) -> tuple[Binding, ...]:
    """Split ``VAR=DOMAIN`` items into (variable, spec) pairs in order. Raises
    :class:`~absmc.errors.OptionError` (option ``"bindings"``) for a malformed item or a
    non-integer argument; a variable bound twice is left to the engine."""
    out: list[Binding] = []
    for item in items:
        name, sep, spec = item.partition("=")
        if not sep or not name.strip() or not spec.strip():
            raise OptionError(f"{item}: expected VAR=DOMAIN (e.g. x=signs)", "bindings")
        try:
            out.append((name.strip(), parse_domain_spec(spec)))
        except DomainError as err:
            raise OptionError(f"{item}: {err}", "bindings") from None
    return tuple(out)
