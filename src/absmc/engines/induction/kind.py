"""``--method kind``: k-induction and bounded model checking (:mod:`absmc.logic.kinduction`)
with Houdini's strengthening (:mod:`~absmc.engines.induction.facts`), under the verdict rules
of :mod:`~absmc.engines.induction.check`."""

from __future__ import annotations

import z3

from absmc.engines.induction.check import Budget, check_induction
from absmc.engines.induction.facts import strengthening_facts
from absmc.engines.induction.options import KindOptions
from absmc.ir.system import System
from absmc.kernel.options import CheckOptions
from absmc.kernel.result import Result
from absmc.logic.chc import Answer
from absmc.logic.kinduction import k_induction
from absmc.logic.transition import BadCondition, TransitionSystem

__all__ = ["check_kind"]


def check_kind(system: System, options: CheckOptions, own: KindOptions) -> Result:
    """``--method kind`` (see the module doc). Raises ``CertificateError`` (internal) when an
    invariant fails its check."""
    strengthening: dict[int, z3.ExprRef] = {}

    def solve(ts: TransitionSystem, cond: BadCondition, budget: Budget) -> Answer:
        key = id(ts)
        if key not in strengthening:
            facts = strengthening_facts(system, ts, budget) if own.strengthen else []
            strengthening[key] = z3.And(*[ts.term(e) for e in facts], z3.BoolVal(True, ts.ctx))
        depth = budget.max_depth if budget.max_depth is not None else own.max_k
        return k_induction(ts, cond, strengthening[key], depth, budget.deadline)

    return check_induction(system, options, "kind", solve)
