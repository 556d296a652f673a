"""Translation of IR expressions into Z3 terms (the only module family that imports z3).

Integers (``INT`` and finite ranges) become Z3 ``Int`` constants, bools become ``Bool``
constants; ``/`` and ``%`` are encoded with C's truncating semantics on top of Z3's Euclidean
``div``/``mod``. The IR idiom for the Euclidean residue, ``((a % k) + k) % k`` with ``k`` a
positive constant, becomes Z3's native ``a mod k`` (the same value; Z3 reasons about residues of
products only in that form, as the modulo abstraction of paper 001 needs). Division by zero is
left to Z3 (an unspecified value): the concrete semantics treats it as a model error, which
engines detect on the concrete side.

The encoding agrees with the concrete integer semantics of :mod:`absmc.ir.intsem` (the
definitions the evaluator, the generated code and the Promela front end use): ``/`` is
``intsem.tdiv``, ``%`` is ``intsem.tmod`` (both for nonzero divisors), ``a << b`` is
``a * 2**b`` (0 for ``b < 0`` or ``b > intsem.MAX_SHIFT``) and ``a >> b`` is the floor of
``a / 2**b`` (Z3's ``div`` by a positive divisor; 0 for ``b < 0``), i.e. ``intsem.shift``;
``tests/test_intsem.py`` compares them on random operands. A shift by a non-constant count uses
Z3's integer power (nonlinear: the prover may answer unknown, never a wrong answer). The other
bitwise operators ``& | ^ ~`` are not encoded (``ValueError``). ``select(i, e0, ...)`` (an
array read) is its case split (:func:`absmc.ir.arrays.select_chain`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import z3

from absmc.ir.expr import Const, Expr, Op, Var
from absmc.ir.intsem import MAX_SHIFT
from absmc.ir.sorts import BoolSort, RangeSort, Sort
from absmc.ir.walker import ExprWalker

Z3Term = Any


class _Z3Walker(ExprWalker[Z3Term]):
    """The IR → Z3 translation of one variable suffix (memoized across walks)."""

    def __init__(self, owner: Z3Translator, suffix: str) -> None:
        super().__init__(memoize_across_walks=True)
        self.owner = owner
        self.suffix = suffix
        self.ctx = owner.ctx

    def walk_const(self, e: Const) -> Z3Term:
        if isinstance(e.const_sort, BoolSort):
            return z3.BoolVal(bool(e.value), self.ctx)
        return z3.IntVal(e.value, self.ctx)

    def walk_var(self, e: Var) -> Z3Term:
        return self.owner.var(e.name + self.suffix, e.var_sort)

    def walk_and(self, e: Op, a: list[Z3Term]) -> Z3Term:
        return z3.And(*a)

    def walk_or(self, e: Op, a: list[Z3Term]) -> Z3Term:
        return z3.Or(*a)

    def walk_not(self, e: Op, a: list[Z3Term]) -> Z3Term:
        return z3.Not(a[0])

    def walk_implies(self, e: Op, a: list[Z3Term]) -> Z3Term:
        return z3.Implies(a[0], a[1])

    def walk_ite(self, e: Op, a: list[Z3Term]) -> Z3Term:
        return z3.If(a[0], a[1], a[2])

    def walk_select(self, e: Op, a: list[Z3Term]) -> Z3Term:
        # the case split of ir.arrays.select_chain: element i, the last one out of range
        out = a[-1]
        for k in range(len(a) - 2, 0, -1):
            out = z3.If(a[0] == k - 1, a[k], out)
        return out

    def walk_neg(self, e: Op, a: list[Z3Term]) -> Z3Term:
        return -a[0]

    def walk_add(self, e: Op, a: list[Z3Term]) -> Z3Term:
        return a[0] + a[1]

    def walk_sub(self, e: Op, a: list[Z3Term]) -> Z3Term:
        return a[0] - a[1]

    def walk_mul(self, e: Op, a: list[Z3Term]) -> Z3Term:
        return a[0] * a[1]

    def walk_div(self, e: Op, a: list[Z3Term]) -> Z3Term:
        return tdiv(a[0], a[1])

    def walk_mod(self, e: Op, a: list[Z3Term]) -> Z3Term:
        k = euclidean_residue(e)
        if k is not None:
            return self.result_of(k[0]) % k[1]
        return a[0] - a[1] * tdiv(a[0], a[1])

    def walk_shl(self, e: Op, a: list[Z3Term]) -> Z3Term:
        return shift(a[0], a[1], True)

    def walk_shr(self, e: Op, a: list[Z3Term]) -> Z3Term:
        return shift(a[0], a[1], False)

    def walk_eq(self, e: Op, a: list[Z3Term]) -> Z3Term:
        return a[0] == a[1]

    def walk_ne(self, e: Op, a: list[Z3Term]) -> Z3Term:
        return a[0] != a[1]

    def walk_lt(self, e: Op, a: list[Z3Term]) -> Z3Term:
        return a[0] < a[1]

    def walk_le(self, e: Op, a: list[Z3Term]) -> Z3Term:
        return a[0] <= a[1]

    def walk_gt(self, e: Op, a: list[Z3Term]) -> Z3Term:
        return a[0] > a[1]

    def walk_ge(self, e: Op, a: list[Z3Term]) -> Z3Term:
        return a[0] >= a[1]

    def walk_op(self, e: Op, args: list[Z3Term]) -> Z3Term:
        raise ValueError(f"operator {e.op!r} is not supported by the logic layer")


class Z3Translator:
    """Translate IR expressions to Z3 terms in one context, caching per expression.

    One :class:`absmc.ir.walker.ExprWalker` per variable suffix, memoized across calls: an
    expression nested arbitrarily deep translates without recursion. Raises ``ValueError`` for
    the bitwise operators ``& | ^ ~`` (not encoded).
    """

    def __init__(self, ctx: z3.Context | None = None) -> None:
        self.ctx = ctx or z3.main_ctx()
        self._walkers: dict[str, _Z3Walker] = {}
        self._vars: dict[tuple[str, bool], Z3Term] = {}

    def var(self, name: str, sort: Sort) -> Z3Term:
        """The Z3 constant for a variable of the given sort."""
        is_bool = isinstance(sort, BoolSort)
        key = (name, is_bool)
        v = self._vars.get(key)
        if v is None:
            v = z3.Bool(name, self.ctx) if is_bool else z3.Int(name, self.ctx)
            self._vars[key] = v
        return v

    def __call__(self, e: Expr, suffix: str = "") -> Z3Term:
        """``e`` as a Z3 term; every variable name gets ``suffix`` appended (``""``: none)."""
        w = self._walkers.get(suffix)
        if w is None:
            w = self._walkers[suffix] = _Z3Walker(self, suffix)
        return w.walk(e)


def euclidean_residue(e: Op) -> tuple[Expr, int] | None:
    """``(a, k)`` when ``e`` is ``((a % k) + k) % k`` for a constant ``k > 0`` (the residue of
    ``a`` modulo ``k`` in ``0..k-1`` under truncating ``%``), else ``None``."""
    if e.op != "%" or not isinstance(e.args[1], Const) or e.args[1].value <= 0:
        return None
    k = e.args[1].value
    inner = e.args[0]
    if not (isinstance(inner, Op) and inner.op == "+" and inner.args[1] == Const(k)):
        return None
    rem = inner.args[0]
    if isinstance(rem, Op) and rem.op == "%" and rem.args[1] == Const(k):
        return rem.args[0], k
    return None


def tdiv(a: Z3Term, b: Z3Term) -> Z3Term:
    """C's truncating division of Z3 integer terms (``b == 0`` left unspecified)."""
    q = z3.If(a >= 0, z3.If(b >= 0, a / b, -(a / -b)), z3.If(b >= 0, -((-a) / b), (-a) / -b))
    return q


def shift(a: Z3Term, b: Z3Term, left: bool) -> Z3Term:
    """``a << b`` (``left``) or ``a >> b`` on Z3 integer terms, as ``intsem.shift``: a constant
    count gives ``a * 2**b`` or ``a div 2**b`` (floor division, the arithmetic shift)."""
    if z3.is_int_value(b):
        n = b.as_long()
        if n < 0 or (left and n > MAX_SHIFT):
            return z3.IntVal(0, a.ctx)
        return a * (1 << n) if left else a / (1 << n)
    power = z3.IntVal(2, a.ctx) ** b
    if left:
        return z3.If(z3.Or(b < 0, b > MAX_SHIFT), 0, a * power)
    return z3.If(b < 0, 0, a / power)


def range_constraints(
    tr: Z3Translator, sorts: Mapping[str, Sort], suffix: str = ""
) -> list[Z3Term]:
    """``lo <= x <= hi`` for every finite-range variable in ``sorts``."""
    out = []
    for name, sort in sorts.items():
        if isinstance(sort, RangeSort):
            v = tr.var(name + suffix, sort)
            out.append(z3.And(v >= sort.lo, v <= sort.hi))
    return out
