"""Explicit-state model checking (the SPIN-style baseline every abstraction is checked against).

:func:`check_explicit` compiles the System, runs the kernel's search (BFS or DFS; exact,
bitstate or hash-compact store) and turns what it found into a
:class:`~absmc.kernel.result.Result` whose counterexamples were replayed on the compiled
semantics.
"""

from __future__ import annotations

from dataclasses import dataclass

from absmc.engines.engine import PROPERTY_KINDS, Capabilities, Engine
from absmc.engines.explicit.check import check_explicit, make_store
from absmc.ir.system import System
from absmc.kernel.options import CheckOptions
from absmc.kernel.result import Result

__all__ = ["ENGINE", "ExplicitOptions", "check_explicit", "make_store"]


@dataclass(frozen=True)
class ExplicitOptions:
    """Explicit search has no options of its own (order, store and limits are shared:
    :class:`~absmc.kernel.options.CheckOptions`)."""


def _check(system: System, options: CheckOptions, _own: ExplicitOptions) -> Result:
    return check_explicit(system, options)


#: the registry entry (:mod:`absmc.engines.registry`)
ENGINE = Engine(
    name="explicit",
    options_type=ExplicitOptions,
    capabilities=Capabilities(
        property_kinds=PROPERTY_KINDS, stores=frozenset({"exact", "bitstate", "hash-compact"})
    ),
    description="exhaustive explicit-state search (exact, bitstate or hash-compact store)",
    check=_check,
)
