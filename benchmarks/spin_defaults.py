"""absmc's defaults against SPIN's defaults (``vs_spin.py --spin-defaults``; issue 24).

SPIN as its users run it: ``spin -a`` (dead-variable reset on), ``gcc -O2 -DSAFETY -DNOCLAIM``
(partial-order reduction on), ``pan -c0 -n``; absmc as its users run it: ``absmc check MODEL
--keep-going --json`` (reductions on, ``--backend auto``, a cold compilation cache so that a
switch to C pays the C compiler as SPIN pays gcc). Per model: states stored by each, their
ratio, model-to-verdict wall time of each and its ratio, the CPU time of each (user + system of
every process it waited for: spin, gcc and pan; absmc, its compiler and its C generator),
whether the verdicts agree, and the reductions absmc applied. With ``repeat`` > 1 the two tools
run in turn that many times and each row shows each tool's run of median wall time. The
closing lines check the issue's goals: states <= 1.25x SPIN's on every model and <= 1.0x at the
median; model-to-verdict <= SPIN's on every model of >= 10^4 states.
"""

from __future__ import annotations

import statistics
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from spinrun import AbsmcResult, SpinResult, children_cpu, median_run, run_absmc, run_spin

T = TypeVar("T")


def timed_cpu(run: Callable[..., T], *args: Any, **kwargs: Any) -> tuple[T, float]:
    """``run(*args, **kwargs)``'s result and the CPU seconds of the child processes it waited
    for."""
    c0 = children_cpu()
    out = run(*args, **kwargs)
    return out, children_cpu() - c0


def compare(
    jobs: list[tuple[str, Path, list[str]]],
    timeout: float = 300.0,
    extra_args: Callable[[Path, list[str]], tuple[str, ...]] | None = None,
    repeat: int = 1,
) -> None:
    """Print one row per ``(kind, model, defines)`` job and the goal lines. ``extra_args``:
    more ``absmc check`` arguments per model and defines (e.g. ``--property`` choices);
    ``timeout``: seconds per tool and model; ``repeat``: runs of each tool per model, in turn
    (the row shows each tool's median-wall run)."""
    print(
        f"{'model':28s} {'SPIN st':>10s} {'absmc st':>10s} {'ratio':>6s} | {'SPIN s':>7s} "
        f"{'absmc s':>7s} {'ratio':>6s} | {'SPIN cpu':>8s} {'absmc cpu':>9s} | same  reductions"
    )
    ratios: list[float] = []
    over: list[str] = []
    slower: list[str] = []
    for _kind, model, defs in jobs:
        label = model.name + (f" {defs[0]}" if defs else "")
        more = extra_args(model, defs) if extra_args is not None else ()
        spins: list[tuple[SpinResult, float]] = []
        ourss: list[tuple[AbsmcResult, float]] = []
        failed = False
        for _ in range(max(1, repeat)):
            spins.append(timed_cpu(run_spin, model, defs, timeout=timeout, defaults=True))
            if spins[-1][0].error is not None:
                print(f"{label:28s} SPIN: {spins[-1][0].error}")
                failed = True
                break
            with tempfile.TemporaryDirectory() as cache:
                try:
                    ourss.append(
                        timed_cpu(
                            run_absmc,
                            model,
                            defs,
                            env={"ABSMC_CACHE_DIR": cache},
                            reduce=True,
                            timeout=timeout,
                            extra_args=more,
                        )
                    )
                except subprocess.TimeoutExpired:
                    print(
                        f"{label:28s} {spins[-1][0].states:10,d} absmc: no verdict in {timeout:g} s"
                    )
                    over.append(f"{label} (no verdict)")
                    failed = True
                    break
        if failed:
            continue
        spin, spin_cpu = median_run(spins, lambda r: r[0].wall_s)
        ours, ours_cpu = median_run(ourss, lambda r: r[0].wall_s)
        if ours.error:
            print(f"{label:28s} absmc error: {ours.error}")
            continue
        ratio = ours.states / max(1, spin.states)
        t_ratio = ours.wall_s / max(spin.wall_s, 1e-9)
        same = (ours.verdict == "violated") == (spin.errors > 0)
        print(
            f"{label:28s} {spin.states:10,d} {ours.states:10,d} {ratio:6.2f} | "
            f"{spin.wall_s:6.2f}s {ours.wall_s:6.2f}s {t_ratio:6.2f} | "
            f"{spin_cpu:7.2f}s {ours_cpu:8.2f}s | "
            f"{'yes' if same else 'NO':4s}  {', '.join(ours.reductions) or '-'}"
        )
        ratios.append(ratio)
        if ratio > 1.25:
            over.append(f"{label} ({ratio:.2f}x)")
        if spin.states >= 10**4 and t_ratio > 1.0:
            slower.append(f"{label} ({t_ratio:.2f}x)")
    if not ratios:
        return
    median = statistics.median(ratios)
    print()
    print(
        "goal: states <= 1.25x SPIN's default on every model: "
        + ("met" if not over else "NOT met: " + ", ".join(over))
    )
    met = "met" if median <= 1.0 else "NOT met"
    print(f"goal: states <= 1.0x at the median: median {median:.2f}x ({met})")
    print(
        "goal: model-to-verdict <= SPIN's default on every model of >= 10^4 states: "
        + ("met" if not slower else "NOT met: " + ", ".join(slower))
    )
