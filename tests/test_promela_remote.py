"""Remote variable references in Promela statements (``P[e]:v``, ``P[e]:a[i]``, ``P:v``):
SPIN's semantics (``main.c`` ``rem_var``, ``pangen2.c`` ``putremote``, pan's ``Pptr``), with
SPIN's consequences for the state space (no statement merging, no dead-variable reset), checked
against pan ``-o1 -DNOREDUCE`` run in the test."""

from __future__ import annotations

from pathlib import Path

import pytest

import absmc
from absmc.kernel.run.result import Verdict
from tests.conftest import run_cli
from tests.spin import run_spin

#: a watcher reads each worker's loop counter and array by a pid held in a variable
WATCH = """\
active [3] proctype P() {
  byte x[2]; byte i;
  do
  :: i < 2 -> x[i] = _pid + i; i++
  :: i == 2 -> break
  od
}
active proctype W() {
  byte k;
  do
  :: k < 3 -> (P[k]:i == 2) -> assert(P[k]:x[1] == k + 1); k++
  :: k == 3 -> break
  od
}
"""

#: ``P:v`` names the only process of P; its local steps are not merged (SPIN 1711/20 states)
ONLY = """\
active proctype P() { byte x; x = 1; x = 2; x = 3 }
active proctype W() { byte seen; do :: seen < P:x -> seen = P:x :: seen == 3 -> break od }
"""

#: a pid that is no longer (or not yet) a running process reads 0, as pan's ``Pptr``
GONE = """\
proctype P(byte a) { byte x = a; x++ }
init {
  byte k = 1; byte s;
  run P(4); run P(6);
  do :: k < 4 -> s = s + P[k]:x; k++ :: else -> break od;
  assert(s <= 12)
}
"""


@pytest.mark.parametrize("text", [WATCH, ONLY, GONE], ids=["watch", "only", "gone"])
def test_counts_and_verdicts_are_spins(tmp_path: Path, text: str) -> None:
    model = tmp_path / "m.pml"
    model.write_text(text)
    spin = run_spin(model, tmp_path)
    plain = absmc.check(str(model), reduce=False, keep_going=True)
    assert (plain.verdict is Verdict.VIOLATED) == (spin.errors > 0)
    assert {r.stats.states for r in plain.results} == {spin.states}
    reduced = absmc.check(str(model), keep_going=True)
    assert reduced.verdict is plain.verdict
    assert all(r.stats.states <= spin.states for r in reduced.results)


def test_a_violated_assertion_over_a_remote_reference_replays(tmp_path: Path) -> None:
    model = tmp_path / "m.pml"
    model.write_text(
        "active [2] proctype P() { byte x; x = 1; x = 2; x = 0 }\n"
        "active proctype W() { assert(P[0]:x + P[1]:x < 4) }\n"
    )
    result = absmc.check(str(model))
    assert result.verdict is Verdict.VIOLATED
    bad = next(r for r in result.results if r.verdict is Verdict.VIOLATED)
    assert "P(0).x + P(1).x < 4" in bad.reason
    assert bad.trace is not None and bad.trace.replayed


def test_a_pid_of_another_proctype_is_a_model_error(tmp_path: Path) -> None:
    # pan reads the other process's memory at P's offset; absmc stops with a model error
    model = tmp_path / "m.pml"
    model.write_text(
        "proctype P() { byte x = 1 }\nproctype Q() { byte y = 7 }\n"
        "init { byte k; run P(); run Q(); do :: k < 3 -> assert(P[k]:x < 4); k++ "
        ":: else -> break od }\n"
    )
    result = absmc.check(str(model), reduce=False)
    errs = [r for r in result.results if r.property == "no-model-error"]
    assert errs and errs[0].verdict is Verdict.VIOLATED
    assert "remote reference to a process that is not a P" in errs[0].reason


@pytest.mark.parametrize(
    ("text", "message", "col"),
    [
        ("active proctype P() { byte n }\ninit { assert(P[5]:n < 3) }\n", "no process for", 15),
        (
            "active proctype P() { byte n }\ninit { assert(P[0]:m < 3) }\n",
            "no local variable 'm'",
            15,
        ),
        ("active [2] proctype P() { byte n }\ninit { assert(P:n < 3) }\n", "several processes", 15),
    ],
)
def test_references_that_cannot_mean_a_variable_are_located_errors(
    tmp_path: Path, text: str, message: str, col: int
) -> None:
    model = tmp_path / "m.pml"
    model.write_text(text)
    run = run_cli("check", str(model))
    assert run.code == 2 and message in run.err, run.err
    assert f"m.pml:2:{col}: error:" in run.err, run.err


def test_a_colon_after_a_variable_is_still_a_conditional_expression(tmp_path: Path) -> None:
    # only a proctype's name starts a remote reference (SPIN's lexer: PNAME)
    model = tmp_path / "m.pml"
    model.write_text(
        "byte a[2]; byte b;\nactive proctype P() { b = (a[0] == 0 -> a[1] : 5); assert(b == 0) }\n"
    )
    assert absmc.check(str(model)).verdict is Verdict.HOLDS
