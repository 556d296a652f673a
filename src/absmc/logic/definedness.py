"""When evaluating an IR expression or executing a command is a *model error* (one semantics
for every engine).

The compiled and reference semantics (``absmc.codegen.python`` / ``absmc.ir.evaluate``) evaluate
left to right with short-circuit ``&& || => ?:``; a division or remainder by zero is a model
error, not a value (C makes it undefined behaviour). The solver's encoding of ``x / 0``
(``absmc.logic.z3conv``) is an unspecified value, so a formula that reads an expression must be
guarded with the expression's :func:`definedness`: a predicate whose evaluation is a model
error is neither true nor false. A command is evaluated as: the ``errors`` conditions first
(one that holds, or whose evaluation divides by zero, is a model error); then the guard; when
it holds, every right-hand side in the old state and the ``asserts`` conditions in order; a
division by zero anywhere on that way, or a value outside an ``overflow="error"`` range, is a
model error (no successor). Shifts never fail (a negative count gives 0) and ``wrap`` ranges
wrap around, so neither needs a condition here. Every formula returned is itself safe to
evaluate left to right (it tests a divisor before dividing by it).
"""

from __future__ import annotations

from collections.abc import Sequence

from absmc.ir.expr import TRUE, Const, Expr, Op, Var, conj, const, disj, neg, op
from absmc.ir.sorts import RangeSort
from absmc.ir.system import Command, System


def definedness(e: Expr) -> Expr:
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
            dx = definedness(x)
            if dx != TRUE:
                out = conj([out, disj([neg(conj(guards)), dx]) if guards else dx])
            guards.append(x)
        return out
    if e.op == "||":
        out = TRUE
        seen: list[Expr] = []
        for x in a:
            dx = definedness(x)
            if dx != TRUE:
                out = conj([out, disj([*seen, dx]) if seen else dx])
            seen.append(x)
        return out
    if e.op == "select":
        from absmc.ir.arrays import select_chain

        return definedness(select_chain(a[0], a[1:]))
    if e.op == "ite":
        c, x, y = a
        dc, dx, dy = definedness(c), definedness(x), definedness(y)
        parts = [dc]
        if dx != TRUE:
            parts.append(disj([neg(c), dx]))
        if dy != TRUE:
            parts.append(disj([c, dy]))
        return conj(parts)
    parts = [definedness(x) for x in a]
    if e.op in ("/", "%") and not (isinstance(a[1], Const) and a[1].value != 0):
        parts.append(op("!=", a[1], const(0)))
    return conj(parts)


def three_valued_literal(atom: Expr, value: bool | None) -> Expr:
    """The formula of a predicate with a three-valued reading: ``value`` ``True`` /
    ``False`` is ``definedness(atom) ∧ atom`` / ``definedness(atom) ∧ ¬atom``, ``None`` (its
    evaluation is a model error) is ``¬definedness(atom)``. Without a possible division by zero
    the plain literal (``None`` then gives ``FALSE``)."""
    d = definedness(atom)
    if value is None:
        return neg(d)
    return conj([d, atom if value else neg(atom)])


def violation_condition(expr: Expr, kind: str) -> Expr:
    """When a state property over ``expr`` (``kind`` ``"invariant"`` or ``"unreachable"``) is
    violated in the compiled semantics: its condition is bad, or evaluating it is a model
    error (the compiled property check counts a division by zero as a violation)."""
    bad = neg(expr) if kind == "invariant" else expr
    d = definedness(expr)
    return bad if d == TRUE else disj([neg(d), bad])


def statically_in_range(system: System, name: str, rhs: Expr) -> bool:
    """True when assigning ``rhs`` to ``name`` can never leave ``name``'s range (a constant
    inside it, or a variable of the same range sort)."""
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
            and not statically_in_range(system, name, rhs)
        ):
            parts.append(op("<=", const(sort.lo), rhs))
            parts.append(op("<=", rhs, const(sort.hi)))
    return conj(parts)


Asserts = Sequence[tuple[str, Expr]]


def pre_error(command: Command) -> Expr:
    """The command's ``errors`` conditions (checked before the guard): one of them holds, or
    evaluating one divides by zero."""
    parts: list[Expr] = []
    for cond, _ in command.errors:
        d = definedness(cond)
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
        [*(definedness(rhs) for _, rhs in command.updates), *(definedness(a) for _, a in asserts)]
    )
    in_range = range_ok(system, command)
    update_error = neg(conj([d_updates, in_range]))
    return disj([pre_error(command), neg(definedness(g)), conj([g, update_error])])


def assert_violation(
    command: Command, guard: Expr, asserts: Asserts, k: int, pre_ok: bool = False
) -> Expr:
    """When executing ``command`` records a violation of its ``k``-th checked assertion: no
    ``errors`` condition holds (skipped when ``pre_ok``), the guard holds, the updates and the
    assertions up to ``k`` are defined, and assertion ``k`` is false (the compiled code checks
    assertions in order after computing the updates and before the range checks)."""
    parts: list[Expr] = [] if pre_ok else [neg(pre_error(command))]
    parts += [definedness(guard), guard]
    parts += [definedness(rhs) for _, rhs in command.updates]
    parts += [definedness(a) for _, a in asserts[: k + 1]]
    parts.append(neg(asserts[k][1]))
    return conj(parts)


def can_fail(system: System, command: Command, asserts: Asserts = ()) -> bool:
    """True when some state could make ``command`` a model error (an ``errors`` condition, a
    division by a non-constant, or an assignment to an error range that is not obviously inside
    it)."""
    return (
        bool(command.errors)
        or definedness(command.guard) != TRUE
        or any(definedness(rhs) != TRUE for _, rhs in command.updates)
        or any(definedness(a) != TRUE for _, a in asserts)
        or range_ok(system, command) != TRUE
    )


def enabled_or_failing(command: Command) -> Expr:
    """The condition under which ``command`` does something in a state: an ``errors`` condition
    holds, its guard holds, or evaluating the guard fails (a failure is reported instead of a
    deadlock). Safe to evaluate."""
    d = definedness(command.guard)
    return disj([pre_error(command), *([neg(d)] if d != TRUE else []), command.guard])


def enabled_cleanly(system: System, command: Command, asserts: Asserts = ()) -> Expr:
    """The condition under which ``command`` has a successor: no model error and the guard
    holds. Safe to evaluate."""
    if not can_fail(system, command, asserts):
        return command.guard
    return conj([neg(error_condition(system, command, None, asserts)), command.guard])
