"""The concrete semantics of one guarded command as formulas, for the SMT enumeration.

The compiled and reference semantics (``absmc.codegen.python`` / ``absmc.ir.evaluate``) evaluate a
command as: the ``errors`` conditions first (one that holds, or whose evaluation divides by
zero, is a *model error*); then the guard left to right with short-circuit ``&& || => ?:``;
when it holds, every right-hand side in the old state, then the ``asserts`` conditions in order
(a false one violates its ``assert`` property, the command still executes); a division by zero
anywhere on that way, or a value outside an ``overflow="error"`` range, is a model error (no
successor); ``wrap`` ranges wrap around. These helpers state the same as IR formulas so that
the solver sees exactly the concrete behaviour (paper 004, §3.3: "each action can be modelled
using two terms: a guard term, and an effect term"). Every formula they return is itself safe
to evaluate left to right (it tests a divisor before dividing by it).
"""

from __future__ import annotations

from dataclasses import replace

from absmc.ir.expr import (
    Const,
    Expr,
    Op,
    const,
    free_vars,
    op,
    transform,
)
from absmc.ir.sorts import RangeSort
from absmc.ir.system import Command, System
from absmc.logic.definedness import (
    Asserts,
    assert_violation,
    can_fail,
    enabled_cleanly,
    enabled_or_failing,
    error_condition,
    pre_error,
    range_ok,
    statically_in_range,
)
from absmc.logic.definedness import definedness as defined

__all__ = [
    "Asserts",
    "assert_violation",
    "can_fail",
    "command_reads",
    "defined",
    "effective_value",
    "enabled_cleanly",
    "enabled_or_failing",
    "error_condition",
    "pre_error",
    "range_ok",
    "system_without_masks",
    "without_masks",
]


def effective_value(system: System, name: str, rhs: Expr) -> Expr:
    """The value ``name`` takes when assigned ``rhs``: wrapped into its range for a
    ``wrap`` range sort, ``rhs`` itself otherwise."""
    sort = system.by_name[name].sort
    if (
        isinstance(sort, RangeSort)
        and sort.overflow == "wrap"
        and not statically_in_range(system, name, rhs)
    ):
        size = const(sort.size)
        shifted = op("-", rhs, const(sort.lo)) if sort.lo else rhs
        # ((x % n) + n) % n is the non-negative remainder with C's truncating %
        wrapped = op("%", op("+", op("%", shifted, size), size), size)
        return op("+", wrapped, const(sort.lo)) if sort.lo else wrapped
    return rhs


def without_masks(e: Expr) -> Expr:
    """``e`` with every ``a & (2^k - 1)`` written ``((a % 2^k) + 2^k) % 2^k``: the same value on
    unbounded integers (the low ``k`` bits), in arithmetic the solver takes. The Promela front end
    writes C's truncations this way (``(x + 1 + 2^31 & 2^32 - 1) - 2^31`` for an ``int``)."""

    def fn(x: Expr) -> Expr | None:
        if isinstance(x, Op) and x.op == "&":
            a, b = x.args
            for mask, other in ((b, a), (a, b)):
                if (
                    isinstance(mask, Const)
                    and mask.value > 0
                    and (mask.value + 1) & mask.value == 0
                ):
                    m = const(mask.value + 1)
                    return op("%", op("+", op("%", other, m), m), m)
        return None

    return transform(e, fn)


def system_without_masks(system: System) -> System:
    """``system`` with :func:`without_masks` applied to every command (``system`` itself when
    no command has such a mask)."""

    def fix(c: Command) -> Command:
        return replace(
            c,
            guard=without_masks(c.guard),
            updates=tuple((n, without_masks(e)) for n, e in c.updates),
            asserts=tuple((n, without_masks(e)) for n, e in c.asserts),
            errors=tuple((without_masks(e), m) for e, m in c.errors),
        )

    fixed = tuple(fix(c) for c in system.commands)
    if fixed == system.commands:
        return system
    return system.with_(commands=fixed)


def command_reads(command: Command) -> frozenset[str]:
    """Every variable the command reads: guard, right-hand sides, assertions and error
    conditions."""
    return free_vars(command.guard).union(
        *(free_vars(e) for _, e in command.updates),
        *(free_vars(e) for _, e in command.asserts),
        *(free_vars(e) for e, _ in command.errors),
    )
