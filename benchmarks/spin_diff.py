#!/usr/bin/env python3
"""Run SPIN and absmc side by side on Promela models and print states, verdicts, mismatches.

    python benchmarks/spin_diff.py MODEL... [-D NAME=VALUE]...
    python benchmarks/spin_diff.py ../shared/benchmarks/promela/*.p*

SPIN: ``spin -o1 -a``, ``gcc -O2 -DNOREDUCE -DNOCLAIM -DSAFETY``, ``pan -c0 -n`` (the options of
the corpus's expected.csv). absmc: ``absmc check MODEL --keep-going --json``. A model matches
when both store the same number of states and absmc's verdict is ``violated`` exactly when SPIN
counts errors. ``pred`` declarations (absmc's) are hidden from SPIN by ``-DNOPRED``. Both tools
get the same wall-clock limit (``--timeout``, default 600 s): a model whose state space is
infinite, or too large, ends with "limit" on both sides instead of running forever. Exit code 1
when some model does not match, 2 when SPIN is not installed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from spinrun import have_spin, run_absmc, run_spin


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("models", nargs="+", type=Path, help="Promela files")
    ap.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="wall-clock limit for each tool on each model (default 600)",
    )
    args = ap.parse_args()
    if not have_spin():
        print("spin_diff: spin and gcc are needed (apt-get install spin gcc)", file=sys.stderr)
        return 2
    head = f"{'model':24s} {'SPIN states':>12s} {'absmc states':>12s} {'SPIN errors':>11s}  "
    print(head + f"{'absmc verdict':14s} {'match':5s}")
    bad = 0
    for m in args.models:
        spin = run_spin(m, args.defines, timeout=args.timeout)
        ours = run_absmc(m, args.defines, timeout=args.timeout + 60, limit_s=args.timeout)
        if spin.error is not None:
            limited = "time limit" in spin.error and ours.verdict == "unknown"
            print(f"{m.name:24s} {'SPIN: ' + spin.error:>40s}; absmc: {ours.verdict}")
            bad += not limited
            continue
        if ours.error:
            print(f"{m.name:24s} {spin.states:12,d} {'error':>12s} {spin.errors:11d}  {ours.error}")
            bad += 1
            continue
        same = ours.states == spin.states and (ours.verdict == "violated") == (spin.errors > 0)
        bad += not same
        verdict = ours.verdict + (f" ({', '.join(ours.violated)})" if ours.violated else "")
        print(
            f"{m.name:24s} {spin.states:12,d} {ours.states:12,d} {spin.errors:11d}  "
            f"{verdict:14s} {'yes' if same else 'NO'}"
        )
    print(f"{len(args.models) - bad} of {len(args.models)} models match; {bad} mismatch(es)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
