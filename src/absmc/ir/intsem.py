"""Integer semantics of the IR in one place: C division and remainder, shifts, wrap-around.

Every layer that computes with IR integers uses these definitions: the reference evaluator
(:mod:`absmc.ir.evaluate`), the generated Python code (:mod:`absmc.codegen.python`, whose code runs
in :data:`RUNTIME`), the Promela front end's constant folding (:mod:`absmc.lang.promela.simplify`)
and the abstraction function of paper 000 (:mod:`absmc.engines.under.abstraction`). The logic
layer (:mod:`absmc.logic.z3conv`) encodes the same functions as Z3 terms; a test compares the two
on random operands.

Integers are Python's unbounded ``int``s. The conventions are C's (and SPIN's, ISO C99 §6.5.5):

* ``/`` truncates toward zero: ``-7 / 2 == -3``;
* ``%`` has the sign of the dividend: ``a == (a / b) * b + a % b``, so ``-7 % 2 == -1``;
* division or remainder by zero is a *model error*, raised as ``ZeroDivisionError`` (callers turn
  it into their error kind: ``EvalError`` in the evaluator, a model-error step in the search);
* ``<<`` and ``>>`` act on two's-complement unbounded integers (``>>`` is arithmetic:
  ``-9 >> 1 == -5``); a negative count gives 0, and so does a left shift by more than
  :data:`MAX_SHIFT` bits (a guard against building huge numbers);
* a product of two unbounded integers whose operands have more than :data:`MAX_BITS` bits
  together raises :class:`IntegerTooLarge` (``x := x * x`` doubles the size of ``x`` at every
  step): not a model error, a resource limit that ends a search with ``unknown``;
* a finite range ``lo..hi`` with ``overflow="wrap"`` reduces a value modulo its size
  ``hi - lo + 1`` into ``lo..hi`` (the two's-complement truncation of Promela's ``byte``,
  ``short``, ``int``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final

#: left shifts by more than this many bits give 0 (see the module docstring)
MAX_SHIFT: Final = 4096

#: the largest product computed, in bits (operands' bit lengths added; 2^20 bits = 128 KiB)
MAX_BITS: Final = 1 << 20


class IntegerTooLarge(Exception):
    """A product would exceed :data:`MAX_BITS` bits: a resource limit (like memory), not a
    model error; searches stop with verdict ``unknown`` and this message."""


def mul(a: int, b: int) -> int:
    """``a * b``; raises :class:`IntegerTooLarge` before computing a product of more than
    :data:`MAX_BITS` bits (each such step would take seconds and doubles in cost)."""
    if a.bit_length() + b.bit_length() > MAX_BITS:
        raise IntegerTooLarge(
            f"an integer product exceeds {MAX_BITS} bits (an unbounded integer grows without "
            "bound, e.g. x := x * x)"
        )
    return a * b


def tdiv(a: int, b: int) -> int:
    """``a / b`` truncating toward zero (C semantics). Raises ``ZeroDivisionError`` when
    ``b == 0``."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def tmod(a: int, b: int) -> int:
    """``a % b`` with the sign of the dividend, so that ``a == tdiv(a, b) * b + tmod(a, b)``
    (C semantics). Raises ``ZeroDivisionError`` when ``b == 0``."""
    q = abs(a) // abs(b)
    return a - b * (q if (a >= 0) == (b >= 0) else -q)


def shift(a: int, b: int, left: bool) -> int:
    """``a << b`` (``left``) or ``a >> b`` on unbounded integers (``>>`` is arithmetic); a
    negative count gives 0, and so does a left shift by more than :data:`MAX_SHIFT` bits."""
    if b < 0 or (left and b > MAX_SHIFT):
        return 0
    return a << b if left else a >> b


def shl(a: int, b: int) -> int:
    """``a << b``: :func:`shift` to the left."""
    return shift(a, b, True)


def shr(a: int, b: int) -> int:
    """``a >> b``: :func:`shift` to the right (arithmetic)."""
    return shift(a, b, False)


def wrap(value: int, lo: int, hi: int) -> int:
    """``value`` reduced modulo ``hi - lo + 1`` into ``lo..hi`` (requires ``lo <= hi``): the
    wrap-around of a ``RangeSort`` with ``overflow="wrap"``."""
    return (value - lo) % (hi - lo + 1) + lo


#: the total binary integer operators (no division: see :func:`tdiv`, :func:`tmod`), by spelling
ARITHMETIC: Final[Mapping[str, Callable[[int, int], int]]] = MappingProxyType(
    {
        "+": lambda a, b: a + b,
        "-": lambda a, b: a - b,
        "*": mul,
        "&": lambda a, b: a & b,
        "|": lambda a, b: a | b,
        "^": lambda a, b: a ^ b,
        "<<": shl,
        ">>": shr,
    }
)

#: The namespace generated code executes in (copy it before ``exec``, which adds names):
#: ``_tdiv``, ``_tmod``, ``_shift(a, b, left)`` and ``_mul`` as above. Generated source refers
#: to these names only; :class:`absmc.codegen.python.PyExpr` emits calls to them.
RUNTIME: Final[Mapping[str, Any]] = MappingProxyType(
    {"_tdiv": tdiv, "_tmod": tmod, "_shift": shift, "_mul": mul}
)


def runtime_namespace() -> dict[str, Any]:
    """A fresh copy of :data:`RUNTIME` for one ``exec`` of generated code."""
    return dict(RUNTIME)
