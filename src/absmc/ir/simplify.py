"""Constant folding and boolean simplification of IR expressions.

Used after substituting concrete control values into guards and predicates (paper 000: control
variables are never abstracted), so that checks whose outcome is already decided need no
prover call.
"""

from __future__ import annotations

from absmc.ir.evaluate import EvalError, apply_operator
from absmc.ir.expr import FALSE, TRUE, Const, Expr, Op, Var, conj, disj, neg
from absmc.ir.sorts import BOOL, BoolSort
from absmc.ir.walker import ExprWalker


def _const_like(value: int, like: Expr) -> Const:
    return Const(value, BOOL) if like.is_bool else Const(value)


class Simplifier(ExprWalker[Expr]):
    """Constant folding and boolean reduction, bottom-up (see :func:`simplify`)."""

    def walk_const(self, e: Const) -> Expr:
        return e

    def walk_var(self, e: Var) -> Expr:
        return e

    def walk_and(self, e: Op, args: list[Expr]) -> Expr:
        if any(a == FALSE for a in args):
            return FALSE
        return conj(args)

    def walk_or(self, e: Op, args: list[Expr]) -> Expr:
        if any(a == TRUE for a in args):
            return TRUE
        return disj(args)

    def walk_not(self, e: Op, args: list[Expr]) -> Expr:
        return neg(args[0])

    def walk_implies(self, e: Op, args: list[Expr]) -> Expr:
        a, b = args
        if a == FALSE or b == TRUE:
            return TRUE
        if a == TRUE:
            return b
        if b == FALSE:
            return neg(a)
        return Op("=>", tuple(args), e.span)

    def walk_ite(self, e: Op, args: list[Expr]) -> Expr:
        c, a, b = args
        if c == TRUE:
            return a
        if c == FALSE:
            return b
        if a == b:
            return a
        return Op("ite", tuple(args), e.span)

    def walk_select(self, e: Op, args: list[Expr]) -> Expr:
        i, elems = args[0], args[1:]
        if type(i) is Const:
            return elems[i.value] if 0 <= i.value < len(elems) else elems[-1]
        if all(x == elems[0] for x in elems):
            return elems[0]
        return Op("select", tuple(args), e.span)

    def walk_op(self, e: Op, args: list[Expr]) -> Expr:
        o = e.op
        if all(type(a) is Const for a in args):
            try:
                return _const_like(apply_operator(o, [a.value for a in args]), e)  # type: ignore[attr-defined]
            except EvalError:
                return Op(o, tuple(args), e.span)
        if o in ("==", "<=", ">=") and args[0] == args[1]:
            return TRUE
        if o in ("!=", "<", ">") and args[0] == args[1]:
            return FALSE
        return Op(o, tuple(args), e.span)


def simplify(e: Expr) -> Expr:
    """An equivalent expression with ground subterms evaluated and ``&& || ! => ite`` reduced
    around constants. Division by a constant zero is left in place (it is a model error, not a
    value). An iterative walk (:class:`Simplifier`): any depth."""
    if isinstance(e, (Const, Var)):
        return e
    return Simplifier().walk(e)


def truth_value(e: Expr) -> bool | None:
    """``True``/``False`` when ``e`` simplifies to a boolean constant, else ``None``."""
    s = simplify(e)
    if isinstance(s, Const) and isinstance(s.const_sort, BoolSort):
        return bool(s.value)
    return None
