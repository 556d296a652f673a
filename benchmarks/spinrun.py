"""Running SPIN and absmc on a Promela model (shared by spin_diff.py and vs_spin.py).

SPIN runs as the corpus numbers were made: ``spin -o1 -a`` (no dead-variable reset, the
semantics absmc reproduces), ``gcc -O2 -DNOREDUCE -DNOCLAIM -DSAFETY``, ``pan -c0 -n``.
absmc runs as a user runs it: ``absmc check MODEL --keep-going --json`` in a subprocess, with
``--no-reduce`` (no dead-variable reset either: the counts compare with ``spin -o1``'s).
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

R = TypeVar("R")

_GCC = ["gcc", "-O2", "-DNOREDUCE", "-DNOCLAIM", "-DSAFETY", "-DMEMLIM=8000"]


def _spin_args(model: Path, defines: list[str], o1: bool = True) -> list[str]:
    # -E passes an option to the preprocessor: #include "..." finds the model's directory
    head = ["spin", "-o1"] if o1 else ["spin"]
    return [*head, f"-E-I{model.resolve().parent}", *(f"-D{x}" for x in defines)]


@dataclass
class SpinResult:
    states: int
    errors: int
    wall_s: float  # spin -a + gcc + pan
    pan_s: float  # pan alone
    rate: float  # states per second of pan's search (pan's own report when given)
    memory_mb: float
    depth_limited: bool
    error: str | None = None  # SPIN rejected the model, or a limit stopped pan
    pan_wall_s: float = 0.0  # pan's process, start to exit (multi-core pans report per core)


@dataclass
class AbsmcResult:
    states: int
    verdict: str
    violated: list[str]
    wall_s: float  # process start to verdict
    search_s: float
    rate: float
    memory_mb: float
    error: str | None = None
    bytes_per_state: float = 0.0  # the native store's (0 for the Python back end)
    backend: str = "python"
    workers: int = 1  # threads (native) or processes (Python) the search used
    reductions: list[str] = field(default_factory=list)  # the reductions the run applied


def children_cpu() -> float:
    """CPU seconds (user + system) of the child processes this process has waited for."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def median_run(runs: list[R], key: Callable[[R], float]) -> R:
    """The run with the median ``key`` (the lower middle one of an even number)."""
    ordered = sorted(runs, key=key)
    return ordered[(len(ordered) - 1) // 2]


def have_spin() -> bool:
    """True when spin and gcc are installed."""
    return bool(shutil.which("spin") and shutil.which("gcc"))


def _failed(message: str) -> SpinResult:
    return SpinResult(0, 0, 0.0, 0.0, 0.0, 0.0, False, message)


def run_spin(
    model: Path,
    defines: list[str],
    depth: int = 1_000_000,
    timeout: float | None = None,
    cflags: tuple[str, ...] = (),
    pan_args: tuple[str, ...] = ("-w24",),
    defaults: bool = False,
) -> SpinResult:
    """SPIN's numbers for ``model`` (``-D`` definitions as ``NAME=VALUE``; ``NOPRED`` is always
    defined: ``pred`` declarations are absmc's, SPIN cannot read them). ``timeout`` bounds pan's
    wall time in seconds; ``cflags`` are added to gcc's (e.g. ``-DBITSTATE``), ``pan_args`` to
    pan's (default ``-w24``, the initial hash table size). ``defaults``: SPIN as its users run
    it, ``spin -a`` (dead-variable reset) and pan with partial-order reduction (no ``-o1``,
    no ``-DNOREDUCE``). A model SPIN rejects, or a pan run stopped by the timeout, gives a
    result with ``error`` set instead of raising."""
    defines = [*defines, "NOPRED"] if "NOPRED" not in defines else defines
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        shutil.copy(model, d / model.name)
        t0 = time.monotonic()
        gen = subprocess.run(
            [*_spin_args(model, defines, not defaults), "-a", model.name],
            cwd=d,
            capture_output=True,
            text=True,
        )
        if gen.returncode != 0 or not (d / "pan.c").exists():
            lines = (gen.stdout + gen.stderr).strip().splitlines()
            return _failed("spin -a: " + (lines[0] if lines else f"exit {gen.returncode}"))
        gcc = [f for f in _GCC if not (defaults and f == "-DNOREDUCE")]
        cc = subprocess.run(
            [*gcc, *cflags, "-o", "pan", "pan.c"], cwd=d, capture_output=True, text=True
        )
        if cc.returncode != 0:
            return _failed("gcc failed on pan.c")
        t1 = time.monotonic()
        try:
            out = subprocess.run(
                ["./pan", "-c0", "-n", f"-m{depth}", *pan_args],
                cwd=d,
                capture_output=True,
                text=True,
                timeout=timeout,
            ).stdout
        except subprocess.TimeoutExpired:
            return _failed(f"pan stopped at the time limit of {timeout:g} s")
        t2 = time.monotonic()
    states = int(_grab(r"(\d+) states, stored", out))
    errors = int(_grab(r"errors: (\d+)", out))
    rate_m = re.search(r"pan: rate\s+([\d.e+]+) states/second", out)
    elapsed = re.search(r"pan: elapsed time ([\d.e+-]+) seconds", out)
    pan_s = float(elapsed.group(1)) if elapsed else t2 - t1
    rate = (
        float(rate_m.group(1))
        if rate_m and float(rate_m.group(1)) > 0
        else states / max(t2 - t1, 1e-9)
    )
    mem = re.search(r"([\d.]+)\s+total actual memory usage", out)
    return SpinResult(
        states,
        errors,
        t2 - t0,
        pan_s,
        rate,
        float(mem.group(1)) if mem else 0.0,
        "max search depth too small" in out,
        pan_wall_s=t2 - t1,
    )


def run_absmc(
    model: Path,
    defines: list[str],
    timeout: float = 3600,
    source: Path | None = None,
    limit_s: float | None = None,
    backend: str | None = None,
    env: dict[str, str] | None = None,
    extra_args: tuple[str, ...] = (),
    reduce: bool = False,
) -> AbsmcResult:
    """absmc's numbers for ``model``, from the command line (model to verdict). ``source``: a
    ``src`` directory of another absmc checkout to run instead of the installed one (A/B runs
    against an older version, as ``vs_spin.py --against``). ``limit_s``: absmc's own
    ``--timeout`` (the run ends with verdict ``unknown`` and its statistics). ``backend``:
    ``--backend`` (python, native, auto); ``env``: extra environment variables; ``extra_args``:
    more command-line options (e.g. ``--store bitstate``); ``reduce``: absmc's reductions on
    (its default; otherwise ``--no-reduce``: the full state space, as SPIN's -DNOREDUCE).
    ``reductions`` in the result: those the run applied."""
    args = [
        sys.executable,
        "-m",
        "absmc.cli",
        "check",
        str(model),
        "--keep-going",
        "--json",
    ]
    if source is None:  # an older checkout (--against) knows neither; it never reduces
        args.append("--no-trail")
        if not reduce:
            args.append("--no-reduce")
    for x in defines:
        args += ["-D", x]
    if limit_s is not None:
        args += ["--timeout", f"{limit_s:g}"]
    if backend is not None:
        args += ["--backend", backend]
    args += list(extra_args)
    # no trail file beside the model (the corpus is read-only; its JSON costs time after the
    # verdict); an environment variable, which older checkouts (--against) ignore
    extra = {"ABSMC_NO_TRAIL": "1", **(env or {})}
    if source is not None:
        extra["PYTHONPATH"] = str(source)
    run_env = dict(os.environ, **extra) if extra else None
    t0 = time.monotonic()
    proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=run_env)
    wall = time.monotonic() - t0
    try:
        res = json.loads(proc.stdout)
    except json.JSONDecodeError:
        msg = proc.stderr.strip().splitlines()[-1:] or ["no output"]
        return AbsmcResult(0, "error", [], wall, 0.0, 0.0, 0.0, msg[0])
    if not res.get("results"):  # a model absmc refuses: its located error
        refusal = str(res.get("error") or res.get("message") or "no results")
        return AbsmcResult(0, "error", [], wall, 0.0, 0.0, 0.0, refusal.splitlines()[0])
    stats = res["results"][0]["stats"]
    violated = [r["property"] for r in res["results"] if r["verdict"] == "violated"]
    search_s = stats["time_s"]
    return AbsmcResult(
        stats["states"],
        res["verdict"],
        violated,
        wall,
        search_s,
        stats["states"] / search_s if search_s > 0 else 0.0,
        stats["peak_mb"],
        bytes_per_state=float(stats.get("bytes_per_state", 0.0)),
        backend=str(stats.get("backend", "python")),
        workers=int(stats.get("workers", 1)),
        reductions=[str(x) for x in stats.get("reductions", [])],
    )


def _grab(pattern: str, text: str) -> str:
    m = re.search(pattern, text)
    if m is None:
        raise RuntimeError(f"unexpected pan output (no {pattern!r}):\n{text[-2000:]}")
    return m.group(1)
