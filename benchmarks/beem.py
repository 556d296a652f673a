#!/usr/bin/env python3
"""The public BEEM benchmark in Promela: reading its models, and choosing the BEEM-like set.

    python benchmarks/beem.py --select               # pan on every instance; the chosen set
    python benchmarks/beem.py --select --beem-dir D  # the same from .pm files under D

BEEM (paradise.fi.muni.cz/beem) in Promela is github.com/plug-obp/beem-benchmark,
``original-benchmark/*/generated_files/*.pm`` (one file per instance, ``family.N.pm``).
:func:`materialize` reads them from a local git mirror of that repository at :data:`COMMIT`
(``/work/.mirror/plug-obp+beem-benchmark/repo``, ``git show``), or from a directory holding
the ``.pm`` files (a clone). Used by ``vs_spin.py --beem`` and ``slow_families.py``.

:data:`BEEM_SET` is the BEEM-like set of ``vs_spin.py --beem``: instances with 10^5 to ~3*10^6
states under SPIN (``spin -o1 -a``, ``gcc -O2 -DNOREDUCE``, as ``spinrun.run_spin``), the
largest such instance of each family: 35 instances of 35 families. It was chosen once, on
2026-11-24 with ``--select --timeout 12`` (pan on all 235 instances, 12 s each), and is fixed
here; :data:`SKIPPED` names the 10 families left out and why.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

MIRROR = Path("/work/.mirror/plug-obp+beem-benchmark/repo")
#: the commit of plug-obp/beem-benchmark the set was chosen at (the corpus in ../shared names
#: the same repository)
COMMIT = "4c4884c69ebdfc1e55165f6b6ec2701a6af86eb9"


def family(stem: str) -> str:
    """``"rushhour"`` for ``"rushhour.4"`` (a BEEM instance name, file stem without ``.pm``)."""
    return stem.rsplit(".", 1)[0]


def instance_key(stem: str) -> tuple[str, int]:
    """Sort key of an instance name: family, then instance number."""
    fam, _, num = stem.rpartition(".")
    return (fam, int(num) if num.isdigit() else 0)


def _mirror_listing(mirror: Path, rev: str) -> dict[str, str]:
    listing = subprocess.run(
        ["git", "--git-dir", str(mirror), "ls-tree", "-r", "--name-only", rev],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return {Path(n).stem: n for n in listing if n.endswith(".pm") and "/generated_files/" in n}


def available(beem_dir: Path | None = None, rev: str = COMMIT) -> list[str]:
    """Every BEEM instance name (``family.N``) in ``beem_dir`` (``*.pm`` below it) or, without
    it, in the mirror at ``rev``; sorted by family and number. Empty when neither exists."""
    if beem_dir is not None:
        names = {f.stem for f in beem_dir.rglob("*.pm")}
    elif MIRROR.exists():
        names = set(_mirror_listing(MIRROR, rev))
    else:
        return []
    return sorted(names, key=instance_key)


def materialize(
    names: Iterable[str], dest: Path, beem_dir: Path | None = None, rev: str = COMMIT
) -> list[Path]:
    """The ``.pm`` files of the instances ``names`` (``family.N``): paths under ``beem_dir``
    when given, else copies written into ``dest`` from the mirror at ``rev``. Instances not
    found are left out (the caller compares lengths); the order is that of ``names``."""
    wanted = list(names)
    if beem_dir is not None:
        files = {f.stem: f for f in beem_dir.rglob("*.pm")}
        return [files[n] for n in wanted if n in files]
    if not MIRROR.exists():
        return []
    listing = _mirror_listing(MIRROR, rev)
    out: list[Path] = []
    for n in wanted:
        if n not in listing:
            continue
        text = subprocess.run(
            ["git", "--git-dir", str(MIRROR), "show", f"{rev}:{listing[n]}"],
            capture_output=True,
            check=True,
        ).stdout
        (dest / f"{n}.pm").write_bytes(text)
        out.append(dest / f"{n}.pm")
    return out


def select(
    beem_dir: Path | None, timeout: float, lo: int, hi: int, per_family: int, only: str | None
) -> None:
    """Run pan on every instance (``timeout`` s of pan each) and print, per instance, SPIN's
    states or why it was left out, then the chosen set: per family, of the instances with
    ``lo`` <= states <= ``hi``, the ``per_family - 1`` smallest and the largest. ``only``: a
    regex; only the instances whose name it matches."""
    import tempfile

    from spinrun import run_spin

    names = [n for n in available(beem_dir) if only is None or re.search(only, n)]
    chosen: dict[str, list[tuple[str, int]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            paths = materialize([name], Path(tmp), beem_dir)
            res = run_spin(paths[0], [], depth=10_000_000, timeout=timeout, pan_args=("-w26",))
            if res.error is not None:
                print(f"{name:24s} - {res.error}", flush=True)
                continue
            note = " (depth-limited)" if res.depth_limited else ""
            print(f"{name:24s} {res.states:12,d} {res.pan_s:7.2f}s{note}", flush=True)
            if lo <= res.states <= hi and not res.depth_limited:
                chosen.setdefault(family(name), []).append((name, res.states))
    print("chosen:")
    for _fam, rows in sorted(chosen.items()):
        rows.sort(key=lambda r: r[1])
        picks = rows if len(rows) <= per_family else [*rows[: per_family - 1], rows[-1]]
        for name, states in picks:
            print(f'    ("{name}", {states}),')


#: the BEEM-like set: (instance, SPIN's stored states with ``spin -o1 -a``); chosen by
#: ``--select`` at :data:`COMMIT` (see the module docstring)
BEEM_SET: tuple[tuple[str, int], ...] = (
    ("adding.3", 1_894_376),
    ("anderson.1", 352_666),
    ("at.3", 1_711_622),
    ("bakery.4", 157_003),
    ("blocks.3", 695_420),
    ("bopdp.3", 764_375),
    ("bridge.1", 168_452),
    ("brp.3", 2_272_071),
    ("cambridge.4", 2_243_566),
    ("elevator2.2", 179_200),
    ("extinction.2", 808_090),
    ("firewire_link.7", 2_469_750),
    ("fischer.3", 2_896_707),
    ("frogs.3", 760_791),
    ("gear.2", 324_971),
    ("hanoi.2", 531_443),
    ("krebs.2", 738_840),
    ("lamport.5", 1_066_800),
    ("lamport_nonatomic.3", 344_676),
    ("lann.2", 125_544),
    ("leader_filters.5", 1_572_886),
    ("loyd.2", 362_882),
    ("mcs.3", 571_461),
    ("msmie.3", 134_846),
    ("needham.3", 261_839),
    ("peg_solitaire.4", 873_328),
    ("peterson.4", 1_119_560),
    ("phils.5", 531_440),
    ("rether.4", 2_726_447),
    ("rushhour.4", 327_677),
    ("schedule_world.2", 106_100),
    ("sokoban.2", 761_635),
    ("sorter.3", 779_481),
    ("szymanski.4", 2_313_863),
    ("telephony.3", 765_381),
)

#: families with no instance in the set, and why
SKIPPED: dict[str, str] = {
    "driving_phils": "5,203 and 7,575 states; the other three beyond 12 s of pan",
    "elevator": "23,969 to 87,461 states; the other three beyond 12 s of pan",
    "elevator_planning": "27,632 and 52,498 states; the third beyond 12 s of pan",
    "iprotocol": "at most 88,779 states, then 3,188,426; the other four beyond 12 s of pan",
    "pouring": "503 and 51,624 states",
    "production_cell": "spin -a rejects every instance: bad label-name done",
    "protocols": "3,078 to 18,207 states, then 3,708,573; the fifth beyond 12 s of pan",
    "public_subscribe": "1,447 states; the other four beyond 12 s of pan",
    "reader_writer": "3,368 and 8,211 states; the third beyond 12 s of pan",
    "train-gate": "spin -a rejects every instance: missing array index for 'e'",
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--beem-dir", type=Path, help="a directory holding the BEEM .pm files")
    ap.add_argument("--select", action="store_true", help="run pan on every instance")
    ap.add_argument("--timeout", type=float, default=10.0, help="pan's time per instance (s)")
    ap.add_argument("--min", type=int, default=10**5, help="fewest states of a chosen instance")
    ap.add_argument("--max", type=int, default=3 * 10**6, help="most states of a chosen one")
    ap.add_argument("--per-family", type=int, default=1, help="instances per family")
    ap.add_argument("--only", help="with --select: only the instances matching this regex")
    args = ap.parse_args()
    if not args.select:
        for name, states in BEEM_SET:
            print(f"{name:24s} {states:12,d}")
        return 0
    select(args.beem_dir, args.timeout, args.min, args.max, args.per_family, args.only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
