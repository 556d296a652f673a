"""`--method under` (paper 000): the paper's tables, its variants, and agreement with exact
search on random finite systems."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from absmc.codegen.python import compile_system
from absmc.engines.explicit import check_explicit
from absmc.engines.under import UnderOptions, check_under
from absmc.ir import System
from absmc.kernel.replay.trace import run_path
from absmc.kernel.run.options import CheckOptions, Limits
from absmc.kernel.run.result import Result, Verdict
from absmc.lang.gcl import parse_gcl, parse_gcl_expr, parse_gcl_file
from absmc.logic import Prover, Validity

from .conftest import GCL_EXAMPLES, run_cli, run_examples
from .strategies import finite_systems


def _under(name: str, keep_going: bool = False, order: str = "bfs", **kw: object) -> Result:
    system = parse_gcl_file(GCL_EXAMPLES / f"{name}.gcl")
    preds = tuple(parse_gcl_expr(p, system) for p in kw.pop("predicates", ()))  # type: ignore[attr-defined]
    options = CheckOptions(order=order, keep_going=keep_going)  # type: ignore[arg-type]
    return check_under(system, options, UnderOptions(predicates=preds, **kw))  # type: ignore[arg-type]


def _rows(result: Result) -> list[tuple[int, int, set[str]]]:
    rows = result.results[0].iterations
    assert rows is not None
    return [(r["concrete_states"], r["abstract_states"], set(r["new_predicates"])) for r in rows]


def test_rax_reproduces_fig7() -> None:
    result = _under("rax", keep_going=True, max_iterations=4)
    assert _rows(result) == [
        (56, 35, {"c1 == e1", "c2 == e2"}),
        (68, 44, {"e1 == 0", "e2 == 0"}),
        (100, 65, {"e1 == -1", "e2 == -1"}),
        (100, 65, {"e1 == -2", "e2 == -2"}),
    ]
    deadlock = result.results[0]
    assert deadlock.property == "deadlock" and deadlock.verdict is Verdict.VIOLATED


def test_rax_stops_in_iteration_1_with_a_concrete_trace_of_8_states() -> None:
    result = _under("rax")
    r = result.results[0]
    assert r.verdict is Verdict.VIOLATED
    assert len(r.iterations or []) == 1
    assert r.trace is not None and r.trace.replayed and len(r.trace.steps) == 8
    last = r.trace.steps[-1].state
    assert (last["pc1"], last["pc2"], last["w1"], last["w2"]) == (4, 5, 1, 1)


def test_rax_with_nonnegative_counters_terminates_after_3_iterations() -> None:
    result = _under("rax", keep_going=True, predicates=("e1 >= 0", "e2 >= 0"))
    rows = _rows(result)
    assert len(rows) == 3 and rows[-1][2] == set()
    by_name = {r.property: r for r in result.results}
    assert by_name["deadlock"].verdict is Verdict.VIOLATED  # the real RAX bug
    assert by_name["no-model-error"].verdict is Verdict.HOLDS
    assert "exact abstraction after 3 iterations" in by_name["no-model-error"].reason


def test_bakery_iterations_and_exact_abstraction() -> None:
    result = _under("bakery")
    rows = _rows(result)
    assert rows[0] == (17, 11, {"x <= y"})
    assert rows[1][:2] == (18, 12) and rows[1][2] >= {"x + 1 <= y", "x <= y + 1"}
    assert len(rows) <= 5 and rows[-1][2] == set()
    mutex = result.results[0]
    assert mutex.property == "mutex" and mutex.verdict is Verdict.HOLDS
    assert "exact abstraction" in mutex.reason


def test_bakery_dfs_also_proves_mutual_exclusion() -> None:
    result = _under("bakery", order="dfs")
    assert result.verdict is Verdict.HOLDS


def test_nonterminating_without_and_with_the_concrete_state_heuristic() -> None:
    stuck = _under("nonterminating", max_iterations=5)
    assert stuck.verdict is Verdict.UNKNOWN
    assert "after 5 iterations" in stuck.results[0].reason
    added = [r[2] for r in _rows(stuck)]
    assert added == [
        {"0 <= y"},
        {"0 <= x + y"},
        {"0 <= 2 * x + y"},
        {"0 <= 3 * x + y"},
        {"0 <= 4 * x + y"},
    ]
    done = _under("nonterminating", concrete_after=3)
    assert done.verdict is Verdict.HOLDS
    rows = _rows(done)
    assert {"x == 0", "y == 0"} <= set().union(*(r[2] for r in rows))


def test_lightweight_refinement_without_prover() -> None:
    result = _under("peterson", prover="none")
    assert result.verdict is Verdict.HOLDS
    assert all(r["prover_calls"] == 0 for r in result.results[0].iterations or [])
    bug = _under("rax", prover="none")
    assert bug.results[0].verdict is Verdict.VIOLATED


def test_range_store_refines_until_states_are_told_apart() -> None:
    system = parse_gcl(
        """
        var x, y : int; var pc : 0..2;
        process P {
          pc == 0 && x < 3 -> x := x + 1;
          pc == 0 && x == 3 -> y := x, pc := 1;
          pc == 1 -> pc := 2;
          pc == 2 -> skip;
        }
        unreachable bad: pc == 2 && y != 3;
        """
    )
    result = check_under(system, CheckOptions(), UnderOptions(store="range"))
    assert result.verdict is Verdict.HOLDS
    rows = result.results[0].iterations or []
    assert rows[0]["new_predicates"]  # x took several values in one abstract state
    assert all(r["prover_calls"] == 0 for r in rows)


def test_local_predicates_are_attached_to_locations() -> None:
    result = _under("bakery", local_predicates=True)
    assert result.verdict is Verdict.HOLDS
    first = result.results[0].iterations[0]["new_predicates"]  # type: ignore[index]
    assert first and all("@ pc" in p for p in first)


def test_seed_predicates_from_guards() -> None:
    result = _under("rax", seed_predicates=frozenset({"guards"}), keep_going=True, max_iterations=2)
    rows = _rows(result)
    assert "c1 == e1" not in rows[0][2]  # already a seed


def test_cli_table_and_json_iterations() -> None:
    r = run_cli(
        "check",
        "examples/gcl/rax.gcl",
        "--method",
        "under",
        "--keep-going",
        "--max-iterations",
        "4",
        "--json",
    )
    assert r.code == 1
    data = json.loads(r.out)
    its = data["results"][0]["iterations"]
    assert [i["iteration"] for i in its] == [1, 2, 3, 4]
    assert set(its[0]) == {
        "iteration",
        "concrete_states",
        "abstract_states",
        "new_predicates",
        "prover_calls",
        "cache_hits",
        "time_s",
    }
    t = run_cli("check", "examples/gcl/bakery.gcl", "--method", "under", "--table")
    assert t.code == 0 and "x + 1 <= y" in t.out
    bad = run_cli("check", "examples/gcl/rax.gcl", "--method", "under", "--predicate", "e1 +")
    assert bad.code == 2 and bad.err.startswith("--predicate:1:")


def test_prover_unknown_is_never_exactness(monkeypatch: pytest.MonkeyPatch) -> None:
    # a prover that can decide nothing: every check must count as failed, so the method keeps
    # refining and never claims an exact abstraction
    def undecided(self: Prover, formula: object) -> Validity:
        self.stats.calls += 1
        return Validity.UNKNOWN

    monkeypatch.setattr(Prover, "validity", undecided)
    result = _under("bakery", max_iterations=4)
    assert result.verdict is Verdict.UNKNOWN
    assert "after 4 iterations" in result.results[0].reason


def test_agreement_with_exact_search() -> None:
    """10 random finite systems in CI (200 under ``-m slow``); among their answers are
    proofs and replayed violations (the run cannot pass vacuously)."""
    SEEN.clear()
    run_examples(_agrees_with_exact_search, finite_systems(), 10)
    assert SEEN[Verdict.HOLDS] >= 10 and SEEN[Verdict.VIOLATED] >= 10, SEEN


@pytest.mark.slow
def test_agreement_with_exact_search_200() -> None:
    SEEN.clear()
    run_examples(_agrees_with_exact_search, finite_systems(), 200)
    assert SEEN[Verdict.HOLDS] >= 30 and SEEN[Verdict.VIOLATED] >= 30, SEEN


#: the verdicts the agreement runs gave (checked at their end)
SEEN: Counter[Verdict] = Counter()


def _agrees_with_exact_search(system: System) -> None:
    exact = check_explicit(system, CheckOptions(keep_going=True))
    truth = {r.property: r.verdict for r in exact.results}
    result = check_under(
        system,
        CheckOptions(keep_going=True, limits=Limits(max_states=5000)),
        UnderOptions(max_iterations=6, concrete_after=2, prover_timeout_ms=2000),
    )
    compiled = compile_system(system)
    for r in result.results:
        SEEN[r.verdict] += 1
        if r.verdict is Verdict.VIOLATED:
            assert truth[r.property] is Verdict.VIOLATED
            assert r.trace is not None and r.trace.replayed
            path = [s.command_index for s in r.trace.steps[1:]]
            if r.property != "no-model-error":
                run_path(compiled, path)  # raises if the trace does not execute
        elif r.verdict is Verdict.HOLDS:
            assert truth[r.property] is Verdict.HOLDS, (r.property, r.reason)


@pytest.mark.parametrize("name", ["peterson", "philosophers"])
def test_finite_examples_agree_with_exact_search(name: str) -> None:
    system = parse_gcl_file(GCL_EXAMPLES / f"{name}.gcl")
    exact = check_explicit(system, CheckOptions(keep_going=True))
    under = check_under(system, CheckOptions(keep_going=True), UnderOptions(concrete_after=2))
    assert [r.verdict for r in under.results] == [r.verdict for r in exact.results]
