"""The options of ``--method under`` (a module of its own: the CLI and the registry read them
without loading the method)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from absmc.ir.expr import Expr

__all__ = ["SeedKind", "UnderOptions"]

SeedKind = Literal["guards", "property"]


@dataclass(frozen=True)
class UnderOptions:
    """Options of the under-approximation method.

    * ``predicates``: seed predicates Φ₁ besides the model's ``predicate`` declarations;
    * ``seed_predicates``: also seed with the atoms of all guards and/or of the properties
      (Section 6);
    * ``max_iterations``: give up (``unknown``) after this many αSEARCH iterations;
    * ``prover``: ``"z3"`` (exactness checks) or ``"none"`` (lightweight refinement, Section 6);
    * ``store``: ``"abstract"`` (predicate abstraction) or ``"range"`` (Kudra & Mercer's min/max
      refinement, no prover);
    * ``concrete_after``: the Section 5 heuristic — a command whose exactness fails in this many
      consecutive iterations gets predicates ``x == v`` describing its concrete source states;
    * ``local_predicates``: attach new predicates to the program-counter value of the
      transition that produced them (Section 6);
    * ``prover_timeout_ms``: per query (an answer ``unknown`` counts as not valid).
    """

    predicates: tuple[Expr, ...] = ()
    seed_predicates: frozenset[SeedKind] = frozenset()
    max_iterations: int = 50
    prover: Literal["z3", "none"] = "z3"
    store: Literal["abstract", "range"] = "abstract"
    concrete_after: int | None = None
    local_predicates: bool = False
    prover_timeout_ms: int = 10_000
