"""Linear normal forms of integer terms and a canonical form for predicates.

Predicate abstraction treats syntactic variants of one predicate as one predicate (paper 000's
tables list ``x ≤ y`` once although the guards say ``x <= y`` and ``y < x``). The canonical
form of a comparison atom:

* negation is dropped (a predicate and its negation are one predicate);
* ``<``, ``>``, ``>=``, ``!=`` become ``<=`` / ``==`` (``a < b`` is ``¬(b <= a)``);
* both sides are read as a linear combination ``Σ c·t + k`` of variables and opaque
  non-linear terms, moved to ``L <= 0`` / ``L == 0``, and printed back with positive terms on
  the left and negative ones on the right: ``x + 1 <= y``, ``x <= y + 1``, ``0 <= y``;
  for ``==`` the first term (in variable order) is made positive and the constant goes right:
  ``c1 == e1``, ``e1 == 0``, ``e1 == -1``.

Atoms that are not comparisons of integer terms (boolean variables, ``ite``, …) are kept as
they are; comparisons whose linear form has no term (``x + 1 <= x``) become ``true``/``false``.
"""

from __future__ import annotations

from collections.abc import Mapping

from absmc.ir.expr import Const, Expr, Op, Var
from absmc.ir.printer import format_expr
from absmc.ir.sorts import BOOL

Linear = tuple[dict[Expr, int], int]


def linear_form(e: Expr) -> Linear:
    """``e`` as ``({term: coefficient}, constant)``; non-linear subterms (products of two
    non-constants, ``/``, ``%``, ``ite``) are opaque terms with coefficient 1."""
    if isinstance(e, Const):
        return {}, e.value
    if isinstance(e, Var):
        return {e: 1}, 0
    assert isinstance(e, Op)
    if e.op in ("+", "-"):
        (ta, ka), (tb, kb) = linear_form(e.args[0]), linear_form(e.args[1])
        sign = 1 if e.op == "+" else -1
        out = dict(ta)
        for t, c in tb.items():
            out[t] = out.get(t, 0) + sign * c
        return {t: c for t, c in out.items() if c}, ka + sign * kb
    if e.op == "neg":
        terms, k = linear_form(e.args[0])
        return {x: -c for x, c in terms.items()}, -k
    if e.op == "*":
        (ta, ka), (tb, kb) = linear_form(e.args[0]), linear_form(e.args[1])
        if not ta:
            return {t: ka * c for t, c in tb.items() if ka * c}, ka * kb
        if not tb:
            return {t: kb * c for t, c in ta.items() if kb * c}, ka * kb
    return {e: 1}, 0


def _order_key(t: Expr, order: Mapping[str, int]) -> tuple[int, int, str]:
    if isinstance(t, Var):
        return (0, order.get(t.name, len(order)), t.name)
    return (1, 0, format_expr(t))


def _sum(terms: list[tuple[Expr, int]], k: int) -> Expr:
    parts: list[Expr] = []
    for t, c in terms:
        parts.append(t if c == 1 else Op("*", (Const(c), t)))
    if k or not parts:
        parts.append(Const(k))
    out = parts[0]
    for p in parts[1:]:
        out = Op("+", (out, p))
    return out


def canonical_atom(atom: Expr, order: Mapping[str, int] | None = None) -> Expr:
    """The canonical representative of the predicate ``atom`` (see module docstring).
    ``order`` maps variable names to their position (declaration order); unknown names sort
    after known ones, alphabetically."""
    order = order or {}
    while isinstance(atom, Op) and atom.op == "!":
        atom = atom.args[0]
    if not (isinstance(atom, Op) and atom.op in ("==", "!=", "<", "<=", ">", ">=")):
        return atom
    a, b = atom.args
    if a.is_bool or b.is_bool:
        return atom
    o = atom.op
    if o in ("==", "!="):
        lhs, rhs, rel = a, b, "=="
    elif o == "<=" or o == ">":
        lhs, rhs, rel = a, b, "<="
    else:  # a < b  is  ¬(b <= a);  a >= b  is  b <= a
        lhs, rhs, rel = b, a, "<="
    (tl, kl), (tr, kr) = linear_form(lhs), linear_form(rhs)
    coeffs = dict(tl)
    for t, c in tr.items():
        coeffs[t] = coeffs.get(t, 0) - c
    coeffs = {t: c for t, c in coeffs.items() if c}
    k = kl - kr
    if not coeffs:  # ground: the atom is a truth value
        return Const(int(k == 0 if rel == "==" else k <= 0), BOOL)
    terms = sorted(coeffs.items(), key=lambda tc: _order_key(tc[0], order))
    if rel == "==":
        if terms[0][1] < 0:
            terms = [(t, -c) for t, c in terms]
            k = -k
        left = [(t, c) for t, c in terms if c > 0]
        right = [(t, -c) for t, c in terms if c < 0]
        return Op("==", (_sum(left, 0) if left else Const(0), _sum(right, -k)))
    left = [(t, c) for t, c in terms if c > 0]
    right = [(t, -c) for t, c in terms if c < 0]
    return Op("<=", (_sum(left, max(k, 0)), _sum(right, max(-k, 0))))
