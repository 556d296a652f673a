"""What an engine is to the rest of absmc: a descriptor with a name, a frozen options type,
its capabilities and its ``check`` function (the registry, :mod:`absmc.engines.registry`, lists
them and refuses capability mismatches in one place).

Each engine package defines ``ENGINE = Engine(...)`` in its ``__init__``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar

from absmc.ir.expr import Op, subexpressions
from absmc.ir.system import System
from absmc.kernel.options import CheckOptions
from absmc.kernel.result import Result

#: the safety property kinds (``kernel.options.property_kind``)
SAFETY_KINDS: Final = frozenset({"invariant", "unreachable", "assert", "deadlock", "model-error"})
#: every property kind: the safety kinds and ``ltl`` (``ltl`` blocks and never claims)
PROPERTY_KINDS: Final = SAFETY_KINDS | {"ltl"}

#: model features beyond plain guarded commands (Promela's, see ``ir.Command``), with the
#: description used in messages
FEATURES: Final = {
    "exclusive": "atomic sequences (exclusive control)",
    "timeout": "timeout",
    "asserts": "assertions on transitions",
    "errors": "model-error conditions on commands (e.g. array bounds)",
    "bitwise": "bitwise operators",
    "valid-end": "valid end states",
}

#: the stores of ``CheckOptions.store``
STORES: Final = frozenset({"exact", "bitstate", "hash-compact"})

_BITWISE: Final = frozenset({"&", "|", "^", "<<", ">>", "~"})

OptionsT = TypeVar("OptionsT")


@dataclass(frozen=True)
class Capabilities:
    """What an engine can do: the ``property_kinds`` it checks (subset of
    :data:`PROPERTY_KINDS`; default the safety kinds), the model ``features`` it supports
    (subset of :data:`FEATURES`), the ``stores`` it searches with (subset of :data:`STORES`),
    and whether it can ``prove`` (answer ``holds``) and ``refute`` (answer ``violated`` with a
    replayed trace)."""

    property_kinds: frozenset[str] = SAFETY_KINDS
    features: frozenset[str] = frozenset(FEATURES)
    stores: frozenset[str] = frozenset({"exact"})
    proves: bool = True
    refutes: bool = True


@dataclass(frozen=True)
class Engine(Generic[OptionsT]):
    """One checking method. ``options_type`` is its frozen options dataclass (every field has a
    default, so ``options_type()`` is the default options); ``check(system, options,
    engine_options)`` returns the :class:`~absmc.kernel.result.Result` (``options`` are the
    options shared by every method). ``description`` is one line for ``--help``."""

    name: str
    options_type: type[OptionsT]
    capabilities: Capabilities
    description: str
    check: Callable[[System, CheckOptions, OptionsT], Result]
    #: how the engine takes part in a portfolio (``--method auto``): given the options built
    #: from the user's arguments, the options to run with, or a string saying why it sits out
    #: (e.g. "no variable bindings given"); ``None``: it takes part with the options as given
    portfolio: Callable[[OptionsT], OptionsT | str] | None = None

    def default_options(self) -> OptionsT:
        """The engine's default options."""
        return self.options_type()

    def for_portfolio(self, options: OptionsT) -> OptionsT | str:
        """The options this engine runs with in a portfolio, or why it sits out."""
        return options if self.portfolio is None else self.portfolio(options)


def system_features(system: System) -> frozenset[str]:
    """The :data:`FEATURES` that ``system`` uses."""
    out: set[str] = set()
    for c in system.commands:
        if c.exclusive is not None:
            out.add("exclusive")
        if "timeout" in c.flags:
            out.add("timeout")
        if c.asserts:
            out.add("asserts")
        if c.errors:
            out.add("errors")
    if system.valid_end is not None:
        out.add("valid-end")
    exprs = [c.guard for c in system.commands]
    exprs += [e for c in system.commands for _, e in c.updates]
    exprs += [e for c in system.commands for _, e in c.asserts]
    exprs += [e for c in system.commands for e, _ in c.errors]
    exprs += [p.expr for p in system.properties]
    if any(isinstance(x, Op) and x.op in _BITWISE for e in exprs for x in subexpressions(e)):
        out.add("bitwise")
    return frozenset(out)


AnyEngine = Engine[Any]
