"""The concrete semantics of one guarded command as formulas, for the SMT enumeration.

The compiled and reference semantics (``absmc.ir.compile`` / ``absmc.ir.evaluate``) evaluate a
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

from collections.abc import Sequence
from dataclasses import replace

from absmc.ir.expr import (
    TRUE,
    Const,
    Expr,
    Op,
    Var,
    conj,
    const,
    disj,
    free_vars,
    neg,
    op,
    transform,
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


Asserts = Sequence[tuple[str, Expr]]


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


def pre_error(command: Command) -> Expr:
    """The command's ``errors`` conditions (checked before the guard): one of them holds, or
    evaluating one divides by zero."""
    parts: list[Expr] = []
    for cond, _ in command.errors:
        d = defined(cond)
        if d != TRUE:
            parts.append(neg(d))
        parts.append(cond)
    return disj(parts)


def error_condition(
    system: System, command: Command, guard: Expr | None = None, asserts: Asserts = ()
) -> Expr:
    """When executing ``command`` is a model error: an ``errors`` condition holds, its guard
    (``guard`` if given: the part evaluated after an error-free prefix) divides by zero, or it
    holds and an update or one of the checked ``asserts`` divides by zero or an update leaves
    an error range."""
    g = command.guard if guard is None else guard
    d_updates = conj(
        [*(defined(rhs) for _, rhs in command.updates), *(defined(a) for _, a in asserts)]
    )
    in_range = range_ok(system, command)
    update_error = neg(conj([d_updates, in_range]))
    return disj([pre_error(command), neg(defined(g)), conj([g, update_error])])


def assert_violation(
    command: Command, guard: Expr, asserts: Asserts, k: int, pre_ok: bool = False
) -> Expr:
    """When executing ``command`` records a violation of its ``k``-th checked assertion: no
    ``errors`` condition holds (skipped when ``pre_ok``), the guard holds, the updates and the
    assertions up to ``k`` are defined, and assertion ``k`` is false (the compiled code checks
    assertions in order after computing the updates and before the range checks)."""
    parts: list[Expr] = [] if pre_ok else [neg(pre_error(command))]
    parts += [defined(guard), guard]
    parts += [defined(rhs) for _, rhs in command.updates]
    parts += [defined(a) for _, a in asserts[: k + 1]]
    parts.append(neg(asserts[k][1]))
    return conj(parts)


def can_fail(system: System, command: Command, asserts: Asserts = ()) -> bool:
    """True when some state could make ``command`` a model error (an ``errors`` condition, a
    division by a non-constant, or an assignment to an error range that is not obviously inside
    it)."""
    return (
        bool(command.errors)
        or defined(command.guard) != TRUE
        or any(defined(rhs) != TRUE for _, rhs in command.updates)
        or any(defined(a) != TRUE for _, a in asserts)
        or range_ok(system, command) != TRUE
    )


def enabled_or_failing(command: Command) -> Expr:
    """The condition under which ``command`` does something in a state: an ``errors`` condition
    holds, its guard holds, or evaluating the guard fails (a failure is reported instead of a
    deadlock). Safe to evaluate."""
    d = defined(command.guard)
    return disj([pre_error(command), *([neg(d)] if d != TRUE else []), command.guard])


def enabled_cleanly(system: System, command: Command, asserts: Asserts = ()) -> Expr:
    """The condition under which ``command`` has a successor: no model error and the guard
    holds. Safe to evaluate."""
    if not can_fail(system, command, asserts):
        return command.guard
    return conj([neg(error_condition(system, command, None, asserts)), command.guard])
