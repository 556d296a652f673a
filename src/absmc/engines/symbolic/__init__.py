"""Symbolic CTL model checking of unbounded-integer systems with fixpoint approximations
(Yavuz, *Partial Predicate Abstraction and Counter-Example Guided Refinement* — paper 002).

Modules, one concern each:

- :mod:`~absmc.engines.symbolic.encode` — states and commands as Presburger sets and relations
  (islpy), exact post and pre;
- :mod:`~absmc.engines.symbolic.widen` — H79 standard widening per control location;
- :mod:`~absmc.engines.symbolic.fixpoint` — reachability and CTL fixpoints, over- and
  under-approximated by polarity (§2), restricted to the over-approximated reachable states;
- :mod:`~absmc.engines.symbolic.check` — verdicts and concrete witnesses.
"""

from absmc.engines.engine import Capabilities, Engine
from absmc.engines.symbolic.check import SymbolicOptions, check_symbolic

__all__ = ["ENGINE", "SymbolicOptions", "check_symbolic"]

#: the registry entry (:mod:`absmc.engines.registry`)
ENGINE = Engine(
    name="symbolic",
    options_type=SymbolicOptions,
    capabilities=Capabilities(
        property_kinds=frozenset({"invariant", "unreachable", "deadlock", "model-error", "ctl"}),
        features=frozenset({"valid-end"}),  # guarded commands, linear arithmetic
        initial_sets=True,
    ),
    description="symbolic CTL checking on Presburger sets (islpy) with widening, truncated "
    "fixpoints and concrete witnesses (Yavuz, paper 002)",
    check=check_symbolic,
)
