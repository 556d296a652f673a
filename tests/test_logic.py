"""The logic layer: Z3 translation (truncating division), validity with cache, allSAT, wp."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from absmc.ir import BOOL, INT, Command
from absmc.ir.evaluate import evaluate
from absmc.ir.expr import Expr, Var, const, op
from absmc.logic import Prover, Validity, wp

x, y = Var("x", INT), Var("y", INT)
b = Var("b", BOOL)


def test_validity_and_cache() -> None:
    p = Prover()
    assert p.is_valid(op("=>", op("<=", x, y), op("<=", x, op("+", y, const(1)))))
    assert p.validity(op("<=", x, y)) is Validity.INVALID
    calls = p.stats.calls
    assert not p.is_valid(op("<=", x, y))
    assert p.stats.calls == calls and p.stats.cache_hits == 1


@settings(max_examples=60, deadline=None)
@given(st.integers(-20, 20), st.integers(-20, 20).filter(lambda v: v != 0))
def test_truncating_division_matches_concrete_semantics(a: int, d: int) -> None:
    p = Prover()
    for o in ("/", "%"):
        value = evaluate(op(o, const(a), const(d)), {})
        assert p.is_valid(op("==", op(o, const(a), const(d)), const(value)))


def test_all_models_projects_on_predicates() -> None:
    p = Prover()
    f = op("&&", op("<=", const(0), x), op("<=", x, const(5)))
    models, complete = p.all_models(f, [op("<=", x, const(2)), op("==", x, const(0))])
    assert complete
    assert sorted(models) == [(False, False), (True, False), (True, True)]


def test_model_and_bools() -> None:
    p = Prover()
    m = p.model(op("&&", b, op("==", op("+", x, y), const(7)), op("==", x, const(3))))
    assert m is not None and m["b"] is True and m["x"] + m["y"] == 7


def test_wp_of_assignment() -> None:
    c = Command("P", op("==", y, const(0)), (("x", op("+", x, const(1))),))
    assert wp(op("<=", x, y), c) == op(
        "=>", op("==", y, const(0)), op("<=", op("+", x, const(1)), y)
    )


def _residue(e: Expr, k: int) -> Expr:
    return op("%", op("+", op("%", e, const(k)), const(k)), const(k))


@settings(max_examples=40, deadline=None)
@given(st.integers(-30, 30), st.integers(1, 7))
def test_euclidean_residue_idiom_matches_concrete_evaluation(a: int, k: int) -> None:
    # ((a % k) + k) % k is translated to Z3's native mod: the value must not change
    value = evaluate(_residue(const(a), k), {})
    assert 0 <= value < k
    p = Prover()
    assert p.is_valid(op("=>", op("==", x, const(a)), op("==", _residue(x, k), const(value))))


def test_fresh_solver_per_query_decides_nonlinear_residues() -> None:
    # odd * odd is odd: the elimination behind the modulo(2) abstraction's * (paper 001, 4)
    odd = [op("==", _residue(v, 2), const(1)) for v in (x, y)]
    claim = op("=>", op("&&", *odd), op("!", op("==", _residue(op("*", x, y), 2), const(0))))
    p = Prover(incremental=False)
    assert p.validity(claim) is Validity.VALID
    assert p.stats.calls == 1
