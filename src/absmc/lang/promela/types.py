"""Promela data types and the flat layout of variables, arrays, structures and channels.

Every Promela variable becomes one or more IR state variables (*leaves*): a scalar is one
leaf, an array ``a[3]`` the leaves ``a[0] a[1] a[2]``, a structure one leaf per field
(``s.f``). Each leaf has SPIN's C type: ``bit``/``bool`` 0..1, ``byte`` 0..255, ``short`` and
``int`` two's complement 16/32 bits, ``unsigned : N`` 0..2^N-1, ``mtype``/``chan``/``pid`` an
unsigned byte; assignments truncate as C does (``RangeSort(..., overflow="wrap")``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from absmc.ir.expr import Const, Expr, Op
from absmc.ir.sorts import BOOL, RangeSort

RANGES: dict[str, tuple[int, int]] = {
    "bit": (0, 1),
    "bool": (0, 1),
    "byte": (0, 255),
    "short": (-(2**15), 2**15 - 1),
    "int": (-(2**31), 2**31 - 1),
    "mtype": (0, 255),
    "chan": (0, 255),
    "pid": (0, 255),
}


def type_range(typ: str, bits: int | None = None) -> tuple[int, int]:
    """``(lo, hi)`` of a basic type (``unsigned`` needs ``bits``)."""
    if typ == "unsigned":
        assert bits is not None
        return (0, 2**bits - 1)
    return RANGES[typ]


def sort_of(lo: int, hi: int) -> RangeSort:
    """The wrapping IR sort of a Promela basic type."""
    return RangeSort(lo, hi, "wrap")


def wrap_expr(e: Expr, lo: int, hi: int) -> Expr:
    """``e`` truncated as C truncates on assignment to a variable of range ``lo..hi``."""
    if isinstance(e, Const):
        size = hi - lo + 1
        return Const((e.value - lo) % size + lo)
    size = hi - lo + 1
    if lo == 0:
        return Op("&", (e, Const(size - 1)))
    half = -lo
    return Op("-", (Op("&", (Op("+", (e, Const(half))), Const(size - 1))), Const(half)))


@dataclass
class Leaf:
    """A scalar leaf: its IR variable name and Promela type."""

    name: str
    typ: str
    lo: int
    hi: int


@dataclass
class Layout:
    """The shape of a declared variable: a scalar leaf, an array of layouts, or a structure."""

    kind: str  # 'scalar' | 'array' | 'struct'
    typ: str = ""
    leaf: Leaf | None = None
    elems: list[Layout] = field(default_factory=list)
    fields: dict[str, Layout] = field(default_factory=dict)

    def leaves(self) -> list[Leaf]:
        if self.kind == "scalar":
            assert self.leaf is not None
            return [self.leaf]
        out: list[Leaf] = []
        if self.kind == "array":
            for e in self.elems:
                out.extend(e.leaves())
        else:
            for f in self.fields.values():
                out.extend(f.leaves())
        return out


def bool_of(e: Expr) -> Expr:
    """An integer expression as a condition (``e != 0``), keeping conditions as they are."""
    if e.sort() == BOOL:
        return e
    if isinstance(e, Const):
        return Const(1 if e.value else 0, BOOL)
    if isinstance(e, Op) and e.op == "ite" and e.args[1] == Const(1) and e.args[2] == Const(0):
        return e.args[0]
    return Op("!=", (e, Const(0)))


def int_of(e: Expr) -> Expr:
    """A condition as an integer 0/1 (Promela has no separate boolean type)."""
    if e.sort() != BOOL:
        return e
    if isinstance(e, Const):
        return Const(e.value)
    return Op("ite", (e, Const(1), Const(0)))
