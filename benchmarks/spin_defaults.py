"""absmc's defaults against SPIN's defaults (``vs_spin.py --spin-defaults``; issue 24).

SPIN as its users run it: ``spin -a`` (dead-variable reset on), ``gcc -O2 -DSAFETY -DNOCLAIM``
(partial-order reduction on), ``pan -c0 -n``; absmc as its users run it: ``absmc check MODEL
--keep-going --json`` (reductions on, ``--backend auto``, a cold compilation cache so that a
switch to C pays the C compiler as SPIN pays gcc). Per model: states stored by each, their
ratio, model-to-verdict wall time of each and its ratio, whether the verdicts agree, and the
reductions absmc applied. The closing lines check the issue's goals: states <= 1.25x SPIN's on
every model and <= 1.0x at the median; model-to-verdict <= SPIN's on every model of >= 10^4
states.
"""

from __future__ import annotations

import statistics
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from spinrun import run_absmc, run_spin


def compare(
    jobs: list[tuple[str, Path, list[str]]],
    timeout: float = 300.0,
    extra_args: Callable[[Path, list[str]], tuple[str, ...]] | None = None,
) -> None:
    """Print one row per ``(kind, model, defines)`` job and the goal lines. ``extra_args``:
    more ``absmc check`` arguments per model and defines (e.g. ``--property`` choices);
    ``timeout``: seconds per tool and model."""
    print(
        f"{'model':28s} {'SPIN st':>10s} {'absmc st':>10s} {'ratio':>6s} | {'SPIN s':>7s} "
        f"{'absmc s':>7s} {'ratio':>6s} | same  reductions"
    )
    ratios: list[float] = []
    over: list[str] = []
    slower: list[str] = []
    for _kind, model, defs in jobs:
        label = model.name + (f" {defs[0]}" if defs else "")
        spin = run_spin(model, defs, timeout=timeout, defaults=True)
        if spin.error is not None:
            print(f"{label:28s} SPIN: {spin.error}")
            continue
        with tempfile.TemporaryDirectory() as cache:
            more = extra_args(model, defs) if extra_args is not None else ()
            try:
                ours = run_absmc(
                    model,
                    defs,
                    env={"ABSMC_CACHE_DIR": cache},
                    reduce=True,
                    timeout=timeout,
                    extra_args=more,
                )
            except subprocess.TimeoutExpired:
                print(f"{label:28s} {spin.states:10,d} absmc: no verdict in {timeout:g} s")
                over.append(f"{label} (no verdict)")
                continue
        if ours.error:
            print(f"{label:28s} absmc error: {ours.error}")
            continue
        ratio = ours.states / max(1, spin.states)
        t_ratio = ours.wall_s / max(spin.wall_s, 1e-9)
        same = (ours.verdict == "violated") == (spin.errors > 0)
        print(
            f"{label:28s} {spin.states:10,d} {ours.states:10,d} {ratio:6.2f} | "
            f"{spin.wall_s:6.2f}s {ours.wall_s:6.2f}s {t_ratio:6.2f} | "
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
