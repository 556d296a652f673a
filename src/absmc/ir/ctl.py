"""Computation-tree logic (CTL) formulas over IR state expressions (GCL ``ctl NAME: F;``).

A formula is a frozen tree: :class:`Atom` (a bool IR expression over the state), :class:`Not`,
:class:`And`, :class:`Or`, :class:`Implies`, :class:`Temporal` (``AX AF AG EX EF EG`` applied
to one subformula) and :class:`Until` (``A[p U q]``, ``E[p U q]``).

Semantics (the convention shared by the explicit labelling and the symbolic engine): paths are
infinite; a state with no successor (a deadlock) is treated as having itself as its only
successor (SMV-style totalization by stuttering). So ``EX true`` holds everywhere and a path
that ends in a dead state stays there forever — a witness of ``EG p`` when ``p`` holds there.

:func:`to_enf` rewrites a formula into the existential normal form the fixpoint algorithms use
(``EX``, ``EU``, ``EG`` with ``!``, ``&&``, ``||``); :func:`is_universal` tells ACTL formulas
(whose negation is ECTL, paper 002 §4) from the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

from absmc.ir.expr import TRUE, Expr, atoms
from absmc.ir.printer import format_expr
from absmc.ir.span import SourceSpan

TemporalOp = Literal["AX", "AF", "AG", "EX", "EF", "EG"]
TEMPORAL_OPS: Final = ("AX", "AF", "AG", "EX", "EF", "EG")


@dataclass(frozen=True)
class Atom:
    """A state expression (bool IR)."""

    expr: Expr


@dataclass(frozen=True)
class Not:
    """``!f``."""

    arg: Formula


@dataclass(frozen=True)
class And:
    """``f && g``."""

    left: Formula
    right: Formula


@dataclass(frozen=True)
class Or:
    """``f || g``."""

    left: Formula
    right: Formula


@dataclass(frozen=True)
class Implies:
    """``f => g``."""

    left: Formula
    right: Formula


@dataclass(frozen=True)
class Temporal:
    """``op f`` with ``op`` one of :data:`TEMPORAL_OPS`."""

    op: TemporalOp
    arg: Formula


@dataclass(frozen=True)
class Until:
    """``A[left U right]`` (``path == "A"``) or ``E[left U right]``."""

    path: Literal["A", "E"]
    left: Formula
    right: Formula


Formula = Atom | Not | And | Or | Implies | Temporal | Until


@dataclass(frozen=True)
class CtlProperty:
    """A named CTL property of a model: it holds when every initial state satisfies
    ``formula``."""

    name: str
    formula: Formula
    span: SourceSpan | None = field(default=None, compare=False)


def format_ctl(f: Formula) -> str:
    """The formula in GCL syntax (fully parenthesized binary connectives)."""
    if isinstance(f, Atom):
        return format_expr(f.expr)
    if isinstance(f, Not):
        return f"!({format_ctl(f.arg)})"
    if isinstance(f, And):
        return f"({format_ctl(f.left)} && {format_ctl(f.right)})"
    if isinstance(f, Or):
        return f"({format_ctl(f.left)} || {format_ctl(f.right)})"
    if isinstance(f, Implies):
        return f"({format_ctl(f.left)} => {format_ctl(f.right)})"
    if isinstance(f, Temporal):
        return f"{f.op}({format_ctl(f.arg)})"
    return f"{f.path}[{format_ctl(f.left)} U {format_ctl(f.right)}]"


def subformulas(f: Formula) -> list[Formula]:
    """Every subformula of ``f`` (``f`` included), children before parents."""
    out: list[Formula] = []
    stack: list[tuple[Formula, bool]] = [(f, False)]
    while stack:
        g, done = stack.pop()
        if done:
            out.append(g)
            continue
        stack.append((g, True))
        stack.extend((c, False) for c in reversed(children(g)))
    return out


def children(f: Formula) -> tuple[Formula, ...]:
    """The immediate subformulas."""
    if isinstance(f, Atom):
        return ()
    if isinstance(f, (Not, Temporal)):
        return (f.arg,)
    return (f.left, f.right)


def state_atoms(f: Formula) -> list[Expr]:
    """The atomic propositions (comparisons and bool variables) of the formula's state
    expressions, without duplicates, in order of appearance."""
    out: list[Expr] = []
    for g in subformulas(f):
        if isinstance(g, Atom):
            for a in atoms(g.expr):
                if a not in out:
                    out.append(a)
    return out


#: the formula ``true``
TRUE_F: Final[Formula] = Atom(TRUE)


# -- existential normal form --------------------------------------------------------------------
# ENF: Atom, Not, And, Or, EX, EU (Until "E"), EG (Temporal "EG") only.


def to_enf(f: Formula) -> Formula:
    """An equivalent formula using only ``Atom Not And Or EX E[U] EG`` (standard identities:
    ``AX f = !EX !f``, ``EF f = E[true U f]``, ``AF f = !EG !f``, ``AG f = !EF !f``,
    ``A[f U g] = !E[!g U (!f && !g)] && !EG !g``, ``f => g = !f || g``)."""
    if isinstance(f, Atom):
        return f
    if isinstance(f, Not):
        return _not(to_enf(f.arg))
    if isinstance(f, And):
        return And(to_enf(f.left), to_enf(f.right))
    if isinstance(f, Or):
        return Or(to_enf(f.left), to_enf(f.right))
    if isinstance(f, Implies):
        return Or(_not(to_enf(f.left)), to_enf(f.right))
    if isinstance(f, Until):
        a, b = to_enf(f.left), to_enf(f.right)
        if f.path == "E":
            return Until("E", a, b)
        nb = _not(b)
        return And(
            _not(Until("E", nb, And(_not(a), nb))),
            _not(Temporal("EG", nb)),
        )
    g = to_enf(f.arg)
    if f.op == "EX":
        return Temporal("EX", g)
    if f.op == "EG":
        return Temporal("EG", g)
    if f.op == "EF":
        return Until("E", TRUE_F, g)
    if f.op == "AX":
        return _not(Temporal("EX", _not(g)))
    if f.op == "AF":
        return _not(Temporal("EG", _not(g)))
    return _not(Until("E", TRUE_F, _not(g)))  # AG


def _not(f: Formula) -> Formula:
    return f.arg if isinstance(f, Not) else Not(f)


def is_universal(f: Formula) -> bool:
    """True when ``f`` is an ACTL formula: after pushing negations to the atoms, only universal
    path quantifiers remain (the fragment whose verdicts predicate abstraction preserves,
    paper 002 Lemma 2.3)."""
    return _universal(f, True)


def _universal(f: Formula, positive: bool) -> bool:
    if isinstance(f, Atom):
        return True
    if isinstance(f, Not):
        return _universal(f.arg, not positive)
    if isinstance(f, (And, Or)):
        return _universal(f.left, positive) and _universal(f.right, positive)
    if isinstance(f, Implies):
        return _universal(f.left, not positive) and _universal(f.right, positive)
    quant = f.op[0] if isinstance(f, Temporal) else f.path
    if (quant == "A") != positive:
        return False
    return all(_universal(c, positive) for c in children(f))
