"""The portfolio's registry entry, its options and its one error (a module of its own: the CLI
and the registry read them without loading the members' machinery)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from absmc.engines.engine import Capabilities, Engine
from absmc.ir.system import System
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import Result

if TYPE_CHECKING:
    from absmc.kernel.run.result import PropertyResult

__all__ = ["METHOD", "Disagreement", "PortfolioOptions", "portfolio_engine"]

METHOD = "auto"


@dataclass(frozen=True)
class PortfolioOptions:
    """``members``: (engine name, options) pairs built from the user's arguments (an engine
    not listed runs with its defaults, or as its ``Engine.portfolio`` adapts them);
    ``workers``: how many member processes run at once (``None``: ``os.cpu_count()``; with
    fewer than there are members they start cheap first and share the time in slices,
    :mod:`absmc.engines.portfolio.slices`)."""

    members: tuple[tuple[str, object], ...] = ()
    workers: int | None = None


class Disagreement(Exception):
    """Two engines gave contradicting accepted answers for ``property``: ``holds`` (a proof)
    and ``violated`` (a trace replayed on the concrete semantics). An internal error."""

    def __init__(self, prop: str, holds: PropertyResult, violated: PropertyResult) -> None:
        self.property = prop
        self.holds = holds
        self.violated = violated
        n = len(violated.trace.steps) - 1 if violated.trace is not None else 0
        super().__init__(
            f"engines disagree on '{prop}': {holds.method} proves it holds ({holds.reason}), "
            f"{violated.method} has a replayed {n}-step counterexample ({violated.reason})"
        )


def portfolio_engine(members: Sequence[Engine[object]]) -> Engine[PortfolioOptions]:
    """The registry entry of ``--method auto`` over ``members`` (capabilities: their union)."""
    caps = [m.capabilities for m in members]

    def union(attr: str) -> frozenset[str]:
        return frozenset().union(*(getattr(c, attr) for c in caps))

    def check(system: System, options: CheckOptions, own: PortfolioOptions) -> Result:
        from absmc.engines.portfolio.check import check_portfolio

        return check_portfolio(system, options, own, members)

    return Engine(
        name=METHOD,
        options_type=PortfolioOptions,
        capabilities=Capabilities(
            property_kinds=union("property_kinds"),
            features=union("features"),
            stores=union("stores"),
            proves=any(c.proves for c in caps),
            refutes=any(c.refutes for c in caps),
            initial_sets=True,  # each member gets init: sets as the registry gives them
        ),
        description="a portfolio: every engine that can answer, in parallel processes; the "
        "first proof or replayed counterexample decides each property",
        check=check,
    )
