"""Arrays in the IR: the ``select`` operator and what back ends need to index state directly.

An array is a run of scalar state variables (Promela's ``a[0] a[1] ...``, see
:mod:`absmc.lang.promela.types`). A read with a computed index is the operator
``select(i, e0, ..., e(n-1))`` (:mod:`absmc.ir.expr`): element ``i``, or the last element when
``i`` is out of range — the value of the case split :func:`select_chain`, so the operator is
total and front ends add the bounds check as an explicit model error (Promela: SPIN's "index out
of range", ``Command.errors``). A write with a computed index stays per element in the IR: each
element ``k`` gets ``ite(i == k, v, old_k)``; :func:`array_writes` recognizes such updates so
that a code generator stores ``v`` at one computed position instead of testing every element.

What uses what:

* the concrete back ends (``codegen/python.py``, ``native/cgen.py``) read a ``select`` whose
  elements are state variables at evenly spaced positions (:func:`strided_slots`) as one
  indexed load from the state with a bounds test, and emit :func:`array_writes` groups as
  indexed stores;
* the reference evaluator and the logic layer (``logic/z3conv.py``) give ``select`` the value of
  its case split;
* the abstraction engines (under, types, fourvalued) and the exporters see no ``select`` at all:
  they work on :func:`expand_system`, where every ``select`` is its case split (the IR the
  Promela front end produced before ``select`` existed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from absmc.ir.expr import Const, Expr, Op, Operator, Var, subexpressions
from absmc.ir.system import System
from absmc.ir.walker import ExprWalker


def select_chain(index: Expr, elems: Sequence[Expr]) -> Expr:
    """The case split of ``select(index, *elems)``: ``ite(index == 0, e0, ite(index == 1, e1,
    ... e(n-1)))`` (the last element also out of range). Raises ``ValueError`` without
    elements."""
    if not elems:
        raise ValueError("select of no elements")
    out = elems[-1]
    for k in range(len(elems) - 2, -1, -1):
        out = Op(Operator.ITE, (Op(Operator.EQ, (index, Const(k))), elems[k], out))
    return out


class _Expand(ExprWalker[Expr]):
    """Rewrites every ``select`` into :func:`select_chain` (memoized across walks: the
    expressions of one System share their subterms)."""

    def walk_const(self, e: Const) -> Expr:
        return e

    def walk_var(self, e: Var) -> Expr:
        return e

    def walk_select(self, e: Op, args: list[Expr]) -> Expr:
        return select_chain(args[0], args[1:])

    def walk_op(self, e: Op, args: list[Expr]) -> Expr:
        if all(a is b for a, b in zip(args, e.args, strict=True)):
            return e
        return Op(e.op, tuple(args), e.span)


def has_select(e: Expr) -> bool:
    """Whether ``e`` contains a ``select``."""
    return any(isinstance(x, Op) and x.op is Operator.SELECT for x in subexpressions(e))


def expand_selects(e: Expr) -> Expr:
    """``e`` with every ``select`` replaced by its case split (:func:`select_chain`)."""
    if isinstance(e, (Const, Var)):
        return e
    return _Expand().walk(e)


def system_has_select(system: System) -> bool:
    """Whether any expression of ``system`` (commands, properties, predicates, the valid-end
    condition) contains a ``select``."""
    return any(has_select(e) for e in _expressions(system))


def expand_system(system: System) -> System:
    """``system`` with every ``select`` replaced by its case split (same variables, commands in
    the same order, same semantics); ``system`` itself when it has none. For the engines and
    exporters that do not handle ``select`` (see the module docstring)."""
    if not system_has_select(system):
        return system
    w = _Expand(memoize_across_walks=True)

    def ex(e: Expr) -> Expr:
        return e if isinstance(e, (Const, Var)) else w.walk(e)

    commands = tuple(
        replace(
            c,
            guard=ex(c.guard),
            updates=tuple((n, ex(e)) for n, e in c.updates),
            asserts=tuple((n, ex(e)) for n, e in c.asserts),
            errors=tuple((ex(e), m) for e, m in c.errors),
        )
        for c in system.commands
    )
    return system.with_(
        commands=commands,
        properties=tuple(replace(p, expr=ex(p.expr)) for p in system.properties),
        predicates=tuple(ex(p) for p in system.predicates),
        valid_end=None if system.valid_end is None else ex(system.valid_end),
    )


def _expressions(system: System) -> list[Expr]:
    out: list[Expr] = []
    for c in system.commands:
        out.append(c.guard)
        out += [e for _, e in c.updates]
        out += [e for _, e in c.asserts]
        out += [e for e, _ in c.errors]
    out += [p.expr for p in system.properties]
    out += list(system.predicates)
    if system.valid_end is not None:
        out.append(system.valid_end)
    return out


def strided_slots(elems: Sequence[Expr], index_of: Mapping[str, int]) -> tuple[int, int] | None:
    """``(base, stride)`` when every element is a state variable and element ``k`` is at state
    position ``base + stride * k`` (``stride >= 1``; one element: stride 1); else ``None``.
    A ``select`` over such elements is one indexed read of the state."""
    pos: list[int] = []
    for x in elems:
        if not isinstance(x, Var):
            return None
        i = index_of.get(x.name)
        if i is None:
            return None
        pos.append(i)
    if len(pos) == 1:
        return (pos[0], 1)
    stride = pos[1] - pos[0]
    if stride < 1 or any(pos[k] != pos[0] + stride * k for k in range(len(pos))):
        return None
    return (pos[0], stride)


@dataclass(frozen=True)
class ArrayWrite:
    """One indexed store recognized in a command's updates: the variables ``names`` are at
    state positions ``base + stride * j`` for ``j = 0..length-1``, and position ``j`` receives
    ``value`` when ``index == first + j``; ``rests[j]`` is what it receives otherwise (an
    expression over the state before the step; often the variable itself)."""

    index: Expr
    value: Expr
    first: int
    base: int
    stride: int
    length: int
    names: tuple[str, ...]
    rests: tuple[Expr, ...]


def write_layer(e: Expr) -> tuple[Expr, Expr, int, Expr] | None:
    """``(index, value, k, rest)`` when ``e`` is ``ite(index == k, value, rest)`` with a
    constant ``k`` and a non-constant ``index``."""
    if not (isinstance(e, Op) and e.op is Operator.ITE):
        return None
    c, v, r = e.args
    if not (isinstance(c, Op) and c.op is Operator.EQ):
        return None
    a, b = c.args
    if isinstance(b, Const) and not isinstance(a, Const):
        return (a, v, b.value, r)
    if isinstance(a, Const) and not isinstance(b, Const):
        return (b, v, a.value, r)
    return None


def array_writes(
    updates: Sequence[tuple[str, Expr]], index_of: Mapping[str, int], min_length: int = 4
) -> tuple[list[tuple[str, Expr]], list[list[ArrayWrite]]]:
    """Split a command's simultaneous ``updates`` into plain updates and *write stacks*: a
    stack is a list of :class:`ArrayWrite` over the same variables, innermost (first executed)
    first; the variables' new values are: each variable's innermost ``rest``, then each write of
    the stack stored in order (a later write to the same position wins). A write is recognized
    when at least ``min_length`` updates, of variables at evenly spaced state positions, are
    ``ite(index == first + j, value, rest_j)`` with the same ``index`` and ``value`` and
    consecutive constants. The result has exactly the semantics of ``updates`` (an update not
    matching is kept as it is)."""
    layers: dict[tuple[Expr, Expr], list[tuple[int, str, int, Expr]]] = {}
    for name, e in updates:
        lay = write_layer(e)
        if lay is not None:
            idx, val, k, rest = lay
            layers.setdefault((idx, val), []).append((k, name, index_of[name], rest))
    grouped: set[str] = set()
    stacks: list[list[ArrayWrite]] = []
    for (idx, val), members in layers.items():
        w = _as_write(idx, val, members)
        if w is None or len(members) < min_length:
            continue
        stack = [w]
        # peel inner writes to the same elements: rest_j = ite(idx2 == first2 + j, v2, rest2_j)
        while True:
            inner = [write_layer(r) for r in stack[0].rests]
            if any(x is None for x in inner):
                break
            keys = {(x[0], x[1]) for x in inner if x is not None}
            if len(keys) != 1:
                break
            idx2, val2 = next(iter(keys))
            w2 = _as_write(
                idx2,
                val2,
                [
                    (x[2], n, index_of[n], x[3])
                    for x, n in zip(inner, stack[0].names, strict=True)
                    if x is not None
                ],
            )
            if w2 is None:
                break
            stack.insert(0, w2)
        grouped.update(w.names)
        stacks.append(stack)
    plain = [(n, e) for n, e in updates if n not in grouped]
    return plain, stacks


def _as_write(idx: Expr, val: Expr, members: list[tuple[int, str, int, Expr]]) -> ArrayWrite | None:
    """The write of ``members`` ``(k, name, position, rest)`` when the ``k`` are consecutive
    and the positions evenly spaced in the same order."""
    members = sorted(members)
    ks = [m[0] for m in members]
    if ks != list(range(ks[0], ks[0] + len(ks))):
        return None
    pos = [m[2] for m in members]
    stride = pos[1] - pos[0] if len(pos) > 1 else 1
    if stride < 1 or any(pos[j] != pos[0] + stride * j for j in range(len(pos))):
        return None
    return ArrayWrite(
        idx,
        val,
        ks[0],
        pos[0],
        stride,
        len(members),
        tuple(m[1] for m in members),
        tuple(m[3] for m in members),
    )
