"""Messages of issue 26's small items: a predicate that ends too early, the known extensions
(.py included), an output file in a missing folder (refused before the search), statistics
lines that name their properties, seconds with their unit."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from .conftest import EXAMPLES, GCL_EXAMPLES, ROOT, run_cli

RAX = str(GCL_EXAMPLES / "rax.gcl")


def test_a_predicate_that_ends_too_early() -> None:
    r = run_cli("check", RAX, "--method", "under", "--predicate", "c1 <")
    assert r.code == 2
    assert r.err.startswith("--predicate:1:5: error: unexpected end of the expression")
    assert "';'" not in r.err


def test_the_known_extensions_name_python_programs() -> None:
    r = run_cli("check", "README.md")
    assert r.code == 2 and ".pml" in r.err and "and .py for a Python program" in r.err


def test_an_output_in_a_missing_folder_is_refused_before_the_search(tmp_path: Path) -> None:
    for flag in ("--html", "--dot", "--trail"):
        target = tmp_path / "no" / "such" / "file"
        r = run_cli("check", RAX, flag, str(target))
        assert r.code == 2 and r.out == "", flag
        assert f"{flag} {target}: no folder '{target.parent}' to write it in" in r.err


def test_statistics_lines_name_their_properties_and_seconds_their_unit() -> None:
    r = run_cli("check", str(EXAMPLES / "ltl" / "never_response.pml"))
    lines = [ln for ln in r.out.splitlines() if ln.startswith("statistics")]
    assert [ln.split(":", 1)[0] for ln in lines] == [
        "statistics (no-deadlock, no-model-error)",
        "statistics (never_0)",
    ]
    one = run_cli("check", RAX)
    first = next(ln for ln in one.out.splitlines() if ln.startswith("statistics"))
    assert first.startswith("statistics: states 29")
    py = run_cli(
        "check", str(EXAMPLES / "python" / "bank.py"), "--entry", "run", "--component", "Account"
    )
    stats = next(ln for ln in py.out.splitlines() if ln.startswith("statistics"))
    assert "env time s" not in stats
    assert re.search(r"env time \d+\.\d{3} s", stats), stats


def test_a_closed_output_pipe_ends_the_run_quietly(tmp_path: Path) -> None:
    # `absmc check m.pml | head -1`: the reader goes before absmc has written its report
    model = tmp_path / "m.gcl"
    model.write_text("var x : 0..3;\nprocess P { x < 3 -> x := x + 1; }\ninvariant x < 3;\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "ABSMC_NO_TRAIL": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "absmc.cli", "check", str(model)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, err
    assert err == ""
