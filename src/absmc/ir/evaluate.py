"""Reference (tree-walking) evaluation of IR expressions and commands.

This is the *definition* of the concrete semantics, kept deliberately simple: the compiled
successor functions of :mod:`absmc.ir.compile` must agree with it (tests check this on random
systems). It is too slow for search; engines use the compiled code.
"""

from __future__ import annotations

from collections.abc import Mapping

from absmc.ir.expr import Const, Expr, Op, Var
from absmc.ir.sorts import RangeSort
from absmc.ir.system import Command, System


class EvalError(Exception):
    """A model error during evaluation: division by zero or an out-of-range assignment."""


def tdiv(a: int, b: int) -> int:
    """Integer division truncating toward zero (C semantics); raises ``EvalError`` when b == 0."""
    if b == 0:
        raise EvalError("division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def tmod(a: int, b: int) -> int:
    """Remainder of truncating division (sign of the dividend); raises ``EvalError`` when b == 0."""
    return a - b * tdiv(a, b)


def evaluate(e: Expr, env: Mapping[str, int]) -> int:
    """Value of ``e`` in ``env`` (bools as 0/1). ``&&``, ``||``, ``=>`` and ``ite`` evaluate left
    to right and short-circuit. Raises ``EvalError`` on division by zero and ``KeyError`` for a
    variable missing from ``env``."""
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Var):
        return int(env[e.name])
    assert isinstance(e, Op)
    o, args = e.op, e.args
    if o == "&&":
        return int(all(evaluate(a, env) for a in args))
    if o == "||":
        return int(any(evaluate(a, env) for a in args))
    if o == "=>":
        return int(not evaluate(args[0], env) or bool(evaluate(args[1], env)))
    if o == "!":
        return int(not evaluate(args[0], env))
    if o == "ite":
        return evaluate(args[1], env) if evaluate(args[0], env) else evaluate(args[2], env)
    if o == "neg":
        return -evaluate(args[0], env)
    if o == "~":
        return ~evaluate(args[0], env)
    a = evaluate(args[0], env)
    b = evaluate(args[1], env)
    if o == "+":
        return a + b
    if o == "-":
        return a - b
    if o == "*":
        return a * b
    if o == "/":
        return tdiv(a, b)
    if o == "%":
        return tmod(a, b)
    if o == "&":
        return a & b
    if o == "|":
        return a | b
    if o == "^":
        return a ^ b
    if o == "<<":
        return a << b if 0 <= b < 64 else 0
    if o == ">>":
        return a >> b if b >= 0 else 0
    if o == "==":
        return int(a == b)
    if o == "!=":
        return int(a != b)
    if o == "<":
        return int(a < b)
    if o == "<=":
        return int(a <= b)
    if o == ">":
        return int(a > b)
    if o == ">=":
        return int(a >= b)
    raise ValueError(f"unknown operator {o!r}")  # pragma: no cover


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
