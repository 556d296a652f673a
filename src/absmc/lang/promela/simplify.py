"""Constant folding and light simplification of IR expressions built by the Promela lowering.

Symbolic execution of a transition substitutes expressions into each other; folding keeps the
result small and decides conditions that only depend on constants (the loop of a ``d_step``
over a counter it set itself, a dynamic channel reference that is in fact fixed).
"""

from __future__ import annotations

from collections.abc import Callable

from absmc.ir.expr import FALSE, TRUE, Const, Expr, Op
from absmc.ir.intsem import ARITHMETIC, tdiv, tmod
from absmc.ir.sorts import BOOL

_ARITH = ARITHMETIC
_CMP: dict[str, Callable[[int, int], bool]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def mk(op: str, *args: Expr) -> Expr:
    """``Op(op, args)`` with constant folding and the obvious boolean simplifications."""
    if op == "&&":
        flat: list[Expr] = []
        for a in args:
            if a == FALSE:
                return FALSE
            if a == TRUE:
                continue
            if isinstance(a, Op) and a.op == "&&":
                flat.extend(a.args)
            elif a not in flat:
                flat.append(a)
        if not flat:
            return TRUE
        return flat[0] if len(flat) == 1 else Op("&&", tuple(flat))
    if op == "||":
        flat = []
        for a in args:
            if a == TRUE:
                return TRUE
            if a == FALSE:
                continue
            if isinstance(a, Op) and a.op == "||":
                flat.extend(a.args)
            elif a not in flat:
                flat.append(a)
        if not flat:
            return FALSE
        return flat[0] if len(flat) == 1 else Op("||", tuple(flat))
    if op == "!":
        a = args[0]
        if isinstance(a, Const):
            return Const(0 if a.value else 1, BOOL)
        if isinstance(a, Op) and a.op == "!":
            return a.args[0]
        if isinstance(a, Op) and a.op in ("==", "!=", "<", "<=", ">", ">="):
            neg = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}[a.op]
            return Op(neg, a.args)
        return Op("!", (a,))
    if op == "ite":
        c, x, y = args
        if isinstance(c, Const):
            return x if c.value else y
        if x == y:
            return x
        return Op("ite", (c, x, y))
    if all(isinstance(a, Const) for a in args):
        vals = [a.value for a in args if isinstance(a, Const)]
        if op in _ARITH:
            return Const(_ARITH[op](vals[0], vals[1]))
        if op in _CMP:
            return Const(1 if _CMP[op](vals[0], vals[1]) else 0, BOOL)
        if op == "neg":
            return Const(-vals[0])
        if op == "~":
            return Const(~vals[0])
        if op in ("/", "%") and vals[1] != 0:
            return Const(tdiv(vals[0], vals[1]) if op == "/" else tmod(vals[0], vals[1]))
    if op == "+" and isinstance(args[1], Const) and args[1].value == 0:
        return args[0]
    if op == "-" and isinstance(args[1], Const) and args[1].value == 0:
        return args[0]
    return Op(op, tuple(args))


def conj(parts: list[Expr]) -> Expr:
    """Folded conjunction."""
    return mk("&&", *parts)


def disj(parts: list[Expr]) -> Expr:
    """Folded disjunction."""
    return mk("||", *parts)


def neg(e: Expr) -> Expr:
    """Folded negation."""
    return mk("!", e)
