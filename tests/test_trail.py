"""Trails and replay (issue 26 item 1): ``check`` writes ``MODEL.trail.json`` on a violation,
``absmc replay`` re-executes a trace up to the violation it shows (exit 1) and refuses a
stale trail with the first differing row (exit 2); ``simulate --replay`` is the same replay
(``-N``), ``simulate -i`` lets a person choose the steps, ``--stop-at N -i`` continues a replay
interactively."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from .conftest import EXAMPLES, GCL_EXAMPLES, Run, run_cli

ASSERT_PML = """\
byte x;
active proctype P() {
  x = 1;
  x = x + 1;
  assert(x == 1)
}
"""

TWO_ASSERTS_PML = """\
byte a, b;
active proctype A() { a = 1; assert(a == 0) }
active proctype B() { b = 2; assert(b == 0) }
"""


@pytest.fixture
def trails(monkeypatch: pytest.MonkeyPatch) -> None:
    """Trails on (conftest turns them off for every other test)."""
    monkeypatch.delenv("ABSMC_NO_TRAIL", raising=False)


def _model(tmp_path: Path, text: str, name: str = "m.pml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def _copy(tmp_path: Path, source: Path) -> str:
    target = tmp_path / source.name
    shutil.copy(source, target)
    return str(target)


def run_with_input(text: str, *args: str) -> Run:
    """``absmc ARGS`` in this process with ``text`` on standard input."""
    from absmc.cli import cli

    r = CliRunner().invoke(cli, list(args), input=text, catch_exceptions=False)
    return Run(r.exit_code, r.stdout, r.stderr)


@pytest.mark.usefixtures("trails")
def test_check_writes_the_trail_and_replay_ends_with_the_failed_assertion(
    tmp_path: Path,
) -> None:
    model = _model(tmp_path, ASSERT_PML)
    r = run_cli("check", model)
    assert r.code == 1 and f"trail: {model}.trail.json" in r.out
    trail = json.loads(Path(model + ".trail.json").read_text())
    assert trail["format"] == "absmc-trail" and trail["defines"] == []
    assert [x["property"] for x in trail["results"]] == ["assert@5"]
    rep = run_cli("replay", model)
    assert rep.code == 1, rep.err
    # the table goes one row past the check's: the assertion that fails, marked
    row = next(line for line in rep.out.splitlines() if "assert(x == 1)" in line)
    assert "3" in row.split("│")[1] and "✗ fails" in row
    last = rep.out.strip().splitlines()[-1]
    assert last.startswith("✗ step 3: P(0) executes 'assert(x == 1)'")
    assert last.endswith("assertion violated: x == 1")


@pytest.mark.usefixtures("trails")
def test_trail_options(tmp_path: Path) -> None:
    model = _model(tmp_path, ASSERT_PML)
    assert run_cli("check", model, "--no-trail").code == 1
    assert not Path(model + ".trail.json").exists()
    elsewhere = tmp_path / "saved.json"
    r = run_cli("check", model, "--trail", str(elsewhere), "--json")
    assert r.code == 1 and json.loads(r.out)["trail"] == str(elsewhere)
    assert not Path(model + ".trail.json").exists()
    assert run_cli("replay", model, str(elsewhere)).code == 1
    # nothing violated: no trail, and replay says there is none
    holds = _copy(tmp_path, GCL_EXAMPLES / "peterson.gcl")
    assert run_cli("check", holds).code == 0
    assert not Path(holds + ".trail.json").exists()
    none = run_cli("replay", holds)
    assert none.code == 2 and "no trail" in none.err


def test_absmc_no_trail_is_what_the_tests_run_with(tmp_path: Path) -> None:
    model = _model(tmp_path, ASSERT_PML)
    assert run_cli("check", model).code == 1
    assert list(tmp_path.iterdir()) == [Path(model)]


@pytest.mark.usefixtures("trails")
def test_replay_shows_an_invariant_a_deadlock_and_a_lasso(tmp_path: Path) -> None:
    rax = _copy(tmp_path, GCL_EXAMPLES / "rax.gcl")
    run_cli("check", rax)
    r = run_cli("replay", rax)
    assert r.code == 1
    assert r.out.strip().endswith("✗ the state of step 7 violates unreachable 'deadlock'")
    phil = _copy(tmp_path, GCL_EXAMPLES / "philosophers.gcl")
    run_cli("check", phil)
    r = run_cli("replay", phil)
    assert r.code == 1 and "✗ deadlock: no command is enabled in the state of step" in r.out
    lasso = _copy(tmp_path, EXAMPLES / "ltl" / "never_response.pml")
    run_cli("check", lasso)
    r = run_cli("replay", lasso, "-N", "never_0")
    cycle = json.loads(Path(lasso + ".trail.json").read_text())["results"][0]["cycle_start"]
    assert r.code == 1
    assert f"⟲ the steps from step {cycle} on repeat forever" in r.out


@pytest.mark.usefixtures("trails")
def test_a_stale_trail_is_refused_with_the_first_differing_row(tmp_path: Path) -> None:
    rax = _copy(tmp_path, GCL_EXAMPLES / "rax.gcl")
    run_cli("check", rax)
    text = Path(rax).read_text()
    Path(rax).write_text(text.replace("pc1 == 3             -> w1 := 1", "pc1 == 3 -> w1 := 0"))
    r = run_cli("replay", rax)
    assert r.code == 2 and r.out == ""
    assert "does not replay" in r.err and "row " in r.err and r.err.count("\n") == 1
    # an LTL trail whose lasso was tampered with: the row named
    lasso = _copy(tmp_path, EXAMPLES / "ltl" / "never_response.pml")
    run_cli("check", lasso)
    trail = Path(lasso + ".trail.json")
    data = json.loads(trail.read_text())
    data["results"][0]["trace"][2]["state"]["req"] = 7
    trail.write_text(json.dumps(data))
    r = run_cli("replay", lasso)
    assert r.code == 2 and "row 2" in r.err


@pytest.mark.usefixtures("trails")
def test_every_violated_property_is_in_the_trail_and_n_picks_one(tmp_path: Path) -> None:
    model = _model(tmp_path, TWO_ASSERTS_PML)
    run_cli("check", model, "--keep-going", "--no-reduce")  # shortest counterexamples
    names = [x["property"] for x in json.loads(Path(model + ".trail.json").read_text())["results"]]
    assert names == ["assert@2", "assert@3"]
    first = run_cli("replay", model)
    assert first.code == 1 and "assert(a == 0)" in first.out and "also in" in first.out
    second = run_cli("replay", model, "--property", "assert@3")
    assert second.code == 1 and "assertion violated: b == 0" in second.out
    assert "assert(a == 0)" not in second.out
    unknown = run_cli("replay", model, "-N", "nope")
    assert unknown.code == 2 and "it has: assert@2, assert@3" in unknown.err


def test_simulate_replay_of_check_json_ends_with_the_violation(tmp_path: Path) -> None:
    model = _model(tmp_path, TWO_ASSERTS_PML)
    saved = tmp_path / "r.json"
    saved.write_text(run_cli("check", model, "--keep-going", "--json").out)
    r = run_cli("simulate", model, "--replay", str(saved), "-N", "assert@3")
    assert r.code == 1 and "assertion violated: b == 0" in r.out
    r = run_cli("simulate", model, "--replay", str(saved), "--stop-at", "1")
    assert r.code == 0 and "stopped at step 1 of" in r.out and "✗" not in r.out


def test_simulate_replay_of_a_random_run(tmp_path: Path) -> None:
    model = _model(tmp_path, ASSERT_PML)
    saved = tmp_path / "run.json"
    run = run_cli("simulate", model, "--json", "--seed", "3")
    assert json.loads(run.out)["violated"] == "assert@5"
    saved.write_text(run.out)
    r = run_cli("simulate", model, "--replay", str(saved))
    assert r.code == 1 and "✗ step 3: P(0) executes 'assert(x == 1)'" in r.out


def test_simulate_interactive_follows_the_choices_read(tmp_path: Path) -> None:
    model = _model(tmp_path, TWO_ASSERTS_PML)
    # A's step first, then B's, then A's failing assertion
    r = run_with_input("1\n2\n1\n", "simulate", "-i", model)
    assert r.code == 1, r.out
    lines = r.out.splitlines()
    assert "  1. A(0): a = 1" in lines[3] and "  2. B(1): b = 2" in lines[4]
    taken = [ln for ln in lines if ln.startswith(("   1  ", "   2  "))]
    assert "A(0): a = 1" in taken[0] and "B(1): b = 2" in taken[1]
    assert "✗ violates 'assert@2'" in r.out
    assert lines[-1] == "✗ assertion violated: a == 0"


def test_simulate_interactive_stops_on_q_and_rereads_a_bad_choice(tmp_path: Path) -> None:
    model = _model(tmp_path, ASSERT_PML)
    r = run_with_input("9\nx\n1\nq\n", "simulate", "-i", model)
    assert r.code == 0
    assert "'9' is not a choice" in r.out and "'x' is not a choice" in r.out
    assert r.out.strip().endswith("stopped by the user after step 1")
    # the end of the input stops it too
    assert run_with_input("", "simulate", "-i", model).code == 0


@pytest.mark.usefixtures("trails")
def test_replay_stops_at_a_step_and_continues_interactively(tmp_path: Path) -> None:
    model = _model(tmp_path, TWO_ASSERTS_PML)
    run_cli("check", model, "--keep-going", "--no-reduce")  # the shortest counterexample
    r = run_with_input("2\n", "replay", model, "-N", "assert@3", "--stop-at", "1", "-i")
    assert "replayed up to step 1" in r.out
    # after B's first step, choice 2 is B's failing assertion (A's step is choice 1)
    assert r.code == 1 and r.out.strip().endswith("✗ assertion violated: b == 0")


def test_replay_refusals_are_one_line(tmp_path: Path) -> None:
    bank = str(EXAMPLES / "python" / "bank.py")
    r = run_cli("replay", bank, str(tmp_path / "x.json"))
    assert r.code == 2 and "shown by absmc check itself" in r.err and r.err.count("\n") == 1
    r = run_cli("replay", str(GCL_EXAMPLES / "rax.gcl"), str(tmp_path / "missing.json"))
    assert r.code == 2 and "missing.json': no such file" in r.err
    empty = tmp_path / "empty.json"
    empty.write_text('{"results": []}')
    r = run_cli("replay", str(GCL_EXAMPLES / "rax.gcl"), str(empty))
    assert r.code == 2 and "holds no trace" in r.err
    r = run_cli("simulate", "-i", "--json", str(GCL_EXAMPLES / "rax.gcl"))
    assert r.code == 2 and "writes no JSON" in r.err
    r = run_cli("simulate", str(GCL_EXAMPLES / "rax.gcl"), "--replay", str(empty), "--json")
    assert r.code == 2 and "drop --json" in r.err


@pytest.mark.usefixtures("trails")
def test_replay_starts_in_the_trails_state_of_an_init_set(tmp_path: Path) -> None:
    model = _model(
        tmp_path,
        "var x : 0..5;\ninit: x >= 1 && x <= 3;\nprocess P { x < 5 -> x := x + 1; }\n"
        "invariant small: x != 5;\n",
        "init.gcl",
    )
    assert run_cli("check", model, "--no-deadlock").code == 1
    trail = json.loads(Path(model + ".trail.json").read_text())
    first = trail["results"][0]["trace"][0]["state"]["x"]
    r = run_cli("replay", model)
    assert r.code == 1 and f"x={first}" in r.out
    assert r.out.strip().endswith("violates invariant 'small'")
    # a start outside the init: set is refused
    trail["results"][0]["trace"][0]["state"]["x"] = 0
    Path(model + ".trail.json").write_text(json.dumps(trail))
    r = run_cli("replay", model)
    assert r.code == 2 and "row 0" in r.err
