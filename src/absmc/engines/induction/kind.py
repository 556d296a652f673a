"""``--method kind``: k-induction and bounded model checking (:mod:`absmc.logic.kinduction`)
with Houdini's strengthening (:mod:`~absmc.engines.induction.facts`), under the verdict rules
of :mod:`~absmc.engines.induction.check`."""

from __future__ import annotations

import z3

from absmc.engines.induction.check import Budget, check_induction
from absmc.engines.induction.facts import Strengthening, reachable_proof, strengthening
from absmc.engines.induction.options import KindOptions
from absmc.ir.expr import Expr
from absmc.ir.system import System
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import Result
from absmc.logic.chc import Answer
from absmc.logic.kinduction import k_induction
from absmc.logic.transition import BadCondition, TransitionSystem

__all__ = ["check_kind"]


def check_kind(system: System, options: CheckOptions, own: KindOptions) -> Result:
    """``--method kind`` (see the module doc). Raises ``CertificateError`` (internal) when an
    invariant fails its check."""
    found: dict[int, tuple[z3.ExprRef, Expr | None]] = {}

    def solve(ts: TransitionSystem, cond: BadCondition, budget: Budget) -> Answer:
        key = id(ts)
        if key not in found:
            got = strengthening(system, ts, budget) if own.strengthen else Strengthening([], None)
            facts = z3.And(*[ts.term(e) for e in got.facts], z3.BoolVal(True, ts.ctx))
            found[key] = (facts, got.reachable)
        facts, reachable = found[key]
        if reachable is not None:
            proof = reachable_proof(ts, reachable, cond, budget)
            if proof is not None:
                return proof
        depth = budget.max_depth if budget.max_depth is not None else own.max_k
        return k_induction(ts, cond, facts, depth, budget.deadline)

    return check_induction(system, options, "kind", solve)
