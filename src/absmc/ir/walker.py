"""One expression walker for the IR, in the style of pySMT's ``DagWalker``.

A subclass of :class:`ExprWalker` defines one handler per operator — ``walk_add``,
``walk_and``, ... (``"walk_" + Operator.name.lower()``) — or per operator group (``walk_arith``,
``walk_compare``, ``walk_logic``, ``walk_bitwise``; the default of an operator's handler is its
group's, the default of a group is :meth:`ExprWalker.walk_op`; ``walk_select`` has no group, its
default is ``walk_op``), plus :meth:`walk_const` and
:meth:`walk_var`. An operator handler receives the node and the list of its arguments' results,
in argument order.

The walk is **iterative** (an explicit stack, post-order: arguments before the node), so an
expression nested 10,000 deep does not hit Python's recursion limit, and **memoized** on the
expression DAG: a subexpression that occurs several times (equal expressions, which are
immutable and hash-cached) is handled once per walk. Two options:

* ``memoize_across_walks=True`` keeps the memo between calls of :meth:`walk` (for translators
  that see the same subterms again and again, e.g. the IR → Z3 translation);
* ``transient=True`` drops a result from the memo as soon as every node that uses it was handled
  (for walkers whose results grow with the expression, e.g. strings: peak memory stays linear
  instead of quadratic in the depth). It excludes memoizing across walks.

Handlers that need an argument's own arguments' results (patterns two levels deep) read them
with :meth:`ExprWalker.result_of` (not with ``transient``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from absmc.ir.expr import (
    ARITH_OPS,
    BIT_OPS,
    COMPARE_OPS,
    LOGIC_OPS,
    Const,
    Expr,
    Op,
    Operator,
    Var,
)

R = TypeVar("R")

#: expressions at most this deep are walked by (faster) recursion, deeper ones iteratively
SHALLOW_DEPTH = 64


class _TooDeep(Exception):
    """The recursive fast path met an expression deeper than :data:`SHALLOW_DEPTH`."""


Handler = Callable[[Any, Op, list[Any]], Any]


def _group(o: Operator) -> str:
    if o in ARITH_OPS or o is Operator.NEG:
        return "walk_arith"
    if o in COMPARE_OPS:
        return "walk_compare"
    if o in LOGIC_OPS or o is Operator.ITE:
        return "walk_logic"
    if o is Operator.SELECT:
        return "walk_op"
    assert o in BIT_OPS
    return "walk_bitwise"


def handler_name(o: Operator) -> str:
    """The name of the handler of operator ``o``: ``"walk_" + o.name.lower()``, e.g.
    ``walk_add`` for ``+`` and ``walk_shl`` for ``<<``."""
    return "walk_" + o.name.lower()


class ExprWalker(Generic[R]):
    """Post-order, iterative, memoized walk over IR expressions producing an ``R`` per node
    (see the module docstring). Subclasses override handlers; :meth:`walk` runs them."""

    #: operator -> handler function, built per subclass (a handler defined by the subclass
    #: under the operator's name wins over its group's)
    _table: ClassVar[dict[Operator, Handler]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        table: dict[Operator, Handler] = {}
        for o in Operator:
            fn = getattr(cls, handler_name(o), None)
            if fn is None:
                fn = getattr(cls, _group(o))
                if fn is getattr(ExprWalker, _group(o)):  # not overridden: skip the hop
                    fn = cls.walk_op
            table[o] = fn
        cls._table = table

    def __init__(self, *, memoize_across_walks: bool = False, transient: bool = False) -> None:
        if memoize_across_walks and transient:
            raise ValueError("a transient walker cannot memoize across walks")
        self.memoize_across_walks = memoize_across_walks
        self.transient = transient
        #: results of every walk so far (only with ``memoize_across_walks``)
        self.memo: dict[Expr, R] = {}
        self._current: dict[int, R] = {}

    # -- handlers (override) -------------------------------------------------------------

    def walk_const(self, e: Const) -> R:
        """The result for a constant."""
        raise NotImplementedError(f"{type(self).__name__} does not handle constants")

    def walk_var(self, e: Var) -> R:
        """The result for a variable."""
        raise NotImplementedError(f"{type(self).__name__} does not handle variables")

    def walk_op(self, e: Op, args: list[R]) -> R:
        """The fallback of every operator: raises ``NotImplementedError``."""
        raise NotImplementedError(f"{type(self).__name__} does not handle operator {e.op!r}")

    def walk_arith(self, e: Op, args: list[R]) -> R:
        """``+ - * / % neg`` (default: :meth:`walk_op`)."""
        return self.walk_op(e, args)

    def walk_compare(self, e: Op, args: list[R]) -> R:
        """``== != < <= > >=`` (default: :meth:`walk_op`)."""
        return self.walk_op(e, args)

    def walk_logic(self, e: Op, args: list[R]) -> R:
        """``&& || ! => ite`` (default: :meth:`walk_op`)."""
        return self.walk_op(e, args)

    def walk_bitwise(self, e: Op, args: list[R]) -> R:
        """``& | ^ << >> ~`` (default: :meth:`walk_op`)."""
        return self.walk_op(e, args)

    # -- the walk ----------------------------------------------------------------------------

    def result_of(self, e: Expr) -> R:
        """The result of a subexpression already handled in the current walk (for a handler
        that looks two levels down; ``KeyError`` if not handled, or released by a
        ``transient`` walker)."""
        if self.memoize_across_walks:
            return self.memo[e]
        return self._current[id(e)]

    def walk(self, e: Expr) -> R:
        """The result for ``e``: every distinct subexpression is handled once, arguments
        before the node. Exceptions raised by handlers propagate (the memo of the walk is then
        discarded unless memoizing across walks)."""
        if self.memoize_across_walks:
            return self._walk_kept(e)
        # within one walk the root keeps every node alive: nodes are keyed by identity (fast,
        # and shared nodes of the DAG are handled once). Shallow expressions (the common case)
        # take a recursive path, which is several times faster in Python; deeper ones the
        # explicit stack.
        try:
            return self._walk_shallow(e)
        except _TooDeep:
            pass
        order, users = _post_order(e, self.transient)
        memo: dict[int, R] = {}
        self._current = memo
        table = self._table
        walk_const, walk_var = self.walk_const, self.walk_var
        for x in order:
            t = type(x)
            if t is Op:
                args = x.args  # type: ignore[attr-defined]
                memo[id(x)] = table[x.op](self, x, [memo[id(a)] for a in args])  # type: ignore[attr-defined, arg-type]
                if users is not None:
                    for a in args:
                        k = id(a)
                        left = users[k] - 1
                        if left:
                            users[k] = left
                        else:
                            del memo[k]
            elif t is Const:
                memo[id(x)] = walk_const(x)  # type: ignore[arg-type]
            elif t is Var:
                memo[id(x)] = walk_var(x)  # type: ignore[arg-type]
            else:
                raise TypeError(f"not an IR expression: {x!r}")
        self._current = {}
        return memo[id(e)]

    def _walk_shallow(self, e: Expr) -> R:
        """:meth:`walk` by recursion, giving up (``_TooDeep``) beyond :data:`SHALLOW_DEPTH`."""
        memo: dict[int, R] = {}
        self._current = memo
        table = self._table
        walk_const, walk_var = self.walk_const, self.walk_var

        def go(x: Expr, budget: int) -> R:
            t = type(x)
            if t is Op:
                k = id(x)
                if k in memo:
                    return memo[k]
                if not budget:
                    raise _TooDeep
                budget -= 1
                r: R = table[x.op](self, x, [go(a, budget) for a in x.args])  # type: ignore[attr-defined, arg-type]
                memo[k] = r
                return r
            if t is Const:
                return walk_const(x)  # type: ignore[arg-type]
            if t is Var:
                return walk_var(x)  # type: ignore[arg-type]
            raise TypeError(f"not an IR expression: {x!r}")

        try:
            return go(e, SHALLOW_DEPTH)
        finally:
            self._current = {}

    def _walk_kept(self, e: Expr) -> R:
        """:meth:`walk` with the memo kept across walks, keyed by the expressions (equal
        expressions share a result)."""
        memo = self.memo
        if e in memo:
            return memo[e]
        table = self._table
        stack: list[Expr] = [e]
        while stack:
            x = stack[-1]
            if x in memo:
                stack.pop()
                continue
            if isinstance(x, Op):
                pending = [a for a in x.args if a not in memo]
                if pending:
                    pending.reverse()
                    stack.extend(pending)
                    continue
                memo[x] = table[x.op](self, x, [memo[a] for a in x.args])
            elif isinstance(x, Const):
                memo[x] = self.walk_const(x)
            elif isinstance(x, Var):
                memo[x] = self.walk_var(x)
            else:  # pragma: no cover
                raise TypeError(f"not an IR expression: {x!r}")
            stack.pop()
        return memo[e]

    def walk_all(self, es: Sequence[Expr]) -> list[R]:
        """:meth:`walk` of each expression."""
        return [self.walk(e) for e in es]


def _post_order(e: Expr, count_users: bool) -> tuple[list[Expr], dict[int, int] | None]:
    """The distinct nodes of ``e`` (by identity), each after its arguments, ``e`` last; with
    ``count_users``, also how many argument positions of these nodes refer to each node (``e``:
    one more, so that its result is never released)."""
    order: list[Expr] = []
    seen: set[int] = set()
    users: dict[int, int] | None = {id(e): 1} if count_users else None
    stack: list[Expr | None] = [e]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        x = pop()
        if x is None:  # the node below the marker has all its arguments done
            order.append(pop())  # type: ignore[arg-type]
            continue
        k = id(x)
        if k in seen:
            continue
        seen.add(k)
        if type(x) is Op:
            args = x.args
            push(x)
            push(None)
            extend(reversed(args))
            if users is not None:
                for a in args:
                    ka = id(a)
                    users[ka] = users.get(ka, 0) + 1
        else:
            order.append(x)
    return order, users
