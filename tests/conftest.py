"""Shared test helpers: paths to examples and to ../shared, and a CLI runner."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
GCL_EXAMPLES = EXAMPLES / "gcl"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHARED = ROOT.parent / "shared"

#: tests that read the benchmark corpus skip, with this reason, where it is absent: ``shared/``
#: (the BEEM models with SPIN's numbers, the scaling models) is the project's read-only
#: companion directory, checked out beside this repository (CI always has it)
needs_shared = pytest.mark.skipif(
    not (SHARED / "benchmarks").is_dir(),
    reason=f"needs the benchmark corpus {SHARED}/benchmarks beside this checkout (absent)",
)


@dataclass
class Run:
    code: int
    out: str
    err: str


def run_cli(*args: str, timeout: float = 300) -> Run:
    """Run ``absmc ARGS`` in a subprocess (the installed entry point's module)."""
    proc = subprocess.run(
        [sys.executable, "-m", "absmc.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def cli() -> type[Run]:
    return Run
