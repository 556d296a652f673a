"""The expression walker (``absmc.ir.walker``): dispatch, post-order, memoization on the DAG,
no recursion limit, and the ports that use it (printer, evaluator, simplifier, Python code
generator, Z3 translation) on expressions too deep for recursive code (issue 9, item 4)."""

from __future__ import annotations

import sys

import pytest
import z3

from absmc.codegen.python import PyExpr, compile_expr_fn
from absmc.ir.evaluate import EvalError, evaluate
from absmc.ir.expr import Const, Expr, Op, Operator, Var
from absmc.ir.printer import format_expr
from absmc.ir.simplify import simplify
from absmc.ir.sorts import BOOL, INT
from absmc.ir.system import System, Variable
from absmc.ir.walker import SHALLOW_DEPTH, ExprWalker, handler_name
from absmc.lang.promela.export import promela_expr
from absmc.logic.z3conv import Z3Translator

x, y = Var("x", INT), Var("y", INT)
b = Var("b", BOOL)


class Recorder(ExprWalker[str]):
    """Records the order in which nodes are handled; results are the printed nodes."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def walk_const(self, e: Const) -> str:
        self.seen.append(str(e.value))
        return str(e.value)

    def walk_var(self, e: Var) -> str:
        self.seen.append(e.name)
        return e.name

    def walk_arith(self, e: Op, args: list[str]) -> str:
        self.seen.append(f"arith {e.op}")
        return f"({f' {e.op} '.join(args)})" if len(args) == 2 else f"-{args[0]}"

    def walk_add(self, e: Op, args: list[str]) -> str:
        self.seen.append("add")
        return f"({args[0]} + {args[1]})"


def test_handlers_dispatch_by_operator_then_group_then_walk_op() -> None:
    w = Recorder()
    assert w.walk(Op("*", (Op("+", (x, Const(1))), y))) == "((x + 1) * y)"
    # post-order, arguments left to right; `+` has its own handler, `*` its group's
    assert w.seen == ["x", "1", "add", "y", "arith *"]
    with pytest.raises(NotImplementedError, match="operator '<'"):
        w.walk(Op("<", (x, y)))
    assert handler_name(Operator.SHL) == "walk_shl" and handler_name(Operator.ITE) == "walk_ite"


def test_every_distinct_node_is_handled_once_per_walk() -> None:
    e: Expr = x
    for _ in range(200):  # a DAG of 201 nodes unfolding to a tree of 2**201 leaves
        e = Op("+", (e, e))
    calls = []

    class Count(ExprWalker[int]):
        def walk_var(self, v: Var) -> int:
            calls.append(v.name)
            return 1

        def walk_op(self, o: Op, args: list[int]) -> int:
            calls.append(str(o.op))
            return sum(args)

    assert Count().walk(e) == 2**200
    assert len(calls) == 201
    assert evaluate(e, {"x": 3}) == 3 * 2**200


def test_memo_across_walks_is_kept_only_when_asked() -> None:
    calls: list[str] = []

    class Names(ExprWalker[str]):
        def walk_var(self, v: Var) -> str:
            calls.append(v.name)
            return v.name

        def walk_op(self, o: Op, args: list[str]) -> str:
            return str(o.op).join(args)

    e = Op("+", (x, y))
    kept = Names(memoize_across_walks=True)
    kept.walk(e)
    kept.walk(Op("-", (e, x)))
    assert calls == ["x", "y"]
    calls.clear()
    fresh = Names()
    fresh.walk(e)
    fresh.walk(e)
    assert calls == ["x", "y", "x", "y"]
    with pytest.raises(ValueError):
        Names(memoize_across_walks=True, transient=True)


def _deep_sum(n: int) -> Expr:
    e: Expr = x
    for k in range(1, n):
        e = Op("+", (e, Const(k)))
    return e


def _nest(op: str, inner: Expr, depth: int) -> Expr:
    for _ in range(depth):
        inner = Op(op, (inner,))
    return inner


def test_a_ten_thousand_term_sum_needs_no_recursion() -> None:
    n = 10_000
    assert n > sys.getrecursionlimit()
    e = _deep_sum(n)
    want = 7 + n * (n - 1) // 2
    text = format_expr(e)
    assert text.startswith("x + 1 + 2 + ") and text.count(" + ") == n - 1
    assert evaluate(e, {"x": 7}) == want
    assert evaluate(simplify(e), {"x": 7}) == want
    # the generated Python source: a left-nested sum is one flat chain (Python's parser
    # refuses ~200 nested parentheses), and it compiles and runs
    src = PyExpr({"x": 0})(e)
    assert src.count("v0") == 1 and src.count("(") == 1 and src.endswith(" 9999)")
    system = System(variables=(Variable("x", INT, 7),), processes=(), commands=())
    assert compile_expr_fn(system, e)((7,)) == want
    assert promela_expr(e).count("(") == n - 1
    tr = Z3Translator()
    s = z3.Solver()
    s.add(tr.var("x", INT) == 7)
    assert s.check(tr(e) != want) == z3.unsat


def test_five_thousand_nested_negations_need_no_recursion() -> None:
    depth = 5_000
    minus = _nest("neg", x, depth)
    assert evaluate(minus, {"x": 4}) == 4  # an even number of minus signs
    assert format_expr(minus) == "-(" * (depth - 1) + "-x" + ")" * (depth - 1)
    assert evaluate(simplify(minus), {"x": 4}) == 4
    assert PyExpr({"x": 0})(minus) == "(-" * depth + "v0" + ")" * depth
    atom = Op("<", (x, y))
    nots = _nest("!", atom, depth + 1)  # odd: the negation of the atom
    assert evaluate(nots, {"x": 1, "y": 2}) == 0
    assert format_expr(nots) == "!" * (depth + 1) + "(x < y)"
    assert simplify(nots) == Op("!", (atom,))
    assert PyExpr({"x": 0, "y": 1})(nots).count("(not ") == depth + 1
    tr = Z3Translator()
    s = z3.Solver()
    s.add(tr.var("x", INT) == 1, tr.var("y", INT) == 2)
    assert s.check(tr(nots)) == z3.unsat
    assert s.check(tr(minus) != 1) == z3.unsat


@pytest.mark.parametrize("depth", [1, SHALLOW_DEPTH + 10])
def test_evaluation_short_circuits_at_any_depth(depth: int) -> None:
    div = _nest("neg", Op("/", (x, y)), 2 * depth)  # x / y under an even number of minus
    guarded = Op("&&", (Op("!=", (y, Const(0))), Op(">", (div, Const(1)))))
    assert evaluate(guarded, {"x": 6, "y": 0}) == 0
    assert evaluate(guarded, {"x": 6, "y": 2}) == 1
    with pytest.raises(EvalError):
        evaluate(Op("||", (Op(">", (div, Const(1))), Op("==", (y, Const(0))))), {"x": 6, "y": 0})
    choice = Op("ite", (b, x, Op("+", (Var("missing", INT), div))))
    assert evaluate(choice, {"b": 1, "x": 5, "y": 0}) == 5
    with pytest.raises(KeyError):
        evaluate(choice, {"b": 0, "x": 5, "y": 1})
    implied = Op("=>", (Op("==", (y, Const(0))), Op("==", (div, div))))
    with pytest.raises(EvalError):
        evaluate(implied, {"x": 1, "y": 0})
    assert evaluate(implied, {"x": 1, "y": 3}) == 1
