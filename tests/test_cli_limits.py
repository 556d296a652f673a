"""Limits and output a SPIN user expects from the command line: --max-memory, SPIN's default
depth bound for depth-first search, the hash-compact store, simulate's exit codes, plain
unwrapped text when the output is not a terminal."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from .conftest import EXAMPLES, GCL_EXAMPLES, run_cli


def _json(args: list[str]) -> tuple[int, dict[str, object]]:
    r = run_cli(*args, "--json")
    return r.code, json.loads(r.out)


def test_max_memory_ends_the_run_with_unknown_exit_3_and_statistics(tmp_path: Path) -> None:
    model = tmp_path / "count.gcl"
    model.write_text("var x : 0..100000;\nprocess P { x < 100000 -> x := x + 1; }\n")
    code, res = _json(["check", str(model), "--max-memory", "1", "--no-deadlock"])
    assert code == 3
    first = res["results"][0]  # type: ignore[index]
    assert first["verdict"] == "unknown" and "memory limit of 1 MB" in first["reason"]
    assert 0 < first["stats"]["states"] < 100_001


def test_depth_first_search_has_spins_default_depth_bound(tmp_path: Path) -> None:
    model = tmp_path / "deep.gcl"
    model.write_text("var x : 0..20000;\nprocess P { x < 20000 -> x := x + 1; }\n")
    code, res = _json(["check", str(model), "--order", "dfs", "--no-deadlock"])
    assert code == 3
    reasons = {r["reason"] for r in res["results"]}  # type: ignore[attr-defined]
    assert reasons == {"depth limit of 10000 steps reached"}
    code, res = _json(
        ["check", str(model), "--order", "dfs", "--max-depth", "30000", "--no-deadlock"]
    )
    assert code == 0  # an explicit bound replaces the default
    assert res["results"][0]["stats"]["states"] == 20001  # type: ignore[index]


def test_hash_compact_store_never_proves() -> None:
    code, res = _json(["check", str(GCL_EXAMPLES / "peterson.gcl"), "--store", "hash-compact"])
    assert code == 3
    assert res["results"][0]["stats"]["states"] == 20  # type: ignore[index]
    assert all("not a proof" in r["reason"] for r in res["results"])  # type: ignore[attr-defined]


def test_simulate_exits_1_when_the_run_violates_a_property() -> None:
    # fischer_buggy violates mutual exclusion; some seed finds it within 2000 steps
    codes = set()
    for seed in range(1, 40):
        r = run_cli(
            "simulate",
            str(EXAMPLES / "promela" / "fischer_buggy.pml"),
            "--steps",
            "2000",
            "--seed",
            str(seed),
            "--json",
        )
        payload = json.loads(r.out)
        assert r.code == (1 if payload["violated"] else 0)
        codes.add(r.code)
        if r.code == 1:
            assert payload["steps"] <= 2000 and payload["ending"]
            break
    assert 1 in codes


def test_piped_output_is_not_wrapped() -> None:
    r = run_cli("check", str(GCL_EXAMPLES / "rax.gcl"))
    stats = next(line for line in r.out.splitlines() if line.startswith("statistics:"))
    assert stats.endswith("MB")  # one line, not cut at a column
    assert not any(line.startswith(" ") and "MB" in line for line in r.out.splitlines())


def test_sigterm_ends_a_search_with_unknown_statistics_and_json(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    from .conftest import ROOT

    model = tmp_path / "long.gcl"
    model.write_text(
        "var x, y : 0..100000;\nprocess P { x < 100000 -> x := x + 1; }\n"
        "process Q { y < 100000 -> y := y + 1; }\n"
    )
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "absmc.cli", "check", str(model),
            "--json", "--no-deadlock", "--progress", "--no-reduce",  # reduced: one short line
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert proc.stderr is not None
    proc.stderr.readline()  # the first progress line (about 1 s into the search)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 3
    res = json.loads(out)
    first = res["results"][0]
    assert first["verdict"] == "unknown" and "interrupted" in first["reason"]
    assert first["stats"]["states"] > 0


def test_timeout_covers_loading(monkeypatch: pytest.MonkeyPatch) -> None:

    import absmc.lang.loader as loader

    def slow_load(
        path: object, defines: object = None, reduce: bool = False, extra_slots: int = 0
    ) -> object:
        time.sleep(30)  # a front end stuck on a huge model
        raise AssertionError("the time limit should have ended loading")

    monkeypatch.setattr(loader, "load_model", slow_load)
    start = time.monotonic()
    r = run_cli("check", str(GCL_EXAMPLES / "rax.gcl"), "--timeout", "0.5")
    assert r.code == 3 and "time limit of 0.5 s reached while loading" in r.err
    r = run_cli("check", str(GCL_EXAMPLES / "rax.gcl"), "--timeout", "0.5", "--json")
    assert r.code == 3
    res = json.loads(r.out)
    assert res["verdict"] == "unknown" and "while loading" in res["notes"][0]
    assert time.monotonic() - start < 55  # each load would sleep 30 s without the limit


def test_prover_calls_are_bounded_by_the_time_left() -> None:

    from absmc.ir.expr import Const, Op
    from absmc.logic.prover import Prover, Validity

    prover = Prover(deadline=time.monotonic() - 1.0)
    tautology = Op("==", (Const(1), Const(1)))
    assert prover.validity(tautology) is Validity.UNKNOWN  # past the deadline: never valid
    assert Prover().validity(tautology) is Validity.VALID


def test_timeout_bounds_the_fourvalued_abstraction_and_the_under_refinement() -> None:
    from absmc.engines.fourvalued import check_fourvalued
    from absmc.kernel.run.options import CheckOptions, Limits
    from absmc.lang.loader import load_model

    # the abstraction of fischer.gcl takes over a second; loading (not timed here) is excluded
    system = load_model(str(GCL_EXAMPLES / "fischer.gcl"), None)
    result = check_fourvalued(system, CheckOptions(limits=Limits(timeout=0.05)))
    assert result.exit_code == 3
    # stopped inside the abstraction (it did not finish building it first)
    assert all(
        "time limit of 0.05 s reached while building the abstraction" in r.reason
        for r in result.results
    )
    # under's refinement, on the loaded model (loading may overrun 1 s on a loaded machine)
    from absmc.engines import registry
    from absmc.engines.under import UnderOptions

    system = load_model(str(GCL_EXAMPLES / "nonterminating.gcl"), None)
    options = CheckOptions(limits=Limits(timeout=1))
    res = registry.run("under", system, options, UnderOptions(max_iterations=1000))
    first = res.results[0]
    assert res.exit_code == 3 and "time limit of 1 s" in first.reason
    # the check's own time: the limit and at most one prover call past it (1,000 iterations
    # would take minutes)
    assert first.stats.time_s < 10, first.stats


def test_timeout_bounds_the_operator_tables_of_types() -> None:
    """`--method types` spends its time generating abstract operator tables (thousands of
    nonlinear implication checks for range(0,19)); `--timeout` used to wait for all of them.
    Checked in this process on the parsed model (on a loaded machine loading alone may take
    longer than the 0.5 s; `test_timeout_covers_loading` covers that)."""
    from absmc.engines import registry
    from absmc.engines.typeabs import TypesOptions
    from absmc.kernel.run.options import CheckOptions, Limits
    from absmc.lang.domains import parse_bindings
    from absmc.lang.gcl import parse_gcl

    system = parse_gcl(
        "var a, b : int;\nvar pc : 0..1;\n"
        "process P { pc == 0 -> a := a * b + a / (b + 1), b := b % 3 - a, pc := 1; }\n"
        "invariant ok: a * b >= 0 || b < 0;\n",
        "mul.gcl",
    )
    own = TypesOptions(bindings=parse_bindings(("a=range(0,19)", "b=range(0,19)")))
    res = registry.run("types", system, CheckOptions(limits=Limits(timeout=0.5)), own)
    assert res.exit_code == 3
    first = res.results[0]
    # stopped inside generation (the operator tables or the abstract System, by the load)
    assert first.reason.startswith("time limit of 0.5 s reached while generating"), first.reason
    # the check's own time: the tables take minutes without the limit (at load 12 one run
    # took 12 s to stop: a step of the generation between two deadline checks)
    assert first.stats.time_s < 30


SQUARING = """\
var x : int = 2;
var n : int;
process P { true -> x := x * x, n := n + 1; }
invariant small: n < 100;
"""


@pytest.mark.parametrize("method", ["explicit", "under", "fourvalued"])
def test_an_exploding_integer_ends_the_run_with_unknown(tmp_path: Path, method: str) -> None:
    """`x := x * x` doubles x's size each step: the 32nd product alone took seconds and
    `--timeout` was not honoured (one multiplication is one bytecode)."""
    model = tmp_path / "square.gcl"
    model.write_text(SQUARING)
    extra = ["--predicate", "x > 0"] if method == "fourvalued" else []
    r = run_cli("check", str(model), "--method", method, "--timeout", "3", *extra, "--json")
    assert r.code == 3, r.err
    first = json.loads(r.out)["results"][0]
    assert first["stats"]["time_s"] < 30  # the check's own time, not the machine's load
    assert first["verdict"] == "unknown"
    if method == "explicit":
        assert "integer product exceeds" in first["reason"]
        assert first["stats"]["states"] == 20  # 2^(2^19) is the last square computed


def test_simulate_stops_at_an_exploding_integer_and_prints_its_size(tmp_path: Path) -> None:
    model = tmp_path / "square.gcl"
    model.write_text(SQUARING)
    r = run_cli("simulate", str(model), "--steps", "40")
    assert r.code == 0, r.err
    assert "stopped after 19 steps: an integer product exceeds" in r.out
    assert "x=<524289-bit integer>" in r.out
