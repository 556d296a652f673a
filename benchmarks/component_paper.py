#!/usr/bin/env python3
"""The component experiments of Bao's thesis (paper 003, Tables 2.1–2.5 and 3.1) on this
repository's Python versions (``examples/python/``): for each program and each way of storing
states — exact, bitstate (the thesis's default), hash-compact, predicate abstraction over the
branch guards (PA, concrete predicate evaluation, no refinement), predicate abstraction refined
with the prover (PA+TP, ``--store predicates``) and the min/max range refinement (PA+NTP,
``--store range``) — the states stored, peak memory,
time to the verdict on the correct program and time to the error on the seeded-bug variant.
Each run is a separate ``absmc check --json`` process, so memory is per run. Usage:

    python benchmarks/component_paper.py [--timeout 60] [--only matrix,sorting,...]

Prints a Markdown table (the one in ``docs/component.md``; states/s = states stored per
second of the search), then the philosophers' throughput (transitions per CPU second of the
search), then the 4-thread programs of issue 27 (``examples/python/por_*.py``: proofs with and
without partial-order reduction, ``--reduce``, and the time to their bugs with BFS and DFS;
``--only four-threads`` runs this part alone).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

# a violation's trail would be written beside the model: the corpus in ../shared is read-only
os.environ.setdefault("ABSMC_NO_TRAIL", "1")

ROOT = Path(__file__).resolve().parent.parent
PY = ROOT / "examples" / "python"

#: name -> (file, correct entry, buggy entry, component of the correct one, of the buggy one,
#: extra arguments)
EXPERIMENTS: dict[str, tuple[str, str, str, str, str, tuple[str, ...]]] = {
    "matrix": ("matrix.py", "main", "main_bug", "multiply", "multiply_bug", ()),
    "sorting": ("sorting.py", "main", "main_bug", "selection_sort", "selection_sort_bug", ()),
    "allocator": ("allocator.py", "main", "main_bug", "Allocator", "Allocator", ()),
    "philosophers": (
        "philosophers.py",
        "dinner_ordered",
        "dinner",
        "philosopher",
        "philosopher",
        (),
    ),
    "producer-consumer": (
        "producer_consumer.py",
        "run",
        "run_if",
        "Buffer,producer,consumer",
        "Buffer,consumer_if",
        (),
    ),
    "bank (access)": (
        "bank.py",
        "run_locked",
        "run",
        "Account",
        "Account",
        ("--granularity", "access"),
    ),
}

STORES: dict[str, tuple[str, ...]] = {
    "exact": ("--store", "exact"),
    "bitstate": ("--store", "bitstate"),
    "hash-compact": ("--store", "hash-compact"),
    "PA (guards)": ("--predicate", "guards"),
    "PA+TP (predicates)": ("--store", "predicates"),
    "PA+NTP (range)": ("--store", "range"),
}


def run(
    file: str, entry: str, component: str, flags: tuple[str, ...], timeout: float
) -> dict[str, object]:
    cmd = [
        sys.executable,
        "-m",
        "absmc.cli",
        "check",
        str(PY / file),
        "--entry",
        entry,
        "--component",
        component,
        "--json",
        "--timeout",
        str(timeout),
        *flags,
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    t0 = time.monotonic()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout + 60)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.monotonic() - t0
    data = json.loads(p.stdout)
    first = data["results"][0]
    stats = dict(first["stats"])
    # refinement: the time of all rounds (the states are those of the last round)
    stats["time_s"] = first.get("iterations_total_time_s", stats["time_s"])
    cpu = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
    return {"verdict": data["verdict"], "stats": stats, "wall": wall, "cpu": cpu}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--only", default="")
    ap.add_argument("--stores", default="", help="comma-separated store names of the table")
    ap.add_argument("--no-throughput", action="store_true")
    args = ap.parse_args()
    only = {x for x in args.only.split(",") if x}
    print(
        "| program | store | verdict | states | states/s | peak MB | time s | bug: verdict "
        "| time to error s |"
    )
    print("|---|---|---|---:|---:|---:|---:|---|---:|")
    stores = [x for x in args.stores.split(",") if x]
    for name, (file, good, bad, comp, bcomp, extra) in EXPERIMENTS.items():
        if only and name not in only:
            continue
        for store, flags in STORES.items():
            if stores and store not in stores:
                continue
            # the table is breadth-first as when it was first measured (the CLI's default
            # for .py is now depth-first: the 4-thread table compares both)
            bfs = ("--order", "bfs")
            ok = run(file, good, comp, (*flags, *extra, *bfs), args.timeout)
            err = run(file, bad, bcomp, (*flags, *extra, *bfs), args.timeout)
            st = ok["stats"]
            assert isinstance(st, dict)
            est = err["stats"]
            assert isinstance(est, dict)
            print(
                f"| {name} | {store} | {ok['verdict']} | {st['states']:,} | "
                f"{_rate(st)} | {st['peak_mb']:.0f} | {st['time_s']:.2f} | {err['verdict']} | "
                f"{est['time_s']:.3f} |"
            )
    if (not only or "philosophers" in only) and not args.no_throughput:
        throughput()
    if not only or "four-threads" in only:
        four_threads(args.timeout)


def _rate(st: dict[str, object]) -> str:
    t = st["time_s"]
    n = st["states"]
    assert isinstance(t, float | int) and isinstance(n, int)
    return f"{n / t:,.0f}" if t > 0 else "-"


#: the 4-thread programs: name -> (file, correct entry, buggy entry, component)
FOUR_THREADS = {
    "buffer, one Condition (notify_all / notify)": (
        "por_buffer.py",
        "main",
        "main_notify",
        "Buffer,producer,consumer,run",
    ),
    "bounded job queue (while / if)": (
        "por_jobqueue.py",
        "main",
        "main_if",
        "JobQueue,submitter,worker,run",
    ),
}


def four_threads(timeout: float) -> None:
    """The 4-thread programs (2 producers, 2 consumers, capacity 1, 2 items each): the proof
    of the correct version (DFS; both-mover steps are always joined, ``absmc.component.
    joined``) without and with the persistent sets of ``--reduce``, and the time to the bug
    of the other version with BFS and DFS (no ``--reduce``)."""
    print(
        f"\n(load average {os.getloadavg()[0]:.1f}; time: wall seconds of the search; CPU: "
        "seconds of the whole process)\n"
        "| 4 threads | run | verdict | states | states/s | peak MB | time s | CPU s |\n"
        "|---|---|---|---:|---:|---:|---:|---:|"
    )
    for name, (file, good, bad, comp) in FOUR_THREADS.items():
        for label, entry, flags in (
            ("proof", good, ("--order", "dfs")),
            ("proof, --reduce", good, ("--order", "dfs", "--reduce")),
            ("bug, BFS", bad, ("--order", "bfs")),
            ("bug, DFS", bad, ("--order", "dfs")),
        ):
            r = run(file, entry, comp, flags, timeout)
            st = r["stats"]
            assert isinstance(st, dict)
            print(
                f"| {name} | {label} | {r['verdict']} | {st['states']:,} | {_rate(st)} | "
                f"{st['peak_mb']:.0f} | {st['time_s']:.2f} | {r['cpu']:.1f} |"
            )


def throughput() -> None:
    """Transitions and states per CPU second of the component search on 4 philosophers
    (ordered forks), and the bytes per stored state (the exact store's states, shared parts
    counted once)."""
    sys.path.insert(0, str(ROOT / "src"))
    from absmc.component import ComponentOptions
    from absmc.component.check import check_semantics
    from absmc.component.machine import ComponentSemantics
    from absmc.component.program import build_program, load_program
    from absmc.kernel.explore.search import search
    from absmc.kernel.explore.store import ExactStore

    ns = load_program(PY / "philosophers.py").__dict__
    prog, code = build_program(ns, ns["dinner_ordered"], ["philosopher"], "statement", {})
    c0 = time.process_time()
    result = check_semantics(ComponentSemantics(prog, code, [4]), ComponentOptions(), "p")
    cpu = time.process_time() - c0
    s = result.results[0].stats
    print(
        f"\nphilosophers (4, ordered forks): {s.states:,} states, {s.transitions:,} "
        f"transitions, {s.time_s:.2f} s wall, {cpu:.2f} s CPU: "
        f"{s.transitions / cpu:,.0f} transitions per CPU second, "
        f"{s.states / cpu:,.0f} states per CPU second "
        f"({s.extra.get('memo_hits', 0):,} steps from the memo)"
    )
    memo = ExactStore()
    search(ComponentSemantics(prog, code, [4]), memo)
    store = ExactStore()
    sem = ComponentSemantics(prog, code, [4], memoize=False)
    c0 = time.process_time()
    out = search(sem, store)
    cpu = time.process_time() - c0
    sem.restore()
    print(
        f"without the memo: {out.transitions / cpu:,.0f} transitions per CPU second; bytes per "
        f"stored state (Python objects, shared parts once): "
        f"{_deep_size(memo.states) / len(memo.states):,.0f} with the memo, "
        f"{_deep_size(store.states) / len(store.states):,.0f} without"
    )


def _deep_size(root: object) -> int:
    seen: set[int] = set()
    total = 0
    stack = [root]
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        total += sys.getsizeof(x)
        if isinstance(x, (tuple, list, set, frozenset)):
            stack.extend(x)
    return total


if __name__ == "__main__":
    main()
