"""Weakest preconditions of guarded commands (paper 000, Section 3), and the candidate
predicates a refinement takes from them (shared by ``under`` and ``fourvalued --refine``).

For a deterministic command ``i = (g -> x := e)``: ``wp(phi, i) = g => phi[e/x]``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from absmc.ir.expr import (
    Const,
    Expr,
    Op,
    atoms,
    conj,
    const,
    free_vars,
    subexpressions,
    substitute,
    transform,
)
from absmc.ir.linear import canonical_atom
from absmc.ir.simplify import simplify
from absmc.ir.system import Command


def post_image(phi: Expr, command: Command) -> Expr:
    """``phi[e/x]``: ``phi`` with the command's updates substituted simultaneously (the
    condition on the pre-state under which the post-state satisfies ``phi``)."""
    return substitute(phi, command.update_map())


def wp(phi: Expr, command: Command) -> Expr:
    """The weakest precondition ``g => phi[e/x]`` of ``phi`` with respect to ``command``."""
    return Op("=>", (command.guard, post_image(phi, command)))


def through(phi: Expr, commands: Sequence[Command]) -> Expr:
    """``phi`` pulled back through a sequence of commands (a chain of exclusive commands, or
    one command): the condition on the state before the first under which the state after the
    last satisfies ``phi`` (guards left out: see :func:`chain_condition`)."""
    for c in reversed(commands):
        phi = post_image(phi, c)
    return phi


def chain_condition(commands: Sequence[Command]) -> Expr:
    """When the commands, one after the other, are all enabled: ``g1 && g2[e1/x] && ...``
    (a condition on the state before the first)."""
    cond: Expr = const(True)
    for c in reversed(commands):
        cond = conj([c.guard, post_image(cond, c)])
    return cond


def _replacing(old: Expr, new: Expr) -> Callable[[Expr], Expr | None]:
    def fn(y: Expr) -> Expr | None:
        return new if y == old else None

    return fn


def _lifted(atom: Expr) -> list[Expr]:
    """An atom with a conditional term inside, ``p(c ? t : e)``, as the atoms of ``c``,
    ``p(t)`` and ``p(e)`` (recursively); other atoms as they are."""
    for x in subexpressions(atom):
        if x is not atom and isinstance(x, Op) and x.op == "ite":
            c, t, e = x.args
            out = list(atoms(c))
            for branch in (t, e):
                out += _lifted(transform(atom, _replacing(x, branch)))
            return out
    return [atom]


def predicate_atoms(
    e: Expr,
    variables: frozenset[str],
    order: Mapping[str, int] | None = None,
    lift_conditionals: bool = False,
) -> list[Expr]:
    """The canonical atoms of ``e`` (:func:`absmc.ir.linear.canonical_atom`, without repeats,
    constants left out) that mention one of ``variables``: the candidate predicates of a
    refinement (paper 000, Section 3: the atoms of a weakest precondition). With
    ``lift_conditionals``, an atom over a conditional term ``p(c ? t : e)`` gives the atoms of
    ``c``, ``p(t)`` and ``p(e)`` instead."""
    out: list[Expr] = []
    found = atoms(simplify(e))
    if lift_conditionals:
        found = tuple(b for a in found for b in _lifted(a))
    for a in found:
        if free_vars(a) & variables:
            c = canonical_atom(a, dict(order or {}))
            if not isinstance(simplify(c), Const) and c not in out:
                out.append(c)
    return out
