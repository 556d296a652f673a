"""The command line: verdicts, exit codes, JSON schema, error messages without tracebacks."""

from __future__ import annotations

import json

import pytest

from .conftest import FIXTURES, run_cli

TRACE_KEYS = {"step", "process", "command", "source", "state"}
STATS_KEYS = {"states", "transitions", "max_depth", "time_s", "peak_mb"}


def test_rax_bfs_json_is_violated_with_8_trace_entries() -> None:
    r = run_cli("check", "examples/gcl/rax.gcl", "--order", "bfs", "--json")
    assert r.code == 1, r.err
    data = json.loads(r.out)
    assert data["verdict"] == "violated"
    assert set(data) >= {"model", "verdict", "results"}
    first = data["results"][0]
    assert set(first) >= {"property", "kind", "method", "verdict", "reason", "stats", "trace"}
    assert set(first["stats"]) >= STATS_KEYS
    assert first["verdict"] == "violated" and first["method"] == "explicit"
    assert len(first["trace"]) == 8
    assert all(set(step) == TRACE_KEYS for step in first["trace"])
    assert first["trace"][0]["command"] is None
    assert first["trace"][7]["state"]["pc2"] == 5
    assert first["trace"][1]["source"] == "examples/gcl/rax.gcl:10"


def test_bakery_state_limit_exit_3_names_the_limit() -> None:
    r = run_cli("check", "examples/gcl/bakery.gcl", "--max-states", "5000", "--json")
    assert r.code == 3
    data = json.loads(r.out)
    assert data["verdict"] == "unknown"
    assert all("state limit" in res["reason"] for res in data["results"])


def test_holds_exit_0_and_text_output() -> None:
    r = run_cli("check", "examples/gcl/peterson.gcl")
    assert r.code == 0
    assert "mutex (invariant): holds" in r.out
    assert "states 20" in r.out
    assert "verdict: holds" in r.out


def test_text_counterexample_table() -> None:
    r = run_cli("check", "examples/gcl/philosophers.gcl")
    assert r.code == 1
    assert "counterexample for 'no-deadlock' (3 steps, replayed" in r.out
    assert "p0 == 0 && !fork0 -> fork0 := true, p0 := 1" in r.out
    assert "deadlock: no command is enabled" in r.out


@pytest.mark.parametrize(
    "path", sorted((FIXTURES / "gcl_errors").glob("*.gcl")), ids=lambda p: p.stem
)
def test_malformed_models_exit_2_without_traceback(path: object) -> None:
    r = run_cli("check", str(path))
    assert r.code == 2
    assert r.out == ""
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and ": error: " in lines[0]
    assert lines[0].startswith(str(path) + ":")
    assert "Traceback" not in r.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["check", "no/such/model.gcl"], "cannot read"),
        (["check", "examples/gcl/rax.gcl", "--property", "nope"], "no property 'nope'"),
        (["check", "README.md"], "cannot tell the language"),
        (["check", "examples/gcl/rax.gcl", "--order", "sideways"], "Invalid value"),
        (["check", "examples/gcl/rax.gcl", "--max-states", "0"], "Invalid value"),
        (["check", "examples/gcl/rax.gcl", "-D", "N=3"], "Promela models only"),
    ],
)
def test_usage_errors_exit_2_in_one_message(args: list[str], message: str) -> None:
    r = run_cli(*args)
    assert r.code == 2
    assert message in r.err
    assert "Traceback" not in r.err


def test_keep_going_counts_and_property_filter() -> None:
    r = run_cli("check", "examples/gcl/rax.gcl", "--keep-going", "--max-depth", "20", "--json")
    data = json.loads(r.out)
    deadlock = next(x for x in data["results"] if x["property"] == "deadlock")
    assert deadlock["violations"] >= 2
    r = run_cli("check", "examples/gcl/philosophers.gcl", "--property", "neighbours01", "--json")
    assert r.code == 0
    assert [x["property"] for x in json.loads(r.out)["results"]] == [
        "neighbours01",
        "no-model-error",
    ]


def test_no_deadlock_flag() -> None:
    r = run_cli("check", "examples/gcl/philosophers.gcl", "--no-deadlock")
    assert r.code == 0


def test_progress_lines_on_request() -> None:
    """A progress line comes after each second of one search. The Python back end searches
    bakery.gcl (over a million states) for the whole time limit on any machine, at any load;
    under ``auto`` the search starts again in C (and again at ``-O2``), and each part could end
    before its first second (no line: measured with a warm compilation cache)."""
    r = run_cli(
        "check", "examples/gcl/bakery.gcl", "--timeout", "2.5", "--progress", "--backend", "python"
    )
    assert r.code == 3
    assert "states/s" in r.err and "time limit of 2.5 s" in r.out


def test_simulate_is_reproducible_by_seed() -> None:
    a = run_cli(
        "simulate", "examples/gcl/philosophers.gcl", "--steps", "30", "--seed", "7", "--json"
    )
    b = run_cli(
        "simulate", "examples/gcl/philosophers.gcl", "--steps", "30", "--seed", "7", "--json"
    )
    da, db = json.loads(a.out), json.loads(b.out)
    assert da["trace"] == db["trace"] and da["seed"] == 7 and a.code == b.code
    assert len(da["trace"]) <= 31
    if len(da["trace"]) < 31:  # a deadlock is a violation, as in check: exit 1
        assert "deadlock" in da["ending"] and da["violated"] == "no-deadlock" and a.code == 1
    else:
        assert a.code == 0 and da["violated"] is None


def test_help_teaches() -> None:
    r = run_cli("check", "--help")
    assert r.code == 0
    for word in ("--max-states", "--store", "no-deadlock", "--keep-going"):
        assert word in r.out
    top = run_cli("--help")
    assert "Exit codes" in top.out


def test_json_trace_note_names_the_model_error(tmp_path: object) -> None:
    from pathlib import Path

    model = Path(str(tmp_path)) / "err.gcl"
    model.write_text("var n : 0..2;\nprocess P { true -> n := n + 1; }\n")
    r = run_cli("check", str(model), "--json")
    assert r.code == 1
    res = next(x for x in json.loads(r.out)["results"] if x["property"] == "no-model-error")
    assert len(res["trace"]) == 3
    assert "value 3 assigned to n is outside 0..2" in res["trace_note"]
