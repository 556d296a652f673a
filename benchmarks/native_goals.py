#!/usr/bin/env python3
"""The native back end's goals of issue 14: threads, bitstate and memory.

    python benchmarks/native_goals.py workers      # 1 vs 2 threads on the scaling models
    python benchmarks/native_goals.py workers --store bitstate   # the same, bitstate store
    python benchmarks/native_goals.py workers --scale 4  # 4x the bounds (4-13*10^6 states)
    python benchmarks/native_goals.py workers --spin     # also SPIN's multi-core modes
    python benchmarks/native_goals.py workers --against a221213   # A/B of the C runtime
    python benchmarks/native_goals.py bitstate     # --store bitstate (C) against pan -DBITSTATE
    python benchmarks/native_goals.py memory       # 3*10^8 states exact, 10^9 hash-compact
    python benchmarks/native_goals.py memory --scale 0.001   # the same runs, 1000x smaller

(``vs_spin.py --workers-goal|--bitstate|--memory-goal`` run the same.)

``workers``: each scaling model at 10^6-3*10^6 states is compiled once and searched in this
process by :func:`absmc.native.search.native_search` with 1 and with 2 threads (threads from
the first state on), alternately, ``--repeat`` times; it prints the best wall time of each, the
CPU seconds of the process (user + sys, all threads) of that run, the speed-up, the median CPU
seconds of 2 threads over those of 1 (``CPU 2/1``: the work threads add; the goal is <= ~1.1),
checks that both stored the same states and transitions (exact store; bitstate: both counts are
printed), and prints the load average before and after (on a shared machine wall times mean
little; the CPU seconds say whether threads add work, and the busier thread's CPU seconds bound
the wall time on two idle cores). ``--store bitstate`` uses 2^27 bits, k = 3.

``bitstate``: ``absmc check --store bitstate --backend native --bitstate-bits 27`` against
``pan`` compiled with ``-DBITSTATE`` (``-w27``, k = 3 both): states and states/s.

``memory``: the exact store on ``lamport.pml`` with ``MAXT = 3,200,000`` (about 3.1*10^8
states) and hash-compact on ``bakery2.pml`` with ``N = 2^26`` (about 1.07*10^9 states), each
as an ``absmc check --backend native --json`` process: states, bytes per state of the store,
peak resident memory and time. **These runs need about 14-16 GB each**; ``--scale`` divides
the bounds (e.g. 0.001 for a check of the script).

``workers --spin`` also runs SPIN's two multi-core searches on the same models and bounds
against its one-core ones, ``--repeat`` times each (best wall of pan's process): ``pan`` (DFS)
against ``pan -DNCORE=2`` and ``pan -DBFS`` against ``pan -DBFS_PAR -u2`` (``spin -a``, then
``gcc -O2 -DNOREDUCE -DNOCLAIM -DSAFETY -DMEMLIM=2000``, run ``./pan -m10000000 -c0 -n -w24``;
``-DBFS_PAR`` takes about 30 s on bakery2 N=2^16).

``workers --against REV`` compares this tree's C runtime (``runtime_*.c``) with that of git
revision ``REV`` (with this tree's code generator: for changes to the runtime), interleaved in
one process (1 thread, 2 threads this tree, 2 threads REV, ``--repeat`` times), which on a
shared machine compares far better than two runs one after the other: best and median walls,
speed-ups over the one-thread best, median CPU of 2 threads over 1.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from spinrun import have_spin, run_absmc, run_spin

from absmc.lang.loader import load_model
from absmc.native import NativeSemantics
from absmc.native.build import runtime_sources
from absmc.native.cgen import CGen
from absmc.native.search import native_search

ROOT = Path(__file__).resolve().parent.parent
SCALING = ROOT.parent / "shared" / "benchmarks" / "scaling"

#: the models of the speed-up goal (>= 10^6 states)
WORKER_MODELS = [
    ("bakery2.pml", "N", 2**16),
    ("fischer.pml", "MAXT", 2**15),
    ("lamport.pml", "MAXT", 2**15),
]

#: the models of the bitstate row (states/s against pan -DBITSTATE)
BITSTATE_MODELS = [("fischer.pml", "MAXT", 2**15), ("lamport.pml", "MAXT", 2**15)]

#: (model, variable, bound, store): the memory goals' runs
MEMORY_RUNS = [
    ("lamport.pml", "MAXT", 3_200_000, "exact"),
    ("bakery2.pml", "N", 2**26, "hash-compact"),
]


def load_avg() -> str:
    """The 1-minute load average and the CPUs."""
    return f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"


def workers(repeat: int, store: str = "exact", scale: float = 1.0) -> None:
    """1 against 2 threads of the native search (see the module docstring); ``scale``
    multiplies the bounds (the states grow in proportion)."""
    print(f"native search, {store} store, 1 vs 2 threads ({load_avg()} before)")
    print(
        f"{'model':26s} {'states':>10s} {'transitions':>12s} | {'wall 1':>7s} {'wall 2':>7s} "
        f"{'speed-up':>8s} | {'CPU 1':>6s} {'CPU 2':>6s} {'busiest':>7s} {'est.':>5s} "
        f"{'CPU 2/1':>7s}  same"
    )
    for name, var, bound in WORKER_MODELS:
        bound = max(16, int(bound * scale))
        system = load_model(SCALING / name, {var: str(bound)})
        sem = NativeSemantics(system)
        best: dict[int, tuple[float, float, int, int]] = {}
        cpus: dict[int, list[float]] = {1: [], 2: []}
        busiest = 0.0
        for _ in range(repeat):
            for n in (1, 2):
                c0, t0 = time.process_time(), time.perf_counter()
                run = native_search(
                    sem, "bitstate" if store == "bitstate" else "exact", workers=n, parallel_after=0
                )
                wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                cpus[n].append(cpu)
                out = run.outcome
                if n not in best or wall < best[n][0]:
                    best[n] = (wall, cpu, out.states, out.transitions)
                    if n == 2:
                        busiest = max(run.thread_cpu_s)
        (w1, c1, s1, t1), (w2, c2, s2, t2) = best[1], best[2]
        same = "yes" if (s1, t1) == (s2, t2) else ("NO" if store == "exact" else f"{s2:,d}")
        ratio = statistics.median(cpus[2]) / statistics.median(cpus[1])
        print(
            f"{name + ' ' + var + '=' + str(bound):26s} {s1:10,d} {t1:12,d} | {w1:6.2f}s "
            f"{w2:6.2f}s {w1 / w2:7.2f}x | {c1:5.2f}s {c2:5.2f}s {busiest:6.2f}s "
            f"{c1 / busiest if busiest else 0:4.2f}x {ratio:6.2f}x  {same}"
        )
    print(
        f"({load_avg()} after; wall = best of {repeat}, CPU = that run's (user + sys), all "
        "threads; busiest = the CPU seconds of the busier thread; est. = CPU 1 / busiest, the "
        "speed-up two idle cores would give if neither thread waited for the other; CPU 2/1 = "
        f"median CPU of 2 threads / of 1 over the {repeat} runs; same: equal states and "
        "transitions (bitstate: 2 threads' states when not))"
    )


def _runtime_at(rev: str) -> tuple[str, str]:
    """(head, tail) of the C runtime at git revision ``rev`` (as :func:`runtime_sources`)."""

    def show(name: str) -> str:
        path = f"{rev}:src/absmc/native/{name}"
        return subprocess.run(
            ["git", "-C", str(ROOT), "show", path], capture_output=True, text=True, check=True
        ).stdout

    return show("runtime_head.c"), show("runtime_tail.c") + show("runtime_par.c")


def workers_against(repeat: int, rev: str, scale: float = 1.0) -> None:
    """This tree's C runtime against ``rev``'s, interleaved (see the module docstring)."""
    old_head, old_tail = _runtime_at(rev)
    print(f"native search, exact store, this tree vs {rev}, interleaved ({load_avg()} before)")
    print(
        f"{'model':26s} {'wall 1':>7s} | {'2 here':>7s} {'median':>7s} {'speed-up':>8s} "
        f"{'CPU 2/1':>7s} | {'2 ' + rev[:7]:>9s} {'median':>7s} {'speed-up':>8s} {'CPU 2/1':>7s}"
    )
    for name, var, bound in WORKER_MODELS:
        bound = max(16, int(bound * scale))
        system = load_model(SCALING / name, {var: str(bound)})
        gen = CGen(system, system.properties)
        head, tail = runtime_sources()
        sems = {
            "here": NativeSemantics(system, prepared=(gen, gen.source(head, tail))),
            "rev": NativeSemantics(system, prepared=(gen, gen.source(old_head, old_tail))),
        }
        runs: dict[str, list[tuple[float, float]]] = {"1": [], "here": [], "rev": []}
        counts: set[tuple[int, int]] = set()
        for _ in range(repeat):
            for key in runs:
                c0, t0 = time.process_time(), time.perf_counter()
                sem = sems["here" if key == "1" else key]
                run = native_search(sem, "exact", workers=1 if key == "1" else 2, parallel_after=0)
                runs[key].append((time.perf_counter() - t0, time.process_time() - c0))
                counts.add((run.outcome.states, run.outcome.transitions))
        w1 = min(w for w, _ in runs["1"])
        c1 = statistics.median(c for _, c in runs["1"])
        cells = []
        for key in ("here", "rev"):
            best = min(w for w, _ in runs[key])
            med = statistics.median(w for w, _ in runs[key])
            cpu = statistics.median(c for _, c in runs[key]) / c1
            cells.append(f"{best:6.3f}s {med:6.3f}s {w1 / best:7.2f}x {cpu:6.2f}x")
        same = "" if len(counts) == 1 else "  (states or transitions differ!)"
        print(
            f"{name + ' ' + var + '=' + str(bound):26s} {w1:6.3f}s | {cells[0]} | "
            f"  {cells[1]}{same}"
        )
    print(
        f"({load_avg()} after; best and median wall of {repeat} runs each; speed-up = best wall "
        "of 1 thread / best wall of 2; CPU 2/1 = median CPU (user + sys) of 2 threads / of 1)"
    )


#: SPIN's searches of ``workers --spin``: (label, gcc flags, pan flags), in pairs of one core
#: and its multi-core mode
SPIN_MODES = [
    ("DFS", (), ()),
    ("-DNCORE=2", ("-DNCORE=2",), ()),
    ("-DBFS", ("-DBFS",), ()),
    ("-DBFS_PAR -u2", ("-DBFS_PAR",), ("-u2",)),
]


def spin_workers(repeat: int, scale: float = 1.0) -> None:
    """SPIN's multi-core searches against its one-core ones (see the module docstring)."""
    if not have_spin():
        print("native_goals workers --spin: spin and gcc are needed", file=sys.stderr)
        return
    print(f"SPIN, one core vs two ({load_avg()} before; best pan wall of {repeat})")
    print(
        f"{'model':26s} "
        + " ".join(f"{label:>14s}" for label, _, _ in SPIN_MODES)
        + f" | {'NCORE=2 / DFS':>13s} {'BFS_PAR / BFS':>13s}"
    )
    for name, var, bound in WORKER_MODELS:
        bound = max(16, int(bound * scale))
        walls: list[float] = []
        cells: list[str] = []
        for _label, cflags, pan_args in SPIN_MODES:
            best = float("inf")
            states = 0
            for _ in range(repeat):
                res = run_spin(
                    SCALING / name,
                    [f"{var}={bound}"],
                    depth=10_000_000,
                    timeout=600,
                    cflags=("-DMEMLIM=2000", *cflags),
                    pan_args=("-w24", *pan_args),
                )
                if res.error:
                    print(f"{name} {var}={bound} {_label}: {res.error}", file=sys.stderr)
                    break
                best = min(best, res.pan_wall_s)
                states = res.states
            walls.append(best)
            cells.append(f"{best:5.2f}s {states:7,d}" if states else f"{'-':>14s}")
        ok = [w if w != float("inf") else 0.0 for w in walls]
        ratio = [a / b if a and b else 0.0 for a, b in zip(ok[::2], ok[1::2], strict=True)]
        print(
            f"{name + ' ' + var + '=' + str(bound):26s} "
            + " ".join(f"{c:>14s}" for c in cells)
            + f" | {ratio[0]:12.2f}x {ratio[1]:12.2f}x"
        )
    print(
        f"({load_avg()} after; each cell: pan's wall time (process start to exit), states "
        "stored as pan reports them (-DNCORE: cpu0's); the ratios are one core's time over two "
        "cores', i.e. SPIN's speed-up)"
    )


def bitstate() -> None:
    """absmc's C bitstate store against pan -DBITSTATE (see the module docstring)."""
    if not have_spin():
        print("native_goals bitstate: spin and gcc are needed", file=sys.stderr)
        return
    print(f"bitstate, 2^27 bits, k = 3 ({load_avg()})")
    print(
        f"{'model':26s} {'pan states':>11s} {'absmc':>11s} | {'pan st/s':>10s} {'absmc':>10s} ratio"
    )
    for name, var, bound in BITSTATE_MODELS:
        defs = [f"{var}={bound}"]
        spin = run_spin(SCALING / name, defs, cflags=("-DBITSTATE",), pan_args=("-w27", "-k3"))
        ours = run_absmc(
            SCALING / name,
            defs,
            backend="native",
            extra_args=("--store", "bitstate", "--bitstate-bits", "27", "--workers", "1"),
        )
        ratio = ours.rate / spin.rate if spin.rate else 0.0
        print(
            f"{name + ' ' + defs[0]:26s} {spin.states:11,d} {ours.states:11,d} | "
            f"{spin.rate:10,.0f} {ours.rate:10,.0f} {ratio:5.2f}"
        )


def memory(scale: float) -> None:
    """The memory goals' runs (see the module docstring)."""
    print(f"memory goals, bounds x {scale:g} ({load_avg()})")
    for name, var, bound, store in MEMORY_RUNS:
        b = max(16, int(bound * scale))
        args = [sys.executable, "-m", "absmc.cli", "check", str(SCALING / name), "-D"]
        args += [f"{var}={b}", "--backend", "native", "--store", store, "--json", "--no-trail"]
        args.append("--no-reduce")  # equal counts with SPIN -DNOREDUCE
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        t0 = time.monotonic()
        proc = subprocess.run(args, capture_output=True, text=True)
        wall = time.monotonic() - t0
        peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        try:
            res = json.loads(proc.stdout)
        except json.JSONDecodeError:
            print(f"{name} {var}={b}: no result: {proc.stderr.strip()[-300:]}")
            continue
        st = res["results"][0]["stats"]
        peak = max(peak_kb, before) / 1024
        print(
            f"{name} {var}={b} {store}: {st['states']:,} states, verdict {res['verdict']}, "
            f"store {st['bytes_per_state']} bytes/state, peak RSS {peak:,.0f} MB "
            f"({peak * 2**20 / max(1, st['states']):.1f} bytes/state), {wall:.1f} s"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("what", choices=["workers", "bitstate", "memory"])
    ap.add_argument("--repeat", type=int, default=3, help="workers: runs of each (best wall)")
    ap.add_argument("--scale", type=float, default=1.0, help="workers, memory: multiply the bounds")
    ap.add_argument(
        "--store", choices=["exact", "bitstate"], default="exact", help="workers: the store"
    )
    ap.add_argument(
        "--against",
        metavar="REV",
        help="workers: interleave this tree's C runtime with git revision REV's (A/B)",
    )
    ap.add_argument(
        "--spin",
        action="store_true",
        help="workers: also SPIN's -DNCORE=2 and -DBFS_PAR -u2 against its one-core searches",
    )
    args = ap.parse_args()
    if args.what == "workers":
        if args.against:
            workers_against(args.repeat, args.against, args.scale)
        else:
            workers(args.repeat, args.store, args.scale)
        if args.spin:
            spin_workers(args.repeat, args.scale)
    elif args.what == "bitstate":
        bitstate()
    else:
        memory(args.scale)
    return 0


if __name__ == "__main__":
    sys.exit(main())
