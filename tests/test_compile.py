"""The compiled successor functions agree with the reference semantics."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from absmc.codegen.python import compile_system
from absmc.ir import System
from absmc.ir.evaluate import EvalError, reference_successors
from absmc.lang.gcl import parse_gcl

from .reference import reference_explore
from .strategies import finite_systems


def _agree(system: System, limit: int = 400) -> None:
    compiled = compile_system(system)
    ref = reference_explore(system, max_states=limit)
    for s in ref.states:
        got, errors = compiled.successors(s)
        want = reference_successors(system, s)
        assert got == [(c, t) for c, t in want if not isinstance(t, EvalError)]
        assert [c for c, _, _ in errors] == [c for c, t in want if isinstance(t, EvalError)]
        bad = {compiled.properties[k].name for k in compiled.violated(s)}
        assert compiled.ok(s) == (not bad)


@settings(max_examples=40, deadline=None)
@given(finite_systems())
def test_compiled_successors_agree_with_reference(system: System) -> None:
    _agree(system)  # 40 systems in CI, 150 under -m slow


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(finite_systems())
def test_compiled_successors_agree_with_reference_150(system: System) -> None:
    _agree(system)


def test_model_errors_and_wrapping() -> None:
    s = parse_gcl(
        """
        var x : 0..3; var y : int; var z : int = 5;
        process P {
          x < 9 -> x := x + 2;
          true  -> y := z / y;
          true  -> z := z % (y - y);
          y == 0 && z / y > 0 -> skip;
        }
        """
    )
    compiled = compile_system(s)
    succ, errors = compiled.successors(s.initial_state())
    assert succ == [(0, (2, 0, 5))]
    assert sorted(errors) == [
        (1, "division by zero", "no-model-error"),
        (2, "division by zero", "no-model-error"),
        (3, "division by zero", "no-model-error"),
    ]
    _, errors = compiled.successors((2, 1, 5))
    assert (0, "value 4 assigned to x is outside 0..3", "no-model-error") in errors
    _agree(s)


def test_program_counter_dispatch_keeps_left_to_right_guard_evaluation() -> None:
    # the division comes before the pc test: in pc == 0 it is still evaluated (and fails)
    s = parse_gcl(
        "var x, y : int; var pc : 0..1;\n"
        "process P { x / y > 0 && pc == 1 -> skip; pc == 0 -> pc := 1; }"
    )
    compiled = compile_system(s)
    succ, errors = compiled.successors(s.initial_state())
    assert succ == [(1, (0, 0, 1))]
    assert [e[0] for e in errors] == [0]
    want = reference_successors(s, s.initial_state())
    assert [c for c, t in want if isinstance(t, EvalError)] == [0]


def test_guard_bounds_remove_needless_wrap_checks_but_keep_needed_ones() -> None:
    from absmc.codegen.plan import guard_bounds, interval
    from absmc.ir import RangeSort, Variable
    from absmc.ir.expr import Var, const, op

    x = Var("x", RangeSort(0, 255, "wrap"))
    s = parse_gcl("var y : int; process P { true -> skip; }")
    system = s.with_(variables=(*s.variables, Variable("x", x.var_sort)))
    bounds = guard_bounds(system, op("&&", op("<", x, const(5)), op(">=", x, const(1))))
    assert bounds == {"x": (1, 4)}
    assert interval(system, op("+", x, const(1)), bounds) == (2, 5)
    assert interval(system, op("+", x, const(1)), {}) == (1, 256)  # may wrap without the guard
    assert interval(system, op("+", Var("y"), const(1)), {}) is None


def test_deep_expressions_compile_and_agree_with_the_reference() -> None:
    # a 10,000-term sum and a 300-deep chain of conditional expressions: Python's compiler
    # recurses on such trees (and its parser refuses ~200 nested parentheses)
    terms = " + ".join("x" for _ in range(10_000))
    chain = " ".join(f"(x == {i}) ? {i} :" for i in range(300)) + " 7"
    s = parse_gcl(
        "var x : 0..3; var y : int; var z : int;\n"
        f"process P {{ x < 3 -> x := x + 1, y := {terms} - x, z := {chain}; }}\n"
    )
    compiled = compile_system(s)
    succ, errors = compiled.successors(s.initial_state())
    assert errors == () and succ == [(0, (1, 0, 0))]
    succ, _ = compiled.successors((2, 0, 0))
    assert succ == [(0, (3, 19_998, 2))]
    _agree(s)
