"""Belnap's four-valued bilattice FOUR (paper 004, Bonsai, §2.2–2.4 and Fig. 1).

A value is a set of *evidence* drawn from ``{t, f}`` (Fig. 1b): :data:`UNKNOWN` (⊥) holds none,
:data:`TRUE` (t) and :data:`FALSE` (f) hold one, :data:`BOTH` (⊤) holds both. We store the set as
two bits, ``1`` = evidence for truth and ``2`` = evidence for falsity.

Two orders interlace (Fig. 1a):

* the **truth order** ``f ≤ ⊥ ≤ t`` and ``f ≤ ⊤ ≤ t``: conjunction ∧ is its meet, disjunction ∨
  its join, negation ¬ swaps the evidence (¬⊥ = ⊥, ¬⊤ = ⊤). It is the logic in which properties
  are evaluated; its bottom is ``f`` and its top is ``t``.
* the **information order** ``⊥ ≤ t, f ≤ ⊤``: consensus ⊗ (meet: what both agree on) and
  gullibility ⊕ (join: everything either says). Abstraction works in this order (§2.3): the
  abstract value of a set of concrete values is their consensus.

§2.4 reduces multi-valued model checking to classical checks through the **join-irreducible**
elements J of the truth order (elements other than its bottom that are not the join of two
other elements): here J = {⊥, ⊤}, and every value is recovered from the classical answers
``v ⊒ j`` by ``v = ⊔_{j∈J} (j ⊓ (v ⊒ j))`` (:func:`reduce`). For transitions, ``⊒ ⊥`` selects
the *may* transitions (over-abstraction) and ``⊒ ⊤`` the *must* transitions
(under-abstraction); for a property, ``φ ⊒ ⊥`` is "not refuted" and ``φ ⊒ ⊤`` "proved".

:class:`Sym` is the same algebra over IR formulas: a value whose two evidence bits are boolean
expressions over a state, used to evaluate properties on abstract states.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TypeVar

from absmc.ir.expr import FALSE, TRUE, Expr, conj, disj, neg

_T = 1  # evidence for truth
_F = 2  # evidence for falsity


class Belnap(Enum):
    """An element of FOUR; ``value`` is its evidence set as bits (1: truth, 2: falsity)."""

    UNKNOWN = 0  # ⊥: no information
    TRUE = _T  # t
    FALSE = _F  # f
    BOTH = _T | _F  # ⊤: contradictory information

    @property
    def symbol(self) -> str:
        """``t``, ``f``, ``⊥`` or ``⊤`` (the paper's notation, used in JSON output)."""
        return _SYMBOLS[self]

    @property
    def has_truth(self) -> bool:
        """True for t and ⊤ (the value carries evidence that the statement holds)."""
        return bool(self.value & _T)

    @property
    def has_falsity(self) -> bool:
        """True for f and ⊤ (the value carries evidence that the statement fails)."""
        return bool(self.value & _F)

    def __str__(self) -> str:
        return self.symbol

    @staticmethod
    def of(truth: bool, falsity: bool) -> Belnap:
        """The value with the given evidence bits."""
        return Belnap((_T if truth else 0) | (_F if falsity else 0))

    @staticmethod
    def from_symbol(symbol: str) -> Belnap:
        """Inverse of :attr:`symbol`; raises ``KeyError`` for anything else."""
        return {v.symbol: v for v in Belnap}[symbol]

    @staticmethod
    def from_bool(b: bool) -> Belnap:
        """t or f."""
        return Belnap.TRUE if b else Belnap.FALSE


_SYMBOLS = {Belnap.UNKNOWN: "⊥", Belnap.TRUE: "t", Belnap.FALSE: "f", Belnap.BOTH: "⊤"}

T, F, BOT, TOP = Belnap.TRUE, Belnap.FALSE, Belnap.UNKNOWN, Belnap.BOTH
#: all four values, in a fixed order (for exhaustive tests and tables)
VALUES: tuple[Belnap, ...] = (F, BOT, TOP, T)


# -- truth order -----------------------------------------------------------------------
def meet(a: Belnap, b: Belnap) -> Belnap:
    """Conjunction ∧ (meet of the truth order): true evidence if both have it, false evidence
    if either has it."""
    return Belnap.of(a.has_truth and b.has_truth, a.has_falsity or b.has_falsity)


def join(a: Belnap, b: Belnap) -> Belnap:
    """Disjunction ∨ (join of the truth order)."""
    return Belnap.of(a.has_truth or b.has_truth, a.has_falsity and b.has_falsity)


def negate(a: Belnap) -> Belnap:
    """Negation ¬: swaps the evidence for truth and falsity (¬⊥ = ⊥, ¬⊤ = ⊤)."""
    return Belnap.of(a.has_falsity, a.has_truth)


def truth_leq(a: Belnap, b: Belnap) -> bool:
    """``a ⊑ b`` in the truth order: ``b`` has at least ``a``'s truth evidence and at most its
    falsity evidence."""
    return (not a.has_truth or b.has_truth) and (not b.has_falsity or a.has_falsity)


# -- information order -----------------------------------------------------------------
def consensus(a: Belnap, b: Belnap) -> Belnap:
    """⊗, the meet of the information order: the evidence both agree on (t ⊗ f = ⊥)."""
    return Belnap(a.value & b.value)


def gullibility(a: Belnap, b: Belnap) -> Belnap:
    """⊕, the join of the information order: all evidence of either (t ⊕ f = ⊤)."""
    return Belnap(a.value | b.value)


def info_leq(a: Belnap, b: Belnap) -> bool:
    """``a ≤ b`` in the information order: ``b``'s evidence includes ``a``'s."""
    return a.value & b.value == a.value


def meet_all(values: Iterable[Belnap]) -> Belnap:
    """∧ of all values (``t``, the truth-order top, for none)."""
    out = T
    for v in values:
        out = meet(out, v)
    return out


def join_all(values: Iterable[Belnap]) -> Belnap:
    """∨ of all values (``f``, the truth-order bottom, for none)."""
    out = F
    for v in values:
        out = join(out, v)
    return out


def consensus_all(values: Iterable[Belnap]) -> Belnap:
    """⊗ of all values (``⊤``, the information-order top, for none)."""
    out = TOP
    for v in values:
        out = consensus(out, v)
    return out


# -- join-irreducible elements and the §2.4 reduction ------------------------------------
_E = TypeVar("_E")


def join_irreducibles(
    elements: Sequence[_E], join_op: Callable[[_E, _E], _E], bottom: _E
) -> list[_E]:
    """The join-irreducible elements of a finite lattice given by its elements, its join and its
    bottom: every ``x != bottom`` such that ``x = a ⊔ b`` implies ``x = a`` or ``x = b``."""
    out = []
    for x in elements:
        if x == bottom:
            continue
        if not any(join_op(a, b) == x and a != x and b != x for a in elements for b in elements):
            out.append(x)
    return out


#: J of FOUR's truth order: {⊥, ⊤} (t = ⊥ ∨ ⊤ is reducible, f is the bottom)
JOIN_IRREDUCIBLE: tuple[Belnap, ...] = tuple(join_irreducibles(VALUES, join, F))


def cut(value: Belnap, j: Belnap) -> bool:
    """The classical question ``value ⊒ j`` (truth order) answered by the check for ``j``."""
    return truth_leq(j, value)


def reduce(value: Belnap) -> Belnap:
    """``⊔_{j∈J} (j ⊓ (value ⊒ j))`` (§2.4): rebuilds ``value`` from its classical cuts (the
    identity holds for every value; it is how the two classical answers are combined)."""
    return join_all(meet(j, Belnap.from_bool(cut(value, j))) for j in JOIN_IRREDUCIBLE)


def combine(cuts: dict[Belnap, bool]) -> Belnap:
    """The four-valued answer from the classical answers ``{j: value ⊒ j}`` for ``j ∈ J``
    (:func:`reduce` with the cuts given rather than computed)."""
    return join_all(meet(j, Belnap.from_bool(cuts[j])) for j in JOIN_IRREDUCIBLE)


# -- the same algebra over formulas ------------------------------------------------------
def all_of(parts: Iterable[Expr]) -> Expr:
    """Conjunction with constant folding (``false`` absorbs, ``true`` vanishes)."""
    ps = list(parts)
    return FALSE if FALSE in ps else conj(ps)


def any_of(parts: Iterable[Expr]) -> Expr:
    """Disjunction with constant folding (``true`` absorbs, ``false`` vanishes)."""
    ps = list(parts)
    return TRUE if TRUE in ps else disj(ps)


@dataclass(frozen=True)
class Sym:
    """A four-valued value of a state formula: ``truth`` is an IR condition under which the
    value has evidence for truth (the formula *definitely* holds), ``falsity`` one under which
    it has evidence for falsity (it definitely fails). For one state, the pair of booleans is a
    :class:`Belnap` value; the operations agree with :func:`meet`, :func:`join`, :func:`negate`
    and :func:`cut` pointwise."""

    truth: Expr
    falsity: Expr

    @staticmethod
    def exact(e: Expr) -> Sym:
        """A two-valued formula: true evidence ``e``, false evidence ``!e``."""
        return Sym(e, neg(e))

    @staticmethod
    def const(v: Belnap) -> Sym:
        """The constant value ``v``."""
        return Sym(TRUE if v.has_truth else FALSE, TRUE if v.has_falsity else FALSE)

    def __and__(self, other: Sym) -> Sym:
        return Sym(all_of([self.truth, other.truth]), any_of([self.falsity, other.falsity]))

    def __or__(self, other: Sym) -> Sym:
        return Sym(any_of([self.truth, other.truth]), all_of([self.falsity, other.falsity]))

    def __invert__(self) -> Sym:
        return Sym(self.falsity, self.truth)

    def cut(self, j: Belnap) -> Expr:
        """The condition ``self ⊒ j`` (truth order), e.g. ``cut(⊥)`` = "not definitely false",
        ``cut(⊤)`` = "definitely true"."""
        parts: list[Expr] = []
        if j.has_truth:
            parts.append(self.truth)
        if not j.has_falsity:
            parts.append(neg(self.falsity))
        return all_of(parts)


def sym_all(values: Iterable[Sym]) -> Sym:
    """∧ of symbolic values (``t`` for none)."""
    vs = list(values)
    return Sym(all_of(v.truth for v in vs), any_of(v.falsity for v in vs))


def sym_any(values: Iterable[Sym]) -> Sym:
    """∨ of symbolic values (``f`` for none)."""
    vs = list(values)
    return Sym(any_of(v.truth for v in vs), all_of(v.falsity for v in vs))
