"""The concrete semantics of one guarded command as formulas, for the SMT enumeration.

The compiled and reference semantics (``absmc.ir.compile`` / ``absmc.ir.evaluate``) evaluate a
command as: evaluate the guard left to right with short-circuit ``&& || => ?:``; when it holds,
evaluate every right-hand side in the old state; a division by zero anywhere on that way, or a
value outside an ``overflow="error"`` range, is a *model error* (no successor); ``wrap`` ranges
wrap around. These helpers state the same as IR formulas so that the solver sees exactly the
concrete behaviour (paper 004, §3.3: "each action can be modelled using two terms: a guard term,
and an effect term").
"""

from __future__ import annotations

from absmc.ir.expr import (
    TRUE,
    Const,
    Expr,
    Op,
    Var,
    conj,
    const,
    disj,
    neg,
    op,
)
from absmc.ir.sorts import RangeSort
from absmc.ir.system import Command, System


def defined(e: Expr) -> Expr:
    """The condition under which evaluating ``e`` (left to right, short-circuit) divides by no
    zero. ``TRUE`` when ``e`` has no ``/`` or ``%`` by a non-constant. The condition itself is
    safe to evaluate in the same order (it only divides after checking the divisor)."""
    if isinstance(e, (Const, Var)):
        return TRUE
    assert isinstance(e, Op)
    a = e.args
    if e.op in ("&&", "=>"):
        # a && b: b is evaluated only when a holds (likewise for =>)
        out: Expr = TRUE
        guards: list[Expr] = []
        for x in a:
            dx = defined(x)
            if dx != TRUE:
                out = conj([out, disj([neg(conj(guards)), dx]) if guards else dx])
            guards.append(x)
        return out
    if e.op == "||":
        out = TRUE
        seen: list[Expr] = []
        for x in a:
            dx = defined(x)
            if dx != TRUE:
                out = conj([out, disj([*seen, dx]) if seen else dx])
            seen.append(x)
        return out
    if e.op == "ite":
        c, x, y = a
        dc, dx, dy = defined(c), defined(x), defined(y)
        parts = [dc]
        if dx != TRUE:
            parts.append(disj([neg(c), dx]))
        if dy != TRUE:
            parts.append(disj([c, dy]))
        return conj(parts)
    parts = [defined(x) for x in a]
    if e.op in ("/", "%") and not (isinstance(a[1], Const) and a[1].value != 0):
        parts.append(op("!=", a[1], const(0)))
    return conj(parts)


def effective_value(system: System, name: str, rhs: Expr) -> Expr:
    """The value ``name`` takes when assigned ``rhs``: wrapped into its range for a
    ``wrap`` range sort, ``rhs`` itself otherwise."""
    sort = system.by_name[name].sort
    if isinstance(sort, RangeSort) and sort.overflow == "wrap" and not _in_range(system, name, rhs):
        size = const(sort.size)
        shifted = op("-", rhs, const(sort.lo)) if sort.lo else rhs
        # ((x % n) + n) % n is the non-negative remainder with C's truncating %
        wrapped = op("%", op("+", op("%", shifted, size), size), size)
        return op("+", wrapped, const(sort.lo)) if sort.lo else wrapped
    return rhs


def _in_range(system: System, name: str, rhs: Expr) -> bool:
    sort = system.by_name[name].sort
    if not isinstance(sort, RangeSort):
        return True
    if isinstance(rhs, Const):
        return sort.contains(rhs.value)
    return isinstance(rhs, Var) and system.by_name[rhs.name].sort == sort


def range_ok(system: System, command: Command) -> Expr:
    """The condition under which every assignment of ``command`` to an ``overflow="error"``
    range stays inside it."""
    parts: list[Expr] = []
    for name, rhs in command.updates:
        sort = system.by_name[name].sort
        if (
            isinstance(sort, RangeSort)
            and sort.overflow == "error"
            and not _in_range(system, name, rhs)
        ):
            parts.append(op("<=", const(sort.lo), rhs))
            parts.append(op("<=", rhs, const(sort.hi)))
    return conj(parts)


def error_condition(system: System, command: Command, guard: Expr | None = None) -> Expr:
    """When executing ``command`` is a model error: its guard (``guard`` if given: the part
    evaluated after an error-free prefix) divides by zero, or it holds and an update divides by
    zero or leaves an error range."""
    g = command.guard if guard is None else guard
    d_updates = conj([defined(rhs) for _, rhs in command.updates])
    in_range = range_ok(system, command)
    update_error = neg(conj([d_updates, in_range]))
    return disj([neg(defined(g)), conj([g, update_error])])


def can_fail(system: System, command: Command) -> bool:
    """True when some state could make ``command`` a model error (a division by a non-constant,
    or an assignment to an error range that is not obviously inside it)."""
    return (
        defined(command.guard) != TRUE
        or any(defined(rhs) != TRUE for _, rhs in command.updates)
        or range_ok(system, command) != TRUE
    )


def enabled_or_failing(command: Command) -> Expr:
    """The condition under which ``command`` does something in a state: its guard holds or
    evaluating the guard fails (a failure is reported instead of a deadlock). Safe to evaluate."""
    d = defined(command.guard)
    if d == TRUE:
        return command.guard
    return disj([neg(d), command.guard])
