#!/usr/bin/env python3
"""Where the threaded native search spends its time (issue 14 item 5).

    python benchmarks/par_profile.py                       # bakery2 N=2^16, 2 threads
    python benchmarks/par_profile.py fischer.pml MAXT 32768 --workers 2 --repeat 3

Compiles the scaling model with ``PAR_PROF`` defined (``runtime_par.c``: per-thread TSC cycles
spent expanding, popping and idle/stealing; batches, states expanded, empty pops, steals and
states stolen, states expanded or matched that the other thread stored), runs the search with
1 thread and with ``--workers`` threads (from the first state on) and prints the counters
(the C code writes them to stderr after each time slice) with the wall times.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from absmc.lang.loader import load_model
from absmc.native import NativeSemantics
from absmc.native.build import runtime_sources
from absmc.native.cgen import CGen
from absmc.native.search import native_search

SCALING = Path(__file__).resolve().parent.parent.parent / "shared" / "benchmarks" / "scaling"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("model", nargs="?", default="bakery2.pml")
    ap.add_argument("var", nargs="?", default="N")
    ap.add_argument("bound", nargs="?", type=int, default=2**16)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    system = load_model(SCALING / args.model, {args.var: str(args.bound)})
    gen = CGen(system, system.properties)
    head, tail = runtime_sources()
    # _GNU_SOURCE first: getrusage(RUSAGE_THREAD) in the counters
    source = "#define _GNU_SOURCE\n#define PAR_PROF 1\n" + gen.source(head, tail)
    sem = NativeSemantics(system, prepared=(gen, source))
    for _ in range(args.repeat):
        for n in (1, args.workers):
            t0 = time.perf_counter()
            run = native_search(sem, "exact", workers=n, parallel_after=0)
            wall = time.perf_counter() - t0
            sys.stderr.flush()
            out = run.outcome
            print(
                f"{n} thread(s): {wall:.3f} s wall, {out.states:,} states, "
                f"{out.transitions:,} transitions, depth {out.max_depth}, thread CPU "
                + " ".join(f"{c:.3f}" for c in run.thread_cpu_s),
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
