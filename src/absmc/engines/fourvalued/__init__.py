"""Four-valued (Belnap bilattice) over- and under-abstraction: Bonsai (paper 004).

* :mod:`.bilattice` — FOUR: truth and information orders, join-irreducible elements, §2.4;
* :mod:`.partition` — partial abstraction and taint analysis (§3.2–3.3);
* :mod:`.effect` — one SMT enumeration per command, shared by both abstractions (§3.4);
* :mod:`.build` — the may and must Systems (one per join-irreducible element);
* :mod:`.check` — the two classical searches and the combined verdict t / f / ⊥;
* :mod:`.ltl` — LTL: accepting lassos on the may and must Systems, concretized and replayed;
* :mod:`.refine` — predicates without the user: refinement from unconfirmed may-traces;
* :mod:`.export` — the abstract Systems as Promela (if-statements and assignments only).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from absmc.engines.engine import DEFAULT_PROPERTY_KINDS, Capabilities, Engine, lazy_exports
from absmc.ir.expr import Expr
from absmc.ir.system import System
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import Result

if TYPE_CHECKING:
    from absmc.engines.fourvalued.bilattice import Belnap
    from absmc.engines.fourvalued.build import FourValuedAbstraction, build_abstraction
    from absmc.engines.fourvalued.check import check_fourvalued

__all__ = [
    "ENGINE",
    "Belnap",
    "FourValuedAbstraction",
    "FourValuedOptions",
    "build_abstraction",
    "check_fourvalued",
]

_PKG = "absmc.engines.fourvalued"
__getattr__ = lazy_exports(
    __name__,
    {
        "Belnap": f"{_PKG}.bilattice",
        "FourValuedAbstraction": f"{_PKG}.build",
        "build_abstraction": f"{_PKG}.build",
        "check_fourvalued": f"{_PKG}.check",
    },
)


@dataclass(frozen=True)
class FourValuedOptions:
    """The method's own options: ``predicates`` (``None``: the model's ``System.predicates``),
    ``shortcut`` (when nothing is abstracted, search the concrete System once), ``refine``
    (find predicates where a value is ⊥, :mod:`.refine`) for at most ``max_iterations``
    rounds."""

    predicates: tuple[Expr, ...] | None = None
    shortcut: bool = True
    refine: bool = False
    max_iterations: int = 50


def _check(system: System, options: CheckOptions, own: FourValuedOptions) -> Result:
    from absmc.engines.fourvalued.check import check_fourvalued
    from absmc.engines.fourvalued.refine import check_refining

    if own.refine:
        return check_refining(system, options, own.predicates, own.shortcut, own.max_iterations)
    return check_fourvalued(system, options, own.predicates, own.shortcut)


def _in_portfolio(options: FourValuedOptions) -> FourValuedOptions:
    """In a portfolio the method finds its own predicates (exact search is another member)."""
    return dataclasses.replace(options, refine=True)


#: the registry entry (:mod:`absmc.engines.registry`); both abstractions are searched with
#: the exact store; linear-time properties by the may/must lasso searches of :mod:`.ltl`
ENGINE = Engine(
    name="fourvalued",
    options_type=FourValuedOptions,
    capabilities=Capabilities(property_kinds=DEFAULT_PROPERTY_KINDS | {"ltl"}),
    description="Bonsai's may/must predicate abstraction, values t / f / ⊥ (paper 004)",
    check=_check,
    portfolio=_in_portfolio,
)
