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
    optimize: str = "-O2",
) -> SpinRun:
    """``spin -o1 -a``, ``gcc -O2 -DNOREDUCE -DSAFETY``, ``pan -c0 -n`` in ``workdir``.
    ``spin_options`` replaces ``-o1`` (e.g. add ``-o2`` to keep write-only variables in the
    state vector, so that state counts compare with absmc's); the model's ``never`` claim is
    compiled in only with ``claim`` (default: ``-DNOCLAIM``); ``optimize`` is gcc's
    optimisation flag (``-O0`` compiles large generated models fast)."""
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
