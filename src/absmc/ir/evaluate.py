"""Reference (tree-walking) evaluation of IR expressions and commands.

This is the *definition* of the concrete semantics, kept deliberately simple: the compiled
successor functions of :mod:`absmc.codegen.python` must agree with it (tests check this on random
systems). It is too slow for search; engines use the compiled code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from absmc.ir.expr import Const, Expr, Op, Var
from absmc.ir.intsem import ARITHMETIC, tdiv, tmod
from absmc.ir.sorts import RangeSort
from absmc.ir.system import Command, System
from absmc.ir.walker import ExprWalker


class EvalError(Exception):
    """A model error during evaluation: division by zero or an out-of-range assignment."""


class _Failure:
    """The value of a subexpression whose evaluation fails: the exception to raise if the
    failure is reached (a short-circuiting operator may never reach it)."""

    __slots__ = ("error",)

    def __init__(self, error: Exception) -> None:
        self.error = error


Value = int | _Failure

_BINARY: dict[str, Callable[[int, int], int]] = {
    **ARITHMETIC,
    "==": lambda a, b: int(a == b),
    "!=": lambda a, b: int(a != b),
    "<": lambda a, b: int(a < b),
    "<=": lambda a, b: int(a <= b),
    ">": lambda a, b: int(a > b),
    ">=": lambda a, b: int(a >= b),
}


class Evaluator(ExprWalker[Value]):
    """The reference semantics as a walk: every subexpression is evaluated once, arguments
    first; a failing one (division by zero, a missing variable) yields a :class:`_Failure` that
    strict operators pass on and ``&& || => ite`` only pass on when the left-to-right,
    short-circuit evaluation would reach it — the same outcome as evaluating lazily."""

    def __init__(self, env: Mapping[str, int]) -> None:
        super().__init__()
        self.env = env

    def walk_const(self, e: Const) -> Value:
        return e.value

    def walk_var(self, e: Var) -> Value:
        try:
            return int(self.env[e.name])
        except KeyError as err:
            return _Failure(err)

    def walk_and(self, e: Op, args: list[Value]) -> Value:
        for a in args:
            if isinstance(a, _Failure) or not a:
                return a if isinstance(a, _Failure) else 0
        return 1

    def walk_or(self, e: Op, args: list[Value]) -> Value:
        for a in args:
            if isinstance(a, _Failure) or a:
                return a if isinstance(a, _Failure) else 1
        return 0

    def walk_implies(self, e: Op, args: list[Value]) -> Value:
        a, b = args
        if isinstance(a, _Failure):
            return a
        if not a:
            return 1
        return b if isinstance(b, _Failure) else int(bool(b))

    def walk_ite(self, e: Op, args: list[Value]) -> Value:
        c, a, b = args
        if isinstance(c, _Failure):
            return c
        return a if c else b

    def walk_select(self, e: Op, args: list[Value]) -> Value:
        i = args[0]
        if isinstance(i, _Failure):
            return i
        n = len(args) - 1
        return args[1 + i] if 0 <= i < n else args[n]

    def walk_op(self, e: Op, args: list[Value]) -> Value:
        for a in args:
            if type(a) is not int:
                return a
        try:
            return apply_operator(e.op, args)  # type: ignore[arg-type]
        except EvalError as err:
            return _Failure(err)


def apply_operator(o: str, values: Sequence[int]) -> int:
    """The value of a strict operator (not ``&& || => ite``) applied to ``values`` (bools as
    0/1), with the integer semantics of :mod:`absmc.ir.intsem`. Raises ``EvalError`` on
    division by zero, ``KeyError`` for a non-strict or unknown operator."""
    x = values[0]
    if len(values) == 1:
        if o == "!":
            return int(not x)
        if o == "neg":
            return -x
        if o == "~":
            return ~x
        raise KeyError(o)
    y = values[1]
    if o == "/" or o == "%":
        if y == 0:
            raise EvalError("division by zero")
        return tdiv(x, y) if o == "/" else tmod(x, y)
    return _BINARY[o](x, y)


def evaluate(e: Expr, env: Mapping[str, int]) -> int:
    """Value of ``e`` in ``env`` (bools as 0/1). ``&&``, ``||``, ``=>`` and ``ite`` evaluate left
    to right and short-circuit. Raises ``EvalError`` on division by zero and ``KeyError`` for a
    variable missing from ``env`` (only when the evaluation reaches them)."""
    if isinstance(e, Const):
        return e.value
    v = Evaluator(env).walk(e)
    if isinstance(v, _Failure):
        raise v.error
    return v


def env_of(system: System, state: tuple[int, ...]) -> dict[str, int]:
    """The environment ``{name: value}`` of a state tuple."""
    return {v.name: x for v, x in zip(system.variables, state, strict=True)}


def execute(system: System, command: Command, state: tuple[int, ...]) -> tuple[int, ...] | None:
    """The successor of ``state`` under ``command``, or ``None`` when its guard is false.

    Raises ``EvalError`` on division by zero or an assignment outside a finite range with
    ``overflow="error"``; ``wrap`` ranges wrap around.
    """
    env = env_of(system, state)
    if not evaluate(command.guard, env):
        return None
    new = list(state)
    idx = system.index_of
    for name, rhs in command.updates:
        value = evaluate(rhs, env)
        sort = system.by_name[name].sort
        if isinstance(sort, RangeSort) and not sort.contains(value):
            if sort.overflow == "wrap":
                value = sort.wrap(value)
            else:
                raise EvalError(f"value {value} out of range {sort} for {name}")
        new[idx[name]] = value
    return tuple(new)


def reference_successors(
    system: System, state: tuple[int, ...]
) -> list[tuple[int, tuple[int, ...] | EvalError]]:
    """All ``(command index, successor or error)`` pairs of ``state`` in command order."""
    out: list[tuple[int, tuple[int, ...] | EvalError]] = []
    for c in system.commands:
        try:
            nxt = execute(system, c, state)
        except EvalError as err:
            out.append((c.index, err))
            continue
        if nxt is not None:
            out.append((c.index, nxt))
    return out


def _one_step(
    system: System, state: tuple[int, ...], commands: list[Command]
) -> tuple[list[tuple[int, tuple[int, ...]]], list[tuple[int, str]]]:
    """Successors of ``state`` under each of ``commands`` (no chaining), and ``(command,
    property)`` pairs of the errors met: ``no-model-error`` or a failed ``asserts`` entry."""
    from absmc.ir.system import NO_MODEL_ERROR

    succ: list[tuple[int, tuple[int, ...]]] = []
    errors: list[tuple[int, str]] = []
    env = env_of(system, state)
    for c in commands:
        try:
            if any(evaluate(cond, env) for cond, _ in c.errors):
                errors.append((c.index, NO_MODEL_ERROR))
                continue
            nxt = execute(system, c, state)
        except EvalError:
            errors.append((c.index, NO_MODEL_ERROR))
            continue
        if nxt is None:
            continue
        for prop, cond in c.asserts:
            try:
                ok = evaluate(cond, env)
            except EvalError:
                ok = 0
            if not ok:
                errors.append((c.index, prop))
        succ.append((c.index, nxt))
    return succ, errors


def reference_steps(
    system: System, state: tuple[int, ...]
) -> tuple[set[tuple[int, ...]], set[tuple[int, str]]]:
    """The reference semantics of one step of the search, with ``timeout`` flags and exclusive
    chains (see ``Command``): the set of stored successor states, and the set of
    ``(first command, property)`` errors met on the way. Slow; for tests."""
    normal = [c for c in system.commands if "timeout" not in c.flags]
    first, errors = _one_step(system, state, normal)
    if not first:
        first, more = _one_step(system, state, [c for c in system.commands if "timeout" in c.flags])
        errors += more
    out: set[tuple[int, ...]] = set()
    errs = {(ci, p) for ci, p in errors}
    for ci, t in first:
        owner = system.commands[ci].exclusive
        if owner is None:
            out.add(t)
            continue
        seen = {(t, owner)}
        stack = [(t, owner)]
        while stack:
            st, who = stack.pop()
            mine = [c for c in normal if c.process == who]
            nxt, more = _one_step(system, st, mine)
            errs |= {(ci, p) for _, p in more}
            if not nxt:
                out.add(st)
                continue
            for cj, t2 in nxt:
                w2 = system.commands[cj].exclusive
                if w2 is None:
                    out.add(t2)
                elif (t2, w2) not in seen:
                    seen.add((t2, w2))
                    stack.append((t2, w2))
    return out, errs
