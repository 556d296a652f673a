"""Running SPIN as an oracle (skips the calling test when spin or gcc is not installed)."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass
class SpinRun:
    states: int
    transitions: int
    errors: int
    output: str


def require_spin() -> None:
    if not (shutil.which("spin") and shutil.which("gcc")):
        pytest.skip("spin and gcc are needed (apt-get install spin)")


def run_spin(
    model: Path,
    workdir: Path,
    defines: tuple[str, ...] = (),
    depth: int = 1_000_000,
    spin_options: tuple[str, ...] = ("-o1",),
    claim: bool = False,
    optimize: str = "-O0",
) -> SpinRun:
    """``spin -o1 -a``, ``gcc -O0 -DNOREDUCE -DSAFETY``, ``pan -c0 -n`` in ``workdir``.
    ``spin_options`` replaces ``-o1`` (e.g. add ``-o2`` to keep write-only variables in the
    state vector, so that state counts compare with absmc's); the model's ``never`` claim is
    compiled in only with ``claim`` (default: ``-DNOCLAIM``); ``optimize`` is gcc's
    optimisation flag: ``-O0`` compiles pan.c in a fifth of ``-O2``'s time (0.3 s against
    1.6 s), which is most of the run on the test models; ``-O2`` for large state spaces."""
    require_spin()
    subprocess.run(
        ["spin", *spin_options, *(f"-D{d}" for d in defines), "-a", str(model.resolve())],
        cwd=workdir,
        check=True,
        capture_output=True,
        text=True,
    )
    subprocess.run(
        [
            "gcc",
            optimize,
            "-DNOREDUCE",
            *([] if claim else ["-DNOCLAIM"]),
            "-DSAFETY",
            "-DMEMLIM=8000",
            "-o",
            "pan",
            "pan.c",
        ],
        cwd=workdir,
        check=True,
        capture_output=True,
        text=True,
    )
    out = subprocess.run(
        ["./pan", "-c0", "-n", f"-m{depth}"],
        cwd=workdir,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    states = int(re.search(r"(\d+) states, stored", out).group(1))  # type: ignore[union-attr]
    transitions = int(re.search(r"(\d+) transitions", out).group(1))  # type: ignore[union-attr]
    errors = int(re.search(r"errors: (\d+)", out).group(1))  # type: ignore[union-attr]
    return SpinRun(states, transitions, errors, out)


def compile_spin_ltl(model: Path, workdir: Path, non_progress: bool = False) -> None:
    """``spin -a MODEL`` and ``gcc -O0 -DNOREDUCE -DNFAIR=8`` (``-DNP`` for non-progress
    cycles) in ``workdir``: a ``pan`` that checks the model's ltl blocks (``-a -N NAME``)."""
    require_spin()
    subprocess.run(
        ["spin", "-a", str(model.resolve())], cwd=workdir, check=True, capture_output=True
    )
    flags = ["-DNP"] if non_progress else []
    subprocess.run(
        ["gcc", "-O0", "-DNOREDUCE", "-DNFAIR=8", "-DMEMLIM=8000", *flags, "-o", "pan", "pan.c"],
        cwd=workdir,
        check=True,
        capture_output=True,
    )


def run_pan_ltl(
    workdir: Path,
    name: str | None,
    fair: bool = False,
    non_progress: bool = False,
    depth: int = 10_000_000,
    log2_table: int = 24,
) -> SpinRun:
    """``./pan -a [-f] -N NAME -mDEPTH -wLOG2`` (``-l`` instead of ``-a -N`` for non-progress
    cycles) in a ``workdir`` prepared by :func:`compile_spin_ltl`; ``errors > 0`` is SPIN's
    violation. Small models: a small ``depth`` and ``log2_table`` save pan's allocations."""
    args = ["-l"] if non_progress else ["-a", *(["-N", name] if name else [])]
    out = subprocess.run(
        ["./pan", *args, *(["-f"] if fair else []), f"-m{depth}", f"-w{log2_table}"],
        cwd=workdir,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    states = int(re.search(r"(\d+) states, stored", out).group(1))  # type: ignore[union-attr]
    transitions = int(re.search(r"(\d+) transitions", out).group(1))  # type: ignore[union-attr]
    errors = int(re.search(r"errors: (\d+)", out).group(1))  # type: ignore[union-attr]
    return SpinRun(states, transitions, errors, out)
