#!/usr/bin/env python3
"""The fixed cost of a run: model-to-verdict of ``absmc check`` on small models (issue 25 item 6).

    PYTHONPATH=src python benchmarks/fixed_cost.py              # 5 runs of each row
    PYTHONPATH=src python benchmarks/fixed_cost.py --runs 9 --src /tmp/old/src   # another tree

Each row runs ``python -m absmc.cli check MODEL ...`` as a fresh process ``--runs`` times
(after one untimed run that fills the compile cache) and prints the median wall seconds and the
median CPU seconds (user + sys of the process and its children, from ``wait4``). Rows:

- ``anderson.2.pm`` (BEEM, 1,461 states; ``/work/shared/benchmarks/promela`` or ``--promela``)
  with ``--backend native --workers 1`` and with the default back end;
- ``benchmarks/models/philosophers6.gcl`` (1,902 states), native and default.

Python's compiled modules are cached as in an installed package (``$PYTHONDONTWRITEBYTECODE``
is dropped and ``.pyc`` files go under ``--pycache``, outside the tree): with
``PYTHONDONTWRITEBYTECODE=1`` every run compiles absmc's ~230 modules again (~0.4-0.6 s of CPU,
``--no-bytecode`` keeps it so). ``--src DIR`` puts ``DIR`` first on ``PYTHONPATH`` (to time
another checkout the same way, in the same session). Wall time depends on the machine's load;
CPU time much less so.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

# a violation's trail would be written beside the model: the corpus in ../shared is read-only
os.environ.setdefault("ABSMC_NO_TRAIL", "1")

ROOT = Path(__file__).resolve().parent.parent
PROMELA = Path("/work/shared/benchmarks/promela")


def run_once(cmd: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """One run of ``cmd``: (wall s, CPU s of the child, exit code)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, proc.returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--src", default=str(ROOT / "src"), help="the absmc source tree to time")
    ap.add_argument("--promela", default=str(PROMELA), help="folder of anderson.2.pm")
    ap.add_argument("--pycache", default="/tmp/absmc-fixed-cost-pycache")
    ap.add_argument(
        "--no-bytecode",
        action="store_true",
        help="keep $PYTHONDONTWRITEBYTECODE (every .py compiled)",
    )
    a = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=a.src)
    if not a.no_bytecode:  # as an installed package runs: compiled modules cached (.pyc)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = a.pycache
    gcl = str(ROOT / "benchmarks" / "models" / "philosophers6.gcl")
    pml = str(Path(a.promela) / "anderson.2.pm")
    rows = [
        ("anderson.2.pm native", [pml, "--backend", "native", "--workers", "1"]),
        ("anderson.2.pm default", [pml]),
        ("philosophers6.gcl native", [gcl, "--backend", "native", "--workers", "1"]),
        ("philosophers6.gcl default", [gcl]),
    ]
    print(f"src {a.src}, {a.runs} runs, load {os.getloadavg()[0]:.1f}")
    for name, args in rows:
        cmd = [sys.executable, "-m", "absmc.cli", "check", *args]
        run_once(cmd, env)  # fills the compile cache
        walls, cpus = [], []
        for _ in range(a.runs):
            wall, cpu, code = run_once(cmd, env)
            if code != 0:
                sys.exit(f"{name}: exit code {code} (expected 0, holds)")
            walls.append(wall)
            cpus.append(cpu)
        print(
            f"{name:28} wall {statistics.median(walls):.3f} s  CPU {statistics.median(cpus):.3f} s"
            f"  (wall min {min(walls):.3f}, max {max(walls):.3f})"
        )


if __name__ == "__main__":
    main()
