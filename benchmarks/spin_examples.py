"""absmc's defaults against SPIN's defaults on SPIN's own examples (issue 24's benchmark).

The models are ``Examples/**.pml`` of the nimble-code/Spin repository, read from a local git
mirror (``--mirror``, default ``/work/.mirror/nimble-code+Spin/repo``; ``git archive`` of
``--rev`` into a temporary directory, so ``#include`` files come along) or from a directory of
the repository (``--dir``). Each row is :func:`spin_defaults.compare`'s: SPIN as its users run
it (``spin -a``, ``gcc -O2 -DSAFETY -DNOCLAIM``: dead-variable reset and partial-order
reduction on) against ``absmc check --keep-going`` with its defaults; for a model with ``ltl``
blocks or a ``never`` claim absmc checks only the safety properties (``--property`` for each
one that is neither), as ``-DNOCLAIM`` does. A model either tool refuses is a row saying so.

Usage::

    python benchmarks/spin_examples.py                  # every example
    python benchmarks/spin_examples.py --only 'dtp|pftp|leader|petersonN'
    python benchmarks/spin_examples.py --timeout 60 -D petersonN.pml:N=4
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from spin_defaults import compare

MIRROR = Path("/work/.mirror/nimble-code+Spin/repo")


def extract(mirror: Path, rev: str, dest: Path, folder: str = "Examples") -> Path:
    """``folder`` (``Examples/``, or ``Examples/LTL`` for ltl_vs_spin.py) of ``rev`` in the bare
    repository ``mirror``, written under ``dest``; returns that directory. Raises
    ``subprocess.CalledProcessError`` when git fails."""
    data = subprocess.run(
        ["git", "--git-dir", str(mirror), "archive", rev, folder],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(dest, filter="data")
    return dest / folder


def safety_properties(model: Path, defines: list[str]) -> tuple[str, ...]:
    """``--property NAME`` arguments for every property of ``model`` that is not an ``ltl``
    block or a ``never`` claim (``-DNOCLAIM`` leaves both out of SPIN's run; empty when the
    model has neither, or when absmc cannot read it: the row then shows absmc's own error)."""
    text = model.read_text(errors="replace")
    if "ltl" not in text and "never" not in text:
        return ()
    args = [sys.executable, "-m", "absmc.cli", "check", str(model), "--json", "--no-trail"]
    args += ["--max-states", "1", "--keep-going"]
    for d in defines:
        args += ["-D", d]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    try:
        results = json.loads(proc.stdout)["results"]
    except (ValueError, KeyError):
        return ()
    names = [r["property"] for r in results if r.get("kind") != "ltl"]
    if len(names) == len(results):
        return ()
    return tuple(x for n in names for x in ("--property", n))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--mirror", type=Path, default=MIRROR, help="bare git mirror of Spin")
    ap.add_argument("--rev", default="HEAD", help="revision of the mirror (default HEAD)")
    ap.add_argument("--dir", type=Path, help="a checkout's Examples directory instead")
    ap.add_argument("--only", metavar="REGEX", help="only the models whose path matches")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per tool and model")
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="run SPIN and absmc N times each, in turn; rows show the median-wall runs",
    )
    ap.add_argument(
        "-D",
        dest="defines",
        action="append",
        default=[],
        metavar="MODEL:NAME=VALUE",
        help="a define for one model (e.g. petersonN.pml:N=4)",
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.dir if args.dir is not None else extract(args.mirror, args.rev, Path(tmp))
        models = sorted(root.rglob("*.pml"))
        if args.only:
            models = [m for m in models if re.search(args.only, str(m.relative_to(root)))]
        per: dict[str, list[str]] = {}
        for d in args.defines:
            name, _, value = d.partition(":")
            per.setdefault(name, []).append(value)
        jobs = [("spin-examples", m, per.get(m.name, [])) for m in models]
        os.environ.setdefault("ABSMC_NO_TRAIL", "1")
        compare(jobs, timeout=args.timeout, extra_args=safety_properties, repeat=args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
