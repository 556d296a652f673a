"""Inductive invariants as certificates: Z3 formulas read back as IR expressions (printed in
the model's syntax), and their independent check.

A certificate for the safety property with error condition ``Bad`` is a state formula ``Inv``
with (Bradley, *SAT-Based Model Checking without Unrolling*, VMCAI 2011, §2):

1. ``Init ⇒ Inv`` (initiation),
2. ``Inv ∧ Dom ∧ T_c ⇒ Inv′`` for every command ``c`` (consecution),
3. ``Inv ∧ Dom ⇒ ¬Bad`` (safety),

``Dom`` the ranges of the finite variables. :func:`check_certificate` decides the three with a
fresh :class:`z3.Context` and a plain solver per obligation, from the System and the IR
expression alone (the formulas are rebuilt, nothing of the run that found ``Inv`` is reused).
A solver answer other than ``unsat`` never passes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import z3

from absmc.ir.expr import FALSE, TRUE, Expr, Var, conj, const, disj, neg, op
from absmc.ir.sorts import BOOL, BoolSort
from absmc.ir.system import System
from absmc.logic.interrupt import interruptible, watch
from absmc.logic.transition import BadCondition, TransitionSystem
from absmc.logic.z3conv import Z3Term

__all__ = ["CertificateCheck", "CertificateError", "check_certificate", "from_z3"]


class CertificateError(Exception):
    """An engine's certificate does not prove its property (an internal error: the engine
    claimed a proof it does not have)."""


@dataclass(frozen=True)
class CertificateCheck:
    """The outcome of :func:`check_certificate`: ``valid`` (all obligations proved), or the
    first obligation that failed (``failed``: a counter-model exists) or was not decided
    (``undecided``: the solver answered unknown), in words; ``time_s`` the check's wall time."""

    valid: bool
    failed: str | None = None
    undecided: str | None = None
    time_s: float = 0.0


def from_z3(f: Z3Term, variables: Mapping[str, Var]) -> Expr:
    """The IR expression of a quantifier-free linear Z3 formula over the state variables
    (``variables``: Z3 constant name -> IR variable). Euclidean ``mod``/``div`` by a positive
    constant become the IR's truncating operators in the Euclidean idiom. Raises
    ``ValueError`` for anything else (a quantifier, an unknown constant, another operator)."""
    memo: dict[int, Expr] = {}

    def go(t: Z3Term) -> Expr:
        key = t.get_id()
        got = memo.get(key)
        if got is None:
            got = memo[key] = _convert(t, go, variables)
        return got

    return go(f)


def _convert(t: Z3Term, rec: Callable[[Z3Term], Expr], variables: Mapping[str, Var]) -> Expr:
    if z3.is_true(t):
        return TRUE
    if z3.is_false(t):
        return FALSE
    if z3.is_int_value(t):
        return const(t.as_long())
    if z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
        name = t.decl().name()
        v = variables.get(name)
        if v is None:
            raise ValueError(f"unknown constant {name!r} in an invariant")
        return v
    if not z3.is_app(t):
        raise ValueError(f"cannot read {t.sexpr()[:60]!r} as an IR expression")
    k = t.decl().kind()
    args = [rec(a) for a in t.children()]
    if k == z3.Z3_OP_AND:
        return conj(args)
    if k == z3.Z3_OP_OR:
        return disj(args)
    if k == z3.Z3_OP_NOT:
        return neg(args[0])
    if k == z3.Z3_OP_IMPLIES:
        return op("=>", *args)
    if k == z3.Z3_OP_ITE:
        return op("ite", *args)
    if k == z3.Z3_OP_EQ:
        if t.arg(0).sort() == z3.BoolSort(t.ctx):
            a, b = args
            return disj([conj([a, b]), conj([neg(a), neg(b)])])
        return op("==", *args)
    if k == z3.Z3_OP_DISTINCT and len(args) == 2:
        if t.arg(0).sort() == z3.BoolSort(t.ctx):
            a, b = args
            return disj([conj([a, neg(b)]), conj([neg(a), b])])
        return op("!=", *args)
    simple = {
        z3.Z3_OP_LE: "<=",
        z3.Z3_OP_LT: "<",
        z3.Z3_OP_GE: ">=",
        z3.Z3_OP_GT: ">",
        z3.Z3_OP_SUB: "-",
    }
    if k in simple and len(args) == 2:
        return op(simple[k], *args)
    if k in (z3.Z3_OP_ADD, z3.Z3_OP_MUL, z3.Z3_OP_SUB) and args:
        spelling = {z3.Z3_OP_ADD: "+", z3.Z3_OP_MUL: "*", z3.Z3_OP_SUB: "-"}[k]
        out = args[0]
        for a in args[1:]:
            out = op(spelling, out, a)
        return out
    if k == z3.Z3_OP_UMINUS:
        return op("neg", args[0])
    if k in (z3.Z3_OP_MOD, z3.Z3_OP_IDIV) and z3.is_int_value(t.arg(1)):
        d = t.arg(1).as_long()
        if d > 0:
            residue = op("%", op("+", op("%", args[0], const(d)), const(d)), const(d))
            if k == z3.Z3_OP_MOD:
                return residue
            return op("/", op("-", args[0], residue), const(d))
    raise ValueError(f"cannot read operator {t.decl().name()!r} as an IR expression")


def state_variables(system: System) -> dict[str, Var]:
    """Z3 constant name -> IR variable, for :func:`from_z3` over ``system``'s state."""
    return {
        v.name: Var(v.name, BOOL if isinstance(v.sort, BoolSort) else v.sort)
        for v in system.variables
    }


@interruptible
def check_certificate(
    system: System, cond: BadCondition, invariant: Expr, timeout_s: float | None = None
) -> CertificateCheck:
    """Decide the three obligations of the module doc for ``invariant`` and the property
    ``cond`` of ``system`` in a fresh Z3 context (``timeout_s`` bounds each solver call).
    Raises ``ValueError`` for an operator the logic layer does not encode."""
    t0 = time.monotonic()
    ts = TransitionSystem(system, z3.Context())
    watch(ts.ctx)
    inv = ts.term(invariant)
    inv_next = ts.term(invariant, primed=True)
    obligations: list[tuple[str, Z3Term]] = [
        ("initiation (Init => Inv)", z3.And(ts.init(), z3.Not(inv))),
        ("safety (Inv => not Bad)", z3.And(ts.domain(), inv, ts.bad(cond))),
    ]
    for c in ts.commands:
        obligations.append(
            (
                f"consecution over command {c.index} ({c.process}: {c.text()})",
                z3.And(ts.domain(), inv, ts.step(c), z3.Not(inv_next)),
            )
        )
    for what, query in obligations:
        s = z3.Solver(ctx=ts.ctx)
        if timeout_s is not None:
            s.set("timeout", max(1, int(timeout_s * 1000)))
        s.add(query)
        answer = s.check()
        if answer == z3.sat:
            return CertificateCheck(False, failed=what, time_s=time.monotonic() - t0)
        if answer != z3.unsat:
            why = s.reason_unknown()
            return CertificateCheck(False, undecided=f"{what}: {why}", time_s=time.monotonic() - t0)
    return CertificateCheck(True, time_s=time.monotonic() - t0)
