#!/usr/bin/env python3
"""The table of docs/pdr.md (issue 29): the four-process models of examples/symbolic checked
by ``symbolic``, ``pdr``, ``kind`` and ``auto`` in one run, beside the paper's Table 2 (Yavuz,
paper 002 §5, POLY verification time) where it has the instance.

Each cell is one ``absmc check MODEL --method M --timeout T --json`` in a fresh process (all
of the model's properties in one run, as a user runs it): the verdict and the property's time
as the method reports it (``pdr``/``kind``: the property's share of the run, Houdini's facts
counted in the first property that needs them; ``symbolic``: its fixpoint; ``auto``: the
deciding member in parentheses, and the run's wall time on the model's first row). Properties
the induction engines do not check (liveness) show ``skipped``. The header line gives the
machine's load average before and after, since the development machine is shared.

    python benchmarks/induction_table.py [--timeout 120] [--only bakery4] [--jobs 2]

``--jobs N`` runs up to N of the single-method runs side by side (``auto`` always runs alone:
it starts as many member processes as the machine has cores).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

# a violation's trail would be written beside the model: the corpus in ../shared is read-only
os.environ.setdefault("ABSMC_NO_TRAIL", "1")

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "examples" / "symbolic"
INSTANCES = ("ticket4", "bakery4", "airport_tic4", "airport_bk4", "chardrv4")
METHODS = ("symbolic", "pdr", "kind", "auto")

#: (model, property) -> the paper's Table 2 figure for the four-process instance
PAPER: dict[tuple[str, str], str] = {
    ("bakery4", "no-deadlock"): "19.39 s (POLY)",
    ("airport_tic4", "no-deadlock"): "98.76 s (POLY, -S row 2)",
    ("airport_bk4", "no-deadlock"): "162.70 s (POLY, -S row 2)",
}


def run(model: str, method: str, timeout: float) -> dict[str, Any]:
    """One check in a fresh process: ``{"results": {property: result}, "wall_s", "cpu_s"}``
    (``error`` instead of results when it printed no JSON)."""
    cmd = [sys.executable, "-m", "absmc.cli", "check", str(MODELS / f"{model}.gcl")]
    cmd += ["--method", method, "--timeout", str(timeout), "--json"]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    with tempfile.TemporaryFile("w+") as out:
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
        _, _, usage = os.wait4(proc.pid, 0)
        proc.returncode = 0  # reaped by wait4
        wall = time.monotonic() - t0
        out.seek(0)
        text = out.read()
    cpu = usage.ru_utime + usage.ru_stime
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return {"error": text.strip()[-200:] or "no output", "wall_s": wall, "cpu_s": cpu}
    results = {r["property"]: r for r in data.get("results", [])}
    return {"results": results, "wall_s": wall, "cpu_s": cpu}


def cell(run_: dict[str, Any], prop: str, method: str) -> str:
    """One table cell: verdict and time (``auto``: and the deciding member)."""
    if "error" in run_:
        return "error"
    r = run_["results"].get(prop)
    if r is None:
        return "skipped"
    verdict = r["verdict"]
    if method == "auto":
        by = r.get("decided_by")
        return f"{verdict} ({by})" if by else verdict
    if verdict == "unknown":
        return "unknown"
    return f"{verdict} {r['stats']['time_s']:.1f} s"


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--only", action="append", choices=INSTANCES)
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    models = args.only or list(INSTANCES)
    before = load()
    started = time.strftime("%d %b %Y %H:%M UTC", time.gmtime())
    runs: dict[tuple[str, str], dict[str, Any]] = {}
    singles = [(m, meth) for m in models for meth in METHODS if meth != "auto"]
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        futures = {key: pool.submit(run, *key, args.timeout) for key in singles}
        for key, fut in futures.items():
            runs[key] = fut.result()
            print(f"# {key[0]} {key[1]}: {runs[key]['wall_s']:.1f} s", file=sys.stderr)
    for m in models:
        runs[(m, "auto")] = run(m, "auto", args.timeout)
        print(f"# {m} auto: {runs[(m, 'auto')]['wall_s']:.1f} s", file=sys.stderr)
    print(
        f"Run {started}, --timeout {args.timeout:g}, --jobs {args.jobs}, "
        f"{os.cpu_count()} cores, load average (1/5/15 min) {before} before, {load()} after."
    )
    print()
    print("| model | property | " + " | ".join(METHODS) + " | paper Table 2 |")
    print("|---|---|" + "---|" * (len(METHODS) + 1))
    for m in models:
        props: list[str] = []
        for meth in METHODS:
            props += [p for p in runs[(m, meth)].get("results", {}) if p not in props]
        for i, p in enumerate(props):
            cells = [cell(runs[(m, meth)], p, meth) for meth in METHODS]
            if i == 0:
                cells[-1] += f", run {runs[(m, 'auto')]['wall_s']:.0f} s"
            print(f"| {m} | {p} | " + " | ".join(cells) + f" | {PAPER.get((m, p), '')} |")
    print()
    print("Wall and CPU seconds of each run (CPU: the process and its members):")
    for (m, meth), r in runs.items():
        print(f"- {m} {meth}: {r['wall_s']:.1f} s wall, {r['cpu_s']:.1f} s CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
