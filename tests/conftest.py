"""Shared test helpers: paths to examples and to ../shared, and a CLI runner."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# property tests assert outcomes, not speed: no per-example deadline (CI and developer machines
# are shared, and a slow first example is no failure)
settings.register_profile("absmc", deadline=None, derandomize=True)
settings.load_profile("absmc")


def run_examples(
    check: Callable[..., None], strategy: st.SearchStrategy[Any], examples: int
) -> None:
    """Run ``check`` on ``examples`` values drawn from ``strategy`` (Hypothesis, derandomized:
    the same values on every run). For a sweep that CI runs in part and ``-m slow`` in full:
    one body, two counts; the caller can assert on what the run saw afterwards."""
    run = settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )(given(strategy)(check))
    run()


# a violation makes `absmc check` write MODEL.trail.json beside the model: tests (and the
# processes they start) write none into the repository; tests of trails unset this
os.environ["ABSMC_NO_TRAIL"] = "1"

# a suite started in the background by a non-interactive shell (`bash -c 'pytest ... &'`)
# inherits SIGINT ignored: Python then installs no Ctrl-C handler, and the tests that send
# SIGINT to absmc (or to their own process) would wait forever; they test Ctrl-C as a terminal
# delivers it, so the suite (and, through exec, the processes it starts) takes it as Python's
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

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
    """Run ``absmc ARGS`` in this process (click's test runner: arguments parsed as on the
    command line, the command's plain function called with captured streams; the working
    directory is the repository root, as for :func:`run_cli_subprocess`). ``timeout`` is
    accepted for compatibility and not enforced."""
    from click.testing import CliRunner

    from absmc.cli import cli

    old = os.getcwd()
    os.chdir(ROOT)
    try:
        result = CliRunner().invoke(cli, list(args), prog_name="absmc", catch_exceptions=False)
    finally:
        os.chdir(old)
    return Run(result.exit_code, result.stdout, result.stderr)


def run_cli_subprocess(*args: str, timeout: float = 300) -> Run:
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


@pytest.fixture
def native_fast_compile(monkeypatch: pytest.MonkeyPatch) -> None:
    """The native back end compiles at ``-O0`` (about three times faster; the semantics do not
    depend on the level)."""
    monkeypatch.setenv("ABSMC_NATIVE_OPT", "-O0")


class GarbageCycle:
    """Garbage that only the cycle collector frees; its deletion writes the deleting process's
    id to ``log``."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self.me = self

    def __del__(self) -> None:
        with open(self.log, "a") as fh:
            fh.write(f"{os.getpid()}\n")
