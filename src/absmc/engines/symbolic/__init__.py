"""Symbolic CTL model checking of unbounded-integer systems with fixpoint approximations
(Yavuz, *Partial Predicate Abstraction and Counter-Example Guided Refinement* — paper 002).

Modules, one concern each:

- :mod:`~absmc.engines.symbolic.encode` — states and commands as Presburger sets and relations
  (islpy), exact post and pre;
- :mod:`~absmc.engines.symbolic.composite` and :mod:`~absmc.engines.symbolic.composite_bdd` —
  the composite sets (one isl set per control valuation; or ALV's BDD of the control valuations
  beside a polyhedron over the integers, ``--composite bdd``);
- :mod:`~absmc.engines.symbolic.widen` — H79 standard widening per control location;
- :mod:`~absmc.engines.symbolic.fixpoint` — reachability and CTL fixpoints, over- and
  under-approximated by polarity (§2), restricted to the over-approximated reachable states;
- :mod:`~absmc.engines.symbolic.check` — verdicts and concrete witnesses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from absmc.engines.engine import Capabilities, Engine, lazy_exports
from absmc.engines.symbolic.options import SymbolicOptions
from absmc.ir.system import System
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import Result
from absmc.option import Option

if TYPE_CHECKING:
    from absmc.engines.symbolic.check import check_symbolic

__all__ = ["ENGINE", "SymbolicOptions", "check_symbolic"]

__getattr__ = lazy_exports(__name__, {"check_symbolic": "absmc.engines.symbolic.check"})


def _check(system: System, options: CheckOptions, own: SymbolicOptions) -> Result:
    from absmc.engines.symbolic.check import check_symbolic

    return check_symbolic(system, options, own)


_GROUP = "--method symbolic"
_DEFAULT = SymbolicOptions()

#: the method's own command-line options (built by :mod:`absmc.cli.methods.symbolic`)
OPTIONS = (
    Option(
        "widen_delay",
        ("--widen-delay",),
        "[symbolic] Exact iterations of a least fixpoint before widening.",
        default=_DEFAULT.widen_delay,
        kind="int",
        min=0,
        metavar="K",
        show_default=True,
        group=_GROUP,
    ),
    Option(
        "eg_bound",
        ("--eg-bound",),
        "[symbolic] Iterations after which a greatest fixpoint is truncated "
        "(over-approximation) and a least one stopped (under-approximation).",
        default=_DEFAULT.eg_bound,
        kind="int",
        min=1,
        metavar="K",
        show_default=True,
        group=_GROUP,
    ),
    Option(
        "no_restrict",
        ("--no-restrict",),
        "[symbolic] Do not restrict fixpoints to the over-approximated reachable states.",
        kind="flag",
        group=_GROUP,
    ),
    Option(
        "max_rounds",
        ("--max-rounds",),
        "[symbolic] Refinement rounds of --refine before giving up (unknown).",
        default=_DEFAULT.max_rounds,
        kind="int",
        min=1,
        metavar="N",
        show_default=True,
        group=_GROUP,
    ),
    Option(
        "composite",
        ("--composite",),
        "[symbolic] Representation of the sets: one isl set per control valuation (split) "
        "or BDDs of the control valuations beside polyhedra over the integers (bdd, ALV's "
        "composite representation). CEGAAR's rounds (--refine) always use split.",
        default=_DEFAULT.composite,
        kind="choice",
        choices=("split", "bdd"),
        show_default=True,
        group=_GROUP,
    ),
)

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
    check=_check,
    options=OPTIONS,
)
