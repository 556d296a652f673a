#!/usr/bin/env python3
"""Tree compression against the exact store (issue 25, item 5): bytes per state of peak RSS.

    python benchmarks/tree_store.py                 # bakery2 N=2^20, lamport MAXT=2^18
    python benchmarks/tree_store.py --scale 0.0625  # the same models, bounds / 16
    python benchmarks/tree_store.py --stores tree   # the tree store only

Each run is one ``absmc check MODEL -D VAR=BOUND --backend native --workers 1 --store S
--no-reduce --json`` process (the C search in one thread; ``--no-reduce`` gives SPIN's
counts). Printed per run: states, verdict, the store's own bytes per state (statistics),
the **peak resident memory of the whole process** (``wait4``'s ``ru_maxrss``: the Python
interpreter, the compiled model and the store) divided by the states, the process's CPU
seconds (user + sys) and its wall time. The two stores must give equal states and verdicts
(the script says so when they do not). The goal of issue 25 is <= 16 bytes/state of peak RSS
with ``--store tree`` on both models at their full bounds (16,777,216 and 25,165,785 states).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

SCALING = Path(__file__).resolve().parents[2] / "shared" / "benchmarks" / "scaling"
if not SCALING.exists():
    SCALING = Path("/work/shared/benchmarks/scaling")

#: (model, variable, full bound)
RUNS = (("bakery2.pml", "N", 2**20), ("lamport.pml", "MAXT", 2**18))


def run_measured(model: str, var: str, bound: int, store: str) -> dict[str, object] | None:
    """One check process: its figures, with its own peak RSS and CPU seconds (``os.wait4``;
    ``None`` when it printed no result)."""
    args = [sys.executable, "-m", "absmc.cli", "check", str(SCALING / model), "-D"]
    args += [f"{var}={bound}", "--backend", "native", "--workers", "1", "--store", store]
    args += ["--no-reduce", "--json", "--no-trail"]
    t0 = time.monotonic()
    with (
        open(os.devnull, "w") as null,
        subprocess.Popen(args, stdout=subprocess.PIPE, stderr=null) as proc,
    ):
        assert proc.stdout is not None
        data = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    try:
        res = json.loads(data)
    except json.JSONDecodeError:
        print(f"{model} {var}={bound} {store}: no result (exit {proc.returncode})")
        return None
    st = res["results"][0]["stats"]
    return {
        "states": st["states"],
        "verdict": res["verdict"],
        "store_bps": st["bytes_per_state"],
        "peak_mb": usage.ru_maxrss / 1024,
        "peak_bps": usage.ru_maxrss * 1024 / max(1, st["states"]),
        "cpu": usage.ru_utime + usage.ru_stime,
        "wall": wall,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--scale", type=float, default=1.0, help="multiply the bounds by this")
    ap.add_argument("--stores", default="exact,tree", help="comma-separated stores to run")
    a = ap.parse_args()
    stores = a.stores.split(",")
    print(f"tree store vs exact, bounds x {a.scale:g} (load {os.getloadavg()[0]:.1f})")
    print(
        f"{'model':22s} {'store':6s} {'states':>11s} {'verdict':8s} {'store B/st':>10s} "
        f"{'peak MB':>8s} {'peak B/st':>9s} {'CPU s':>7s} {'wall s':>7s}"
    )
    bad = 0
    for model, var, full in RUNS:
        bound = max(16, int(full * a.scale))
        seen: dict[str, tuple[object, object]] = {}
        for store in stores:
            r = run_measured(model, var, bound, store)
            if r is None:
                bad += 1
                continue
            seen[store] = (r["states"], r["verdict"])
            name = f"{model} {var}={bound}"
            print(
                f"{name:22s} {store:6s} {r['states']:11,d} {r['verdict']!s:8s} "
                f"{r['store_bps']:10.1f} {r['peak_mb']:8.0f} {r['peak_bps']:9.1f} "
                f"{r['cpu']:7.1f} {r['wall']:7.1f}"
            )
        if len(set(seen.values())) > 1:
            print(f"  DIFFERENT states or verdicts: {seen}")
            bad += 1
    print(f"(load {os.getloadavg()[0]:.1f})")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
