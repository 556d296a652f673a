#!/usr/bin/env python3
"""Speed-up of the hash-partitioned explicit search (``--workers N``, ``--ray``) over the
one-worker search, and what the workers exchange.

For each model: the ordinary one-process search (the baseline), then the partitioned search
with N = 1, 2, 4 workers over each transport. Prints states, seconds, states/s, speed-up over
the baseline, messages and bytes exchanged per stored state, and checks that every run stored
the baseline's states and transitions. Usage:

    python benchmarks/scaling_workers.py [--workers 1,2,4] [--transports processes,ray]
        [--model philosophers:10] [--model ../shared/benchmarks/scaling/fischer.pml:MAXT=4096]

A model is ``philosophers:N`` (N deadlock-free dining philosophers, generated as in
``explicit_throughput.py``: wide BFS levels) or ``PATH[:NAME=VALUE,...]`` (a GCL or Promela
file with ``-D`` defines). Seconds are wall-clock from the first worker's start to the last
worker's statistics (worker start and, for Ray, each actor's compilation included; starting
the local Ray cluster is not).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

from absmc.codegen.python import compile_system
from absmc.engines.explicit.parallel import run_partitioned
from absmc.ir.system import System
from absmc.kernel.explore.search import search
from absmc.kernel.run.options import CheckOptions, select_properties
from absmc.lang.gcl import parse_gcl
from absmc.lang.loader import load_model

sys.path.insert(0, str(Path(__file__).resolve().parent))
from explicit_throughput import philosophers

DEFAULT_MODELS = [
    "philosophers:10",
    str(Path(__file__).resolve().parents[2] / "shared/benchmarks/scaling/fischer.pml")
    + ":MAXT=4096",
]


def load(spec: str) -> tuple[str, System]:
    """The model a ``--model`` argument names."""
    if spec.startswith("philosophers:"):
        n = int(spec.split(":")[1])
        return spec, parse_gcl(philosophers(n), f"philosophers{n}")
    path, _, defs = spec.partition(":")
    defines = dict(d.split("=", 1) for d in defs.split(",") if d)
    label = Path(path).name + (f" {defs}" if defs else "")
    return label, load_model(path, defines)


#: assumed network of the projection: bytes/s per node (10 Gbit/s Ethernet) and seconds of
#: latency per message (a batch; asynchronous search overlaps it, so it counts once per level
#: of back-and-forth, not per message: bounded below by the termination waves)
BANDWIDTH = 1.25e9
WAVES_S = 0.05


def project(
    states: int, base_cpu: float, cpu1: float, cpu2: float, bytes2: int, nodes: list[int]
) -> list[str]:
    """Projected speed-up at ``nodes`` workers (one per node) from the measured one-process
    CPU seconds ``base_cpu``, the partitioned CPU seconds with one worker ``cpu1`` and two
    workers ``cpu2`` (all workers), and the bytes two workers exchanged. Model: CPU per state
    c = cpu1 / S; CPU per exchanged byte x = (cpu2 - cpu1) / bytes2; a successor is remote with
    probability (N-1)/N, so bytes per state b_N = 2 (N-1)/N * bytes2 / S; time T(N) = max(S/N *
    (c + x b_N), S b_N / (N BANDWIDTH)) + WAVES_S; speed-up = base_cpu / T(N)."""
    c = cpu1 / states
    x = max(cpu2 - cpu1, 0.0) / max(bytes2, 1)
    rows = []
    for n in nodes:
        b = 2 * (n - 1) / n * bytes2 / states
        t = max(states / n * (c + x * b), states * b / (n * BANDWIDTH)) + WAVES_S
        rows.append(f"{n}: {base_cpu / t:.2f}x ({b:.0f} B/state)")
    return rows


def split(seconds: list[float]) -> str:
    """Mean seconds per worker."""
    return f"{sum(seconds) / max(len(seconds), 1):.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", action="append", default=None)
    ap.add_argument("--workers", default="1,2,4")
    ap.add_argument("--transports", default="processes,ray")
    args = ap.parse_args()
    counts = [int(x) for x in args.workers.split(",")]
    transports = [t for t in args.transports.split(",") if t]
    print(
        f"# {platform.node()} {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print(
        "| model | states | transport | workers | s | states/s | speed-up | messages "
        "| bytes/state | CPU s: expand + absorb (all workers) | wait s (mean) |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    options = CheckOptions(keep_going=True)
    for spec in args.model or DEFAULT_MODELS:
        label, system = load(spec)
        selection = select_properties(system, options)
        compiled = compile_system(system, selection.user)
        c0 = time.process_time()
        base = search(compiled, keep_going=True, check_deadlock=selection.deadlock)
        base_cpu = time.process_time() - c0
        rate0 = base.states / base.time_s
        print(
            f"| {label} | {base.states:,} | one process | 1 | {base.time_s:.2f} | "
            f"{rate0:,.0f} | 1.00 | 0 | 0 | {base_cpu:.2f} | |"
        )
        cpu: dict[int, tuple[float, int]] = {}
        for transport in transports:
            for n in counts:
                ray = "auto" if transport == "ray" else None
                if ray is not None and n == 1:
                    continue  # --ray with one worker means one actor per CPU
                out, stats, used = run_partitioned(system, selection, compiled, options, n, ray)
                same = (out.states, out.transitions) == (base.states, base.transitions)
                if transport == "processes":
                    cpu[n] = (sum(stats.expand_s) + sum(stats.absorb_s), stats.bytes_sent)
                rate = out.states / out.time_s
                print(
                    f"| {label} | {out.states:,}{'' if same else ' (DIFFERS)'} | {transport} | "
                    f"{used} | {out.time_s:.2f} | {rate:,.0f} | {rate / rate0:.2f} | "
                    f"{stats.messages:,} | {stats.bytes_sent / max(out.states, 1):.1f} | "
                    f"{sum(stats.expand_s):.2f} + {sum(stats.absorb_s):.2f} | "
                    f"{split(stats.wait_s)} |",
                    flush=True,
                )
        if 1 in cpu and 2 in cpu:
            for size in (base.states, 10**8):
                shown = project(size, base_cpu * size / base.states, cpu[1][0] * size / base.states,
                                cpu[2][0] * size / base.states, cpu[2][1] * size // base.states,
                                [2, 8, 64])  # fmt: skip
                print(f"projection for {label} at {size:,} states: " + ", ".join(shown))


if __name__ == "__main__":
    main()
