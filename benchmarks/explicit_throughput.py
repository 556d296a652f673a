#!/usr/bin/env python3
"""Throughput of the compiled explicit search (states/s) on a model with >= 10^6 states.

The model is N dining philosophers (N processes, N forks) where the last philosopher picks up
the right fork first, so there is no deadlock; N = 12 gives 1,118,878 reachable states.
Usage:

    python benchmarks/explicit_throughput.py [--n 12] [--order bfs|dfs] [--spin]

With ``--spin`` (SPIN and gcc installed) the same model runs through SPIN as a Promela twin
(one process whose loop has one ``d_step`` per guarded command, so the state counts are equal)
and the ratios absmc/SPIN of states/s and of model-to-verdict time are printed.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from absmc.codegen.python import compile_system
from absmc.kernel.explore.search import search
from absmc.kernel.explore.store import ExactStore
from absmc.lang.gcl import parse_gcl


def _order(i: int, n: int) -> tuple[int, int]:
    return (i, (i + 1) % n) if i < n - 1 else ((i + 1) % n, i)


def philosophers(n: int) -> str:
    """GCL source of N deadlock-free dining philosophers."""
    lines = [
        f"var {', '.join(f'fork{i}' for i in range(n))} : bool = false;",
        f"var {', '.join(f'p{i}' for i in range(n))} : 0..3;",
    ]
    for i in range(n):
        a, b = _order(i, n)
        lines += [
            f"process Phil{i} {{",
            f"  p{i} == 0 && !fork{a} -> fork{a} := true, p{i} := 1;",
            f"  p{i} == 1 && !fork{b} -> fork{b} := true, p{i} := 2;",
            f"  p{i} == 2 -> fork{b} := false, p{i} := 3;",
            f"  p{i} == 3 -> fork{a} := false, p{i} := 0;",
            "}",
        ]
    lines.append(f"invariant neighbours: !(p0 == 2 && p{n - 1} == 2);")
    return "\n".join(lines) + "\n"


def promela_twin(n: int) -> str:
    """The same model in Promela: one process, one d_step per guarded command."""
    forks = ", ".join(f"fork{i}" for i in range(n))
    pcs = ", ".join(f"p{i}" for i in range(n))
    body = []
    for i in range(n):
        a, b = _order(i, n)
        body += [
            f"  :: d_step {{ p{i} == 0 && !fork{a} -> fork{a} = true; p{i} = 1 }}",
            f"  :: d_step {{ p{i} == 1 && !fork{b} -> fork{b} = true; p{i} = 2 }}",
            f"  :: d_step {{ p{i} == 2 -> fork{b} = false; p{i} = 3 }}",
            f"  :: d_step {{ p{i} == 3 -> fork{a} = false; p{i} = 0 }}",
        ]
    return (
        f"bool {forks};\nbyte {pcs};\nactive proctype main() {{\n  do\n"
        + "\n".join(body)
        + "\n  od\n}\n"
    )


def run_spin(n: int) -> tuple[int, float, float] | None:
    """(states, pan search seconds, model-to-verdict seconds) from SPIN, or None."""
    if not (shutil.which("spin") and shutil.which("gcc")):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "m.pml").write_text(promela_twin(n))
        t0 = time.monotonic()
        subprocess.run(["spin", "-a", "m.pml"], cwd=d, check=True, capture_output=True)
        subprocess.run(
            ["gcc", "-O2", "-DNOREDUCE", "-DSAFETY", "-DMEMLIM=8000", "-o", "pan", "pan.c"],
            cwd=d,
            check=True,
            capture_output=True,
        )
        t1 = time.monotonic()
        out = subprocess.run(
            ["./pan", "-m1000000", "-c0", "-n"], cwd=d, check=True, capture_output=True, text=True
        ).stdout
        t2 = time.monotonic()
    states = next(int(line.split()[0]) for line in out.splitlines() if "states, stored" in line)
    return states, t2 - t1, t2 - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--n", type=int, default=12, help="number of philosophers (default 12)")
    ap.add_argument("--order", choices=["bfs", "dfs"], default="bfs")
    ap.add_argument("--spin", action="store_true", help="also run SPIN on the Promela twin")
    args = ap.parse_args()

    t0 = time.monotonic()
    system = parse_gcl(philosophers(args.n), "philosophers.gcl")
    compiled = compile_system(system)
    t1 = time.monotonic()
    out = search(compiled, ExactStore(), order=args.order, keep_going=True)
    t2 = time.monotonic()
    rate = out.states / out.time_s
    print(f"model: {args.n} dining philosophers, order {args.order}")
    print(
        f"absmc: {out.states:,} states, {out.transitions:,} transitions, search {out.time_s:.2f} s"
        f" ({rate:,.0f} states/s), model-to-verdict {t2 - t0:.2f} s (compile {t1 - t0:.3f} s)"
    )
    if out.violations:
        print("absmc: violations:", ", ".join(out.violations))
    if args.spin:
        spin = run_spin(args.n)
        if spin is None:
            print("spin: not installed (apt-get install spin)")
        else:
            states, search_s, total_s = spin
            spin_rate = states / search_s if search_s > 0 else float("inf")
            print(
                f"spin:  {states:,} states, pan {search_s:.2f} s ({spin_rate:,.0f} states/s),"
                f" model-to-verdict {total_s:.2f} s"
            )
            print(
                f"ratio absmc/spin: states/s {rate / spin_rate:.3f}, "
                f"model-to-verdict time {(t2 - t0) / total_s:.2f}"
            )
            if states != out.states:
                print(f"MISMATCH: absmc {out.states} states, spin {states}")
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
