"""Integer semantics of the IR in one place: C division and remainder, shifts, wrap-around.

Every layer that computes with IR integers uses these definitions: the reference evaluator
(:mod:`absmc.ir.evaluate`), the generated Python code (:mod:`absmc.ir.compile`, whose code runs
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


#: The namespace generated code executes in (copy it before ``exec``, which adds names):
#: ``_tdiv``, ``_tmod`` and ``_shift(a, b, left)`` as above. Generated source refers to these
#: names only; :class:`absmc.ir.compile.PyExpr` emits calls to them.
#: the total binary integer operators (no division: see :func:`tdiv`, :func:`tmod`), by spelling
ARITHMETIC: Final[Mapping[str, Callable[[int, int], int]]] = MappingProxyType(
    {
        "+": lambda a, b: a + b,
        "-": lambda a, b: a - b,
        "*": lambda a, b: a * b,
        "&": lambda a, b: a & b,
        "|": lambda a, b: a | b,
        "^": lambda a, b: a ^ b,
        "<<": shl,
        ">>": shr,
    }
)

RUNTIME: Final[Mapping[str, Any]] = MappingProxyType(
    {"_tdiv": tdiv, "_tmod": tmod, "_shift": shift}
)


def runtime_namespace() -> dict[str, Any]:
    """A fresh copy of :data:`RUNTIME` for one ``exec`` of generated code."""
    return dict(RUNTIME)
