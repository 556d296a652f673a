#!/usr/bin/env python3
"""Type-based abstraction on the DEOS-shaped examples (paper 001, Section 8).

For ``examples/gcl/deos.gcl`` (defect) and ``deos_fixed.gcl`` (corrected), and their Promela
versions ``examples/promela/deos.pml`` and ``deos_fixed.pml`` (atomic sequences, an assert),
this prints:

* exact search: states stored and time until the verdict (or until ``--max-states``);
* ``--method types --abstract period_id=signs``: abstract states, choose-free states, time
  from model to verdict (inference, operator generation, both searches, concrete replay);
* with ``--spin`` (SPIN and gcc installed): SPIN's states and time on the exported abstract
  Promela model, and the ratio absmc/SPIN of model-to-verdict time.

Usage:

    python benchmarks/typeabs_deos.py [--max-states 1000000] [--spin]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from absmc.engines.explicit import check_explicit
from absmc.engines.typeabs import TypesOptions, build_abstraction, check_types
from absmc.kernel.run.options import CheckOptions, Limits
from absmc.lang.domains import parse_bindings
from absmc.lang.loader import load_model
from absmc.lang.promela.export import to_promela

ROOT = Path(__file__).resolve().parent.parent
BIND = TypesOptions(parse_bindings(["period_id=signs"]))


def spin_time(text: str) -> tuple[int, float] | None:
    """(states, model-to-verdict seconds) of SPIN on Promela ``text``, or None."""
    if not (shutil.which("spin") and shutil.which("gcc")):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "m.pml").write_text(text)
        t0 = time.monotonic()
        subprocess.run(
            ["spin", "-o1", "-o2", "-a", "m.pml"], cwd=d, check=True, capture_output=True
        )
        subprocess.run(
            ["gcc", "-O2", "-DNOREDUCE", "-DNOCLAIM", "-DSAFETY", "-o", "pan", "pan.c"],
            cwd=d,
            check=True,
            capture_output=True,
        )
        out = subprocess.run(
            ["./pan", "-c0", "-n", "-m10000000"], cwd=d, capture_output=True, text=True
        ).stdout
        elapsed = time.monotonic() - t0
    m = re.search(r"(\d+) states, stored", out)
    return (int(m.group(1)) if m else -1), elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--max-states", type=int, default=1_000_000)
    ap.add_argument("--spin", action="store_true")
    args = ap.parse_args()
    models = [f"gcl/{n}.gcl" for n in ("deos", "deos_fixed")]
    models += [f"promela/{n}.pml" for n in ("deos", "deos_fixed")]
    for name in models:
        system = load_model(ROOT / "examples" / name)
        t0 = time.monotonic()
        exact = check_explicit(system, CheckOptions(limits=Limits(max_states=args.max_states)))
        t_exact = time.monotonic() - t0
        r = exact.results[0]
        print(f"{name}: exact search {r.verdict} after {r.stats.states:,} states, {t_exact:.2f} s")
        t0 = time.monotonic()
        result = check_types(system, CheckOptions(), BIND)
        t_types = time.monotonic() - t0
        r = result.results[0]
        cf = r.stats.extra.get("choose_free_states", 0)
        print(
            f"{name}: types {r.verdict} with {r.stats.states:,} abstract states "
            f"({cf:,} choose-free), {t_types:.2f} s model to verdict"
        )
        if args.spin:
            text = to_promela(build_abstraction(system, BIND).export_system())
            spin = spin_time(text)
            if spin is None:
                print("  spin: not installed")
            else:
                states, seconds = spin
                print(
                    f"  spin on the abstract model: {states:,} states, {seconds:.2f} s; "
                    f"absmc/SPIN time ratio {t_types / seconds:.2f}"
                )


if __name__ == "__main__":
    main()
