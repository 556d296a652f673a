#!/usr/bin/env python3
"""Our rows of the paper's Table 2 (Yavuz, paper 002 §5) beside the paper's numbers.

Each row runs ``absmc check MODEL --method symbolic --property P [options]`` in a fresh
process (so the peak memory is the row's own) with a per-row time limit and prints one
Markdown table: instance, property, options, verdict, verification time (the fixpoint and
witness time the method reports, in s), peak memory (MiB, the whole Python process with
islpy), CEGAAR rounds (ABS/APP), the CEGAAR column (abstraction and fixpoint seconds summed
over the rounds, P? of the last predicate set: Yes when some unbounded integer stays concrete,
and whether the proof was on the abstraction or by the concrete fallback) and the paper's
POLY/CEGAAR figures where its Table 2 gives them
(ALV on a 2016 Xeon; memory in MB). CPU (s) is the child process's CPU time, start-up and
imports included (about 1 s): on a loaded machine it is steadier than the wall time. Usage:

    python benchmarks/symbolic_paper.py [--timeout 120] [--only NAME] [--table 2|3|all]

Table 3's part prints each instance of the paper's Table 3 twice, without predicates (POLY)
and with a predicate set (PPA, ``--predicate`` without ``--refine``), with P? of the set and
the paper's POLY and PPA verification times beside ours.
    python benchmarks/symbolic_paper.py --best-of 9     # ticket2 with and without predicates
    python benchmarks/symbolic_paper.py --best-of 9 --table 3 --only bk2-S  # in-process

``--composites`` runs every row without ``--refine`` (Table 2's POLY rows, and Table 3's
POLY and PPA rows) with the split representation (``--composite split``: one isl set per
control valuation) and ALV's (``--composite bdd``: BDDs of the valuations beside polyhedra),
one right after the other in fresh processes:
    python benchmarks/symbolic_paper.py --composites --timeout 120 [--only NAME]

``--best-of N`` instead times ticket2's two properties with and without the predicates
``a1 <= s, a2 <= s`` in this process: the symbolic engine's CPU time (``time.process_time``
around ``check_symbolic``, the property and ``no-model-error``), best and median of N runs
taken in turn (so both configurations see the same load).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "examples" / "symbolic"

#: (instance, model, property, options, the paper's figures as quoted in its Table 2)
ROWS: list[tuple[str, str, str, tuple[str, ...], str]] = [
    ("ticket2-S", "ticket2.gcl", "mutex", (), "POLY 1.70 MB, 0.06 s"),
    (
        "ticket2-S",
        "ticket2.gcl",
        "mutex",
        ("--predicate", "a1 <= s", "--predicate", "a2 <= s"),
        "POLY, both flags: 1.30 MB, 0.01 s",
    ),
    ("ticket2-L", "ticket2.gcl", "progress", (), "1.42 MB, 0.02 s"),
    (
        "ticket2-L",
        "ticket2.gcl",
        "progress",
        ("--predicate", "a1 <= s", "--predicate", "a2 <= s"),
        "-",
    ),
    (
        "ticket2-L",
        "ticket2.gcl",
        "progress",
        (
            *("--predicate", "a1 <= s", "--predicate", "a2 <= s"),
            *("--predicate", "a1 < t", "--predicate", "a2 < t"),
        ),
        "-",
    ),
    ("bakery2-S", "bakery2.gcl", "mutex", (), "POLY 1.43 MB, 0.01 s"),
    ("bakery2-S", "bakery2.gcl", "mutex", ("--refine",), "CEGAAR 12.59 MB, 0.04+0.20 s, 4 ABS"),
    ("bakery2-L", "bakery2.gcl", "progress", (), "POLY 1.76 MB, 0.06 s"),
    ("bakery2-L", "bakery2.gcl", "progress", ("--refine",), "CEGAAR 4.10 MB, 0.03+0.01 s, 1 ABS"),
    ("ticket2-S", "ticket2.gcl", "mutex", ("--refine",), "-"),
    ("ticket2-L", "ticket2.gcl", "progress", ("--refine",), "-"),
    ("ticket2-D", "ticket2.gcl", "no-deadlock", ("--refine",), "-"),
    ("ticket3-S", "ticket3.gcl", "mutex", (), "-"),
    ("ticket3-L", "ticket3.gcl", "progress", (), "-"),
    ("ticket4-S", "ticket4.gcl", "mutex", (), "-"),
    ("ticket4-L", "ticket4.gcl", "progress", (), "-"),
    ("bakery3-S", "bakery3.gcl", "mutex", (), "-"),
    ("bakery3-L", "bakery3.gcl", "progress", (), "-"),
    ("bakery4-S", "bakery4.gcl", "mutex", (), "POLY 25.69 MB, 19.39 s"),
    ("airportSM-tic2-S", "airport_tic2.gcl", "taxiway", (), "POLY 5.4 MB, 0.58 s"),
    ("airportSM-tic2-L", "airport_tic2.gcl", "landing", (), "POLY 9.79 MB, 1.18 s"),
    ("airportSM-bk2-S", "airport_bk2.gcl", "taxiway", (), "POLY 6.47 MB, 1.45 s"),
    (
        "airportSM-bk2-S",
        "airport_bk2.gcl",
        "taxiway",
        ("--refine", "--max-rounds", "8"),
        "CEGAAR 110.40 MB, 9.69+2.59 s, 7 ABS",
    ),
    ("airportSM-bk2-L", "airport_bk2.gcl", "landing", (), "POLY 10.23 MB, 1.61 s"),
    (
        "airportSM-bk2-L",
        "airport_bk2.gcl",
        "landing",
        ("--refine",),
        "CEGAAR 596.86 MB, 13.26+4.78 s, 3 ABS",
    ),
    (
        "airportSM-tic2-S",
        "airport_tic2.gcl",
        "taxiway",
        ("--refine",),
        "CEGAAR 154.59 MB, 42.19+2.75 s, 7 ABS",
    ),
    (
        "airportSM-tic2-L",
        "airport_tic2.gcl",
        "landing",
        ("--refine",),
        "CEGAAR 45.32 MB, 15.71+0.01 s, 1 APP",
    ),
    ("chardrv2-S", "chardrv2.gcl", "exclusive", (), "POLY 1.49 MB, 14.40 s"),
    ("chardrv2-S", "chardrv2.gcl", "exclusive", ("--refine",), "-"),
]


_W4 = tuple(f"w{i} <= ts" for i in range(1, 5))
_BK = ("b2 == 0", "b1 < b2", "b1 == 0", "b2 < b1", "b1 >= 0")
_A = ("a2 == 0", "a1 < a2", "a1 == 0", "a2 < a1", "a1 >= 0")
_A4 = tuple(f"a{i} <= s" for i in range(1, 5))

#: Table 3 (partial predicate abstraction without refinement): (instance, model, property,
#: predicates, the paper's POLY VT, the paper's PPA VT; "-": no figure in the paper). Our
#: predicate sets: CEGAAR's final sets where it finds one (bakery2, airportSM-bk2), else the
#: paper's kind (``ai <= s``: the ticket compared with the server) and the driver's semaphores.
TABLE3: list[tuple[str, str, str, tuple[str, ...], str, str]] = [
    ("bakery2-S", "bakery2.gcl", "mutex", _A, "0.01", "0.06"),
    ("bakery2-L", "bakery2.gcl", "progress", _A, "0.06", "0.03"),
    ("airportSM-bk2-S", "airport_bk2.gcl", "taxiway", _BK, "1.45", "0.49"),
    ("airportSM-bk2-L", "airport_bk2.gcl", "landing", _BK, "1.61", "2.27"),
    ("airportSM-tic2-S", "airport_tic2.gcl", "taxiway", _W4[:2], "0.58", "2.32"),
    ("airportSM-tic2-L", "airport_tic2.gcl", "landing", ("r1 <= rs", "r2 <= rs"), "1.18", "2.77"),
    ("airportSM-tic4-S", "airport_tic4.gcl", "taxiway", _W4, "199.49", "3.02"),
    ("airportSM-tic4-S (5 counters)", "airport_exits_tic4.gcl", "runway", _A4, "199.49", "3.02"),
    ("chardrv2-S", "chardrv2.gcl", "exclusive", ("lock == 1", "excl == 1"), "14.40", "1.94"),
    ("chardrv4-S", "chardrv4.gcl", "exclusive", ("lock == 1", "excl == 1"), "-", "20.23"),
]


def p_column(model: str, preds: tuple[str, ...]) -> str:
    """Table 2's P? for a predicate set: ``Yes`` when some unbounded integer of ``model``
    stays concrete (a partial abstraction), ``No`` when the set abstracts every one (the
    rule of :func:`absmc.engines.symbolic.cegaar.abstracted_names`)."""
    sys.path.insert(0, str(ROOT / "src"))
    from absmc.cli.common import add_predicates, load
    from absmc.engines.symbolic.cegaar import abstracted_names

    system = add_predicates(load(str(MODELS / model)), preds)
    names = abstracted_names(system, tuple(system.predicates))
    ints = [v.name for v in system.data_vars if not v.is_control]
    return "Yes" if any(x not in names for x in ints) else "No"


def table3(timeout: float, only: str | None) -> None:
    """Table 3's rows: each instance without predicates (POLY) and with them (PPA), in fresh
    processes one right after the other (so both see about the same load)."""
    print(
        "| instance | property | predicates | POLY verdict | POLY VT / CPU (s) | PPA verdict "
        "| PPA VT / CPU (s) | P? | paper POLY / PPA VT (s) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for inst, model, prop, preds, p_poly, p_ppa in TABLE3:
        if only and only not in inst:
            continue
        poly = run_row(model, prop, (), timeout)
        opts = tuple(x for p in preds for x in ("--predicate", p))
        ppa = run_row(model, prop, opts, timeout)
        shown = ", ".join(f"`{p}`" for p in preds)
        print(
            f"| {inst} | {prop} | {shown} | {poly['verdict']} "
            f"| {float(str(poly['time'])):.2f} / {float(str(poly['cpu'])):.2f} "
            f"| {ppa['verdict']} | {float(str(ppa['time'])):.2f} / {float(str(ppa['cpu'])):.2f} "
            f"| {p_column(model, preds)} | {p_poly} / {p_ppa} |",
            flush=True,
        )


def run_row(model: str, prop: str, opts: tuple[str, ...], timeout: float) -> dict[str, object]:
    """One row: verdict, reported time, peak memory, rounds."""
    cmd = [
        sys.executable,
        "-m",
        "absmc.cli",
        "check",
        str(MODELS / model),
        "--method",
        "symbolic",
        "--property",
        prop,
        "--json",
        "--timeout",
        str(timeout),
        *opts,
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 60).stdout
        data = json.loads(out)
    except (subprocess.TimeoutExpired, json.JSONDecodeError):
        return {
            "verdict": "timeout",
            "time": timeout,
            "cpu": 0.0,
            "mem": 0.0,
            "rounds": "",
            "cegaar": "",
        }
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # the child's CPU time (user + system) includes starting Python and the imports (~1 s)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    res = [r for r in data["results"] if r["property"] in (prop, "no-model-error")]
    mine = next(r for r in res if r["property"] == prop)
    rounds = mine.get("rounds")
    kinds = ""
    cegaar = ""
    if rounds:
        refs = [r["refinement"] for r in rounds[1:]]
        counts = [f"{refs.count(k)} {k}" for k in ("ABS", "APP") if k in refs]
        kinds = f"{len(rounds)} ({', '.join(counts) or 'seed'})"
        # Table 2's CEGAAR columns: abstraction and fixpoint seconds over the rounds, P? of
        # the last round's predicate set, and how the property was proved
        abs_s = sum(r["abstract_s"] for r in rounds)
        fix_s = sum(r["fixpoint_s"] for r in rounds)
        how = mine.get("proved_by", "-")
        cegaar = f"abs {abs_s:.2f} + fix {fix_s:.2f} s, P? {rounds[-1].get('P?', '-')}, {how}"
    return {
        "verdict": mine["verdict"],
        "time": sum(r["stats"]["time_s"] for r in res),
        "cpu": cpu,
        "mem": max(r["stats"]["peak_mb"] for r in res),
        "rounds": kinds,
        "cegaar": cegaar,
    }


def composites(timeout: float, only: str | None) -> None:
    """Each row without ``--refine`` with ``--composite split`` and ``--composite bdd``."""
    rows: list[tuple[str, str, str, tuple[str, ...]]] = [
        (inst, model, prop, opts) for inst, model, prop, opts, _ in ROWS if "--refine" not in opts
    ]
    for inst, model, prop, preds, _, _ in TABLE3:
        rows.append((inst, model, prop, ()))
        rows.append((inst, model, prop, tuple(x for p in preds for x in ("--predicate", p))))
    seen: set[tuple[str, str, tuple[str, ...]]] = set()
    print(
        "| instance | property | options | split verdict | split VT / CPU (s) | bdd verdict "
        "| bdd VT / CPU (s) |"
    )
    print("|---|---|---|---|---|---|---|")
    for inst, model, prop, opts in rows:
        if (only and only not in inst) or (model, prop, opts) in seen:
            continue
        seen.add((model, prop, opts))
        cells = []
        for rep in ("split", "bdd"):
            r = run_row(model, prop, (*opts, "--composite", rep), timeout)
            cells.append(
                f"{r['verdict']} | {float(str(r['time'])):.2f} / {float(str(r['cpu'])):.2f}"
            )
        shown = ", ".join(f"`{o}`" for o in opts if o != "--predicate") or "-"
        print(f"| {inst} | {prop} | {shown} | {' | '.join(cells)} |", flush=True)


def best_of(n: int) -> None:
    """ticket2's engine CPU time with and without predicates, best and median of ``n``."""
    import time

    sys.path.insert(0, str(ROOT / "src"))
    from absmc.cli.common import add_predicates, load
    from absmc.engines.symbolic.check import SymbolicOptions, check_symbolic
    from absmc.kernel.run.options import CheckOptions

    base = load(str(MODELS / "ticket2.gcl"))
    configs = {
        "-": base,
        "a1 <= s, a2 <= s": add_predicates(base, ("a1 <= s", "a2 <= s")),
        "+ a1 < t, a2 < t": add_predicates(base, ("a1 <= s", "a2 <= s", "a1 < t", "a2 < t")),
    }
    times: dict[tuple[str, str], list[float]] = {}
    verdicts: dict[tuple[str, str], str] = {}
    for _ in range(n):
        for prop in ("mutex", "progress"):
            for label, system in configs.items():
                t0 = time.process_time()
                res = check_symbolic(system, CheckOptions(properties=[prop]), SymbolicOptions())
                times.setdefault((prop, label), []).append(time.process_time() - t0)
                mine = next(r for r in res.results if r.property == prop)
                how = "abstract" if "predicate abstraction" in mine.reason else "concrete"
                verdicts[(prop, label)] = f"{mine.verdict.value} ({how})"
    print("| property | predicates | verdict | best (ms) | median (ms) |")
    print("|---|---|---|---|---|")
    for (prop, label), ts in times.items():
        ts.sort()
        best, median = ts[0] * 1000, ts[len(ts) // 2] * 1000
        print(f"| {prop} | {label} | {verdicts[(prop, label)]} | {best:.1f} | {median:.1f} |")


def best_of_table3(n: int, only: str | None) -> None:
    """Table 3's instances (those whose name contains ``only``): the symbolic engine's CPU
    time (``time.process_time`` around ``check_symbolic``, the property and
    ``no-model-error``) without predicates (POLY) and with them (PPA), in this process, taken
    in turn ``n`` times (so both see the same load); best and median."""
    import time

    sys.path.insert(0, str(ROOT / "src"))
    from absmc.cli.common import add_predicates, load
    from absmc.engines.symbolic.check import SymbolicOptions, check_symbolic
    from absmc.kernel.run.options import CheckOptions

    print(
        "| instance | property | POLY verdict | POLY best / median (s) | PPA verdict "
        "| PPA best / median (s) |"
    )
    print("|---|---|---|---|---|---|")
    for inst, model, prop, preds, _, _ in TABLE3:
        if only and only not in inst:
            continue
        base = load(str(MODELS / model))
        configs = {"POLY": base, "PPA": add_predicates(base, preds)}
        times: dict[str, list[float]] = {k: [] for k in configs}
        verdicts: dict[str, str] = {}
        for _ in range(n):
            for label, system in configs.items():
                t0 = time.process_time()
                res = check_symbolic(system, CheckOptions(properties=[prop]), SymbolicOptions())
                times[label].append(time.process_time() - t0)
                mine = next(r for r in res.results if r.property == prop)
                verdicts[label] = mine.verdict.value
        cells = []
        for label in configs:
            ts = sorted(times[label])
            cells.append(f"{verdicts[label]} | {ts[0]:.3f} / {ts[len(ts) // 2]:.3f}")
        print(f"| {inst} | {prop} | {' | '.join(cells)} |", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--only", default=None, help="only rows whose instance contains this")
    ap.add_argument(
        "--best-of",
        type=int,
        default=0,
        help="time ticket2 (with --table 3: Table 3's instances) in this process",
    )
    ap.add_argument(
        "--table",
        choices=("2", "3", "all"),
        default="all",
        help="Table 2 (POLY and CEGAAR rows), Table 3 (POLY beside PPA) or both",
    )
    ap.add_argument(
        "--composites",
        action="store_true",
        help="every row without --refine with --composite split and --composite bdd",
    )
    args = ap.parse_args()
    if args.composites:
        composites(args.timeout, args.only)
        return 0
    if args.best_of and args.table == "3":
        best_of_table3(args.best_of, args.only)
        return 0
    if args.best_of:
        best_of(args.best_of)
        return 0
    if args.table in ("3", "all"):
        print("Table 3: partial predicate abstraction (PPA) without refinement beside POLY\n")
        table3(args.timeout, args.only)
        if args.table == "3":
            return 0
        print("\nTable 2: POLY and CEGAAR\n")
    print(
        "| instance | property | options | verdict | VT (s) | CPU (s) | mem (MiB) | rounds "
        "| CEGAAR | paper |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for inst, model, prop, opts, paper in ROWS:
        if args.only and args.only not in inst:
            continue
        r = run_row(model, prop, opts, args.timeout)
        shown = " ".join(f"`{o}`" if o.startswith("--") else o for o in opts) or "-"
        print(
            f"| {inst} | {prop} | {shown} | {r['verdict']} | {float(str(r['time'])):.2f} | "
            f"{float(str(r['cpu'])):.2f} | "
            f"{float(str(r['mem'])):.0f} | {r['rounds'] or '-'} | {r['cegaar'] or '-'} "
            f"| {paper} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
