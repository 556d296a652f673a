"""SPIN's dead-variable reset (:mod:`absmc.lang.promela.deadvars`), on by default.

* absmc's default state and transition counts are plain ``spin -a``'s (``-DNOREDUCE``) and
  ``--no-reduce``'s are ``spin -o1``'s: on models written for each part of SPIN's rule, on the
  feature models, on generated models and on the shared corpus (live SPIN; expected.csv's
  ``spin_default_states`` in test_promela_corpus.py);
* the reset changes no verdict (generated models: each property's verdict with and without);
* ``--json`` lists the reduction in every result's statistics, ``--no-reduce`` turns it off,
  and a counterexample found with it replays (``absmc replay``).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from absmc.codegen.python import compile_system
from absmc.ir.span import ModelError
from absmc.kernel.explore.search import SearchOutcome, search
from absmc.kernel.run.options import Limits
from absmc.lang.promela import load_promela
from absmc.lang.promela.ast import Node
from absmc.lang.promela.deadvars import DEAD_VARIABLE_RESET, element_uses

from .conftest import SHARED, run_cli
from .promela_gen import random_promela
from .spin import SpinRun, run_spin

FEATURES = sorted((Path(__file__).resolve().parent / "promela_models").glob("*.pml"))
CORPUS = SHARED / "benchmarks" / "promela"

#: one model per part of SPIN's rule (pangen5.c, pangen2.c's doforward), and whether the reset
#: changes its counts (in the others a wrong reset would: a value chosen nondeterministically
#: is kept where SPIN keeps it)
RULES = {
    # a local read by a condition and not read again: reset after the condition
    "read_by_condition": (
        """byte g;
        active proctype P() { byte x;
          do :: g < 2 -> if :: x = 1 :: x = 2 fi; (x > 0); g++ :: g == 2 -> break od }""",
        True,
    ),
    # read last by an assignment, an assert or a send: SPIN keeps the value (good_dead)
    "read_by_assignment_assert_send_kept": (
        """byte g; chan c = [1] of { byte };
        active proctype P() { byte x, y, z;
          if :: x = 1; y = 1; z = 1 :: x = 2; y = 2; z = 2 fi;
          g = x; g = 0; assert(y > 0); g = 0; c!z; g = 0; c?g; g = 0 }""",
        False,
    ),
    # a written value never read: reset after the write (`y = 0` needs none)
    "dead_write": (
        """byte g;
        active proctype P() { byte x, y; if :: x = 1 :: x = 2 fi; g = 1; y = 0; g = 2 }""",
        True,
    ),
    # receives: a variable received and never read, and one read only by eval()
    "receive": (
        """chan c = [2] of { byte }; byte g;
        active proctype P() { byte x, y = 1;
          do :: c!g; c?x; g = (g + 1) % 3 :: c!y; c?eval(y); y = (y + 1) % 3 :: break od }""",
        True,
    ),
    # no resets inside a d_step
    "dstep_kept": (
        """byte g;
        active proctype P() { byte x; if :: g = 1 :: g = 2 fi; d_step { x = g; g = 0 }; g = 3 }""",
        False,
    ),
    # resets inside an atomic sequence
    "atomic": (
        """byte g;
        active proctype P() { byte x; if :: g = 1 :: g = 2 fi; atomic { x = g; g = 0 }; g = 3 }""",
        True,
    ),
    # a parameter is a local
    "parameter": (
        """byte g;
        proctype Q(byte p) { (p > 0); g++ }
        init { if :: run Q(1) :: run Q(2) fi }""",
        True,
    ),
    # array elements and structure fields are never reset
    "array_struct_kept": (
        """typedef T { byte f }; byte g;
        active proctype P() { byte a[2]; T t;
          if :: a[0] = 1; t.f = 1 :: a[0] = 2; t.f = 2 fi; (a[0] > 0); g = 1; (0 < t.f); g = 2 }""",
        False,
    ),
    # a read in an unless escape keeps the variable live
    "unless_kept": (
        """byte g;
        active proctype P() { byte x;
          if :: x = 1 :: x = 2 fi; { (x > 0); g = 1; g = 2 } unless { g == 1 -> (x == 2) } }""",
        False,
    ),
    # a goto loop
    "goto_loop": (
        """byte g;
        active proctype P() { byte x;
          L: if :: x = 1 :: x = 2 fi; (x > 0); if :: g < 2 -> g++; goto L :: else -> skip fi }""",
        True,
    ),
    # issue 24's else example (a global, then a local y)
    "else_merge_global": (
        """byte y;
        active proctype p() { do :: if :: else -> y = 2 fi :: break od }""",
        False,
    ),
    "else_merge_local": (
        """active proctype p() { byte y; do :: if :: else -> y = 2 fi :: break od }""",
        True,
    ),
}


def _absmc(path: Path, reset: bool, max_states: int | None = None) -> SearchOutcome:
    system = load_promela(path, dead_variables=reset)
    return search(compile_system(system), keep_going=True, limits=Limits(max_states=max_states))


def _same_as_spin(ours: SearchOutcome, spin: SpinRun) -> None:
    assert ours.states == spin.states
    # pan counts stored + matched states: every transition, plus the initial state
    assert ours.transitions + 1 == spin.transitions
    assert bool(ours.violations) == (spin.errors > 0)


@pytest.mark.parametrize("name", sorted(RULES))
def test_rule_gives_spins_default_counts(name: str, tmp_path: Path) -> None:
    model = tmp_path / f"{name}.pml"
    model.write_text(RULES[name][0])
    _same_as_spin(_absmc(model, True), run_spin(model, tmp_path, spin_options=(), optimize="-O0"))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(RULES))
def test_rule_without_reset_gives_spin_o1_counts(name: str, tmp_path: Path) -> None:
    model = tmp_path / f"{name}.pml"
    model.write_text(RULES[name][0])
    _same_as_spin(_absmc(model, False), run_spin(model, tmp_path, optimize="-O0"))


def test_the_reset_changes_the_counts_where_spins_does(tmp_path: Path) -> None:
    changed = {}
    for name, (text, _) in RULES.items():
        model = tmp_path / f"{name}.pml"
        model.write_text(text)
        changed[name] = _absmc(model, True).states != _absmc(model, False).states
    assert changed == {name: changes for name, (_, changes) in RULES.items()}


def test_else_merge_example_has_spins_four_states(tmp_path: Path) -> None:
    """Issue 24: ``do :: if :: else -> y = 2 fi :: break od`` has 4 states in SPIN (``-o1``
    and default for a global ``y``; 7 with ``-o1`` and 4 by default for a local one)."""
    counts = {}
    for name in ("else_merge_global", "else_merge_local"):
        model = tmp_path / f"{name}.pml"
        model.write_text(RULES[name][0])
        counts[name] = (_absmc(model, False).states, _absmc(model, True).states)
    assert counts == {"else_merge_global": (4, 4), "else_merge_local": (7, 4)}


def test_uses_follow_ana_stmnt() -> None:
    """Reads and writes as SPIN records them: indexed references use only their index, a
    receive writes its variables and reads eval(), a poll uses only eval()."""

    def var(name: str, idx: Node | None = None) -> Node:
        return Node("var", [idx, None], name=name)

    asgn = Node("asgn", [var("a", var("i")), Node("+", [var("x"), var("a", Node("const"))])])
    assert element_uses("asgn", asgn) == ({"i", "x"}, set())
    recv = Node("r", [var("c"), var("x"), Node("eval", [var("y")]), Node("const", val=1)])
    assert element_uses("r", recv) == ({"c", "y"}, {"x"})
    poll = Node("c", [Node("poll", [var("c"), var("x"), Node("eval", [var("y")])])])
    assert element_uses("c", poll) == ({"c", "y"}, set())
    assert element_uses("else", Node("else")) == (set(), set())


def test_a_remote_reference_turns_the_reset_off(tmp_path: Path) -> None:
    """SPIN (rem_var) drops the analysis when an ltl formula reads ``P[0]:x``: so does
    absmc, and the counts stay spin's."""
    text = RULES["read_by_condition"][0] + "\nltl p { [] (P[0]:x < 9) }\n"
    model = tmp_path / "remote.pml"
    model.write_text(text)
    assert load_promela(model, dead_variables=True).reductions == ()
    plain = tmp_path / "plain.pml"
    plain.write_text(RULES["read_by_condition"][0])
    assert load_promela(plain, dead_variables=True).reductions == (DEAD_VARIABLE_RESET,)
    _same_as_spin(_absmc(model, True), run_spin(model, tmp_path, spin_options=(), optimize="-O0"))


#: the feature models without a local data variable (a process's locals are its program
#: counter ``_p`` only): SPIN's data-flow reset and absmc's apply to locals, so neither resets
#: anything and the default counts are the ``-o1`` counts, which test_promela_spin.py compares
#: with live SPIN in CI; their default runs only under ``-m slow``
NO_DATA_LOCALS = {
    *("atomic_block", "dstep_branches", "else_beside_timeout", "else_in_if_option"),
    *("else_inner_first", "else_inner_second", "else_only_first", "nested_run_free", "oob"),
    *("provided_hidden", "shifts", "timeout_else"),
}


def test_feature_models_left_to_slow_have_no_local_data() -> None:
    for path in FEATURES:
        system = load_promela(path, dead_variables=True)
        pcs = {p.pc for p in system.processes}
        local = [v.name for v in system.variables if "." in v.name and v.name not in pcs]
        assert (not local) == (path.stem in NO_DATA_LOCALS), (path.stem, local)
        if not local:
            assert system.reductions == ()


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, marks=pytest.mark.slow) if p.stem in NO_DATA_LOCALS else p for p in FEATURES],
    ids=lambda p: p.stem,
)
def test_feature_model_default_counts_are_spins(path: Path, tmp_path: Path) -> None:
    spin = run_spin(path, tmp_path, spin_options=(), optimize="-O0")
    ours = _absmc(path, True)
    assert bool(ours.violations) == (spin.errors > 0), list(ours.violations)
    if path.stem != "oob":  # SPIN goes on after an out-of-bounds write; absmc stops there
        assert ours.states == spin.states
        assert ours.transitions + 1 == spin.transitions


# -- generated models ----------------------------------------------------------------------
def _differential(seed: int, tmp_path: Path) -> tuple[SearchOutcome, SearchOutcome] | None:
    model = tmp_path / f"gen{seed}.pml"
    model.write_text(random_promela(seed))
    try:
        off = _absmc(model, False, max_states=100_000)
        on = _absmc(model, True, max_states=100_000)
    except ModelError:
        return None
    if off.stopped or on.stopped:  # a few generated models exceed the state limit
        return None
    # each property's verdict is the same with and without the reset
    assert sorted(on.violations) == sorted(off.violations), random_promela(seed)
    return off, on


def test_generated_models_keep_their_verdicts(tmp_path: Path) -> None:
    changed = compared = 0
    for seed in range(24):
        pair = _differential(seed, tmp_path)
        compared += pair is not None
        if pair is not None and pair[1].states != pair[0].states:
            changed += 1
    assert compared >= 22 and changed >= 2  # the reset applies to some of them


@pytest.mark.slow
@pytest.mark.parametrize("block", range(20))
def test_generated_models_keep_their_verdicts_1000(block: int, tmp_path: Path) -> None:
    seeds = range(1000 + block * 50, 1000 + block * 50 + 50)
    compared = sum(_differential(seed, tmp_path) is not None for seed in seeds)
    assert compared >= 45


def _spin_differential(seed: int, tmp_path: Path) -> bool:
    """absmc's counts against SPIN's on generated model ``seed``; ``False`` where SPIN
    refuses the model or absmc's ``-o1`` counts differ from SPIN's for another reason (pan
    stops at some errors that absmc counts and goes past)."""
    model = tmp_path / "m.pml"
    model.write_text(random_promela(seed))
    try:
        o1 = run_spin(model, tmp_path, optimize="-O0")
        default = run_spin(model, tmp_path, spin_options=(), optimize="-O0")
    except subprocess.CalledProcessError:  # SPIN refuses some (a jump into a d_step)
        return False
    try:
        off = _absmc(model, False, max_states=100_000)
    except ModelError:
        return False
    if off.states != o1.states or off.transitions + 1 != o1.transitions:
        return False
    _same_as_spin(_absmc(model, True), default)
    return True


def test_generated_models_have_spins_counts(tmp_path: Path) -> None:
    # 3 models in CI (the first 200 seeds, these among them, under -m slow)
    compared = sum(_spin_differential(seed, tmp_path) for seed in (6, 161, 296))
    assert compared == 3


@pytest.mark.slow
@pytest.mark.parametrize("block", range(10))
def test_generated_models_have_spins_counts_200(block: int, tmp_path: Path) -> None:
    compared = sum(
        _spin_differential(seed, tmp_path) for seed in range(block * 20, block * 20 + 20)
    )
    assert compared >= 15


# -- the shared corpus against live SPIN ---------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize(
    "name", sorted(p.name for p in CORPUS.glob("*") if p.suffix in (".pml", ".pm"))
)
def test_corpus_default_counts_are_spins(name: str, tmp_path: Path) -> None:
    spin = run_spin(CORPUS / name, tmp_path, spin_options=(), optimize="-O2")
    r = run_cli("check", str(CORPUS / name), "--keep-going", "--json")
    assert {p["stats"]["states"] for p in json.loads(r.out)["results"]} == {spin.states}


# -- the command line -------------------------------------------------------------------------
def test_json_lists_the_reduction_and_no_reduce_turns_it_off(tmp_path: Path) -> None:
    model = tmp_path / "m.pml"
    model.write_text(RULES["read_by_condition"][0])
    on = json.loads(run_cli("check", str(model), "--json").out)
    off = json.loads(run_cli("check", str(model), "--json", "--no-reduce").out)
    for r in on["results"]:
        assert r["stats"]["reductions"][0] == DEAD_VARIABLE_RESET  # partial-order may follow
    assert all("reductions" not in r["stats"] for r in off["results"])
    assert on["results"][0]["stats"]["states"] < off["results"][0]["stats"]["states"]
    text = run_cli("check", str(model))
    assert text.code == 0 and f"reductions {DEAD_VARIABLE_RESET}" in text.out


def test_api_check_of_a_file_reduces_unless_told_not_to(tmp_path: Path) -> None:
    import absmc

    model = tmp_path / "m.pml"
    model.write_text(RULES["read_by_condition"][0])
    on = absmc.check(model)
    off = absmc.check(model, reduce=False)
    assert on.results[0].stats.extra["reductions"][0] == DEAD_VARIABLE_RESET
    assert "reductions" not in off.results[0].stats.extra
    assert on.results[0].stats.states < off.results[0].stats.states
    assert absmc.load(model).reductions == ()  # load: the model as written
    assert absmc.load(model, reduce=True).reductions == (DEAD_VARIABLE_RESET,)


def test_reduce_is_the_default_for_models() -> None:
    """``--reduce`` is accepted for models (where it is the default; GCL has no reduction)."""
    r = run_cli("check", "examples/gcl/peterson.gcl", "--reduce", "--json")
    assert r.code in (0, 1), r.err
    assert all(
        DEAD_VARIABLE_RESET not in p["stats"].get("reductions", [])
        for p in json.loads(r.out)["results"]
    )


def test_a_reduced_counterexample_replays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = tmp_path / "m.pml"
    model.write_text(
        "byte g;\n"
        "active proctype P() { byte x;\n"
        "  do :: g < 3 -> x = g; (x >= 0); g++ :: g == 3 -> break od; assert(g != 3) }\n"
    )
    monkeypatch.delenv("ABSMC_NO_TRAIL", raising=False)
    r = run_cli("check", str(model))
    assert r.code == 1 and f"reductions {DEAD_VARIABLE_RESET}" in r.out
    assert Path(f"{model}.trail.json").exists()
    replay = run_cli("replay", str(model))
    assert replay.code == 1, replay.err
    assert "assert" in replay.out
