#!/usr/bin/env python3
"""Where the threaded native search spends its time (issue 14 item 5).

    python benchmarks/par_profile.py                       # bakery2 N=2^16, 2 threads
    python benchmarks/par_profile.py fischer.pml MAXT 32768 --workers 2 --repeat 3
    python benchmarks/par_profile.py --pingpong    # cache-line transfer time between CPUs 0, 1

Compiles the scaling model with ``PAR_PROF`` defined (``runtime_par.c``: per-thread TSC cycles
spent expanding, popping and idle/stealing; batches, states expanded, empty pops, steals and
states stolen, states expanded or matched that the other thread stored), runs the search with
1 thread and with ``--workers`` threads (from the first state on) and prints the counters
(the C code writes them to stderr after each time slice) with the wall times.

``--pingpong`` compiles (gcc) and runs a two-thread ping-pong on one cache line, the threads
pinned to CPUs 0 and 1, and prints the one-way transfer time: what a table probe pays when it
meets a line the other thread just wrote (between this VM's two CPUs mostly 30-50 ns, at
times 200-240 ns, against ~105 ns for a whole state's expansion in one thread on bakery2).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from absmc.lang.loader import load_model
from absmc.native import NativeSemantics
from absmc.native.build import runtime_sources
from absmc.native.cgen import CGen
from absmc.native.search import native_search

SCALING = Path(__file__).resolve().parent.parent.parent / "shared" / "benchmarks" / "scaling"


PINGPONG_C = r"""
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
static volatile uint64_t flag __attribute__((aligned(64)));
#define N 2000000
static void pin(int c) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(c, &s);
    pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}
static void *other(void *a) {
    pin(1);
    for (uint64_t i = 1; i < 2 * N; i += 2) { while (flag != i) ; flag = i + 1; }
    return a;
}
int main(void) {
    pthread_t t;
    pthread_create(&t, 0, other, 0);
    pin(0);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (uint64_t i = 0; i < 2 * N; i += 2) { while (flag != i) ; flag = i + 1; }
    while (flag != 2 * N) ;
    clock_gettime(CLOCK_MONOTONIC, &b);
    pthread_join(t, 0);
    double ns = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (2.0 * N);
    printf("one-way cache-line transfer between CPU 0 and CPU 1: %.1f ns\n", ns);
    return 0;
}
"""


def pingpong() -> None:
    """Compile and run :data:`PINGPONG_C` (see the module docstring)."""
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = Path(tmp) / "pingpong.c", Path(tmp) / "pingpong"
        src.write_text(PINGPONG_C)
        subprocess.run(["gcc", "-O2", "-pthread", "-o", str(exe), str(src)], check=True)
        print(subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("model", nargs="?", default="bakery2.pml")
    ap.add_argument("var", nargs="?", default="N")
    ap.add_argument("bound", nargs="?", type=int, default=2**16)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--pingpong", action="store_true", help="cache-line transfer time, CPUs 0-1")
    ap.add_argument(
        "--no-deadlock", action="store_true", help="no deadlock check (e.g. BEEM models)"
    )
    args = ap.parse_args()
    if args.pingpong:
        pingpong()
        return 0
    system = load_model(SCALING / args.model, {args.var: str(args.bound)})
    gen = CGen(system, system.properties)
    head, tail = runtime_sources()
    # _GNU_SOURCE first: getrusage(RUSAGE_THREAD) in the counters
    # PAR_TUNE: ABSMC_WAKE_MIN, ABSMC_STEAL_MIN, ABSMC_SPIN override runtime_par.c's constants
    defines = "#define _GNU_SOURCE\n#define PAR_PROF 1\n#define PAR_TUNE 1\n"
    source = defines + gen.source(head, tail)
    sem = NativeSemantics(system, prepared=(gen, source))
    for _ in range(args.repeat):
        for n in (1, args.workers):
            t0 = time.perf_counter()
            run = native_search(
                sem, "exact", workers=n, parallel_after=0, check_deadlock=not args.no_deadlock
            )
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
