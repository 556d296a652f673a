"""Explicit search: state counts against an independent oracle, verdicts, traces, limits."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from absmc.codegen.python import compile_system
from absmc.engines.explicit import check_explicit
from absmc.ir import System
from absmc.kernel.explore.search import search
from absmc.kernel.explore.store import BitStateStore, ExactStore
from absmc.kernel.replay.trace import run_path
from absmc.kernel.run.options import CheckOptions, Limits, OptionError
from absmc.kernel.run.result import Verdict
from absmc.lang.gcl import parse_gcl, parse_gcl_file

from .conftest import GCL_EXAMPLES
from .reference import reference_explore
from .strategies import finite_systems

FINITE = ["peterson", "philosophers", "nonterminating"]


def _check(path: str, **kw: object) -> object:
    return check_explicit(parse_gcl_file(GCL_EXAMPLES / f"{path}.gcl"), CheckOptions(**kw))  # type: ignore[arg-type]


@pytest.mark.parametrize("name", FINITE)
@pytest.mark.parametrize("order", ["bfs", "dfs"])
def test_state_counts_equal_independent_reference(name: str, order: str) -> None:
    system = parse_gcl_file(GCL_EXAMPLES / f"{name}.gcl")
    ref = reference_explore(system)
    assert ref.complete
    out = search(compile_system(system), ExactStore(), order=order, keep_going=True)  # type: ignore[arg-type]
    assert out.stopped is None
    assert out.states == len(ref.states)
    assert out.transitions == ref.transitions


def test_known_state_counts_of_finite_examples() -> None:
    # the figures the example files state in their comments
    counts = {
        n: reference_explore(parse_gcl_file(GCL_EXAMPLES / f"{n}.gcl")).states for n in FINITE
    }
    assert {n: len(s) for n, s in counts.items()} == {
        "peterson": 20,
        "philosophers": 35,
        "nonterminating": 2,
    }


def test_rax_bfs_finds_the_deadlock_with_a_trace_of_8_entries() -> None:
    result = _check("rax", order="bfs")
    assert result.verdict is Verdict.VIOLATED  # type: ignore[attr-defined]
    r = result.results[0]  # type: ignore[attr-defined]
    assert (r.property, r.verdict) == ("deadlock", Verdict.VIOLATED)
    assert len(r.trace.steps) == 8 and r.trace.replayed
    last = r.trace.steps[-1].state
    assert (last["pc1"], last["pc2"], last["w1"], last["w2"]) == (4, 5, 1, 1)


def test_bakery_state_limit_gives_unknown_naming_the_limit() -> None:
    result = _check("bakery", limits=Limits(max_states=5000))
    assert result.verdict is Verdict.UNKNOWN  # type: ignore[attr-defined]
    for r in result.results:  # type: ignore[attr-defined]
        assert r.verdict is Verdict.UNKNOWN
        assert "state limit of 5000" in r.reason
        assert r.stats.states == 5000


def test_bakery_depth_and_time_limits() -> None:
    r = _check("bakery", limits=Limits(max_depth=12)).results[0]  # type: ignore[attr-defined]
    assert r.verdict is Verdict.UNKNOWN and "depth limit of 12" in r.reason
    assert r.stats.max_depth == 12
    r = _check("bakery", limits=Limits(timeout=0.2)).results[0]  # type: ignore[attr-defined]
    assert r.verdict is Verdict.UNKNOWN and "time limit" in r.reason
    assert r.stats.states > 0


def test_depth_bound_that_covers_the_state_space_still_proves() -> None:
    r = _check("peterson", limits=Limits(max_depth=50)).results[0]  # type: ignore[attr-defined]
    assert r.verdict is Verdict.HOLDS


def test_philosophers_deadlock_and_invariants_with_keep_going() -> None:
    result = _check("philosophers", keep_going=True)
    verdicts = {r.property: r.verdict for r in result.results}  # type: ignore[attr-defined]
    assert verdicts == {
        "neighbours01": Verdict.HOLDS,
        "neighbours12": Verdict.HOLDS,
        "neighbours20": Verdict.HOLDS,
        "no-deadlock": Verdict.VIOLATED,
        "no-model-error": Verdict.HOLDS,
    }
    dl = next(r for r in result.results if r.property == "no-deadlock")  # type: ignore[attr-defined]
    assert dl.violations == 1  # the circular wait: every philosopher holds its left fork
    assert len(dl.trace.steps) == 4


def test_dfs_counterexample_replays() -> None:
    result = _check("rax", order="dfs", limits=Limits(max_depth=40))
    r = result.results[0]  # type: ignore[attr-defined]
    assert r.verdict is Verdict.VIOLATED and r.trace.replayed


def test_model_error_is_reported_with_the_trace_leading_there() -> None:
    s = parse_gcl(
        """
        var n : 0..3;
        var d : int = 2;
        process P {
          n < 3 -> n := n + 1;
          n == 3 -> d := d - 1;
          d == 0 -> n := n / d;
        }
        """,
        "err.gcl",
    )
    result = check_explicit(s, CheckOptions())
    r = next(r for r in result.results if r.property == "no-model-error")
    assert r.verdict is Verdict.VIOLATED
    assert len(r.trace.steps) == 6  # n: 0 -> 3 (3 steps), d: 2 -> 0 (2 steps)
    assert "division by zero" in r.trace.note


def test_bitstate_never_claims_a_proof_and_reports_coverage() -> None:
    result = _check("peterson", store="bitstate", bitstate_bits=16)
    for r in result.results:  # type: ignore[attr-defined]
        assert r.verdict is Verdict.UNKNOWN
        assert "not a proof" in r.reason
    stats = result.results[0].stats  # type: ignore[attr-defined]
    assert stats.states == 20
    assert stats.extra["hash_factor"] == pytest.approx(2**16 / 20, rel=0.01)
    # 20 states in 2^16 bits: an omission is very unlikely, and the reason says so
    assert stats.extra["omission_probability_bound"] < 1e-6
    assert "probability of any omission <=" in result.results[0].reason  # type: ignore[attr-defined]
    assert "100" not in stats.extra["coverage"]


def test_bitstate_with_a_tiny_array_loses_states() -> None:
    store = BitStateStore(log2_bits=3, k=1)
    system = parse_gcl_file(GCL_EXAMPLES / "peterson.gcl")
    out = search(compile_system(system), store, keep_going=True)
    assert out.states < 20
    cov = store.coverage()
    assert cov.omission_probability_bound == 1.0
    assert "coverage unknown" in cov.statement()


def test_bitstate_finds_violations_and_they_replay() -> None:
    r = _check("rax", store="bitstate").results[0]  # type: ignore[attr-defined]
    assert r.verdict is Verdict.VIOLATED and len(r.trace.steps) == 8


def test_unknown_property_is_an_option_error() -> None:
    with pytest.raises(OptionError, match="no property 'nope'"):
        _check("rax", properties=["nope"])


def test_property_selection() -> None:
    result = _check("philosophers", properties=["neighbours01"])
    assert [r.property for r in result.results] == ["neighbours01", "no-model-error"]  # type: ignore[attr-defined]
    assert result.verdict is Verdict.HOLDS  # type: ignore[attr-defined]


def _verdicts_agree_with_reference(system: System) -> None:
    ref = reference_explore(system)
    for order in ("bfs", "dfs"):
        result = check_explicit(system, CheckOptions(order=order, keep_going=True))  # type: ignore[arg-type]
        by_name = {r.property: r for r in result.results}
        assert by_name["bad"].verdict is (
            Verdict.VIOLATED if "bad" in ref.violated else Verdict.HOLDS
        )
        assert by_name["no-deadlock"].verdict is (
            Verdict.VIOLATED if ref.deadlock else Verdict.HOLDS
        )
        assert by_name["no-model-error"].verdict is Verdict.HOLDS
        assert by_name["bad"].stats.states == len(ref.states)
        for r in result.results:
            if r.trace is not None:
                path = [s.command_index for s in r.trace.steps[1:]]
                assert run_path(compile_system(system), path)[-1] == tuple(
                    r.trace.steps[-1].state[v.name] for v in system.variables
                )


@settings(max_examples=30, deadline=None)
@given(finite_systems())
def test_random_systems_verdicts_agree_with_reference(system: System) -> None:
    _verdicts_agree_with_reference(system)  # 30 systems in CI, 100 under -m slow


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(finite_systems())
def test_random_systems_verdicts_agree_with_reference_100(system: System) -> None:
    _verdicts_agree_with_reference(system)


@pytest.mark.parametrize("order", ["bfs", "dfs"])
def test_keep_going_builds_one_path_per_property_not_one_per_violation(
    order: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # x counts to 3000; the invariant fails in 2,999 states: counted, but only the first one's
    # path is built (building every path made deep keep-going runs quadratic)
    system = parse_gcl(
        "var x : 0..3000;\nprocess P { x < 3000 -> x := x + 1; }\ninvariant small: x < 1;"
    )
    import absmc.kernel.explore.search as kernel_search

    built = []
    real = kernel_search.path_from

    def counting(parent: object, via: object, node: int) -> list[int]:
        built.append(node)
        return real(parent, via, node)  # type: ignore[arg-type]

    monkeypatch.setattr(kernel_search, "path_from", counting)
    calls = []
    orig_record = kernel_search.Search.record

    def record(self: kernel_search.Search, prop: str, path: object, message: str) -> None:
        calls.append(prop)
        orig_record(self, prop, path, message)  # type: ignore[arg-type]

    monkeypatch.setattr(kernel_search.Search, "record", record)
    out = search(compile_system(system), order=order, keep_going=True, check_deadlock=False)  # type: ignore[arg-type]
    assert out.violations["small"].count == 3000
    assert len(out.violations["small"].path) == 1
    assert calls.count("small") == 3000
    assert len(built) <= 1  # BFS: one parent-pointer walk; DFS: the stack, no walk


def test_memory_limit_ends_the_search_with_unknown_and_statistics() -> None:
    system = parse_gcl("var x : 0..5000;\nprocess P { x < 5000 -> x := x + 1; }")
    options = CheckOptions(limits=Limits(max_memory_mb=1.0), check_deadlock=False)
    result = check_explicit(system, options)
    r = result.results[0]
    assert r.verdict is Verdict.UNKNOWN and "memory limit of 1 MB" in r.reason
    assert 0 < r.stats.states < 5001
