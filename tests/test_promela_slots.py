"""A Promela ``run`` that finds every process slot absmc allocated taken (fewer than SPIN's 255,
from the lowering's dry run) is absmc's limit, not the model's: the check is repeated with
more slots (``engines.registry.run_growing``) until no ``run`` meets that limit, so the
verdict and the state count are SPIN's; the trail records the slots added and replays."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import absmc
from absmc.engines import registry
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import Verdict
from tests.conftest import run_cli

#: node's dry run blocks on the empty channel, so it counts no ``run``: absmc allocates the
#: slots of init's one ``run`` only, while the nodes really create two more (SPIN: 19 states)
CHAIN = """\
chan f = [4] of { byte };

proctype node() {
  byte x;
  f?x;
  if
  :: x > 0 -> run node()
  :: else -> skip
  fi
}

init { f!1; f!1; f!0; f!0; run node() }
"""

#: the same chain, whose third node fails its assertion (SPIN: at depth 13)
FAILING = CHAIN.replace(":: else -> skip", ":: else -> assert(x > 0)")

#: a loop that chooses which proctype to run: the dry run opened the first slots to R only,
#: where SPIN gives Q pid 1 too (it once grew to SPIN's 255 slots and reported a spurious
#: "no free process slot" violation; SPIN: 460 states, no error)
CHOICE = """\
proctype Q(byte k) { skip }
proctype R() { skip }
init { byte k; do :: k < 3 -> run Q(k); k++ :: k < 3 -> run R(); k++ :: k >= 3 -> break od }
"""

#: the same choice, where a Q that gets pid 3 (after two R still running) fails
CHOICE_FAILING = CHOICE.replace(
    "proctype Q(byte k) { skip }", "proctype Q(byte k) { assert(_pid < 3) }"
)

#: Q is active and ends; once dead with the highest pid, SPIN gives pid 1 to P's ``run H()``
#: (nr_proc): H's assertion fails there (SPIN -o1 -DNOREDUCE: 25 states, the assertion
#: violated at depth 4). The dry run's slot for H is pid 2 only, and an active process's slot
#: was its proctype's alone, so the repeated check too met its slot limit and ended unknown
REUSE = """\
active proctype P() { byte x; x = 1; run H(); x = 2 }
active proctype Q() { skip }
proctype H() { assert(_pid == 2) }
"""


def test_a_run_gets_the_pid_of_an_active_process_that_died(tmp_path: Path) -> None:
    model = tmp_path / "reuse.pml"
    model.write_text(REUSE)
    for reduce in (True, False):
        result = absmc.check(str(model), reduce=reduce)
        bad = next(r for r in result.results if r.property == "assert@3")
        assert bad.verdict is Verdict.VIOLATED, bad.reason
        assert bad.reason.startswith("assertion violated: _pid == 2"), bad.reason
        assert bad.trace is not None and bad.stats.extra["process_slots_added"] > 0
        # Q's slot, now opened to H too (so named by its pid), is dead when P runs H
        last = bad.trace.steps[-1]
        assert last.command == "run H()" and last.state["pid1._p"] != 0


def test_a_check_that_runs_out_of_slots_is_repeated_with_more(tmp_path: Path) -> None:
    model = tmp_path / "chain.pml"
    model.write_text(CHAIN)
    result = absmc.check(str(model), keep_going=True)
    assert result.verdict is Verdict.HOLDS
    for r in result.results:
        assert r.stats.states == 19 and r.stats.extra["process_slots_added"] == 2
    assert any("2 more process slots" in n for n in result.notes)


def test_slots_met_without_growing_are_unknown_not_violated(tmp_path: Path) -> None:
    model = tmp_path / "chain.pml"
    model.write_text(CHAIN)
    result = registry.run("explicit", absmc.load(str(model)), CheckOptions(keep_going=True))
    assert {r.verdict for r in result.results} == {Verdict.UNKNOWN}
    for r in result.results:
        assert "process-slot limit" in r.reason and "SPIN allows 255" in r.reason, r.reason
        assert r.trace is None and r.extra["process_slots_met"] == 2  # init's and one node's


def test_a_violation_past_the_dry_runs_slots_is_found_and_its_trail_replays(
    tmp_path: Path,
) -> None:
    model = tmp_path / "failing.pml"
    model.write_text(FAILING)
    trail = tmp_path / "failing.trail.json"
    r = run_cli("check", str(model), "--trail", str(trail))
    assert r.code == 1, r.out + r.err
    # the third node (pid 3, in a slot the check added) fails its own instance
    assert "violated — assertion violated: node(3).x > 0; counterexample of 13 steps" in r.out
    again = run_cli("replay", str(model), str(trail))
    assert again.code == 1, again.out + again.err
    assert again.out.strip().endswith("assertion violated: node(3).x > 0")


@pytest.mark.skipif(shutil.which("spin") is None or shutil.which("gcc") is None, reason="no spin")
@pytest.mark.parametrize(
    ("text", "reduce"),
    [(CHAIN, True), (FAILING, True), (CHOICE, False), (CHOICE_FAILING, False), (REUSE, False)],
    ids=["chain", "failing", "choice", "pid3", "reuse"],
)
def test_spin_agrees_on_the_verdict_and_the_states(tmp_path: Path, text: str, reduce: bool) -> None:
    # the choice models unreduced, as pan -DNOREDUCE: pan's default reduction (its run rule)
    # stores 30 states of CHOICE_FAILING and misses the Q that gets pid 3
    (tmp_path / "m.pml").write_text(text)
    subprocess.run(["spin", "-a", "m.pml"], cwd=tmp_path, check=True, capture_output=True)
    flags = [] if reduce else ["-DNOREDUCE"]
    gcc = ["gcc", "-O1", "-DSAFETY", *flags, "-o", "pan", "pan.c"]
    subprocess.run(gcc, cwd=tmp_path, check=True)
    # unreduced: the whole state space on both sides (pan -c0, absmc keep_going)
    pan = ["./pan"] if reduce else ["./pan", "-c0"]
    out = subprocess.run(pan, cwd=tmp_path, capture_output=True, text=True).stdout
    errors = int(re.search(r"errors: (\d+)", out).group(1))  # type: ignore[union-attr]
    stored = int(re.search(r"(\d+) states, stored", out).group(1))  # type: ignore[union-attr]
    ours = absmc.check(str(tmp_path / "m.pml"), reduce=reduce, keep_going=not reduce)
    assert (ours.verdict is Verdict.VIOLATED) == (errors > 0)
    assert {r.stats.states for r in ours.results} == {stored}


def test_a_run_into_a_slot_the_dry_run_kept_for_another_proctype_is_not_a_violation(
    tmp_path: Path,
) -> None:
    model = tmp_path / "choice.pml"
    model.write_text(CHOICE)
    result = absmc.check(str(model), keep_going=True, reduce=False)
    assert result.verdict is Verdict.HOLDS, [r.reason for r in result.results]
    assert {r.stats.states for r in result.results} == {460}  # SPIN -o1 -DNOREDUCE's count
    assert all(r.stats.extra["process_slots_added"] > 0 for r in result.results)


@pytest.mark.parametrize("backend", ["python", "native"])
def test_an_assertion_that_folds_to_false_in_its_slot_shows_its_source(
    tmp_path: Path, backend: str
) -> None:
    # `_pid < 3` is the constant false in pid 3: the message shows the assertion as written
    model = tmp_path / "m.pml"
    model.write_text("proctype Q() { assert(_pid < 3) }\ninit { run Q(); run Q(); run Q() }\n")
    result = absmc.check(str(model), backend=backend)
    bad = next(r for r in result.results if r.verdict is Verdict.VIOLATED)
    assert bad.reason.startswith("assertion violated: _pid < 3"), bad.reason
