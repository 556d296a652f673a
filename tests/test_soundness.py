"""Regression tests for the soundness defects and crashes of issue 13 ("Soundness and crashes
in the abstraction methods"): each reproducer's verdicts are the ones exact search gives."""

from __future__ import annotations

from absmc.engines.explicit import check_explicit
from absmc.engines.options import CheckOptions, Limits
from absmc.engines.result import Result, Verdict
from absmc.engines.under import UnderOptions, check_under
from absmc.ir.expr import FALSE
from absmc.ir.simplify import simplify
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
