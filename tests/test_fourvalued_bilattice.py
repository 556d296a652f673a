"""Belnap's bilattice FOUR (paper 004, Fig. 1, §2.4): every law checked on all values."""

from __future__ import annotations

import itertools

import pytest

from absmc.engines.fourvalued.bilattice import (
    BOT,
    JOIN_IRREDUCIBLE,
    TOP,
    VALUES,
    Belnap,
    F,
    Sym,
    T,
    combine,
    consensus,
    cut,
    gullibility,
    info_leq,
    join,
    join_irreducibles,
    meet,
    negate,
    reduce,
    sym_all,
    sym_any,
    truth_leq,
)
from absmc.ir import BOOL, Var
from absmc.ir.evaluate import evaluate

PAIRS = list(itertools.product(VALUES, VALUES))
TRIPLES = list(itertools.product(VALUES, VALUES, VALUES))


def test_fig1_tables() -> None:
    # Fig. 1b: ∧ ∨ ¬ in the truth order, ⊗ ⊕ in the information order
    assert meet(T, BOT) is BOT and meet(F, TOP) is F and meet(BOT, TOP) is F
    assert join(F, BOT) is BOT and join(BOT, TOP) is T and join(T, F) is T
    assert [negate(v) for v in (T, F, BOT, TOP)] == [F, T, BOT, TOP]
    assert consensus(T, F) is BOT and consensus(T, TOP) is T and consensus(BOT, TOP) is BOT
    assert gullibility(T, F) is TOP and gullibility(BOT, F) is F and gullibility(BOT, TOP) is TOP
    assert [v.symbol for v in VALUES] == ["f", "⊥", "⊤", "t"]
    assert all(Belnap.from_symbol(v.symbol) is v for v in VALUES)


def _leq_is_order(leq: object) -> None:
    assert callable(leq)
    for a in VALUES:
        assert leq(a, a)
    for a, b in PAIRS:
        if leq(a, b) and leq(b, a):
            assert a is b
    for a, b, c in TRIPLES:
        if leq(a, b) and leq(b, c):
            assert leq(a, c)


def test_both_relations_are_partial_orders_with_the_right_bounds() -> None:
    _leq_is_order(truth_leq)
    _leq_is_order(info_leq)
    assert all(truth_leq(F, v) and truth_leq(v, T) for v in VALUES)
    assert all(info_leq(BOT, v) and info_leq(v, TOP) for v in VALUES)
    # ⊥ and ⊤ are incomparable in the truth order, t and f in the information order
    assert not truth_leq(BOT, TOP) and not truth_leq(TOP, BOT)
    assert not info_leq(T, F) and not info_leq(F, T)


@pytest.mark.parametrize(
    ("lo", "hi", "leq"),
    [(meet, join, truth_leq), (consensus, gullibility, info_leq)],
    ids=["truth", "information"],
)
def test_lattice_laws(lo: object, hi: object, leq: object) -> None:
    assert callable(lo) and callable(hi) and callable(leq)
    for a, b in PAIRS:
        assert lo(a, b) is lo(b, a) and hi(a, b) is hi(b, a)  # commutative
        assert lo(a, hi(a, b)) is a and hi(a, lo(a, b)) is a  # absorption
        # meet is the greatest lower bound, join the least upper bound
        m, j = lo(a, b), hi(a, b)
        assert leq(m, a) and leq(m, b) and leq(a, j) and leq(b, j)
        for c in VALUES:
            if leq(c, a) and leq(c, b):
                assert leq(c, m)
            if leq(a, c) and leq(b, c):
                assert leq(j, c)
    for a, b, c in TRIPLES:
        assert lo(a, lo(b, c)) is lo(lo(a, b), c)  # associative
        assert hi(a, hi(b, c)) is hi(hi(a, b), c)
        assert lo(a, hi(b, c)) is hi(lo(a, b), lo(a, c))  # distributive
        assert hi(a, lo(b, c)) is lo(hi(a, b), hi(a, c))


def test_negation_is_de_morgan_and_information_monotone() -> None:
    for a in VALUES:
        assert negate(negate(a)) is a
    for a, b in PAIRS:
        assert negate(meet(a, b)) is join(negate(a), negate(b))
        assert negate(join(a, b)) is meet(negate(a), negate(b))
        # ¬ reverses the truth order and preserves the information order
        assert truth_leq(a, b) == truth_leq(negate(b), negate(a))
        assert info_leq(a, b) == info_leq(negate(a), negate(b))


def test_interlaced_every_operation_is_monotone_in_both_orders() -> None:
    ops = [meet, join, consensus, gullibility]
    for op in ops:
        for leq in (truth_leq, info_leq):
            for a, b, c in TRIPLES:
                if leq(a, b):
                    assert leq(op(a, c), op(b, c)), (op.__name__, a, b, c)


def test_join_irreducible_elements_of_the_truth_order() -> None:
    assert set(JOIN_IRREDUCIBLE) == {BOT, TOP}
    # every value is the join of the join-irreducibles below it (§2.4)
    for v in VALUES:
        below = [j for j in JOIN_IRREDUCIBLE if truth_leq(j, v)]
        acc = F
        for j in below:
            acc = join(acc, j)
        assert acc is v
    # the generic computation agrees on another lattice: divisors of 12 (join = lcm)
    from math import lcm

    divisors = [1, 2, 3, 4, 6, 12]
    assert join_irreducibles(divisors, lcm, 1) == [2, 3, 4]
    # in the information order the join-irreducibles are t and f
    assert set(join_irreducibles(VALUES, gullibility, BOT)) == {T, F}


def test_reduction_identity_and_combination_of_the_two_checks() -> None:
    for v in VALUES:
        assert reduce(v) is v  # [φ] = ⊔_j (j ⊓ ([φ] ⊒ j))
        assert combine({j: cut(v, j) for j in JOIN_IRREDUCIBLE}) is v
    # the three answers a property can get from the may (⊥) and must (⊤) checks
    assert combine({BOT: True, TOP: True}) is T
    assert combine({BOT: True, TOP: False}) is BOT
    assert combine({BOT: False, TOP: False}) is F
    # ⊤ would mean "may be false but must be true": never a property's value
    assert combine({BOT: False, TOP: True}) is TOP


def test_symbolic_values_agree_with_the_concrete_algebra() -> None:
    names = ["at", "af", "bt", "bf"]
    at, af, bt, bf = (Var(n, BOOL) for n in names)
    a, b = Sym(at, af), Sym(bt, bf)
    cases = {
        "and": (a & b, meet),
        "or": (a | b, join),
        "all": (sym_all([a, b]), meet),
        "any": (sym_any([a, b]), join),
    }
    for x, y in PAIRS:
        env = {
            "at": int(x.has_truth),
            "af": int(x.has_falsity),
            "bt": int(y.has_truth),
            "bf": int(y.has_falsity),
        }

        def value(s: Sym, env: dict[str, int] = env) -> Belnap:
            return Belnap.of(bool(evaluate(s.truth, env)), bool(evaluate(s.falsity, env)))

        for sym, op in cases.values():
            assert value(sym) is op(x, y)
        assert value(~a) is negate(x)
        for j in JOIN_IRREDUCIBLE:
            assert bool(evaluate(a.cut(j), env)) == cut(x, j)
        assert value(Sym.const(y)) is y
