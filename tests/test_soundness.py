"""Regression tests for the soundness defects and crashes of issue 13 ("Soundness and crashes
in the abstraction methods"): each reproducer's verdicts are the ones exact search gives."""

from __future__ import annotations

from absmc.engines.explicit import check_explicit
from absmc.engines.fourvalued import check_fourvalued
from absmc.engines.typeabs import (
    OperatorLibrary,
    TypesOptions,
    abstract_system,
    build_abstraction,
    check_types,
    infer,
)
from absmc.engines.typeabs.check import resolve_bindings
from absmc.engines.under import UnderOptions, check_under
from absmc.ir.expr import FALSE
from absmc.ir.simplify import simplify
from absmc.kernel.run.options import CheckOptions, Limits
from absmc.kernel.run.result import Result, Verdict
from absmc.lang.domains import parse_bindings
from absmc.lang.gcl import parse_gcl, parse_gcl_expr
from absmc.logic import Prover, Validity
from absmc.logic.definedness import definedness, three_valued_literal

from .oracle import replays

DIV_GUARDS = """
var x, y : int;
var pc : 0..1;
process P {
  pc == 0 && x < 2 -> x := x + 1;
  pc == 0 && y != 0 && x / y >= 1 -> pc := 1;
  pc == 0 && y != 0 && x / y <= 0 -> pc := 1;
}
invariant small: x < 2;
"""

DIV_PREDICATES = """
var x, y : int;
var pc : 0..1;
predicate x / y <= 0;
predicate x / y >= 1;
process P {
  pc == 0 && x < 2 -> x := x + 1;
}
invariant small: x < 2;
"""


def _verdicts(result: Result) -> dict[str, Verdict]:
    return {r.property: r.verdict for r in result.results}


def _under(text: str, **kw: object) -> Result:
    system = parse_gcl(text)
    keep_going = bool(kw.pop("keep_going", False))
    options = CheckOptions(keep_going=keep_going, limits=Limits(max_states=10_000, timeout=60))
    return check_under(system, options, UnderOptions(**kw))  # type: ignore[arg-type]


def test_under_finds_the_violation_behind_a_guard_that_divides_by_a_variable() -> None:
    system = parse_gcl(DIV_GUARDS)
    exact = check_explicit(system, CheckOptions())
    assert _verdicts(exact)["small"] is Verdict.VIOLATED
    result = _under(DIV_GUARDS)
    small = next(r for r in result.results if r.property == "small")
    assert small.verdict is Verdict.VIOLATED
    assert replays(system, small) is None
    assert small.trace is not None and len(small.trace.steps) == 3  # 2 steps, as exact search


def test_under_with_predicates_that_divide_by_zero_in_the_initial_state() -> None:
    system = parse_gcl(DIV_PREDICATES)
    result = _under(DIV_PREDICATES)
    small = next(r for r in result.results if r.property == "small")
    assert small.verdict is Verdict.VIOLATED and replays(system, small) is None
    assert Verdict.HOLDS not in _verdicts(result).values()


def test_an_undefined_predicate_is_neither_true_nor_false_and_satisfiable() -> None:
    system = parse_gcl(DIV_PREDICATES)
    atom = parse_gcl_expr("x / y <= 0", system)
    prover = Prover()
    undefined = three_valued_literal(atom, None)
    # y == 0 is the only way to be undefined, and that state exists
    assert prover.implies(undefined, parse_gcl_expr("y == 0", system))
    assert prover.satisfiable(undefined) is Validity.VALID
    for value in (True, False):
        lit = three_valued_literal(atom, value)
        assert prover.satisfiable(lit) is Validity.VALID
        assert prover.implies(lit, parse_gcl_expr("y != 0", system))
    # short-circuit: the division in `y != 0 && x / y > 1` is always defined
    guarded = parse_gcl_expr("y != 0 && x / y > 1", system)
    assert prover.is_valid(definedness(guarded))
    assert simplify(definedness(parse_gcl_expr("x % 0 == 1", system))) == FALSE


DEADLOCK_BEHIND_DIVISION = """
var x, y : int;
var pc : 0..1;
process P {
  pc == 0 && x < 2 -> x := x + 1;
  pc == 0 && y != 0 && x / y >= 1 -> pc := 1;
  pc == 0 && y != 0 && x / y <= 0 -> pc := 1;
  pc == 1 -> pc := 0;
}
"""

# found by tests/generators.py (seed 87): a wrong `holds` for no-deadlock under
# --concrete-after 2 --keep-going before α read undefined predicates three-valued
RANDOM_DEADLOCK = """
var a : int = 0;
var r : -1..1;
var s : -1..1;
var pc0 : 0..2;
var pc1 : 0..1;
process P0 {
  pc0 == 0 -> r := (2 + s), pc0 := 2;
  pc0 == 0 && (s + s) == 2 && a < 3 && a > -3 -> a := (!(s == s) ? (r / r) : (a / s)), r := (r - a);
  pc0 == 0 && (r + r) == r -> r := 1, pc0 := 2;
}
process P1 {
  pc1 == 1 && (r + s) >= 1 -> r := r;
}
process P2 {
  ((s == 3 ? s : r) != -1 && (-2 / a) < 0) && a < 3 && a > -3 -> s := (s - r), a := a + 2;
  (!((s - 1) < r) || !(-2 > a)) && a < 3 && a > -1 -> r := r, a := 1;
  !((1 + s) >= a) && a < 2 && a > -2 -> s := (s / a), a := ((s / 2) + (s + s));
}
invariant p0: 0 > -1;
unreachable p1: (a == 1 ? (r / 2) >= a : 1 > 1);
"""


def test_under_concrete_after_keep_going_finds_the_deadlocks() -> None:
    for text in (DEADLOCK_BEHIND_DIVISION, RANDOM_DEADLOCK):
        system = parse_gcl(text)
        exact = _verdicts(check_explicit(system, CheckOptions(keep_going=True)))
        assert exact["no-deadlock"] is Verdict.VIOLATED
        for concrete_after in (None, 2):
            result = _under(text, keep_going=True, concrete_after=concrete_after)
            dead = next(r for r in result.results if r.property == "no-deadlock")
            assert dead.verdict is Verdict.VIOLATED, (concrete_after, text)
            assert replays(system, dead) is None
            for r in result.results:  # and nothing else contradicts exact search
                assert {r.verdict, exact[r.property]} != {Verdict.HOLDS, Verdict.VIOLATED}


# -- --method types ----------------------------------------------------------------------------
def _types(text: str, binding: str, timeout: float | None = 60) -> Result:
    system = parse_gcl(text)
    options = CheckOptions(limits=Limits(max_states=10_000, timeout=timeout))
    return check_types(system, options, TypesOptions(parse_bindings([binding])))


ASSIGNED_COMPARISON = """
var a : int;
var b : bool;
process P { !b -> b := a > 0; }
"""

SELECTED_COMPARISON = """
var a : int = 1;
var x : 0..2;
process P { x == 0 -> x := (a > 0) ? 1 : 2; }
unreachable two: x == 2;
"""


def test_types_assigns_an_abstract_comparison_and_chooses_when_undecided() -> None:
    system = parse_gcl(ASSIGNED_COMPARISON)
    exact = _verdicts(check_explicit(system, CheckOptions()))
    assert exact["no-deadlock"] is Verdict.HOLDS  # a == 0: b := false again and again
    # signs decides a > 0: b := a > 0 needs no choose, and the verdicts are exact search's
    assert build_abstraction(system, TypesOptions(parse_bindings(["a=signs"]))).choose_count == 0
    assert _verdicts(_types(ASSIGNED_COMPARISON, "a=signs")) == exact
    # point does not: both successors, flagged choose; the abstract deadlock after b := true
    # is not choose-free, so it is no counterexample
    assert build_abstraction(system, TypesOptions(parse_bindings(["a=point"]))).choose_count > 0
    coarse = _verdicts(_types(ASSIGNED_COMPARISON, "a=point"))
    assert coarse["no-deadlock"] is Verdict.UNKNOWN
    assert coarse["no-model-error"] is Verdict.HOLDS


def test_types_selects_with_an_abstract_comparison() -> None:
    system = parse_gcl(SELECTED_COMPARISON)
    exact = _verdicts(check_explicit(system, CheckOptions(keep_going=True)))
    assert exact["two"] is Verdict.HOLDS
    verdicts = _verdicts(_types(SELECTED_COMPARISON, "a=signs"))
    assert verdicts["two"] is Verdict.HOLDS  # signs decides a > 0 for a = 1 (pos)
    assert verdicts["no-deadlock"] is exact["no-deadlock"] is Verdict.VIOLATED
    # with a point abstraction the selection is a choice: x == 2 is only possibly reachable
    coarse = _verdicts(_types(SELECTED_COMPARISON, "a=point"))
    assert coarse["two"] is Verdict.UNKNOWN


def test_types_negates_an_abstract_remainder_that_may_divide_by_zero() -> None:
    text = """
var a, b : int;
var y : int;
var pc : 0..1;
process P { pc == 0 -> y := -(a % b), pc := 1; }
"""
    system = parse_gcl(text)
    exact = _verdicts(check_explicit(system, CheckOptions()))
    assert exact["no-model-error"] is Verdict.VIOLATED  # b == 0
    verdicts = _verdicts(_types(text, "a=signs"))
    assert verdicts["no-model-error"] is Verdict.VIOLATED


def _repeated_guard(n: int) -> str:
    conjuncts = " && ".join(f"-2 <= c + (4 - d) + {k}" for k in range(1, n + 1))
    return (
        f"var c, d : int;\nvar pc : 0..1;\nprocess P {{\n  pc == 0 && {conjuncts} -> pc := 1;\n}}"
    )


def test_types_generation_is_not_exponential_in_repeated_abstract_subexpressions() -> None:
    library = OperatorLibrary()
    sizes = []
    for n in (3, 6):
        system = parse_gcl(_repeated_guard(n))
        typing = infer(system, resolve_bindings(parse_bindings(["d=range(-1,2)"])))
        sizes.append(len(abstract_system(system, typing, library).system.commands))
    # equal outcomes are merged: twice the conjuncts do not multiply the commands
    assert sizes[1] <= 2 * sizes[0]
    result = _types(_repeated_guard(5), "d=range(-1,2)")
    exact = _verdicts(check_explicit(parse_gcl(_repeated_guard(5)), CheckOptions()))
    assert _verdicts(result)["no-deadlock"] is exact["no-deadlock"] is Verdict.VIOLATED


def test_types_generation_honours_the_timeout() -> None:
    result = _types(_repeated_guard(5), "d=range(-1,2)", timeout=0.0)
    assert {r.verdict for r in result.results} == {Verdict.UNKNOWN}
    assert "time limit" in result.results[0].reason


# -- --method fourvalued -----------------------------------------------------------------------
def test_fourvalued_property_atom_that_divides_by_zero_is_decided_concretely() -> None:
    text = """
var a : int = -1;
var pc0 : 0..2;
process P0 {
  pc0 == 0 && a < 3 && a > -2 -> a := ((a / 2) / (3 * 1)), pc0 := 1;
}
unreachable p0: a < 2;
unreachable p1: (a % a) == 2;
"""
    system = parse_gcl(text)
    exact = _verdicts(check_explicit(system, CheckOptions(keep_going=True)))
    assert exact["p1"] is Verdict.VIOLATED  # a % a with a == 0
    pred = parse_gcl_expr("a < 2", system)
    result = check_fourvalued(system, CheckOptions(keep_going=True), [pred])
    p1 = next(r for r in result.results if r.property == "p1")
    assert p1.verdict is Verdict.VIOLATED and replays(system, p1) is None
