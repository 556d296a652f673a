"""The multi-threaded native search (``--workers N --backend native``, ``runtime_par.c``): the
same states, transitions and verdicts as one thread, counterexamples that replay, limits, and
the default number of threads."""

from __future__ import annotations

import re
from typing import Any

import pytest

from absmc.lang.loader import load_model
from absmc.native import NativeSemantics
from absmc.native.build import runtime_sources
from absmc.native.cgen import CGen
from absmc.native.search import NativeStore, native_search

from .conftest import EXAMPLES, GCL_EXAMPLES, SHARED, run_cli
from .native_helpers import cli_json, needs_native

pytestmark = [needs_native, pytest.mark.usefixtures("native_fast_compile")]

CORPUS = SHARED / "benchmarks" / "promela"


def _summary(res: dict[str, Any]) -> list[tuple[str, str, int, int]]:
    return [
        (r["property"], r["verdict"], r["stats"]["states"], r["stats"]["transitions"])
        for r in res["results"]
    ]


@pytest.mark.parametrize(
    "model", ["at.1.pm", "brp.1.pm", "snoopy.pml", "leader_filters.1.pm", "p117.pml", "mcs.1.pm"]
)
def test_threads_give_one_threads_states_transitions_and_verdicts(model: str) -> None:
    if not CORPUS.exists():
        pytest.skip("../shared/benchmarks/promela is not available")
    args = ("check", str(CORPUS / model), "--keep-going", "--backend", "native")
    code1, one = cli_json(*args, "--workers", "1")
    code3, three = cli_json(*args, "--workers", "3")
    assert one["results"][0]["stats"]["workers"] == 1
    assert three["results"][0]["stats"]["workers"] == 3
    assert code3 == code1 and _summary(three) == _summary(one)
    for r in three["results"]:
        if r["verdict"] == "violated":  # replayed on the concrete semantics to be reported
            assert len(r["trace"]) >= 2


def test_hash_compact_in_threads_gives_one_threads_counts_and_replayed_traces() -> None:
    if not CORPUS.exists():
        pytest.skip("../shared/benchmarks/promela is not available")
    args = ("check", str(CORPUS / "brp.1.pm"), "--keep-going", "--backend", "native")
    _, one = cli_json(*args, "--store", "hash-compact", "--workers", "1")
    code, two = cli_json(*args, "--store", "hash-compact", "--workers", "2")
    _, exact = cli_json(*args, "--workers", "1")
    assert two["results"][0]["stats"]["workers"] == 2 and code == 1
    assert _summary(two) == _summary(one)
    assert two["results"][0]["stats"]["bytes_per_state"] <= 16
    want = {r["property"]: r["trace"] for r in exact["results"] if r["verdict"] == "violated"}
    got = {r["property"]: r["trace"] for r in two["results"] if r["verdict"] == "violated"}
    assert want and got == want  # paths from the exact search bounded by the depth
    assert "holds" not in {r["verdict"] for r in two["results"]}


def test_a_violation_found_by_a_thread_stops_all_and_its_trace_replays() -> None:
    model = str(GCL_EXAMPLES / "philosophers.gcl")
    code, res = cli_json("check", model, "--backend", "native", "--workers", "2")
    assert code == 1 and res["verdict"] == "violated"
    bad = [r for r in res["results"] if r["verdict"] == "violated"]
    assert [r["property"] for r in bad] == ["no-deadlock"] and len(bad[0]["trace"]) >= 2
    rest = [r for r in res["results"] if r["verdict"] != "violated"]
    assert rest and all(
        r["verdict"] == "unknown" and "stopped at the first violation" in r["reason"] for r in rest
    )


def test_limits_stop_the_threads_with_unknown(tmp_path: Any) -> None:
    model = tmp_path / "grid.gcl"
    # 10^8 states: no machine searches them, to the deadlock at x == y == 10000, in 1 s (at
    # 0..2000, 4 * 10^6 states, an idle CI machine found the deadlock before the time limit)
    model.write_text(
        "var x, y : 0..10000;\nprocess P { x < 10000 -> x := x + 1; }\n"
        "process Q { y < 10000 -> y := y + 1; }\n"
    )
    code, res = cli_json(
        "check", str(model), "--backend", "native", "--workers", "2", "--max-states", "100000"
    )
    stats = res["results"][0]["stats"]
    assert code == 3 and res["verdict"] == "unknown"
    assert "state limit of 100000 states" in res["results"][0]["reason"]
    assert stats["states"] == 100_000 and stats["workers"] == 2
    code, res = cli_json(
        "check", str(model), "--backend", "native", "--workers", "2", "--timeout", "1"
    )  # (--timeout bounds loading too: 0.3 s could end a loaded machine's run while loading)
    assert code == 3 and "time limit" in res["results"][0]["reason"]
    assert 0 < res["results"][0]["stats"]["states"] < 10001 * 10001  # partial: not all 10^8
    # a budget of 40 MB beside this process: 10^8 states at >= 24 bytes each do not fit
    from absmc.kernel.run.memory import current_rss_mb

    limit = str(int(current_rss_mb()) + 40)
    code, res = cli_json(
        "check", str(model), "--backend", "native", "--workers", "2", "--max-memory", limit
    )
    assert code == 3 and f"memory limit of {limit} MB" in res["results"][0]["reason"]
    assert 0 < res["results"][0]["stats"]["states"] < 10001 * 10001


def test_default_workers_start_threads_only_past_a_size(monkeypatch: pytest.MonkeyPatch) -> None:
    import absmc.engines.explicit.native as nat

    model = str(GCL_EXAMPLES / "peterson.gcl")
    code, res = cli_json("check", model, "--backend", "native")  # 20 states: one thread
    assert code == 0 and res["results"][0]["stats"]["workers"] == 1
    monkeypatch.setattr(nat, "PARALLEL_AFTER", 5)
    monkeypatch.setattr(nat, "default_workers", lambda: 2)
    code, res = cli_json("check", model, "--backend", "native")
    stats = res["results"][0]["stats"]
    assert code == 0 and stats["workers"] == 2 and stats["states"] == 20
    r = run_cli("check", model, "--backend", "native", "--ray", "auto")
    assert r.code == 2 and "--ray runs on the Python back end" in r.err


#: 61 * 61 = 3,721 states, no deadlock (the counters wrap), nothing violated
GRID = """var x, y : 0..60;
process P { x < 60 -> x := x + 1; x == 60 -> x := 0; }
process Q { y < 60 -> y := y + 1; y == 60 -> y := 0; }
"""


@pytest.mark.parametrize("store", ["exact", "hash-compact", "bitstate"])
@pytest.mark.parametrize("threads", ["2", "8"])
def test_max_states_stops_the_threads_at_exactly_the_limit(
    tmp_path: Any, store: str, threads: str
) -> None:
    # threads take permits for the states they store (runtime_par.c par_permit): the count is
    # the limit itself, as with one thread, not the limit plus what the others were inserting
    # (before the permits, 8 threads on 2 CPUs stored 1,001 states now and then)
    model = tmp_path / "grid.gcl"
    model.write_text(GRID)
    args = ("check", str(model), "--backend", "native", "--store", store, "--workers", threads)
    for limit in (1000, 1500, 2000, 3000, 3720):
        code, res = cli_json(*args, "--max-states", str(limit))
        r = res["results"][0]
        assert code == 3 and res["verdict"] == "unknown"
        assert f"state limit of {limit} states" in r["reason"]
        assert r["stats"]["states"] == limit and r["stats"]["workers"] == int(threads)
    # a limit the search just does not reach: every state, and a proof (the exact store only)
    code, res = cli_json(*args, "--max-states", "3721")
    assert res["verdict"] == ("holds" if store == "exact" else "unknown")
    if store != "bitstate":  # two threads may both store a state they insert at once
        assert res["results"][0]["stats"]["states"] == 3721


def test_bitstate_in_threads_loses_no_more_than_a_bit_array_does_and_proves_nothing() -> None:
    if not CORPUS.exists():
        pytest.skip("../shared/benchmarks/promela is not available")
    model = str(CORPUS / "at.1.pm")  # 39,356 states (SPIN)
    args = ("check", model, "--backend", "native", "--store", "bitstate", "--workers", "2")
    code, res = cli_json(*args)  # 2^27 bits: no false match expected, none observed
    r = res["results"][0]
    assert code == 3 and res["verdict"] == "unknown" and r["stats"]["workers"] == 2
    # a state two threads insert at the same moment may be counted twice (runtime_par.c
    # par_insert_bs): at most a few of 39,356
    assert 39356 <= r["stats"]["states"] <= 39356 + 100
    assert r["stats"]["observed_false_matches"] == 0 and r["stats"]["sampled_lookups"] > 0
    assert "probability of any omission <=" in r["reason"] and "not a proof" in r["reason"]
    code, res = cli_json(*args, "--bitstate-bits", "14")  # too small: states are lost
    r = res["results"][0]
    assert code == 3 and res["verdict"] == "unknown" and r["stats"]["workers"] == 2
    assert r["stats"]["states"] < 39356 and r["stats"]["omission_probability_bound"] == 1.0
    assert "coverage unknown" in r["reason"] and "100%" not in r["reason"]


def test_bitstate_violations_in_threads_carry_the_exact_searchs_traces() -> None:
    if not CORPUS.exists():
        pytest.skip("../shared/benchmarks/promela is not available")
    args = ("check", str(CORPUS / "brp.1.pm"), "--keep-going", "--backend", "native")
    code, bit = cli_json(*args, "--store", "bitstate", "--workers", "2")
    _, exact = cli_json(*args, "--workers", "1")
    assert code == 1 and bit["results"][0]["stats"]["workers"] == 2
    want = {r["property"]: r["trace"] for r in exact["results"] if r["verdict"] == "violated"}
    got = {r["property"]: r["trace"] for r in bit["results"] if r["verdict"] == "violated"}
    assert want and got == want
    assert "holds" not in {r["verdict"] for r in bit["results"]}


def test_profile_counters_account_for_every_state_expanded_and_stored(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """``PAR_PROF`` (benchmarks/par_profile.py) compiles, searches the same states, and its
    counters add up: every state is expanded by exactly one thread, and every state but the
    initial one was stored by one (``new``)."""
    system = load_model(EXAMPLES / "promela" / "fischer.pml", {"MAX": "256"})
    gen = CGen(system, system.properties)
    head, tail = runtime_sources()
    source = "#define _GNU_SOURCE\n#define PAR_PROF 1\n" + gen.source(head, tail)
    prof = NativeSemantics(system, opt="-O0", prepared=(gen, source))
    plain = native_search(NativeSemantics(system, opt="-O0"), "exact", workers=1).outcome
    capfd.readouterr()
    run = native_search(prof, "exact", workers=2, parallel_after=0)
    err = capfd.readouterr().err
    assert run.threads == 2
    assert (run.outcome.states, run.outcome.transitions) == (plain.states, plain.transitions)
    expanded = [int(x) for x in re.findall(r"^PROF t\d .*? states (\d+) ", err, re.M)]
    stored = [int(x) for x in re.findall(r"^PROF t\d .*? new (\d+)", err, re.M)]
    assert len(expanded) >= 2 and len(expanded) % 2 == 0
    assert sum(expanded) == plain.states and sum(stored) == plain.states - 1


#: the simplified bakery of examples/gcl/bakery.gcl with tickets bounded by 2048: 32,763 states
#: in BFS levels of 4 (a long thin state space: most of 16 threads sleep, runtime_par.c)
THIN_BAKERY = """var x, y : int;
var pc1, pc2 : 0..3;
process P1 {
  pc1 == 0 -> x := y, pc1 := 1;
  pc1 == 1 && x < 2048 -> x := x + 1, pc1 := 2;
  pc1 == 2 && x <= y -> pc1 := 3;
  pc1 == 3 -> pc1 := 0;
}
process P2 {
  pc2 == 0 -> y := x, pc2 := 1;
  pc2 == 1 && y < 2048 -> y := y + 1, pc2 := 2;
  pc2 == 2 && y < x -> pc2 := 3;
  pc2 == 3 -> pc2 := 0;
}
invariant mutex: !(pc1 == 3 && pc2 == 3);
"""


@pytest.mark.parametrize("store", ["exact", "hash-compact"])
def test_many_threads_on_a_thin_state_space_give_one_threads_counts(store: NativeStore) -> None:
    # 16 threads from the first state on 4 states per level: threads sleep and are woken, and
    # the sleeping ones leave the table's growth rendezvous (the table grows from its smallest
    # size several times); the counts and the verdict are one thread's
    from absmc.lang.gcl import parse_gcl

    sem = NativeSemantics(parse_gcl(THIN_BAKERY, "bakery.gcl"))
    one = native_search(sem, store, check_deadlock=False, workers=1)
    assert one.outcome.states > 30_000 and not one.outcome.violations
    for threads in (4, 16):
        run = native_search(
            sem,
            store,
            check_deadlock=False,
            workers=threads,
            parallel_after=0,
        )
        assert run.threads == threads and run.outcome.stopped is None
        assert (run.outcome.states, run.outcome.transitions) == (
            one.outcome.states,
            one.outcome.transitions,
        )
        assert not run.outcome.violations
