#!/usr/bin/env python3
"""Four-valued abstraction against growing bounds: the paper's Tables 1–2 (Bonsai, §4).

Lamport's bakery (tickets bounded by MAX) and Fischer's protocol (clock bounded by MAX) from
``examples/gcl/`` are checked with ``--method fourvalued`` at MAX = 2^12, 2^14, ..., 2^24: the
value of ``mutex`` must be t at every bound, the abstract state counts must be the same at every
bound, and the time must stay flat (the script prints the spread of the per-bound CPU times
against the ±20% goal; wall times are printed too, but on a shared machine they also measure the
other users). The concrete model (exported with ``absmc.lang.promela.export.to_promela``) is
searched exhaustively by SPIN at MAX = 2^12 ... 2^18 (and by absmc's explicit engine at the
small bounds): its states and time grow with the bound. The buggy Fischer variant (wait shorter
than the write delay) is shown with its value f. Usage:

    python benchmarks/fourvalued_scaling.py [--bounds 12-24] [--spin-bounds 12-18]
                                            [--explicit-bounds 12] [--repeat 5]

Exit code 1 when a value is not the expected one or the abstract state counts differ between
bounds; the timing goal is reported, not enforced (the machine may be shared).
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from absmc.engines.explicit import check_explicit
from absmc.engines.fourvalued import check_fourvalued
from absmc.engines.options import CheckOptions
from absmc.ir.system import System
from absmc.lang.gcl import parse_gcl_file
from absmc.lang.promela.export import to_promela

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "gcl"
MODELS = {"lamport": "Lamport's bakery (ticket bound)", "fischer": "Fischer (clock bound)"}


def with_bound(system: System, log2: int) -> System:
    """The model with MAX = 2**log2."""
    return system.with_(
        variables=tuple(
            replace(v, init=2**log2) if v.name == "MAX" else v for v in system.variables
        )
    )


def exponents(text: str) -> list[int]:
    """``"12-24"`` -> [12, 14, ..., 24]; ``"12,13"`` -> [12, 13]; ``""`` -> []."""
    if not text:
        return []
    if "-" in text:
        lo, hi = (int(x) for x in text.split("-"))
        return list(range(lo, hi + 1, 2))
    return [int(x) for x in text.split(",")]


@dataclass
class AbstractRow:
    value: str
    may_states: int
    must_states: int
    abstraction_s: float
    search_s: float
    total_s: float
    cpu_s: float
    smt_checks: int


def run_once(system: System) -> AbstractRow:
    """Check ``system`` once with the four-valued method."""
    t0, c0 = time.monotonic(), time.process_time()
    result = check_fourvalued(system, CheckOptions())
    total, cpu = time.monotonic() - t0, time.process_time() - c0
    mutex = result.results[0]
    x = mutex.stats.extra
    return AbstractRow(
        mutex.extra["value"],
        x["may_states"],
        x["must_states"],
        x["abstraction_time_s"],
        x["may_time_s"] + x["must_time_s"],
        total,
        cpu,
        x["smt_checks"],
    )


def run_abstract(systems: dict[int, System], repeat: int) -> dict[int, AbstractRow]:
    """Check every bound ``repeat`` times, round-robin (so that a change in the machine's load
    hits all bounds alike), keeping each bound's fastest run (best of ``repeat``)."""
    best: dict[int, AbstractRow] = {}
    for _ in range(repeat):
        for b, system in systems.items():
            row = run_once(system)
            if b not in best or row.cpu_s < best[b].cpu_s:
                best[b] = row
    return best


def run_spin(system: System, log2: int) -> tuple[int, int, float, float] | None:
    """SPIN on the concrete model: (states, errors, spin+gcc seconds, pan seconds)."""
    if not (shutil.which("spin") and shutil.which("gcc")):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "m.pml").write_text(to_promela(system))
        t0 = time.monotonic()
        subprocess.run(["spin", "-o1", "-a", "m.pml"], cwd=d, check=True, capture_output=True)
        subprocess.run(
            [
                *[
                    "gcc",
                    "-O2",
                    "-DNOREDUCE",
                    "-DNOCLAIM",
                    "-DSAFETY",
                    "-DMEMLIM=8000",
                    "-o",
                    "pan",
                    "pan.c",
                ]
            ],
            cwd=d,
            check=True,
            capture_output=True,
        )
        t1 = time.monotonic()
        depth = 16 * 2**log2 + 1000  # the DFS of these models is ~6-10 MAX deep
        out = subprocess.run(
            ["./pan", "-c0", "-n", f"-m{depth}"], cwd=d, capture_output=True, text=True
        ).stdout
        t2 = time.monotonic()
    states = re.search(r"(\d+) states, stored", out)
    errors = re.search(r"errors: (\d+)", out)
    if states is None or errors is None:
        return None
    return int(states.group(1)), int(errors.group(1)), t1 - t0, t2 - t1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bounds", default="12-24", help="log2 of MAX for absmc (default 12-24)")
    ap.add_argument("--spin-bounds", default="12-18", help="log2 of MAX for SPIN (default 12-18)")
    ap.add_argument(
        "--explicit-bounds", default="12", help="log2 of MAX for absmc's explicit search"
    )
    ap.add_argument("--repeat", type=int, default=5, help="runs per bound (best of)")
    args = ap.parse_args()
    bounds = exponents(args.bounds)
    ok = True
    for name, title in MODELS.items():
        base = parse_gcl_file(EXAMPLES / f"{name}.gcl")
        print(f"\n{title}: examples/gcl/{name}.gcl, property mutex")
        header = f"{'':<28}" + "".join(f"{'2^' + str(b):>10}" for b in bounds)
        print(header)
        run_once(with_bound(base, bounds[0]))  # warm-up: imports, solver start, caches
        rows = run_abstract({b: with_bound(base, b) for b in bounds}, args.repeat)
        cells = {
            "value of mutex": [rows[b].value for b in bounds],
            "may states": [str(rows[b].may_states) for b in bounds],
            "must states": [str(rows[b].must_states) for b in bounds],
            "SMT checks": [str(rows[b].smt_checks) for b in bounds],
            "abstraction (s)": [f"{rows[b].abstraction_s:.3f}" for b in bounds],
            "model checking (s)": [f"{rows[b].search_s:.4f}" for b in bounds],
            "absmc fourvalued total (s)": [f"{rows[b].total_s:.3f}" for b in bounds],
            "  of which CPU (s)": [f"{rows[b].cpu_s:.3f}" for b in bounds],
        }
        for label, values in cells.items():
            print(f"{label:<28}" + "".join(f"{v:>10}" for v in values))
        # flatness is judged on CPU time: wall time also measures the other users of the machine
        totals = [rows[b].cpu_s for b in bounds]
        mean = statistics.mean(totals)
        spread = max(abs(t - mean) / mean for t in totals)
        same = len({(rows[b].may_states, rows[b].must_states) for b in bounds}) == 1
        all_t = all(rows[b].value == "t" for b in bounds)
        print(
            f"  value t at every bound: {'yes' if all_t else 'NO'}; same abstract state counts: "
            f"{'yes' if same else 'NO'}; CPU time spread {spread:.0%} of the mean "
            f"({'within' if spread <= 0.20 else 'OUTSIDE'} ±20%)"
        )
        ok &= all_t and same
        explicit = exponents(args.explicit_bounds)
        for b in explicit:
            t0 = time.monotonic()
            res = check_explicit(with_bound(base, b), CheckOptions())
            dt = time.monotonic() - t0
            print(
                f"  concrete, absmc explicit at 2^{b}: {res.results[0].stats.states:,} states, "
                f"{res.results[0].verdict.value}, {dt:.2f} s"
            )
        spin_bounds = exponents(args.spin_bounds)
        if spin_bounds:
            spin_rows = {b: run_spin(with_bound(base, b), b) for b in spin_bounds}
            got = {b: r for b, r in spin_rows.items() if r is not None}
            if len(got) != len(spin_bounds):
                print("  concrete, SPIN: not available (apt-get install spin) or failed")
            else:
                table = {
                    "concrete, SPIN": [f"2^{b}" for b in spin_bounds],
                    "  states": [f"{got[b][0]:,}" for b in spin_bounds],
                    "  errors": [str(got[b][1]) for b in spin_bounds],
                    "  spin -a + gcc (s)": [f"{got[b][2]:.2f}" for b in spin_bounds],
                    "  pan search (s)": [f"{got[b][3]:.2f}" for b in spin_bounds],
                }
                for label, values in table.items():
                    print(f"{label:<28}" + "".join(f"{v:>12}" for v in values))
                for b in (b for b in spin_bounds if b in rows):
                    ratio = rows[b].total_s / (got[b][2] + got[b][3])
                    print(f"  2^{b}: absmc fourvalued total / SPIN model-to-verdict = {ratio:.2f}")
    # the bug is found at every bound
    buggy = parse_gcl_file(EXAMPLES / "fischer_buggy.gcl")
    print("\nFischer with the wait shorter than the write delay (examples/gcl/fischer_buggy.gcl)")
    for b in [bounds[0], bounds[-1]] if bounds else []:
        result = check_fourvalued(with_bound(buggy, b), CheckOptions())
        mutex = result.results[0]
        steps = len(mutex.trace.steps) - 1 if mutex.trace else 0
        print(
            f"  2^{b}: value {mutex.extra['value']} ({mutex.extra.get('confirmed_by')}), "
            f"replayed counterexample of {steps} steps, {mutex.stats.time_s:.2f} s"
        )
        ok &= mutex.extra["value"] == "f" and mutex.trace is not None and mutex.trace.replayed
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
