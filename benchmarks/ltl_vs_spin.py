#!/usr/bin/env python3
"""absmc's LTL checks against SPIN's: verdicts and product state counts side by side.

    python benchmarks/ltl_vs_spin.py            # the shared corpus (../shared/benchmarks/ltl)
    python benchmarks/ltl_vs_spin.py --run-spin # also run SPIN here (spin -a, gcc -DNOREDUCE,
                                                # pan -a [-f] -N NAME) for states/s and time

    python benchmarks/ltl_vs_spin.py --run-spin --backend native   # the product search in C
    python benchmarks/ltl_vs_spin.py --run-spin --backend python   # ... in Python
    python benchmarks/ltl_vs_spin.py --backend native --only mobile1.pml --only train.pml:c1
    python benchmarks/ltl_vs_spin.py --backend native --workers 1,2 --warm --only train.pml:c1

    # SPIN's Examples/LTL (every ltl block of every model, without and with -f), from the
    # local git mirror of nimble-code/Spin (--mirror, --rev) or a checkout's directory (--dir)
    python benchmarks/ltl_vs_spin.py --backend native --spin-examples
    python benchmarks/ltl_vs_spin.py --backend native --spin-examples --only petersonN.pml
    python benchmarks/ltl_vs_spin.py --spin-examples --only leader.pml --no-fair  # no -f rows
    # ... and SPIN's default build too (pan with partial-order reduction, no -DNOREDUCE)
    python benchmarks/ltl_vs_spin.py --spin-examples --only leader.pml --no-fair --spin-por

Model-to-verdict (``--run-spin``): absmc's whole ``absmc check MODEL -N NAME [--fairness weak]
--backend B`` as a process (start-up, parsing, C generation and compilation in a fresh cache
directory unless ``--warm``, search; Python's compiled modules cached as an installed
package has them, see :func:`absmc_env`), wall and CPU seconds (the compiler's included), against
SPIN's ``spin -a`` + ``gcc -O2`` + ``pan -a [-f] -N NAME`` (wall and CPU, all three). The
backend column says where absmc's product search ran (``C``: the native back end, ``py``:
Python, with the fallback reason counted in the summary).

With ``--spin-examples`` the rows are every ``ltl`` block of every model in SPIN's
``Examples/LTL`` (names as absmc reads them, else as the source spells them), without and with
weak fairness; SPIN always runs here, and a model SPIN itself rejects (``spin -a`` or ``gcc``
fails) is a row saying so, not a claim SPIN checks; ``refused``: pan did not search (its
default build refuses ``-f`` on models with rendezvous). ``--timeout`` ends a tool's run of a row.
The ``visited`` columns count the states of both searches: pan's "visited" (pan stores one
entry per product state ``(s, q)``, its "states, stored", and with ``-f`` marks in it the
fairness copies and the searches that visited it, so that with ``-f`` "stored" is the count
without it), absmc's outer and nested product states (each copy ``(s, q, c)`` a state of its
own); with ``-f`` these are the numbers to compare. The ``st/s`` columns are product states
per second of search (absmc: the JSON ``time_s`` of
the claim's search; pan: its ``elapsed time``), and ``big`` marks rows of at least 10^4 product
states (either tool's count).

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
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

# a violation's trail would be written beside the model: the corpus in ../shared is read-only
os.environ.setdefault("ABSMC_NO_TRAIL", "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from spin_examples import extract  # noqa: E402
from spinrun import children_cpu  # noqa: E402

CORPUS = ROOT.parent / "shared" / "benchmarks" / "ltl"
MIRROR = Path("/work/.mirror/nimble-code+Spin/repo")

#: the absmc source tree the ``absmc check`` processes run (``--src``)
SRC = ROOT / "src"
#: where their compiled Python modules are cached (``--pycache``; ``None``: ``--no-bytecode``)
PYCACHE: str | None = "/tmp/absmc-ltl-vs-spin-pycache"


def absmc_env() -> dict[str, str]:
    """The environment of an ``absmc check`` process: ``PYTHONPATH`` :data:`SRC`; Python's
    compiled modules cached as in an installed package (``$PYTHONDONTWRITEBYTECODE`` dropped,
    ``.pyc`` files under :data:`PYCACHE`), else every run compiles absmc's ~260 modules again
    (~1.2 s of CPU that an installed absmc never spends)."""
    env = dict(os.environ, PYTHONPATH=str(SRC), ABSMC_NO_TRAIL="1")
    if PYCACHE is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = PYCACHE
    return env


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
    search_s: float = 0.0
    #: every state of both searches: pan's "visited" (its (s, q) entries with each copy and
    #: search they were visited in), absmc's outer and nested product states
    visited: int = 0

    @property
    def rate(self) -> float:
        """Product states per second of search (0 when the search time is unknown)."""
        return self.states / self.search_s if self.search_s > 0 else 0.0


def absmc_to_verdict(
    model: Path,
    name: str,
    fair: bool,
    backend: str,
    warm: bool,
    timeout: float | None = None,
    workers: int | None = None,
) -> Timed:
    """``absmc check`` of one ltl block as a process (see the module docstring; ``workers``:
    its ``--workers``); a run past ``timeout`` seconds or without a JSON result is verdict
    ``timeout`` / ``error``."""
    env = absmc_env()
    if not warm:
        env["ABSMC_CACHE_DIR"] = tempfile.mkdtemp(prefix="absmc-cache")
    args = [sys.executable, "-m", "absmc.cli", "check", str(model), "-N", name, "--json"]
    args += ["--backend", backend, *(["--fairness", "weak"] if fair else [])]
    args += ["--workers", str(workers)] if workers is not None else []
    t0, c0 = time.monotonic(), children_cpu()
    try:
        out = subprocess.run(args, capture_output=True, text=True, env=env, timeout=timeout).stdout
    except subprocess.TimeoutExpired:
        return Timed("timeout", 0, time.monotonic() - t0, children_cpu() - c0, "-")
    wall, cpu = time.monotonic() - t0, children_cpu() - c0
    try:
        r = next(x for x in json.loads(out)["results"] if x["property"] == name)
    except (ValueError, KeyError, StopIteration):
        return Timed("error", 0, wall, cpu, "-")
    stats = r["stats"]
    where = "C" if stats.get("backend") == "native" else "py"
    visited = stats["states"] + stats.get("nested_states", 0)
    return Timed(r["verdict"], stats["states"], wall, cpu, where, stats.get("time_s", 0.0), visited)


def spin_to_verdict(
    model: Path, name: str | None, fair: bool, timeout: float | None = None, reduce: bool = False
) -> Timed:
    """``spin -a``, ``gcc -O2``, ``pan -a [-f] -N NAME`` from scratch: wall and CPU of all
    (``reduce``: SPIN's default build, partial-order reduction on; else ``-DNOREDUCE``).
    Verdict ``rejected`` when ``spin -a`` or ``gcc`` fails (SPIN does not check the claim),
    ``timeout`` past ``timeout`` seconds of pan."""
    wd = Path(tempfile.mkdtemp(prefix="ltlspin"))
    t0, c0 = time.monotonic(), children_cpu()
    spin = subprocess.run(
        ["spin", "-a", str(model.resolve())], cwd=wd, capture_output=True, text=True
    )
    if spin.returncode != 0 or not (wd / "pan.c").exists():
        return Timed("rejected", 0, time.monotonic() - t0, children_cpu() - c0, "pan")
    flags = [] if reduce else ["-DNOREDUCE"]
    cc = subprocess.run(
        ["gcc", "-O2", *flags, "-DNFAIR=8", "-DMEMLIM=8000", "-o", "pan", "pan.c"],
        cwd=wd,
        capture_output=True,
    )
    if cc.returncode != 0:
        return Timed("rejected", 0, time.monotonic() - t0, children_cpu() - c0, "pan")
    args = ["./pan", "-a", *(["-f"] if fair else []), *(["-N", name] if name else []), "-m10000000"]
    try:
        out = subprocess.run(args, cwd=wd, capture_output=True, text=True, timeout=timeout).stdout
    except subprocess.TimeoutExpired:
        return Timed("timeout", 0, time.monotonic() - t0, children_cpu() - c0, "pan")
    wall, cpu = time.monotonic() - t0, children_cpu() - c0
    stored = re.search(r"(\d+) states, stored", out)
    if stored is None:  # pan refused to search (its default build: POR with -f and rendezvous)
        return Timed("refused", 0, wall, cpu, "pan")
    states = int(stored.group(1))
    errors = int(re.search(r"errors: (\d+)", out).group(1))  # type: ignore[union-attr]
    m = re.search(r"pan: elapsed time ([0-9.e+-]+) seconds", out)
    secs = float(m.group(1)) if m else 0.0
    v = re.search(r"states, stored \(([0-9.e+]+) visited\)", out)
    visited = int(float(v.group(1))) if v else states
    verdict = "violated" if errors else "holds"
    return Timed(verdict, states, wall, cpu, "pan", secs, visited)


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
    c0 = children_cpu()
    out = subprocess.run(args, cwd=workdir, check=True, capture_output=True, text=True).stdout
    wall = time.monotonic() - t0
    cpu = children_cpu() - c0
    states = int(re.search(r"(\d+) states, stored", out).group(1))  # type: ignore[union-attr]
    errors = int(re.search(r"errors: (\d+)", out).group(1))  # type: ignore[union-attr]
    m = re.search(r"pan: elapsed time ([0-9.e+-]+) seconds", out)
    secs = float(m.group(1)) if m else wall
    return LtlRow("violated" if errors else "holds", states, secs, cpu)


def ltl_names(model: Path) -> list[str]:
    """The ``ltl`` blocks of ``model`` by name: as absmc reads them, else (absmc refuses the
    model) as the source spells them (an unnamed block is SPIN's ``ltl_0``...)."""
    from absmc.ir.ltl import NON_PROGRESS
    from absmc.lang.loader import load_model

    try:
        return [p.name for p in load_model(model).ltl if p.name != NON_PROGRESS]
    except Exception:  # the row then shows absmc's refusal
        text = re.sub(r"/\*.*?\*/", "", model.read_text(errors="replace"), flags=re.S)
        found = re.findall(r"^\s*ltl\s*(\w*)\s*\{", text, flags=re.M)
        return [n or f"ltl_{i}" for i, n in enumerate(found)]


def example_rows(root: Path) -> list[dict[str, str]]:
    """One row per ``ltl`` block of each model under ``root``, without and with fairness
    (the columns of ``expected.csv`` that the model-to-verdict table reads)."""
    rows = []
    for model in sorted(root.glob("*.pml")):
        names = ltl_names(model)
        for name in names:
            for fair in ("0", "1"):
                # pan takes -N only for a named block (one unnamed block is its only claim)
                ltl = "" if name.startswith("ltl_") and len(names) == 1 else name
                rows.append({"file": model.name, "ltl": ltl, "weak_fairness": fair})
    return rows


def main() -> int:
    global SRC, PYCACHE
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--run-spin", action="store_true", help="run SPIN here (else expected.csv)")
    ap.add_argument("--backend", choices=("auto", "native", "python"), default=None)
    ap.add_argument("--warm", action="store_true", help="keep absmc's compiled-model cache")
    ap.add_argument(
        "--only", action="append", metavar="FILE[:LTL]", help="only these rows (repeatable)"
    )
    ap.add_argument(
        "--spin-examples", action="store_true", help="SPIN's Examples/LTL instead of the corpus"
    )
    ap.add_argument("--no-fair", action="store_true", help="only the rows without weak fairness")
    ap.add_argument("--mirror", type=Path, default=MIRROR, help="bare git mirror of Spin")
    ap.add_argument("--rev", default="HEAD", help="revision of the mirror (default HEAD)")
    ap.add_argument("--dir", type=Path, help="a checkout's Examples/LTL directory instead")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per tool and row")
    ap.add_argument(
        "--spin-por",
        action="store_true",
        help="model-to-verdict tables: also SPIN's default build (partial-order reduction on, "
        "no -DNOREDUCE) in columns of its own",
    )
    ap.add_argument(
        "--workers",
        help="absmc's --workers, a comma-separated list: one absmc run (and line) per value, "
        "SPIN once per row (e.g. 1,2: the one-thread nested DFS against CNDFS in 2 threads)",
    )
    ap.add_argument("--src", type=Path, default=SRC, help="the absmc source tree to time")
    ap.add_argument("--pycache", default=PYCACHE, help="folder of absmc's compiled modules")
    ap.add_argument(
        "--no-bytecode",
        action="store_true",
        help="keep $PYTHONDONTWRITEBYTECODE (every absmc run compiles its modules)",
    )
    args = ap.parse_args()
    SRC, PYCACHE = args.src.resolve(), None if args.no_bytecode else args.pycache
    if PYCACHE is not None:  # compiled once here, not in the first row's timed run
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(SRC / "absmc")],
            env=absmc_env(),
            check=False,
            capture_output=True,
        )
    workers: list[int | None] = (
        [int(w) for w in args.workers.split(",")] if args.workers else [None]
    )
    if args.spin_examples or args.dir is not None:
        with tempfile.TemporaryDirectory() as tmp:
            root = (
                args.dir
                if args.dir is not None
                else extract(args.mirror, args.rev, Path(tmp), "Examples/LTL")
            )
            rows = example_rows(root)
            if args.no_fair:
                rows = [r for r in rows if r["weak_fairness"] != "1"]
            if args.only:
                rows = [
                    r
                    for r in rows
                    if f"{r['file']}:{r['ltl']}" in args.only or r["file"] in args.only
                ]
            return model_to_verdict(
                rows,
                args.backend or "native",
                args.warm,
                root,
                args.timeout,
                workers,
                args.spin_por,
            )
    rows = list(csv.DictReader((CORPUS / "expected.csv").open()))
    if args.no_fair:
        rows = [r for r in rows if r["weak_fairness"] != "1"]
    if args.only:
        rows = [r for r in rows if f"{r['file']}:{r['ltl']}" in args.only or r["file"] in args.only]
    if args.backend is not None:
        return model_to_verdict(
            rows, args.backend, args.warm, CORPUS, args.timeout, workers, args.spin_por
        )
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


def model_to_verdict(
    rows: list[dict[str, str]],
    backend: str,
    warm: bool,
    root: Path,
    timeout: float,
    workers: list[int | None] | None = None,
    spin_por: bool = False,
) -> int:
    """The model-to-verdict table of the models under ``root`` (see the module docstring);
    SPIN runs here, once per row (``-DNOREDUCE``; with ``spin_por`` once more as built by
    default, partial-order reduction on: the ``POR`` columns); absmc once per value of
    ``workers`` (column ``w``; ``-``: the option left out)."""
    print(
        f"{'model':26s} {'ltl':14s} {'fair':4s} {'w':>2s} | "
        f"{'SPIN':8s} {'absmc':8s} {'where':5s} | "
        f"{'states SPIN':>11s} {'absmc':>9s} | {'visited SPIN':>12s} {'absmc':>10s} | "
        f"{'wall absmc':>10s} {'SPIN':>6s} | "
        f"{'cpu absmc':>9s} {'SPIN':>6s} | {'st/s absmc':>10s} {'pan':>10s} big"
        + (
            f" | {'POR: SPIN':9s} {'states':>9s} {'visited':>10s} {'wall':>6s} {'cpu':>6s}"
            if spin_por
            else ""
        )
    )
    agree = checked = 0
    for row in rows:
        model = root / row["file"]
        fair = row["weak_fairness"] == "1"
        names = ltl_names(model)
        name = row["ltl"] or (names[0] if names else "ltl_0")
        runs = [
            (w, absmc_to_verdict(model, name, fair, backend, warm, timeout, w))
            for w in (workers or [None])
        ]
        spin = spin_to_verdict(model, row["ltl"] or None, fair, timeout)
        por = spin_to_verdict(model, row["ltl"] or None, fair, timeout, True) if spin_por else None
        for w, ours in runs:
            if spin.verdict in ("holds", "violated"):
                checked += 1
                agree += ours.verdict == spin.verdict
            big = "*" if max(ours.states, spin.states) >= 10**4 else ""
            print(
                f"{row['file']:26s} {name:14s} {'yes' if fair else '':4s} "
                f"{'-' if w is None else str(w):>2s} | {spin.verdict:8s} "
                f"{ours.verdict:8s} {ours.where:5s} | {spin.states:11,d} {ours.states:9,d} | "
                f"{spin.visited:12,d} {ours.visited:10,d} | "
                f"{ours.wall_s:10.2f} {spin.wall_s:6.2f} | {ours.cpu_s:9.2f} {spin.cpu_s:6.2f} | "
                f"{ours.rate:10,.0f} {spin.rate:10,.0f} {big:3s}"
                + (
                    f" | {por.verdict:9s} {por.states:9,d} {por.visited:10,d} "
                    f"{por.wall_s:6.2f} {por.cpu_s:6.2f}"
                    if por is not None
                    else ""
                ),
                flush=True,
            )
    print(f"verdicts equal to SPIN's: {agree} of the {checked} runs SPIN checks ({len(rows)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
