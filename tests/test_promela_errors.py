"""Malformed Promela models: one-line `FILE:LINE:COL: error: ...`, exit 2, never a traceback.

Each fixture's first line says what to expect: ``// expect: LINE:COL: message fragment``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from absmc.lang.larkutil import read_source

from .conftest import FIXTURES, run_cli

CASES = sorted((FIXTURES / "promela_errors").glob("*.pml"))


def test_there_are_at_least_15_malformed_fixtures() -> None:
    assert len(CASES) >= 15


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_malformed_model_is_reported_at_its_location(path: Path) -> None:
    m = re.match(r"// expect: (\d+):(\d+): (.*)", read_source(path).splitlines()[0])
    assert m is not None, "fixture needs an '// expect: LINE:COL: message' first line"
    line, col, fragment = m.group(1), m.group(2), m.group(3)
    rel = str(path.relative_to(Path(__file__).resolve().parent.parent))
    r = run_cli("check", rel)
    assert r.code == 2, r.err
    assert "Traceback" not in r.err
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r.err
    assert lines[0].startswith(f"{rel}:{line}:{col}: error: "), lines[0]
    assert fragment in lines[0]
