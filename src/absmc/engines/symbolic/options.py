"""The options of ``--method symbolic`` (a module of its own: the CLI and the registry read them
without loading islpy)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SymbolicOptions"]


@dataclass(frozen=True)
class SymbolicOptions:
    """Options of ``--method symbolic``: ``widen_delay`` exact iterations before widening,
    ``eg_bound`` iterations after which a greatest fixpoint is truncated (and a least one
    under-approximated), ``restrict`` every fixpoint to the over-approximated reachable
    states, ``witness_budget`` concrete states a witness search may visit; ``refine`` runs
    CEGAAR for at most ``max_rounds`` rounds; ``composite`` is the representation of the sets
    without ``--refine``: ``split`` (one isl set per control valuation,
    :mod:`~absmc.engines.symbolic.composite`) or ``bdd`` (BDDs of the control valuations
    beside polyhedra, :mod:`~absmc.engines.symbolic.composite_bdd`)."""

    widen_delay: int = 2
    eg_bound: int = 20
    restrict: bool = True
    witness_budget: int = 5_000
    refine: bool = False
    max_rounds: int = 10
    composite: str = "split"
