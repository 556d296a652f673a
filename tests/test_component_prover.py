"""PA+TP for Python components (thesis ch. 2.3, Fig. 2.2(a); paper 000): weakest
preconditions by substitution, the prover's exactness check, refinement rounds that find an
error the guards alone miss, and verdicts that never claim a proof from an inexact
abstraction."""

from __future__ import annotations

import ast
import importlib
import json
import sys
from pathlib import Path

import pytest

from absmc.component import ComponentOptions, check, check_file
from absmc.component.refinement import guard_predicates, parse_predicate, statement_ops, wp
from absmc.kernel.run.result import Verdict

from .conftest import EXAMPLES, run_cli

PY = EXAMPLES / "python"


def _wp(pred: str, stmt: str) -> str:
    ops = statement_ops(stmt)
    assert ops is not None
    out = wp(parse_predicate(pred), ops)
    assert out is not None
    return ast.unparse(out)


def test_weakest_preconditions_by_substitution() -> None:
    assert _wp("x > 0", "x = y + 1") == "y + 1 > 0"
    assert _wp("total != 7", "total += d") == "total + d != 7"
    # simultaneous assignment: the right side is evaluated first
    assert _wp("a < b", "a, b = b, a") == "b < a"
    # an element store is a case split on the index
    assert _wp("xs[k] < 5", "xs[i] = v") == "(v if k == i else xs[k]) < 5"
    assert statement_ops("f(x)") is None


def _dice() -> object:
    sys.path.insert(0, str(PY))
    try:
        import dice  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(PY))
    return dice


def test_wp_of_a_for_loop_step_and_unpacking() -> None:
    assert _wp("start < 10", "start, size = self.free[i]") == "self.free[i][0] < 10"
    assert _wp("acct.balance > 0", "acct.balance = acct.balance - x") == "acct.balance - x > 0"


def test_prover_refinement_finds_the_error_the_guards_miss(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dice = _dice()
    choices = {dice.throw: [0, 1, 2, 3]}  # type: ignore[attr-defined]
    guards = check(
        dice.play_bug, component=["play_bug"], env_choices=choices, abstraction="predicates"
    )  # type: ignore[attr-defined]
    assert guards.results[0].verdict is Verdict.UNKNOWN
    tp = check(dice.play_bug, component=["play_bug"], env_choices=choices, abstraction="prover")  # type: ignore[attr-defined]
    r = tp.results[0]
    assert r.verdict is Verdict.VIOLATED and r.trace is not None and r.trace.replayed
    rounds = r.iterations
    assert len(rounds) >= 2
    assert rounds[0]["imprecise"] > 0 and rounds[0]["new_predicates"] > 0
    assert rounds[-1]["predicates"] > rounds[0]["predicates"]
    # the correct variant: the refinement does not converge within the round limit, and an
    # abstraction that still merges states is never a proof (a limit of 4 rounds in CI: its
    # later rounds take ~10 s of CPU; the default limit under -m slow)
    monkeypatch.setattr(importlib.import_module("absmc.component.check"), "PROVER_ITERATIONS", 4)
    _assert_play_is_no_proof(dice, choices, 4)


@pytest.mark.slow
def test_prover_refinement_of_the_correct_variant_is_no_proof_at_the_default_limit() -> None:
    dice = _dice()
    choices = {dice.throw: [0, 1, 2, 3]}  # type: ignore[attr-defined]
    rounds = importlib.import_module("absmc.component.check").PROVER_ITERATIONS
    _assert_play_is_no_proof(dice, choices, rounds)


def _assert_play_is_no_proof(dice: object, choices: dict[object, list[int]], rounds: int) -> None:
    ok = check(dice.play, component=["play"], env_choices=choices, abstraction="prover")  # type: ignore[attr-defined]
    assert {x.verdict for x in ok.results} == {Verdict.UNKNOWN}
    assert len(ok.results[0].iterations) == rounds
    assert "not a proof" in ok.results[0].reason


def test_prover_store_proves_only_an_exact_search() -> None:
    race, _ = check_file(
        PY / "bank.py",
        "run",
        [],
        ["Account"],
        ComponentOptions(abstraction="prover", granularity="access"),
    )
    assert race.results[0].verdict is Verdict.VIOLATED
    # one throw of a two-sided die: the refinement reaches a round in which no abstract state
    # matched two different concrete states: that search was exact, its holds is a proof
    dice = _dice()
    ok = check(
        dice.play, 1, component=["play"], env_choices={dice.throw: [0, 1]}, abstraction="prover"
    )  # type: ignore[attr-defined]
    r = ok.results[0]
    assert r.verdict is Verdict.HOLDS
    assert r.iterations[0]["merged"] > 0 and r.iterations[-1]["merged"] == 0
    wide = check(
        dice.play,
        1,
        component=["play"],
        env_choices={dice.throw: [0, 1, 2, 3]},
        abstraction="prover",
    )  # type: ignore[attr-defined]
    assert wide.results[0].verdict is Verdict.UNKNOWN
    assert wide.results[0].iterations[-1]["merged"] > 0


def test_guard_predicates_skip_calls() -> None:
    sys.path.insert(0, str(PY))
    try:
        from absmc.component.program import build_program, load_program

        mod = load_program(Path(PY / "sorting.py"))
        prog, _ = build_program(
            mod.__dict__, mod.__dict__["main"], ["selection_sort"], "statement", {}
        )
    finally:
        sys.path.remove(str(PY))
    texts = {fc.name: guard_predicates(fc) for fc in prog.funcs}
    # the loop conditions of the range loops (as C's guards), then the branch
    assert texts["selection_sort"] == ["i < len(xs)", "j < len(xs)", "xs[j] < xs[m]"]
    # main's loop over range(count), its loop over the list, its first assertion; the
    # second assertion calls the sorts (environment code): not a predicate
    assert texts["main"] == ["k < count", "k < len(ys) - 1", "ys[k] <= ys[k + 1]"]


def test_prover_store_errors() -> None:
    bad = run_cli(
        "check",
        "examples/python/matrix.py",
        "--entry",
        "main",
        "--component",
        "multiply",
        "--store",
        "predicates",
        "--predicate",
        "a <",
    )
    assert bad.code == 2 and "'a <' is not a Python expression" in bad.err
    assert "Traceback" not in bad.err
    model = run_cli("check", "examples/gcl/bakery.gcl", "--store", "predicates")
    assert model.code == 2 and "applies to Python programs" in model.err


def test_prover_refinement_finds_the_matrix_bug() -> None:
    """Thesis Table 2.2's PA+TP row: the guards (here the loop conditions) alone merge the
    loop iterations; the refinement carries them back (``k + 1 < m``, ...) until the
    multiplication runs to the end and the seeded error is reached."""
    r = run_cli(
        "check",
        "examples/python/matrix.py",
        "--entry",
        "main_bug",
        "--component",
        "multiply_bug",
        "--store",
        "predicates",
        "--json",
    )
    data = json.loads(r.out)
    first = data["results"][0]
    assert r.code == 1 and first["verdict"] == "violated"
    assert len(first["trace"]) > 2
    rounds = first["iterations"]
    assert len(rounds) >= 2 and rounds[0]["merged"] > 0
    assert rounds[-1]["predicates"] > rounds[0]["predicates"]
