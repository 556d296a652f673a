"""How deeply a model's expressions nest, and the one limit every method is checked against.

Several walkers behind the methods recurse on expressions (the abstraction engines' own
analyses, the islpy encoding, Z3's and Python's own compilers), and the generated Python splits
an expression into helper functions every :data:`absmc.codegen.python.SPLIT_DEPTH` levels, which
call each other at run time. :func:`check_depth` refuses a model whose expressions nest deeper
than :data:`MAX_EXPR_DEPTH` with a located ``ModelError`` when the model is loaded
(:func:`absmc.lang.loader.load_model`), before any method runs; every method takes expressions
up to that depth (``tests/test_deep_expressions.py`` runs each on models at the limit).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from absmc.ir.expr import Const, Expr, Op, Var
from absmc.ir.span import ModelError, SourceSpan
from absmc.ir.system import System
from absmc.ir.walker import ExprWalker

__all__ = [
    "MAX_EXPR_DEPTH",
    "RECURSION_LIMIT",
    "ExprDepth",
    "check_depth",
    "deep_recursion",
    "system_depth",
]

#: the deepest expression (in IR levels: a leaf is 1, each operator one more) a model may hold.
#: The example and benchmark models stay below 20; Promela's front end stops at 250 syntax
#: levels on its own (``lang/promela/parser.MAX_NESTING``).
MAX_EXPR_DEPTH = 1_000

#: the interpreter's recursion limit :func:`deep_recursion` sets: the recursive walkers use up to
#: about three frames per level (a function and a generator expression over the arguments)
RECURSION_LIMIT = 8 * MAX_EXPR_DEPTH + 2_000


@contextmanager
def deep_recursion() -> Iterator[None]:
    """Within the block, the interpreter's recursion limit is at least :data:`RECURSION_LIMIT`
    (so that the recursive walkers take expressions :data:`MAX_EXPR_DEPTH` deep); the old
    limit is restored after it. ``engines.registry.run`` runs every method inside it (child
    processes started by ``fork`` inherit the raised limit)."""
    old = sys.getrecursionlimit()
    if old < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
    try:
        yield
    finally:
        if old < RECURSION_LIMIT:
            sys.setrecursionlimit(old)


class ExprDepth(ExprWalker[int]):
    """Nesting depth of an expression (a leaf is 1; an iterative walk, any depth)."""

    def walk_const(self, e: Const) -> int:
        return 1

    def walk_var(self, e: Var) -> int:
        return 1

    def walk_op(self, e: Op, a: list[int]) -> int:
        return 1 + max(a, default=0)


def _system_exprs(system: System) -> list[tuple[Expr, SourceSpan | None]]:
    """Every expression of ``system`` with the span of what holds it."""
    items: list[tuple[Expr, SourceSpan | None]] = []
    for c in system.commands:
        exprs = [c.guard, *(e for _, e in c.updates), *(e for _, e in c.asserts)]
        exprs += [e for e, _ in c.errors]
        items += [(e, c.span) for e in exprs]
    items += [(p.expr, p.span) for p in system.properties]
    if system.valid_end is not None:
        items.append((system.valid_end, None))
    if system.init_constraint is not None:
        items.append((system.init_constraint, None))
    return items


def _depth(e: Expr, memo: dict[int, int]) -> int:
    """The nesting depth of ``e`` (a leaf is 1), without recursion; ``memo``: depths by the
    identity of nodes met before (kept alive by their System), shared by the calls on one
    System's expressions, whose nodes are shared (SPIN's mobile1: 13,475 expressions, a
    structural memo compared equal subtrees: 0.12 s)."""
    if not isinstance(e, Op):
        return 1
    got = memo.get(id(e))
    if got is not None:
        return got
    stack: list[Expr] = [e]
    while stack:
        x = stack[-1]
        assert isinstance(x, Op)
        if id(x) in memo:
            stack.pop()
            continue
        pending = [a for a in x.args if isinstance(a, Op) and id(a) not in memo]
        if pending:
            stack.extend(pending)
            continue
        memo[id(x)] = 1 + max((memo[id(a)] if isinstance(a, Op) else 1 for a in x.args), default=0)
        stack.pop()
    return memo[id(e)]


def system_depth(system: System) -> int:
    """The nesting depth of the deepest expression of ``system`` (commands, properties, the
    valid-end condition and the ``init:`` constraint)."""
    memo: dict[int, int] = {}
    return max((_depth(e, memo) for e, _ in _system_exprs(system)), default=1)


def check_depth(system: System, limit: int = MAX_EXPR_DEPTH) -> int:
    """The depth of ``system``'s deepest expression; raises ``ModelError`` ``expression nested
    too deeply (N levels; the limit is M)`` located where the nesting passes ``limit`` (the
    nearest enclosing source span, else that of the command or property) when it is deeper."""
    memo: dict[int, int] = {}
    deepest = 1
    for e, span in _system_exprs(system):
        d = _depth(e, memo)
        if d > limit:
            raise ModelError(
                f"expression nested too deeply ({d} levels; the limit is {limit})",
                _where(e, limit, memo, span),
                system.file,
            )
        deepest = max(deepest, d)
    return deepest


def _where(
    e: Expr, limit: int, memo: dict[int, int], default: SourceSpan | None
) -> SourceSpan | None:
    """The span of the node ``limit`` levels below ``e`` on a deepest path (or of the nearest
    node above it that has one); ``memo``: :func:`_depth`'s."""
    span = getattr(e, "span", None) or default
    x = e
    for _ in range(limit):
        if not isinstance(x, Op) or not x.args:
            break
        x = max(x.args, key=lambda a: _depth(a, memo))
        span = getattr(x, "span", None) or span
    return span
