"""Sorts (types) of IR variables and expressions.

Three sorts exist:

* ``BOOL`` — truth values, stored as 0/1 in compiled states;
* ``INT`` — unbounded mathematical integers (*data* by default);
* ``RangeSort(lo, hi)`` — a finite integer range ``lo..hi`` (*control* by default). Assigning a
  value outside the range is a model error (``overflow="error"``, the GCL semantics) or wraps
  around modulo the range size (``overflow="wrap"``, the two's-complement truncation of Promela's
  ``byte``/``short``/``int`` and the masking of ``bit``).

Control variables (finite ranges and bools) are never abstracted by default; data variables
(``INT``) are what the abstraction methods abstract.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from absmc.ir.intsem import wrap

Overflow = Literal["error", "wrap"]


@dataclass(frozen=True, slots=True)
class BoolSort:
    """The sort of truth values."""

    def __str__(self) -> str:
        return "bool"


@dataclass(frozen=True, slots=True)
class IntSort:
    """The sort of unbounded mathematical integers."""

    def __str__(self) -> str:
        return "int"


@dataclass(frozen=True, slots=True)
class RangeSort:
    """The finite integer range ``lo..hi`` (inclusive on both ends).

    ``overflow`` says what an assignment outside the range does: ``"error"`` makes it a model
    error reported with a trace; ``"wrap"`` reduces the value modulo ``hi - lo + 1`` into the
    range. Raises ``ValueError`` when ``lo > hi``.
    """

    lo: int
    hi: int
    overflow: Overflow = "error"

    def __post_init__(self) -> None:
        if self.lo > self.hi:
            raise ValueError(f"empty range {self.lo}..{self.hi}")

    @property
    def size(self) -> int:
        """Number of values in the range."""
        return self.hi - self.lo + 1

    def contains(self, value: int) -> bool:
        """True when ``lo <= value <= hi``."""
        return self.lo <= value <= self.hi

    def wrap(self, value: int) -> int:
        """``value`` reduced modulo the range size into ``lo..hi`` (``intsem.wrap``)."""
        return wrap(value, self.lo, self.hi)

    def __str__(self) -> str:
        return f"{self.lo}..{self.hi}"


Sort = BoolSort | IntSort | RangeSort

BOOL = BoolSort()
INT = IntSort()


def is_numeric(sort: Sort) -> bool:
    """True for ``INT`` and finite ranges (the integer-valued sorts)."""
    return not isinstance(sort, BoolSort)


def is_control(sort: Sort) -> bool:
    """True for the sorts that are control by default (bools and finite ranges)."""
    return not isinstance(sort, IntSort)
