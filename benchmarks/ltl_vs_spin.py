#!/usr/bin/env python3
"""absmc's LTL checks against SPIN's: verdicts and product state counts side by side.

    python benchmarks/ltl_vs_spin.py            # the shared corpus (../shared/benchmarks/ltl)
    python benchmarks/ltl_vs_spin.py --run-spin # also run SPIN here (spin -a, gcc -DNOREDUCE,
                                                # pan -a [-f] -N NAME) for states/s and time

    python benchmarks/ltl_vs_spin.py --run-spin --backend native   # the product search in C
    python benchmarks/ltl_vs_spin.py --run-spin --backend python   # ... in Python
    python benchmarks/ltl_vs_spin.py --backend native --only mobile1.pml --only train.pml:c1

Model-to-verdict (``--run-spin``): absmc's whole ``absmc check MODEL -N NAME [--fairness weak]
--backend B`` as a process (start-up, parsing, C generation and compilation in a fresh cache
directory unless ``--warm``, search), wall and CPU seconds (the compiler's included), against
SPIN's ``spin -a`` + ``gcc -O2`` + ``pan -a [-f] -N NAME`` (wall and CPU, all three). The
backend column says where absmc's product search ran (``C``: the native back end, ``py``:
Python, with the fallback reason counted in the summary).

SPIN's numbers come from ``expected.csv`` (SPIN 6.5.2, see the corpus README) unless
``--run-spin``. State counts differ for ``ltl`` blocks (Spot's automata are not SPIN's); for
``violated`` rows both tools stop at their first acceptance cycle, so only ``holds`` rows are
full explorations. states/s is stored product states per second of search (absmc: the outer
nested-DFS search; pan: its own rate). ``cpu s``: CPU seconds of absmc's whole check of the
row after loading (``-N NAME``: since the claim-only change, its product search alone; before
it, a full safety search came first), against pan's CPU seconds (user + system; CPU, not wall
time, so that a loaded machine does not distort the comparison).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
CORPUS = ROOT.parent / "shared" / "benchmarks" / "ltl"


@dataclass
class LtlRow:
    verdict: str
    states: int
    search_s: float
    run_s: float = 0.0

    @property
    def rate(self) -> float:
        return self.states / self.search_s if self.search_s > 0 else 0.0


def run_absmc_ltl(model: Path, name: str | None, fair: bool) -> LtlRow:
    """absmc's verdict, outer product states and search time for one ltl block."""
    from absmc.engines import registry
    from absmc.ir.ltl import NON_PROGRESS
    from absmc.kernel.run.options import CheckOptions
    from absmc.lang.loader import load_model

    system = load_model(model)
    # a model's unnamed block is its first ltl block or never claim (not the non-progress
    # property a progress label adds)
    name = name or next(p.name for p in system.ltl if p.name != NON_PROGRESS)
    opts = CheckOptions(ltl=name, fairness="weak" if fair else "none")
    t0 = time.process_time()
    result = registry.run("explicit", system, opts)
    run_s = time.process_time() - t0
    r = next(x for x in result.results if x.property == name)
    return LtlRow(r.verdict.value, r.stats.states, r.stats.time_s, run_s)


@dataclass
class Timed:
    """One model-to-verdict run: verdict, product states, wall and CPU seconds, where the
    search ran."""

    verdict: str
    states: int
    wall_s: float
    cpu_s: float
    where: str = ""


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def absmc_to_verdict(model: Path, name: str, fair: bool, backend: str, warm: bool) -> Timed:
    """``absmc check`` of one ltl block as a process (see the module docstring)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), ABSMC_NO_TRAIL="1")
    if not warm:
        env["ABSMC_CACHE_DIR"] = tempfile.mkdtemp(prefix="absmc-cache")
    args = [sys.executable, "-m", "absmc.cli", "check", str(model), "-N", name, "--json"]
    args += ["--backend", backend, *(["--fairness", "weak"] if fair else [])]
    t0, c0 = time.monotonic(), _child_cpu()
    out = subprocess.run(args, capture_output=True, text=True, env=env).stdout
    wall, cpu = time.monotonic() - t0, _child_cpu() - c0
    r = next(x for x in json.loads(out)["results"] if x["property"] == name)
    stats = r["stats"]
    where = "C" if stats.get("backend") == "native" else "py"
    return Timed(r["verdict"], stats["states"], wall, cpu, where)


def spin_to_verdict(model: Path, name: str | None, fair: bool) -> Timed:
    """``spin -a``, ``gcc -O2``, ``pan -a [-f] -N NAME`` from scratch: wall and CPU of all."""
    wd = Path(tempfile.mkdtemp(prefix="ltlspin"))
    t0, c0 = time.monotonic(), _child_cpu()
    subprocess.run(["spin", "-a", str(model.resolve())], cwd=wd, check=True, capture_output=True)
    subprocess.run(
        ["gcc", "-O2", "-DNOREDUCE", "-DNFAIR=8", "-DMEMLIM=8000", "-o", "pan", "pan.c"],
        cwd=wd,
        check=True,
        capture_output=True,
    )
    args = ["./pan", "-a", *(["-f"] if fair else []), *(["-N", name] if name else []), "-m10000000"]
    out = subprocess.run(args, cwd=wd, check=True, capture_output=True, text=True).stdout
    wall, cpu = time.monotonic() - t0, _child_cpu() - c0
    states = int(re.search(r"(\d+) states, stored", out).group(1))  # type: ignore[union-attr]
    errors = int(re.search(r"errors: (\d+)", out).group(1))  # type: ignore[union-attr]
    return Timed("violated" if errors else "holds", states, wall, cpu, "pan")


def run_pan_ltl(model: Path, name: str | None, fair: bool, workdir: Path) -> LtlRow:
    """SPIN's verdict, stored states and pan's search time (``-a [-f] -N NAME``)."""
    if not (workdir / "pan").exists():
        subprocess.run(
            ["spin", "-a", str(model.resolve())], cwd=workdir, check=True, capture_output=True
        )
        subprocess.run(
            ["gcc", "-O2", "-DNOREDUCE", "-DNFAIR=8", "-DMEMLIM=8000", "-o", "pan", "pan.c"],
            cwd=workdir,
            check=True,
            capture_output=True,
        )
    args = ["./pan", "-a", *(["-f"] if fair else []), *(["-N", name] if name else []), "-m10000000"]
    t0 = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(args, cwd=workdir, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.monotonic() - t0
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    states = int(re.search(r"(\d+) states, stored", out).group(1))  # type: ignore[union-attr]
    errors = int(re.search(r"errors: (\d+)", out).group(1))  # type: ignore[union-attr]
    m = re.search(r"pan: elapsed time ([0-9.e+-]+) seconds", out)
    secs = float(m.group(1)) if m else wall
    return LtlRow("violated" if errors else "holds", states, secs, cpu)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--run-spin", action="store_true", help="run SPIN here (else expected.csv)")
    ap.add_argument("--backend", choices=("auto", "native", "python"), default=None)
    ap.add_argument("--warm", action="store_true", help="keep absmc's compiled-model cache")
    ap.add_argument(
        "--only", action="append", metavar="FILE[:LTL]", help="only these rows (repeatable)"
    )
    args = ap.parse_args()
    rows = list(csv.DictReader((CORPUS / "expected.csv").open()))
    if args.only:
        rows = [r for r in rows if f"{r['file']}:{r['ltl']}" in args.only or r["file"] in args.only]
    if args.backend is not None:
        return model_to_verdict(rows, args.backend, args.warm)
    print(
        f"{'model':26s} {'ltl':6s} {'fair':4s} | {'SPIN':8s} {'absmc':8s} | "
        f"{'states SPIN':>11s} {'absmc':>9s} | {'st/s absmc':>10s} {'pan':>10s} | "
        f"{'cpu s':>6s} {'pan':>6s}  same"
    )
    work: dict[str, Path] = {}
    agree = 0
    for row in rows:
        model = CORPUS / row["file"]
        fair = row["weak_fairness"] == "1"
        name = row["ltl"] or None
        try:
            ours = run_absmc_ltl(model, name, fair)
        except Exception as e:  # a front-end refusal is reported, not fatal
            print(f"{row['file']:26s} {row['ltl']:6s} {'yes' if fair else '':4s} | absmc: {e}")
            continue
        if args.run_spin:
            wd = work.setdefault(row["file"], Path(tempfile.mkdtemp(prefix="ltlspin")))
            spin = run_pan_ltl(model, name, fair, wd)
        else:
            spin = LtlRow(row["verdict"], int(row["spin_states"]), 0.0)
        same = ours.verdict == spin.verdict
        agree += same
        print(
            f"{row['file']:26s} {row['ltl']:6s} {'yes' if fair else '':4s} | "
            f"{spin.verdict:8s} {ours.verdict:8s} | {spin.states:11,d} {ours.states:9,d} | "
            f"{ours.rate:10,.0f} {spin.rate:10,.0f} | {ours.run_s:6.2f} {spin.run_s:6.2f}  "
            f"{'yes' if same else 'NO'}"
        )
    print(f"verdicts equal to SPIN's: {agree} of {len(rows)} rows")
    return 0


def model_to_verdict(rows: list[dict[str, str]], backend: str, warm: bool) -> int:
    """The model-to-verdict table (see the module docstring); SPIN runs here."""
    from absmc.ir.ltl import NON_PROGRESS
    from absmc.lang.loader import load_model

    print(
        f"{'model':26s} {'ltl':7s} {'fair':4s} | {'SPIN':8s} {'absmc':8s} {'where':5s} | "
        f"{'states SPIN':>11s} {'absmc':>9s} | {'wall absmc':>10s} {'SPIN':>6s} | "
        f"{'cpu absmc':>9s} {'SPIN':>6s}"
    )
    agree = 0
    for row in rows:
        model = CORPUS / row["file"]
        fair = row["weak_fairness"] == "1"
        try:
            system = load_model(model)
        except Exception as e:  # a front-end refusal is reported, not fatal
            print(f"{row['file']:26s} {row['ltl']:7s} | absmc: {e}")
            continue
        name = row["ltl"] or next(p.name for p in system.ltl if p.name != NON_PROGRESS)
        ours = absmc_to_verdict(model, name, fair, backend, warm)
        spin = spin_to_verdict(model, row["ltl"] or None, fair)
        agree += ours.verdict == spin.verdict
        print(
            f"{row['file']:26s} {name:7s} {'yes' if fair else '':4s} | {spin.verdict:8s} "
            f"{ours.verdict:8s} {ours.where:5s} | {spin.states:11,d} {ours.states:9,d} | "
            f"{ours.wall_s:10.2f} {spin.wall_s:6.2f} | {ours.cpu_s:9.2f} {spin.cpu_s:6.2f}"
        )
    print(f"verdicts equal to SPIN's: {agree} of {len(rows)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
