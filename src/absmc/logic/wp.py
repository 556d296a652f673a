"""Weakest preconditions of guarded commands (paper 000, Section 3).

For a deterministic command ``i = (g -> x := e)``: ``wp(phi, i) = g => phi[e/x]``.
"""

from __future__ import annotations

from absmc.ir.expr import Expr, Op, substitute
from absmc.ir.system import Command


def post_image(phi: Expr, command: Command) -> Expr:
    """``phi[e/x]``: ``phi`` with the command's updates substituted simultaneously (the
    condition on the pre-state under which the post-state satisfies ``phi``)."""
    return substitute(phi, command.update_map())


def wp(phi: Expr, command: Command) -> Expr:
    """The weakest precondition ``g => phi[e/x]`` of ``phi`` with respect to ``command``."""
    return Op("=>", (command.guard, post_image(phi, command)))
