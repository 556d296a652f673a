"""Concrete model checking with abstract matching and refinement (paper 000).

Păsăreanu, Pelánek, Visser: *Concrete Model Checking with Abstract Matching and Refinement*
(CAV 2005). :func:`check_under` runs REFINEMENTSEARCH (Fig. 3): αSEARCH (Fig. 2) with
predicate set Φ_i; a violation is a real error (its trace is replayed on the concrete
semantics); ``Φ_{i+1} = Φ_i`` means the abstraction is *exact*: the explored structure is
bisimilar to the concrete system (Theorem 2) and the properties hold. Options add the
paper's variants: seed predicates (Section 6), the concrete-state heuristic for termination
(Section 5, Corollary 1), transition-dependent predicates (Section 6), the prover-free
lightweight refinement (Section 6) and Kudra & Mercer's min/max range store (thesis 003, §2.2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from absmc.engines.engine import FEATURES, Capabilities, Engine, lazy_exports
from absmc.engines.under.options import UnderOptions
from absmc.ir.system import System
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import Result
from absmc.option import Option

if TYPE_CHECKING:
    from absmc.engines.under.refinement import check_under

__all__ = ["ENGINE", "UnderOptions", "check_under"]

__getattr__ = lazy_exports(__name__, {"check_under": "absmc.engines.under.refinement"})


def _check(system: System, options: CheckOptions, own: UnderOptions) -> Result:
    from absmc.engines.under.refinement import check_under

    return check_under(system, options, own)


_GROUP = "--method under"

#: the method's own command-line options (built by :mod:`absmc.cli.methods.under`; it also
#: reads ``--predicate``, ``--max-iterations``, ``--table`` and ``--store range``)
OPTIONS = (
    Option(
        "seed_predicates",
        ("--seed-predicates",),
        "[under] Also seed with the atoms of all guards and/or of the properties.",
        default="",
        metavar="guards,property",
        group=_GROUP,
    ),
    Option(
        "prover",
        ("--prover",),
        "[under] z3: exactness checks; none: lightweight syntactic refinement.",
        default=UnderOptions.prover,
        kind="choice",
        choices=("z3", "none"),
        show_default=True,
        group=_GROUP,
    ),
    Option(
        "concrete_after",
        ("--concrete-after",),
        "[under] Add concrete-state predicates for a command inexact K iterations in a "
        "row (makes refinement terminate on finite systems).",
        kind="int",
        min=1,
        metavar="K",
        group=_GROUP,
    ),
    Option(
        "local_predicates",
        ("--local-predicates",),
        "[under] Attach new predicates to the program counter that produced them.",
        kind="flag",
        group=_GROUP,
    ),
)

#: the registry entry (:mod:`absmc.engines.registry`); αSEARCH does not model exclusive
#: control or timeout
ENGINE = Engine(
    name="under",
    options_type=UnderOptions,
    capabilities=Capabilities(features=frozenset(FEATURES) - {"exclusive", "timeout"}),
    description="concrete search with abstract matching and refinement (Pasareanu et al., "
    "CAV 2005)",
    check=_check,
    options=OPTIONS,
)
