"""pan's ``xr``/``xs`` checks in channel polls (``Src/pangen2.c``): ``len``, ``full`` and
``empty`` count as a receive- and a send-side access, ``nfull`` as a send, ``nempty`` as a
receive. A poll by another process than the claiming one is a model error, as in pan (SPIN's
``Examples/cambridge.pml``: ``empty(recv)`` in the receiver of a channel the sender claims
with ``xs``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import absmc
from absmc.kernel.run.result import Verdict

MODEL = """\
chan c = [2] of {{ byte }};
active proctype S() {{ xs c; c!1 }}
active proctype R() {{ xr c; do :: {poll} -> skip :: c?_ -> break od }}
"""

#: the poll in R, and whether pan reports the xs claim of S broken
POLLS = [("empty(c)", True), ("len(c) == 0", True), ("nfull(c)", True), ("nempty(c)", False)]


@pytest.mark.parametrize(("poll", "broken"), POLLS)
def test_a_poll_by_another_process_breaks_the_claim_as_in_pan(
    poll: str, broken: bool, tmp_path: Path
) -> None:
    model = tmp_path / "claims.pml"
    model.write_text(MODEL.format(poll=poll))
    result = absmc.check(str(model), keep_going=True)
    error = next(r for r in result.results if r.property == "no-model-error")
    if broken:
        assert error.verdict is Verdict.VIOLATED
        assert "xs assertion violated: access to channel c" in error.reason
        assert error.trace is not None
    else:
        assert error.verdict is Verdict.HOLDS


@pytest.mark.skipif(shutil.which("spin") is None or shutil.which("gcc") is None, reason="no spin")
@pytest.mark.parametrize(
    ("poll", "broken"),
    # one poll that breaks the claim and one that does not in CI (a pan build each)
    [
        p if p[0] in ("empty(c)", "nempty(c)") else pytest.param(*p, marks=pytest.mark.slow)
        for p in POLLS
    ],
)
def test_pan_agrees(poll: str, broken: bool, tmp_path: Path) -> None:
    (tmp_path / "claims.pml").write_text(MODEL.format(poll=poll))
    subprocess.run(["spin", "-a", "claims.pml"], cwd=tmp_path, check=True, capture_output=True)
    subprocess.run(["gcc", "-O0", "-DSAFETY", "-o", "pan", "pan.c"], cwd=tmp_path, check=True)
    out = subprocess.run(["./pan", "-n"], cwd=tmp_path, capture_output=True, text=True).stdout
    assert ("xs assertion violated" in out) is broken, out
