#!/usr/bin/env python3
"""The threads of the C search on one many-core machine: 1, 2, 4, 8, 16 threads (issue 24 item 4).

    PYTHONPATH=src python benchmarks/threads_scaling.py    # the table (~1-3 min on 16 cores)
    PYTHONPATH=src python benchmarks/threads_scaling.py --threads 1,2 --scale 0.0625  # a smoke run

Four models, all generated here or taken from ``examples/`` (nothing outside the repository):

- ``bakery``: the simplified two-process bakery of ``examples/gcl/bakery.gcl`` (Pasareanu,
  Pelanek, Visser, CAV 2005, Fig. 4) with the tickets bounded by N (the increment blocks at N),
  the scaling corpus's ``bakery2.pml``: 16 N states, BFS levels of 4 states (long and thin);
- ``lamport``: ``examples/gcl/lamport.gcl`` with MAX tickets: ~38 MAX states, levels of ~6;
- ``fischer``: ``examples/gcl/fischer.gcl`` with the clock bounded by MAX: 64 MAX states,
  levels of 64;
- ``phils``: N deadlock-free dining philosophers (``explicit_throughput.philosophers``), wide
  levels (3.7 * 10^6 states in 36 levels for N = 13), like the BEEM models.

With ``--promela DIR`` the models are instead the Promela files ``DIR/*.pm`` (for instance
BEEM instances written there by ``beem.py``'s ``materialize``: the issue's szymanski.4,
fischer.3, at.3, peterson.4 and larger ones), loaded with SPIN's semantics and searched without
deadlock checks, as the GCL ones. ``--reduce`` turns on partial-order reduction (the same ample
sets with threads).

Each model is compiled once; then every thread count runs ``--repeat`` times (the default
start of the threads as the CLI's: after 50,000 stored states). Printed per run: wall seconds
(best of the repeats), CPU seconds of the process (user + sys, all threads, that run), the
speed-up (best wall of 1 thread / best wall of n), CPU n / CPU 1, states and transitions (which
must equal one thread's: "same"). A run stops after ``--run-limit`` seconds and the whole
script skips what is left after ``--budget`` seconds.

Needs: gcc, and the Python packages the native back end imports: ``lark`` (the GCL parser)
and ``cffi`` (with ``pycparser``). When one is missing the script looks for wheels of them in
``.whl/`` of the repository root (or ``--wheels DIR``) and unpacks them into a temporary
directory on ``sys.path`` (the cffi wheel must match this Python).
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import resource
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))


def ensure_deps(wheels: Path) -> None:
    """Import ``lark`` and ``cffi``; when that fails, unpack the wheels under ``wheels`` into a
    temporary directory on ``sys.path`` and try again. Exits (code 2) with a one-line message
    naming what is still missing."""
    missing = []
    for mod in ("lark", "cffi", "_cffi_backend"):
        try:
            importlib.import_module(mod)
        except ImportError:
            missing.append(mod)
    if not missing:
        return
    found = sorted(wheels.glob("*.whl")) if wheels.is_dir() else []
    if found:
        target = Path(tempfile.mkdtemp(prefix="absmc-wheels-"))
        for whl in found:
            with zipfile.ZipFile(whl) as z:
                z.extractall(target)
        sys.path.insert(0, str(target))
        importlib.invalidate_caches()
    still = []
    for mod in missing:
        try:
            importlib.import_module(mod)
        except ImportError as e:
            still.append(f"{mod} ({e})")
    if still:
        print(
            f"threads_scaling: missing Python packages: {', '.join(still)}; "
            f"put their wheels in {wheels} or pip install them",
            file=sys.stderr,
        )
        sys.exit(2)


def bakery(n: int) -> str:
    """GCL of examples/gcl/bakery.gcl with the tickets bounded by ``n`` (16 n states)."""
    return f"""var x, y : int;
var pc1, pc2 : 0..3;
process P1 {{
  pc1 == 0 -> x := y, pc1 := 1;
  pc1 == 1 && x < {n} -> x := x + 1, pc1 := 2;
  pc1 == 2 && x <= y -> pc1 := 3;
  pc1 == 3 -> pc1 := 0;
}}
process P2 {{
  pc2 == 0 -> y := x, pc2 := 1;
  pc2 == 1 && y < {n} -> y := y + 1, pc2 := 2;
  pc2 == 2 && y < x -> pc2 := 3;
  pc2 == 3 -> pc2 := 0;
}}
invariant mutex: !(pc1 == 3 && pc2 == 3);
"""


def with_max(example: str, bound: int) -> str:
    """The GCL example ``examples/gcl/EXAMPLE`` with its ``MAX`` set to ``bound``."""
    text = (ROOT / "examples" / "gcl" / example).read_text(encoding="utf-8")
    old = "var MAX : int = 4096;"
    if old not in text:
        raise SystemExit(f"threads_scaling: {example} has no '{old}' line")
    return text.replace(old, f"var MAX : int = {bound};")


def models(scale: float) -> list[tuple[str, str]]:
    """(label, GCL source) of the four models; ``scale`` multiplies the bounds (phils: 13
    philosophers at scale >= 1, fewer below)."""
    from explicit_throughput import philosophers

    def b(x: int) -> int:
        return max(16, int(x * scale))

    n_phil = 13 if scale >= 1 else (12 if scale >= 0.25 else 10)
    return [
        (f"bakery N={b(2**20)}", bakery(b(2**20))),
        (f"lamport MAX={b(2**18)}", with_max("lamport.gcl", b(2**18))),
        (f"fischer MAX={b(2**17)}", with_max("fischer.gcl", b(2**17))),
        (f"phils N={n_phil}", philosophers(n_phil)),
    ]


#: other values of runtime_par.c's STEAL_MIN, WAKE_MIN, SPIN_PASSES (defaults 4, 32, 64) tried
#: on the thin and medium models after the table (environment variables read under PAR_TUNE)
TUNABLES = ("ABSMC_STEAL_MIN", "ABSMC_WAKE_MIN", "ABSMC_SPIN")
ALTERNATIVES = [("2", "64", "64"), ("8", "32", "64"), ("4", "32", "8")]


def cpu_s() -> float:
    """User + system CPU seconds of this process, all threads."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--threads", default="1,2,4,8,16", help="thread counts (default 1,2,4,8,16)")
    ap.add_argument("--repeat", type=int, default=2, help="runs of each (best wall; default 2)")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply the bounds")
    ap.add_argument("--only", default="", help="comma-separated model names (bakery,lamport,...)")
    ap.add_argument("--run-limit", type=float, default=40.0, help="seconds per run (default 40)")
    ap.add_argument("--budget", type=float, default=280.0, help="seconds in all (default 280)")
    ap.add_argument("--parallel-after", type=int, default=50_000, help="as the CLI (50,000)")
    ap.add_argument(
        "--no-alternatives",
        dest="alternatives",
        action="store_false",
        help="skip the runs with other STEAL_MIN / WAKE_MIN / SPIN_PASSES",
    )
    ap.add_argument("--wheels", type=Path, default=ROOT / ".whl", help="wheels of lark, cffi")
    ap.add_argument(
        "--promela", type=Path, default=None, help="measure DIR/*.pm instead of the four models"
    )
    ap.add_argument("--reduce", action="store_true", help="with partial-order reduction")
    args = ap.parse_args()
    ensure_deps(args.wheels)

    from absmc.lang.gcl import parse_gcl
    from absmc.native import NativeSemantics
    from absmc.native.build import runtime_sources
    from absmc.native.cgen import CGen
    from absmc.native.search import native_search

    def compile_model(label: str, source: str) -> NativeSemantics:
        # PAR_TUNE: the ABSMC_* variables of ALTERNATIVES override runtime_par.c's constants
        if args.promela is not None:
            from absmc.lang.promela import load_promela

            system = load_promela(source)
        else:
            system = parse_gcl(source, label.split()[0] + ".gcl")
        gen = CGen(system, system.properties)
        return NativeSemantics(
            system, prepared=(gen, "#define PAR_TUNE 1\n" + gen.source(*runtime_sources()))
        )

    counts = [int(x) for x in args.threads.split(",")]
    t_start = time.monotonic()
    load = os.getloadavg()[0]
    print(
        f"threads_scaling: {os.cpu_count()} CPUs ({platform.machine()}, "
        f"{platform.python_version()}), load {load:.2f}; threads {counts}, best of {args.repeat}"
    )
    header = (
        f"{'model':20s} {'threads':>7s} {'wall s':>8s} {'speed-up':>8s} {'CPU s':>8s} "
        f"{'CPU n/1':>7s} {'states':>12s} {'transitions':>12s}  same"
    )
    print(header)
    chosen = [m for m in args.only.split(",") if m]
    sems: dict[str, NativeSemantics] = {}
    ones: dict[str, float] = {}
    todo = (
        [(f.stem, str(f)) for f in sorted(args.promela.glob("*.pm"))]
        if args.promela is not None
        else models(args.scale)
    )
    for label, source in todo:
        if chosen and label.split()[0] not in chosen:
            continue
        if time.monotonic() - t_start > args.budget:
            print(f"{label:20s} skipped: the --budget of {args.budget:.0f} s is spent")
            continue
        c0 = time.monotonic()
        sem = compile_model(label, source)
        sems[label] = sem
        compile_s = time.monotonic() - c0
        best: dict[int, tuple[float, float, int, int, str]] = {}
        for _ in range(args.repeat):
            for n in counts:
                if time.monotonic() - t_start > args.budget:
                    break
                cpu0, w0 = cpu_s(), time.monotonic()
                run = native_search(
                    sem,
                    "exact",
                    check_deadlock=False,  # bakery's bound ends in a deadlock
                    workers=n,
                    parallel_after=args.parallel_after,
                    deadline=w0 + args.run_limit,
                    reduce=args.reduce,
                )
                wall, cpu = time.monotonic() - w0, cpu_s() - cpu0
                out = run.outcome
                note = "" if out.stopped is None else f"stopped: {out.stopped}"
                if n not in best or wall < best[n][0]:
                    best[n] = (wall, cpu, out.states, out.transitions, note)
        if 1 not in best:
            continue
        w1, c1, s1, t1, _ = best[1]
        ones[label] = w1
        for n in counts:
            if n not in best:
                continue
            w, c, s, t, note = best[n]
            same = "yes" if (s, t) == (s1, t1) else "NO"
            print(
                f"{label:20s} {n:7d} {w:8.3f} {w1 / w:7.2f}x {c:8.2f} {c / c1:6.2f}x "
                f"{s:12,d} {t:12,d}  {same} {note}",
                flush=True,
            )
        print(f"{'':20s} (compiled in {compile_s:.1f} s)", flush=True)
    if args.alternatives and time.monotonic() - t_start < args.budget:
        print("alternatives (ABSMC_STEAL_MIN / ABSMC_WAKE_MIN / ABSMC_SPIN; one run each):")
        for label, sem in sems.items():
            if label not in ones or label.startswith("phils"):
                continue
            for env in ALTERNATIVES:
                for n in (2, 4, 16):
                    if time.monotonic() - t_start > args.budget:
                        break
                    os.environ.update(zip(TUNABLES, env, strict=True))
                    cpu0, w0 = cpu_s(), time.monotonic()
                    run = native_search(
                        sem,
                        "exact",
                        check_deadlock=False,
                        workers=n,
                        parallel_after=args.parallel_after,
                        deadline=w0 + args.run_limit,
                        reduce=args.reduce,
                    )
                    wall, cpu = time.monotonic() - w0, cpu_s() - cpu0
                    print(
                        f"{label:20s} {'/'.join(env):>10s} {n:3d} threads {wall:8.3f} s "
                        f"{ones[label] / wall:6.2f}x  CPU {cpu:7.2f} s  "
                        f"{run.outcome.states:,d} states",
                        flush=True,
                    )
        for k in TUNABLES:
            os.environ.pop(k, None)
    print(
        f"({time.monotonic() - t_start:.0f} s in all; load {os.getloadavg()[0]:.2f} at the end; "
        "wall = best of the repeats; CPU = that run's user + sys, all threads; speed-up = "
        "wall of 1 thread / wall of n)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
