"""A Promela ``run`` that finds every process slot absmc allocated taken (fewer than SPIN's 255,
from the lowering's dry run) is absmc's limit, not the model's: the check is ``unknown``,
never ``violated`` (SPIN creates the process and finds no error)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import absmc
from absmc.kernel.run.result import Verdict

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


def test_running_out_of_absmcs_process_slots_is_unknown_not_violated(tmp_path: Path) -> None:
    model = tmp_path / "chain.pml"
    model.write_text(CHAIN)
    result = absmc.check(str(model), keep_going=True)
    assert result.verdict is Verdict.UNKNOWN
    assert {r.verdict for r in result.results} == {Verdict.UNKNOWN}
    for r in result.results:
        assert "process-slot limit" in r.reason and "SPIN allows 255" in r.reason, r.reason
        assert r.trace is None


@pytest.mark.skipif(shutil.which("spin") is None or shutil.which("gcc") is None, reason="no spin")
def test_spin_finds_no_error_in_the_same_model(tmp_path: Path) -> None:
    (tmp_path / "chain.pml").write_text(CHAIN)
    subprocess.run(["spin", "-a", "chain.pml"], cwd=tmp_path, check=True, capture_output=True)
    subprocess.run(["gcc", "-O1", "-DSAFETY", "-o", "pan", "pan.c"], cwd=tmp_path, check=True)
    out = subprocess.run(["./pan", "-n"], cwd=tmp_path, capture_output=True, text=True).stdout
    assert "errors: 0" in out
