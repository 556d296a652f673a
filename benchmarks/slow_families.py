#!/usr/bin/env python3
"""Regression benchmark of the BEEM families that were slow to load or to search (issue 14).

    python benchmarks/slow_families.py                  # one or two instances per family
    python benchmarks/slow_families.py --all            # every instance of the families
    python benchmarks/slow_families.py --beem DIR       # BEEM .pm files under DIR

Families: rushhour, sokoban, frogs (arrays indexed by computed expressions inside ``d_step``:
once one case per element, multiplied per access), pouring, firewire_link, rether (many
rendezvous statements: once every send paired with every receive while loading), plus
``benchmarks/models/array_dstep64.pml`` (a 64-byte array with four computed-index accesses in
one ``d_step``: once 52 MB of generated code). For each model, in the same run: absmc's load
time (parse + lowering) and compile time (code generation + Python's compiler), its search
(``--keep-going``, exact store) states and states/s, pan's states/s (``spin -o1 -a``, ``gcc -O2
-DNOREDUCE``, as ``spinrun.py``) and the ratio absmc/pan. State counts must be SPIN's (the
``same`` column).

BEEM models: the public BEEM benchmark in Promela (github.com/plug-obp/beem-benchmark,
``original-benchmark/*/generated_files/*.pm``), read by ``beem.py``: from a local git mirror of
that repository (``/work/.mirror/plug-obp+beem-benchmark/repo``, at ``beem.COMMIT``), else from
``--beem DIR`` (a clone or any directory holding the ``.pm`` files).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import beem
from spinrun import have_spin, run_spin

ROOT = Path(__file__).resolve().parent.parent
FAMILIES = ("rushhour", "sokoban", "frogs", "pouring", "firewire_link", "rether")
QUICK = (
    "rushhour.1",
    "rushhour.4",
    "sokoban.1",
    "frogs.2",
    "frogs.1",
    "pouring.1",
    "pouring.2",
    "firewire_link.1",
    "firewire_link.7",
    "rether.1",
    "rether.7",
)
OWN = (ROOT / "benchmarks" / "models" / "array_dstep64.pml",)


def _one(path: str, timeout: float) -> None:
    """Measure absmc on one model in this process and print one JSON line."""
    from absmc.codegen.python import compile_system
    from absmc.engines import registry
    from absmc.kernel.run.options import CheckOptions, Limits
    from absmc.lang.loader import load_model

    t0 = time.monotonic()
    system = load_model(path)
    t1 = time.monotonic()
    compile_system(system)
    t2 = time.monotonic()
    res = registry.run(
        "explicit", system, CheckOptions(keep_going=True, limits=Limits(timeout=timeout))
    )
    st = res.results[0].stats
    out = {
        "load_s": t1 - t0,
        "compile_s": t2 - t1,
        "states": st.states,
        "search_s": st.time_s,
        "verdict": res.verdict.value,
    }
    print(json.dumps(out))


def _models(beem_dir: Path | None, every: bool, tmp: Path) -> list[Path]:
    names = [n for n in beem.available(beem_dir) if beem.family(n) in FAMILIES]
    if not every:
        names = [n for n in names if n in QUICK]
    order = {f: i for i, f in enumerate(FAMILIES)}
    names.sort(key=lambda n: (order[beem.family(n)], beem.instance_key(n)[1]))
    found = beem.materialize(names, tmp, beem_dir)
    if not found:
        print("slow_families: no BEEM models (give --beem DIR); own models only", file=sys.stderr)
    return [*found, *OWN]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--beem", type=Path, help="a directory holding the BEEM .pm files")
    ap.add_argument("--all", action="store_true", help="every instance of the families")
    ap.add_argument("--timeout", type=float, default=300.0, help="per model and tool (s)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        _one(args.one, args.timeout)
        return 0
    if not have_spin():
        print("slow_families: spin and gcc are needed (apt-get install spin gcc)", file=sys.stderr)
        return 2
    head = (
        f"{'model':22s} {'load s':>7s} {'compile s':>9s} {'states':>10s} {'absmc st/s':>11s} "
        f"{'pan st/s':>11s} {'ratio':>6s} {'same':>4s}"
    )
    print(head)
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for m in _models(args.beem, args.all, Path(tmp)):
            proc = subprocess.run(
                [sys.executable, __file__, "--one", str(m), "--timeout", str(args.timeout)],
                capture_output=True,
                text=True,
                timeout=args.timeout * 2 + 120,
            )
            if proc.returncode != 0:
                msg = (proc.stderr.strip().splitlines() or ["failed"])[-1]
                print(f"{m.stem:22s} absmc: {msg}")
                bad += 1
                continue
            ours = json.loads(proc.stdout.strip().splitlines()[-1])
            spin = run_spin(m, [], timeout=args.timeout)
            if spin.depth_limited:  # pan's -m1000000 cut the search (rether.7)
                spin = run_spin(m, [], depth=50_000_000, timeout=args.timeout)
            rate = ours["states"] / ours["search_s"] if ours["search_s"] > 0 else 0.0
            if spin.error is not None:
                pan, ratio, same = "-", "-", "?"
            else:
                pan = f"{spin.rate:,.0f}"
                ratio = f"{rate / spin.rate:.3f}" if spin.rate > 0 else "-"
                same = "yes" if spin.states == ours["states"] else "NO"
                bad += same == "NO"
            print(
                f"{m.stem:22s} {ours['load_s']:7.2f} {ours['compile_s']:9.2f} "
                f"{ours['states']:10,d} {rate:11,.0f} {pan:>11s} {ratio:>6s} {same:>4s}"
            )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
