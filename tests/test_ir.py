"""IR expressions: equality, hashing, substitution, free variables, printing, evaluation."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from absmc.ir import BOOL, INT, RangeSort, System, Variable, format_expr
from absmc.ir.evaluate import EvalError, evaluate
from absmc.ir.expr import (
    Const,
    Expr,
    Op,
    Var,
    atoms,
    conj,
    conjuncts,
    const,
    free_vars,
    neg,
    op,
    substitute,
)
from absmc.ir.intsem import tdiv, tmod
from absmc.ir.span import SourceSpan
from absmc.lang.gcl import parse_gcl, parse_gcl_expr

x, y, z = Var("x", INT), Var("y", INT), Var("z", INT)
b = Var("b", BOOL)


def test_equality_ignores_spans_and_distinguishes_bool_constants() -> None:
    s1 = SourceSpan("a.gcl", 1, 1)
    s2 = SourceSpan("b.gcl", 9, 9)
    assert op("+", x, const(1), span=s1) == op("+", x, const(1), span=s2)
    assert hash(op("+", x, const(1), span=s1)) == hash(op("+", x, const(1), span=s2))
    assert const(True) != const(1)
    assert const(True).is_bool and not const(1).is_bool
    assert len({const(True), const(1), const(0), const(False)}) == 4


def test_substitution_is_simultaneous() -> None:
    e = op("<=", op("+", x, y), z)
    swapped = substitute(e, {"x": y, "y": x})
    assert swapped == op("<=", op("+", y, x), z)
    assert free_vars(substitute(e, {"z": const(3)})) == {"x", "y"}


def test_weakest_precondition_shape() -> None:
    # wp(x <= y, x := x + 1) = x + 1 <= y
    post = op("<=", x, y)
    assert substitute(post, {"x": op("+", x, const(1))}) == op("<=", op("+", x, const(1)), y)


def test_conj_flattens_and_drops_true() -> None:
    a, c = op("<", x, y), op("==", z, const(0))
    assert conj([a, conj([c, const(True)])]) == Op("&&", (a, c))
    assert conjuncts(Op("&&", (a, Op("&&", (c, b))))) == (a, c, b)
    assert conj([]) == const(True)
    assert neg(neg(a)) == a


def test_atoms_of_boolean_structure() -> None:
    a, c = op("<", x, y), op("==", z, const(0))
    assert atoms(op("=>", op("&&", a, op("!", c)), op("||", a, b))) == (a, c, b)


@pytest.mark.parametrize(
    ("a", "d", "q", "r"),
    [(7, 2, 3, 1), (-7, 2, -3, -1), (7, -2, -3, 1), (-7, -2, 3, -1), (0, 5, 0, 0)],
)
def test_truncating_division_like_c(a: int, d: int, q: int, r: int) -> None:
    assert tdiv(a, d) == q
    assert tmod(a, d) == r


def test_division_by_zero_is_an_eval_error() -> None:
    with pytest.raises(EvalError):
        evaluate(op("/", x, y), {"x": 1, "y": 0})


def test_short_circuit_avoids_division_by_zero() -> None:
    e = op("&&", op("!=", y, const(0)), op(">", op("/", x, y), const(0)))
    assert evaluate(e, {"x": 1, "y": 0}) == 0


def test_range_sort_wrap_and_empty() -> None:
    r = RangeSort(-128, 127, "wrap")
    assert r.wrap(128) == -128 and r.wrap(-129) == 127 and r.wrap(300) == 44
    with pytest.raises(ValueError):
        RangeSort(3, 2)


def test_system_rejects_inconsistent_input() -> None:
    with pytest.raises(ValueError):
        System((Variable("x", INT), Variable("x", INT)), (), ())


# -- printing round trip ------------------------------------------------------------------

_VARS = {"x": INT, "y": INT, "b": BOOL, "c": BOOL}
_SYS = parse_gcl("var x, y : int; var b, c : bool; process P { true -> skip; }")


def _ints() -> st.SearchStrategy[Expr]:
    leaves = st.one_of(
        st.integers(-5, 5).map(const), st.sampled_from([Var("x", INT), Var("y", INT)])
    )

    def extend(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
        return st.one_of(
            st.tuples(st.sampled_from(["+", "-", "*", "/", "%"]), children, children).map(
                lambda t: Op(t[0], (t[1], t[2]))
            ),
            children.map(lambda a: Op("neg", (a,))),
        )

    return st.recursive(leaves, extend, max_leaves=6)


def _bools() -> st.SearchStrategy[Expr]:
    leaves = st.one_of(
        st.sampled_from([Var("b", BOOL), Var("c", BOOL), const(True), const(False)]),
        st.tuples(st.sampled_from(["<", "<=", "==", "!=", ">", ">="]), _ints(), _ints()).map(
            lambda t: Op(t[0], (t[1], t[2]))
        ),
    )

    def extend(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
        return st.one_of(
            st.tuples(st.sampled_from(["&&", "||", "=>"]), children, children).map(
                lambda t: Op(t[0], (t[1], t[2]))
            ),
            children.map(lambda a: Op("!", (a,))),
            st.tuples(children, children, children).map(lambda t: Op("ite", t)),
            st.tuples(st.sampled_from(["==", "!="]), children, children).map(
                lambda t: Op(t[0], (t[1], t[2]))
            ),
        )

    return st.recursive(leaves, extend, max_leaves=8)


def _normal(e: Expr) -> Expr:
    """Flatten nested &&/|| (the parser keeps chains flat) and fold -const."""
    if isinstance(e, Op):
        args = tuple(_normal(a) for a in e.args)
        if e.op in ("&&", "||"):
            flat: list[Expr] = []
            for a in args:
                flat.extend(a.args if isinstance(a, Op) and a.op == e.op else (a,))
            return Op(e.op, tuple(flat))
        if e.op == "neg" and isinstance(args[0], Const):
            return const(-args[0].value)
        return Op(e.op, args)
    return e


@given(_bools())
def test_printing_round_trips_through_the_parser(e: Expr) -> None:
    text = format_expr(e)
    assert _normal(parse_gcl_expr(text, _SYS)) == _normal(e), text


@given(_bools(), st.integers(-4, 4), st.integers(-4, 4), st.booleans(), st.booleans())
def test_printed_expression_evaluates_the_same(
    e: Expr, xv: int, yv: int, bv: bool, cv: bool
) -> None:
    env = {"x": xv, "y": yv, "b": int(bv), "c": int(cv)}
    back = parse_gcl_expr(format_expr(e), _SYS)
    try:
        want = evaluate(e, env)
    except EvalError:
        with pytest.raises(EvalError):
            evaluate(back, env)
        return
    assert evaluate(back, env) == want


def test_operators_are_an_enum_that_still_compares_with_spellings() -> None:
    from absmc.ir.expr import ARITH_OPS, Operator

    e = Op("+", (x, y))
    assert e.op is Operator.ADD and e.op == "+" and f"{e.op}" == "+"
    assert e == Op(Operator.ADD, (x, y)) and hash(e) == hash(Op(Operator.ADD, (x, y)))
    assert e.op in ARITH_OPS and "+" in ARITH_OPS
    assert {"+": 1}[e.op] == 1
    assert Operator.ITE.arity == 3 and Operator.AND.arity is None and Operator.SHL.arity == 2
    with pytest.raises(ValueError, match="unknown operator '\\*\\*'"):
        Op("**", (x, y))
