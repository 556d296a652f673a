#!/usr/bin/env python3
"""absmc against SPIN: model-to-verdict wall time, states/s and peak memory, side by side.

    python benchmarks/vs_spin.py                 # the corpus and the scaling models
    python benchmarks/vs_spin.py --no-scaling    # the corpus only
    python benchmarks/vs_spin.py --quick         # skip the scaling bounds above 10^6 states
    python benchmarks/vs_spin.py --only 'sort|fischer.pml MAXT=8192'   # the matching rows
    python benchmarks/vs_spin.py --backend auto  # absmc check --backend auto in the main rows
    python benchmarks/vs_spin.py --against ../old/src   # also an older absmc, in the same run
    python benchmarks/vs_spin.py --native        # also --backend native (C), in the same run
    python benchmarks/vs_spin.py --native --no-python --beem   # the issue-14 table (+ BEEM set)
    python benchmarks/vs_spin.py --bitstate      # --store bitstate in C against pan -DBITSTATE
    python benchmarks/vs_spin.py --workers-goal  # native search, 1 vs 2 threads (>= 10^6 states)
    python benchmarks/vs_spin.py --memory-goal   # 3*10^8 states exact, 10^9 hash-compact (~14 GB)
    python benchmarks/vs_spin.py --spin-defaults --quick  # both tools' defaults (reductions on)

Model to verdict is wall time from the model file to the answer: for SPIN ``spin -o1 -a`` +
``gcc -O2`` + ``pan`` (as SPIN users run it; ``-o1 -DNOREDUCE`` so that both tools explore the
same states), for absmc the ``absmc check --keep-going --json`` process (with an empty
compilation cache: a switch to C pays the C compiler as SPIN pays gcc). states/s is stored
states per second of search (pan's own rate; absmc's search time). Memory: pan's "total actual
memory usage", absmc's peak resident set size. The closing lines check the goals of the Promela
issue: absmc's time <= SPIN's on every corpus model with <= 10^6 states, and absmc's states/s
>= 1/3 of pan's on fischer.pml with MAXT = 2^15.

With ``--native`` every model also gets a row marked ``n`` from two more absmc runs:
``absmc check`` with its defaults (``--backend auto``, threads past 50,000 states; a fresh
compilation cache, so its time includes the C compiler as SPIN's includes gcc) gives the
model-to-verdict column ("what a user gets"); ``absmc check --backend native --workers 1`` (one
core, as pan; the compiled module cached by the first run) gives the states/s column and the
store's bytes per state beside pan's (pan: total actual memory / states). The closing lines check
the goals of the native back end (issue 14): one-core states/s >= 1.0x pan's at the median of
the models with >= 10^5 states, none below 0.5x.

With ``--beem`` the BEEM-like set (``beem.BEEM_SET``: 10^5 to ~3*10^6 states, one or two
instances per BEEM family, read from the mirror of plug-obp/beem-benchmark at ``beem.COMMIT``,
or from ``--beem-dir DIR``) is added to the models; ``--no-python`` leaves out the Python-only
rows (the BEEM rows never get them: minutes per model). ``--repeat N`` runs SPIN and the two
``n`` runs N times per model, in turn, and keeps the median of each (single runs of 1-3 s
differ by more than 5% from one to the next on the 2-core development machine).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import beem
from spinrun import AbsmcResult, SpinResult, have_spin, median_run, run_absmc, run_spin

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "benchmarks"
SCALING = [
    ("bakery2.pml", "N", [2**10, 2**12, 2**16, 2**20]),
    ("fischer.pml", "MAXT", [2**10, 2**13, 2**15]),
    ("lamport.pml", "MAXT", [2**10, 2**12, 2**15, 2**18]),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--no-corpus", action="store_true", help="skip the corpus models")
    ap.add_argument("--no-scaling", action="store_true", help="skip the scaling models")
    ap.add_argument("--quick", action="store_true", help="skip scaling bounds above 10^6 states")
    ap.add_argument("--no-ltl", action="store_true", help="skip the LTL (nested search) row")
    ap.add_argument(
        "--backend",
        choices=("python", "native", "auto"),
        help="absmc's --backend in the main rows (default: the CLI's default, python)",
    )
    ap.add_argument(
        "--only",
        metavar="REGEX",
        help="only the rows whose label (e.g. 'sort.pml', 'fischer.pml MAXT=8192') matches",
    )
    ap.add_argument(
        "--against",
        type=Path,
        metavar="SRC",
        help="the src/ directory of another absmc checkout: run it on every model too and print "
        "this absmc's states/s relative to it (throughput regressions)",
    )
    ap.add_argument(
        "--native", action="store_true", help="also run --backend native (C) on every model"
    )
    ap.add_argument("--no-python", action="store_true", help="with --native: skip the Python run")
    ap.add_argument("--beem", action="store_true", help="also the BEEM-like set (beem.py)")
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="with --native: run SPIN and both absmc runs N times in turn per model and keep "
        "the median (wall time; states/s for the one-core run)",
    )
    ap.add_argument(
        "--beem-dir",
        type=Path,
        metavar="DIR",
        help="with --beem: the BEEM .pm files under DIR (default: the local git mirror)",
    )
    ap.add_argument(
        "--bitstate", action="store_true", help="only: bitstate in C against pan -DBITSTATE"
    )
    ap.add_argument(
        "--workers-goal", action="store_true", help="only: the native search, 1 vs 2 threads"
    )
    ap.add_argument(
        "--memory-goal",
        action="store_true",
        help="only: 3*10^8 states exact and 10^9 hash-compact (needs ~14 GB; native_goals.py "
        "memory --scale 0.001 checks the same runs small)",
    )
    ap.add_argument(
        "--spin-defaults",
        action="store_true",
        help="states and model-to-verdict of absmc's defaults against SPIN's defaults (spin -a, "
        "gcc -O2 -DSAFETY: partial-order reduction on; spin_defaults.py)",
    )
    args = ap.parse_args()
    if args.bitstate or args.workers_goal or args.memory_goal:
        import native_goals

        if args.workers_goal:
            native_goals.workers(3)
        if args.bitstate:
            native_goals.bitstate()
        if args.memory_goal:
            native_goals.memory(1.0)
        return 0
    if not have_spin():
        print("vs_spin: spin and gcc are needed (apt-get install spin gcc)", file=sys.stderr)
        return 2
    jobs: list[tuple[str, Path, list[str]]] = []
    if not args.no_corpus:
        corpus = sorted((SHARED / "promela").glob("*.p*")) + sorted(
            (SHARED / "promela").glob("*.sumo")
        )
        jobs += [("corpus", m, []) for m in corpus]
    if not args.no_scaling:
        for name, var, bounds in SCALING:
            for b in bounds:
                if args.quick and b > 2**13:
                    continue
                jobs.append(("scaling", SHARED / "scaling" / name, [f"{var}={b}"]))
    beem_tmp = tempfile.TemporaryDirectory()
    expected: dict[str, int] = {}
    if args.beem:
        names = [n for n, _ in beem.BEEM_SET]
        files = beem.materialize(names, Path(beem_tmp.name), args.beem_dir)
        if len(files) < len(names):
            found = {f.stem for f in files}
            print(f"vs_spin: BEEM models not found: {', '.join(sorted(set(names) - found))}")
        jobs += [("beem", f, []) for f in files]
        expected = dict(beem.BEEM_SET)
    if args.only:
        pick = re.compile(args.only)
        jobs = [j for j in jobs if pick.search(j[1].name + (f" {j[2][0]}" if j[2] else ""))]
    if args.spin_defaults:
        import spin_defaults

        spin_defaults.compare(jobs)
        beem_tmp.cleanup()
        return 0
    print(
        f"{'model':28s} {'states':>10s} | {'time SPIN':>9s} {'absmc':>7s} {'ratio':>6s} | "
        f"{'st/s pan':>10s} {'absmc':>9s} {'ratio':>6s} | {'MB SPIN':>7s} {'absmc':>6s}  same"
    )
    if args.native:
        print(
            "n rows: time = absmc check with its defaults (cold cache); st/s = --backend native "
            "--workers 1 (one core); B/state = pan's memory / states, the native store's"
        )
    native_rows: list[tuple[str, int, float, float]] = []  # model, states, rate ratio, time ratio
    slower: list[str] = []
    fischer_ratio = None
    ab: list[tuple[str, float]] = []
    for kind, model, defs in jobs:
        label = model.name + (f" {defs[0]}" if defs else "")
        spins: list[SpinResult] = []
        pairs: list[tuple[AbsmcResult, AbsmcResult]] = []
        for _ in range(max(1, args.repeat)):  # in turn, so that a change of load hits both
            spins.append(_spin_once(model, defs))
            if args.native and spins[-1].error is None:
                pairs.append(_native_pair(model, defs))
        failed = [r for r in spins if r.error is not None]
        if failed:
            print(f"{label:28s} SPIN: {failed[0].error}")
            continue
        spin = median_run(spins, lambda r: r.wall_s)
        if model.stem in expected and spin.states != expected[model.stem]:
            print(
                f"{label:28s} pan: {spin.states:,} states, beem.BEEM_SET: {expected[model.stem]:,}"
            )
        if args.native:
            _native_row(label, spin, pairs, native_rows)
            if args.no_python or kind == "beem":
                continue
        with tempfile.TemporaryDirectory() as cache:  # cold: the C compiler is counted
            ours = run_absmc(model, defs, backend=args.backend, env={"ABSMC_CACHE_DIR": cache})
        if ours.error:
            print(f"{label:28s} absmc error: {ours.error}")
            continue
        same = ours.states == spin.states and (ours.verdict == "violated") == (spin.errors > 0)
        t_ratio = ours.wall_s / spin.wall_s
        r_ratio = ours.rate / spin.rate if spin.rate else 0.0
        print(
            f"{label:28s} {ours.states:10,d} | {spin.wall_s:8.2f}s {ours.wall_s:6.2f}s "
            f"{t_ratio:6.2f} | {spin.rate:10,.0f} {ours.rate:9,.0f} {r_ratio:6.3f} | "
            f"{spin.memory_mb:7.1f} {ours.memory_mb:6.1f}  {'yes' if same else 'NO'}"
        )
        if kind == "corpus" and ours.states <= 10**6 and t_ratio > 1.0:
            slower.append(f"{model.name} ({t_ratio:.2f}x)")
        if model.name == "fischer.pml" and defs == [f"MAXT={2**15}"]:
            fischer_ratio = r_ratio
        if args.against is not None:
            old = run_absmc(model, defs, source=args.against.resolve(), backend=args.backend)
            if old.error:
                print(f"{'':28s} against {args.against}: error: {old.error}")
            elif old.rate > 0 and ours.rate > 0 and ours.search_s >= 0.05:
                ab.append((label, ours.rate / old.rate))
                print(
                    f"{'':28s} against {args.against}: {old.rate:9,.0f} states/s, this absmc "
                    f"{ours.rate / old.rate:6.3f}x"
                )
    print()
    beem_tmp.cleanup()
    if native_rows:
        _native_goals(native_rows)
    if ab:
        total = 1.0
        for _, r in ab:
            total *= r
        geo = total ** (1 / len(ab))
        worst = min(ab, key=lambda x: x[1])
        print(
            f"throughput against {args.against}: geometric mean {geo:.3f}x over {len(ab)} models "
            f"with >= 0.05 s of search; lowest {worst[1]:.3f}x ({worst[0]})"
        )
    if not args.no_corpus and not args.no_python:
        print(
            "goal 1, model-to-verdict time <= SPIN's on every corpus model with <= 10^6 states: "
            + ("met" if not slower else "NOT met: " + ", ".join(slower))
        )
    if not args.no_ltl:
        ltl_row()
    if fischer_ratio is not None:
        print(
            f"goal 2, states/s >= 1/3 of pan's on fischer.pml MAXT=2^15: ratio {fischer_ratio:.3f} "
            + ("(met)" if fischer_ratio >= 1 / 3 else "(NOT met)")
        )
    return 0


#: the LTL row: a block that holds (a full exploration of the product) with SPIN's count
LTL_ROW = ("ltl/train.pml", "c1")


def ltl_row() -> None:
    """states/s of absmc's nested search against ``pan -a`` on :data:`LTL_ROW`."""
    import tempfile

    from ltl_vs_spin import run_absmc_ltl, run_pan_ltl

    rel, name = LTL_ROW
    model = SHARED / rel
    if not model.is_file():
        return
    ours = run_absmc_ltl(model, name, fair=False)
    spin = run_pan_ltl(model, name, False, Path(tempfile.mkdtemp(prefix="ltlspin")))
    ratio = ours.rate / spin.rate if spin.rate else 0.0
    print(
        f"LTL {model.name} {name} (nested DFS, pan -a): states {ours.states:,} / SPIN "
        f"{spin.states:,}, states/s absmc {ours.rate:,.0f}, pan {spin.rate:,.0f} "
        f"(ratio {ratio:.3f}); verdict {ours.verdict} / SPIN {spin.verdict}"
    )


def _spin_once(model: Path, defs: list[str]) -> SpinResult:
    """SPIN on ``model``, again with a deeper stack when ``-m1000000`` cut pan's search
    (bakery2 N=2^20, lamport MAXT=2^18)."""
    spin = run_spin(model, defs)
    if spin.depth_limited:
        spin = run_spin(model, defs, depth=50_000_000)
    return spin


def _native_pair(model: Path, defs: list[str]) -> tuple[AbsmcResult, AbsmcResult]:
    """``absmc check`` with its defaults from an empty compilation cache (model to verdict),
    then ``--backend native --workers 1`` with the module it cached (one core's states/s)."""
    with tempfile.TemporaryDirectory() as cache:
        env = {"ABSMC_CACHE_DIR": cache}
        dflt = run_absmc(model, defs, env=env)
        nat = run_absmc(model, defs, backend="native", env=env, extra_args=("--workers", "1"))
    return dflt, nat


def _native_row(
    label: str,
    spin: SpinResult,
    pairs: list[tuple[AbsmcResult, AbsmcResult]],
    rows: list[tuple[str, int, float, float]],
) -> None:
    """One ``n`` line from :func:`_native_pair`'s runs: the median model-to-verdict time of
    ``absmc check`` with its defaults, the median states/s (and that run's bytes per state)
    of ``--backend native --workers 1``, against ``spin`` (the median SPIN run)."""
    bad = [r for pair in pairs for r in pair if r.error]
    if bad:
        print(f"{'n ' + label:28s} error: {bad[0].error}")
        return
    dflt = median_run([p[0] for p in pairs], lambda r: r.wall_s)
    nat = median_run([p[1] for p in pairs], lambda r: r.rate)
    pan_bps = spin.memory_mb * 2**20 / max(1, spin.states)
    t_ratio = dflt.wall_s / spin.wall_s if spin.wall_s else 0.0
    r_ratio = nat.rate / spin.rate if spin.rate else 0.0
    same = nat.states == spin.states == dflt.states and (nat.verdict == "violated") == (
        spin.errors > 0
    )
    where = "" if nat.backend == "native" else " Python (fallback)"
    print(
        f"{'n ' + label:28s} {nat.states:10,d} | {spin.wall_s:8.2f}s {dflt.wall_s:6.2f}s "
        f"{t_ratio:6.2f} | {spin.rate:10,.0f} {nat.rate:9,.0f} {r_ratio:6.3f} | "
        f"B/state pan {pan_bps:6.1f} native {nat.bytes_per_state:5.1f}  "
        f"{'yes' if same else 'NO'}{where} (default: {dflt.backend}, {dflt.workers} thr)"
    )
    if nat.backend == "native" and nat.search_s > 0:
        rows.append((label, nat.states, r_ratio, t_ratio))


def _native_goals(rows: list[tuple[str, int, float, float]]) -> None:
    big = [r for r in rows if r[1] >= 10**5]
    if big:
        med = statistics.median(r[2] for r in big)
        worst = min(big, key=lambda r: r[2])
        low = [f"{r[0]} ({r[2]:.2f}x)" for r in big if r[2] < 0.5]
        print(
            f"native goal, one-core states/s >= 1.0x pan's (median of {len(big)} models with "
            f">= 10^5 states): {med:.2f}x ({'met' if med >= 1.0 else 'NOT met'}); lowest "
            f"{worst[2]:.2f}x ({worst[0]}); none below 0.5x: "
            + ("met" if not low else "NOT met on " + ", ".join(low))
        )
    slower = [f"{r[0]} ({r[3]:.2f}x)" for r in rows if r[3] > 1.0]
    print(
        "model-to-verdict time (absmc defaults) <= SPIN's: "
        + ("met on every model" if not slower else "NOT met on " + ", ".join(slower))
    )


if __name__ == "__main__":
    sys.exit(main())
