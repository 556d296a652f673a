"""Immutable, hashable IR expressions.

An expression is a :class:`Const`, a :class:`Var` or an :class:`Op` (an operator applied to a
tuple of argument expressions). Operators:

========================  ============  ==========================================
operator                  arity         meaning
========================  ============  ==========================================
``+ - *``                 2             integer arithmetic
``/ %``                   2             truncating division and remainder (C/Promela:
                                        ``-7 / 2 == -3``, ``-7 % 2 == -1``); division
                                        by zero is a model error
``neg``                   1             unary minus
``== != < <= > >=``       2             comparisons (``==``/``!=`` also on bools)
``&& ||``                 ≥ 2           conjunction, disjunction (left to right,
                                        short-circuit in the concrete semantics)
``!``                     1             negation
``=>``                    2             implication
``ite``                   3             ``ite(c, a, b)``: ``a`` if ``c`` else ``b``
``& | ^ << >>``           2             bitwise and, or, xor, shifts on two's-complement
                                        unbounded integers (``>>`` is arithmetic; a
                                        negative shift count gives 0)
``~``                     1             bitwise complement (``~x == -x - 1``)
``select``                ≥ 2           ``select(i, e0, ..., e(n-1))``: element ``i`` of
                                        the tuple (an array read with a computed
                                        index); out of range (``i < 0`` or ``i >= n``)
                                        the last element ``e(n-1)`` — a total operator,
                                        the same value as the chain
                                        ``ite(i == 0, e0, ite(i == 1, e1, ... e(n-1)))``
                                        (:func:`absmc.ir.arrays.select_chain`); front ends
                                        guard it with an explicit bounds error
========================  ============  ==========================================

Equality and hashing are structural and ignore source spans. Hashes are cached, so expressions
are cheap dictionary keys (the prover cache keys on them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Final

from absmc.ir.sorts import BOOL, INT, BoolSort, Sort
from absmc.ir.span import SourceSpan


class Operator(StrEnum):
    """The IR's operators (see the module table). A member *is* its spelling (``StrEnum``):
    ``Operator.ADD == "+"``, it hashes like ``"+"`` and formats as ``+``, so code comparing an
    ``Op.op`` with a string keeps working."""

    ADD = "+"
    SUB = "-"
    MUL = "*"
    DIV = "/"
    MOD = "%"
    NEG = "neg"
    EQ = "=="
    NE = "!="
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="
    AND = "&&"
    OR = "||"
    NOT = "!"
    IMPLIES = "=>"
    ITE = "ite"
    BITAND = "&"
    BITOR = "|"
    BITXOR = "^"
    SHL = "<<"
    SHR = ">>"
    BITNOT = "~"
    SELECT = "select"

    def __repr__(self) -> str:
        return str.__repr__(self.value)

    @property
    def arity(self) -> int | None:
        """The number of arguments (``None``: two or more, for ``&&``, ``||`` and ``select``)."""
        return _ARITY.get(self, 2)


_ARITY: Final[dict[Operator, int | None]] = {
    Operator.NEG: 1,
    Operator.NOT: 1,
    Operator.BITNOT: 1,
    Operator.ITE: 3,
    Operator.AND: None,
    Operator.OR: None,
    Operator.SELECT: None,
}
#: spelling -> operator (also maps each member to itself: members hash like their spelling)
_BY_SPELLING: Final[dict[str, Operator]] = {o.value: o for o in Operator}

ARITH_OPS: Final = frozenset({Operator.ADD, Operator.SUB, Operator.MUL, Operator.DIV, Operator.MOD})
#: bitwise operators (integer-valued; the logic layer encodes only the shifts)
BIT_OPS: Final = frozenset(
    {
        Operator.BITAND,
        Operator.BITOR,
        Operator.BITXOR,
        Operator.SHL,
        Operator.SHR,
        Operator.BITNOT,
    }
)
COMPARE_OPS: Final = frozenset(
    {Operator.EQ, Operator.NE, Operator.LT, Operator.LE, Operator.GT, Operator.GE}
)
LOGIC_OPS: Final = frozenset({Operator.AND, Operator.OR, Operator.IMPLIES, Operator.NOT})
ALL_OPS: Final = frozenset(Operator)


def as_operator(spelling: str) -> Operator:
    """The operator spelled ``spelling`` (an ``Operator`` is returned as is). Raises
    ``ValueError`` for an unknown operator."""
    o = _BY_SPELLING.get(spelling)
    if o is None:
        raise ValueError(f"unknown operator {spelling!r}")
    return o


#: comparison operator -> its negation
NEGATED_COMPARISON: Final[dict[str, Operator]] = {
    "==": Operator.NE,
    "!=": Operator.EQ,
    "<": Operator.GE,
    "<=": Operator.GT,
    ">": Operator.LE,
    ">=": Operator.LT,
}
#: comparison operator -> the operator with swapped operands (a op b  <=>  b op' a)
SWAPPED_COMPARISON: Final[dict[str, Operator]] = {
    "==": Operator.EQ,
    "!=": Operator.NE,
    "<": Operator.GT,
    "<=": Operator.GE,
    ">": Operator.LT,
    ">=": Operator.LE,
}


class Expr:
    """Base class of IR expressions (see module docstring)."""

    __slots__ = ()

    span: SourceSpan | None

    def sort(self) -> Sort:
        """``BOOL`` for truth-valued expressions, the integer sort otherwise."""
        raise NotImplementedError

    @property
    def is_bool(self) -> bool:
        """True when the expression denotes a truth value."""
        return isinstance(self.sort(), BoolSort)


@dataclass(frozen=True, slots=True, eq=False)
class Const(Expr):
    """An integer or boolean constant; ``value`` is stored as an int (bools as 0/1)."""

    value: int
    const_sort: Sort = INT
    span: SourceSpan | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", int(self.value))

    def sort(self) -> Sort:
        return BOOL if isinstance(self.const_sort, BoolSort) else INT

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return (
            isinstance(other, Const)
            and self.value == other.value
            and isinstance(self.const_sort, BoolSort) == isinstance(other.const_sort, BoolSort)
        )

    def __hash__(self) -> int:
        return hash(("c", self.value, isinstance(self.const_sort, BoolSort)))

    def __repr__(self) -> str:
        if isinstance(self.const_sort, BoolSort):
            return "true" if self.value else "false"
        return str(self.value)


@dataclass(frozen=True, slots=True, eq=False)
class Var(Expr):
    """A reference to a declared variable of the given sort."""

    name: str
    var_sort: Sort = INT
    span: SourceSpan | None = field(default=None, compare=False, repr=False)

    def sort(self) -> Sort:
        return self.var_sort

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return (
            isinstance(other, Var)
            and self.name == other.name
            and (self.var_sort is other.var_sort or self.var_sort == other.var_sort)
        )

    def __hash__(self) -> int:
        return hash(("v", self.name))

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True, eq=False, init=False)
class Op(Expr):
    """Operator ``op`` applied to ``args`` (see the module table for operators and arities).

    ``op`` may be given as an :class:`Operator` or its spelling (``"+"``); it is stored as the
    ``Operator``. Raises ``ValueError`` for an unknown operator."""

    op: Operator
    args: tuple[Expr, ...]
    span: SourceSpan | None = field(default=None, compare=False, repr=False)
    _hash: int = field(default=0, compare=False, repr=False, init=False)

    def __init__(
        self, op: Operator | str, args: tuple[Expr, ...], span: SourceSpan | None = None
    ) -> None:
        o = _BY_SPELLING.get(op)
        if o is None:
            raise ValueError(f"unknown operator {op!r}")
        setattr_ = object.__setattr__
        setattr_(self, "op", o)
        setattr_(self, "args", args)
        setattr_(self, "span", span)
        setattr_(self, "_hash", hash((o, args)))

    def sort(self) -> Sort:
        if self.op in COMPARE_OPS or self.op in LOGIC_OPS:
            return BOOL
        if self.op == "ite" or self.op == "select":
            return self.args[1].sort() if self.args[1].is_bool else INT
        return INT

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return (
            isinstance(other, Op)
            and self._hash == other._hash
            and self.op == other.op
            and self.args == other.args
        )

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[type[Op], tuple[Operator, tuple[Expr, ...], SourceSpan | None]]:
        # rebuilt by the constructor: the cached hash is of strings, whose hashes differ from
        # one process to the next (PYTHONHASHSEED), so a pickled one would be wrong elsewhere
        return (Op, (self.op, self.args, self.span))

    def __repr__(self) -> str:
        from absmc.ir.printer import format_expr

        return format_expr(self)


TRUE: Final = Const(1, BOOL)
FALSE: Final = Const(0, BOOL)


def const(value: int | bool, span: SourceSpan | None = None) -> Const:
    """An integer constant, or a boolean one when ``value`` is a ``bool``."""
    if isinstance(value, bool):
        return Const(int(value), BOOL, span)
    return Const(value, INT, span)


def op(name: Operator | str, *args: Expr, span: SourceSpan | None = None) -> Op:
    """``Op(name, args)``; raises ``ValueError`` for an unknown operator."""
    return Op(name, tuple(args), span)


def conj(parts: Iterable[Expr]) -> Expr:
    """The conjunction of ``parts``, flattened; ``TRUE`` when empty, the part itself when one."""
    flat: list[Expr] = []
    for p in parts:
        if isinstance(p, Op) and p.op == "&&":
            flat.extend(p.args)
        elif p != TRUE:
            flat.append(p)
    if not flat:
        return TRUE
    return flat[0] if len(flat) == 1 else Op("&&", tuple(flat))


def disj(parts: Iterable[Expr]) -> Expr:
    """The disjunction of ``parts``, flattened; ``FALSE`` when empty."""
    flat: list[Expr] = []
    for p in parts:
        if isinstance(p, Op) and p.op == "||":
            flat.extend(p.args)
        elif p != FALSE:
            flat.append(p)
    if not flat:
        return FALSE
    return flat[0] if len(flat) == 1 else Op("||", tuple(flat))


def neg(e: Expr) -> Expr:
    """Logical negation, removing a double negation."""
    if isinstance(e, Op) and e.op == "!":
        return e.args[0]
    if e == TRUE:
        return FALSE
    if e == FALSE:
        return TRUE
    return Op("!", (e,))


def conjuncts(e: Expr) -> tuple[Expr, ...]:
    """The top-level conjuncts of ``e`` (``(e,)`` when it is not a conjunction)."""
    if isinstance(e, Op) and e.op == "&&":
        out: list[Expr] = []
        for a in e.args:
            out.extend(conjuncts(a))
        return tuple(out)
    return (e,)


def subexpressions(e: Expr) -> Iterator[Expr]:
    """All subexpressions of ``e`` in pre-order, ``e`` first."""
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        if isinstance(x, Op):
            stack.extend(reversed(x.args))


def free_vars(e: Expr) -> frozenset[str]:
    """Names of the variables occurring in ``e``."""
    return frozenset(x.name for x in subexpressions(e) if isinstance(x, Var))


def atoms(e: Expr) -> tuple[Expr, ...]:
    """The atomic propositions of a boolean expression: the maximal subterms that are not built
    with ``&& || ! =>`` (comparisons, boolean variables and constants, boolean ``ite``), in order
    of first occurrence, without duplicates."""
    out: dict[Expr, None] = {}

    def walk(x: Expr) -> None:
        if isinstance(x, Op) and x.op in LOGIC_OPS:
            for a in x.args:
                walk(a)
        elif not isinstance(x, Const):
            out.setdefault(x, None)

    walk(e)
    return tuple(out)


def substitute(e: Expr, mapping: Mapping[str, Expr]) -> Expr:
    """Simultaneous substitution ``e[mapping]``: every variable named in ``mapping`` is replaced
    by its image (images are not substituted again). Spans of untouched nodes are kept."""
    if not mapping:
        return e
    cache: dict[int, Expr] = {}

    def go(x: Expr) -> Expr:
        if isinstance(x, Var):
            return mapping.get(x.name, x)
        if isinstance(x, Op):
            key = id(x)
            hit = cache.get(key)
            if hit is not None:
                return hit
            args = tuple(go(a) for a in x.args)
            res: Expr = (
                x
                if all(a is b for a, b in zip(args, x.args, strict=True))
                else Op(x.op, args, x.span)
            )
            cache[key] = res
            return res
        return x

    return go(e)


def transform(e: Expr, fn: Callable[[Expr], Expr | None]) -> Expr:
    """Bottom-up rewrite: ``fn`` sees each node after its arguments were rewritten and returns a
    replacement or ``None`` to keep it."""
    if isinstance(e, Op):
        args = tuple(transform(a, fn) for a in e.args)
        if any(a is not b for a, b in zip(args, e.args, strict=True)):
            e = Op(e.op, args, e.span)
    res = fn(e)
    return e if res is None else res


def map_vars(e: Expr, fn: Callable[[Var], Expr]) -> Expr:
    """Replace every variable ``v`` by ``fn(v)``."""
    return transform(e, lambda x: fn(x) if isinstance(x, Var) else None)


def expr_size(e: Expr) -> int:
    """Number of nodes of ``e``."""
    return sum(1 for _ in subexpressions(e))


def as_const(e: Expr) -> int | None:
    """The value of ``e`` when it is a constant (also ``neg`` of a constant), else ``None``."""
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Op) and e.op == "neg" and isinstance(e.args[0], Const):
        return -e.args[0].value
    return None


def var_const_test(e: Expr) -> tuple[str, str, int] | None:
    """``(op, variable name, k)`` when ``e`` is ``v == k`` or ``v != k`` (either way round) for
    a variable ``v`` and a constant ``k`` (a ``Const`` node), else ``None``."""
    if not (isinstance(e, Op) and e.op in ("==", "!=") and len(e.args) == 2):
        return None
    a, b = e.args
    if isinstance(b, Var) and isinstance(a, Const):
        a, b = b, a
    if isinstance(a, Var) and isinstance(b, Const):
        return str(e.op), a.name, int(b.value)
    return None
