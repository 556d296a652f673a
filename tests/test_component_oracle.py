"""The CPython oracle of the component checker (issue 27, item 3): the real program run one
thread at a time under a controlled scheduler (:mod:`absmc.component.oracle`), used (a) to
re-execute every ``violated`` trace (:mod:`absmc.component.native_replay`) and (b) as a
differential oracle on generated threaded programs (``tests/oracle_programs.py``)."""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path
from typing import Any

import pytest

from absmc.component import ComponentOptions, check_file
from absmc.component.native_replay import (
    CONFIRMED,
    REFUTED,
    program_of,
    replay_native,
)
from absmc.component.oracle import explore
from absmc.component.oracle.runtime import Program
from absmc.kernel.run.options import Limits
from absmc.kernel.run.result import Verdict

from .conftest import EXAMPLES
from .oracle_programs import FLAGGED, generate

PY = EXAMPLES / "python"
UNCAUGHT = "no-uncaught-exception"
check_mod = importlib.import_module("absmc.component.check")

RACE = """\
import threading

counter = 0
lock = threading.Lock()


def inc():
    global counter
    tmp = counter
    counter = tmp + 1


def inc_locked():
    global counter
    with lock:
        tmp = counter
        counter = tmp + 1


def run(locked):
    target = inc_locked if locked else inc
    t1 = threading.Thread(target=target)
    t2 = threading.Thread(target=target)
    t1.start()
    t2.start()
    t1.join()
    t2.join()
    assert counter == 2, counter
"""


def test_the_oracle_imports_only_the_standard_library_and_itself() -> None:
    oracle = Path(explore.__code__.co_filename).parent
    for f in sorted(oracle.glob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for n in names:
                top = n.split(".")[0]
                assert n.startswith("absmc.component.oracle") or (
                    top in sys.stdlib_module_names and top != "absmc"
                ), f"{f.name} imports {n}"


def test_oracle_finds_the_race_and_proves_the_locked_version(tmp_path: Path) -> None:
    path = tmp_path / "race.py"
    path.write_text(RACE)
    bad = explore(Program(path, "run", (False,)))
    assert bad.verdicts["assert"] == "violated"
    v, _ = bad.witness["assert"]
    assert v.line == 28 and v.thread == 0 and v.message.endswith(": 1")
    good = explore(Program(path, "run", (True,)))
    assert good.complete and good.verdicts == {
        "assert": "holds",
        "no-uncaught-exception": "holds",
        "no-deadlock": "holds",
    }
    assert good.runs > 1


LOCK_ORDER = """\
import threading

a = threading.Lock()
b = threading.Lock()


def ab():
    with a:
        with b:
            pass


def ba():
    with b:
        with a:
            pass


def run():
    t1 = threading.Thread(target=ab)
    t2 = threading.Thread(target=ba)
    t1.start()
    t2.start()
    t1.join()
    t2.join()
"""


def test_oracle_finds_the_lock_order_deadlock(tmp_path: Path) -> None:
    path = tmp_path / "order.py"
    path.write_text(LOCK_ORDER)
    ex = explore(Program(path, "run"))
    assert ex.complete and ex.verdicts["no-deadlock"] == "violated"
    v, _ = ex.witness["no-deadlock"]
    assert sorted(v.blocked) == [(0, 24), (1, 9), (2, 15)]  # main joins, each waits inside


VIOLATED_EXAMPLES: list[tuple[str, str, list[Any], list[str], dict[str, Any], str]] = [
    ("philosophers.py", "dinner", [], ["philosopher"], {}, "no-deadlock"),
    ("bank.py", "run", [], ["Account"], {"granularity": "access"}, "assert"),
    ("producer_consumer.py", "run_if", [], ["Buffer", "consumer_if"], {}, UNCAUGHT),
    ("lost_wakeup.py", "run", [], ["waiter", "signaller"], {}, "no-deadlock"),
    (
        "reader_writer.py",
        "run_unlocked",
        [],
        ["Store", "reader_unlocked", "writer_unlocked"],
        {},
        "assert",
    ),
    (
        "slot_buffer.py",
        "run_notify",
        [1, 2, 2],
        ["Slot", "producer", "consumer", "run"],
        {"order": "dfs"},
        "no-deadlock",
    ),
    (
        "hit_counter.py",
        "serve",
        [2],
        ["Stats", "handle", "serve"],
        {"granularity": "access"},
        "assert",
    ),
    ("transfer.py", "run", [], ["Account", "transfer", "_run"], {}, "no-deadlock"),
    ("cache.py", "run", [], ["Cache", "Reader", "run"], {"order": "dfs"}, "assert"),
    (
        "job_queue.py",
        "run_if",
        [1, 2, 2],
        ["JobQueue", "submitter", "worker", "run"],
        {"order": "dfs"},
        "assert",
    ),
]


@pytest.mark.parametrize(("name", "entry", "args", "component", "opts", "prop"), VIOLATED_EXAMPLES)
def test_every_violated_example_trace_fails_the_same_way_on_cpython(
    name: str, entry: str, args: list[Any], component: list[str], opts: dict[str, Any], prop: str
) -> None:
    result, _ = check_file(PY / name, entry, args, component, ComponentOptions(**opts))
    r = next(r for r in result.results if r.property == prop)
    assert r.verdict is Verdict.VIOLATED, r.reason
    assert r.extra["cpython"] == CONFIRMED, r.extra
    assert "re-executed on CPython" in r.reason


def test_an_assert_joined_to_the_step_before_it_is_confirmed(tmp_path: Path) -> None:
    """The one step ``x = n`` has the thread-local ``assert x <= 2`` joined to it: the trace's
    last source line is 2, the failing assert's line 3; the re-execution must expect line 3
    (it said "did not fail on CPython" and gave ``unknown``)."""
    path = tmp_path / "default_arg.py"
    path.write_text("def f(n=3):\n    x = n\n    assert x <= 2\n")
    result, _ = check_file(path, "f", [], ["f"], ComponentOptions())
    r = next(r for r in result.results if r.property == "assert")
    assert r.verdict is Verdict.VIOLATED, r.reason
    assert r.extra["cpython"] == CONFIRMED and ":3 (main)" in r.reason


def test_a_trace_is_refuted_on_the_fixed_program() -> None:
    """The lost-wakeup deadlock trace, forced on the fixed waiter, does not deadlock."""
    result, sem = check_file(
        PY / "lost_wakeup.py", "run", [], ["waiter", "signaller"], ComponentOptions()
    )
    dead = next(r for r in result.results if r.property == "no-deadlock")
    assert dead.trace is not None
    program = program_of(sem, "statement")
    assert isinstance(program, Program)
    fixed = Program(program.path, "run_fixed", (), {}, program.traced, "statement")
    status, detail = replay_native(fixed, "no-deadlock", dead.trace)
    assert status == REFUTED, detail


def test_a_refuted_trace_is_unknown_never_violated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        check_mod, "confirm_on_cpython", lambda *a: (REFUTED, "no CPython execution fails so")
    )
    result, _ = check_file(
        PY / "lost_wakeup.py", "run", [], ["waiter", "signaller"], ComponentOptions()
    )
    dead = next(r for r in result.results if r.property == "no-deadlock")
    assert dead.verdict is Verdict.UNKNOWN
    assert "did not fail on CPython" in dead.reason and dead.extra["cpython"] == REFUTED


# -- (b) the differential oracle ------------------------------------------------------------


def differential(
    seed: int,
    tmp: Path,
    styles: tuple[str, ...] | None = None,
    max_threads: int = 3,
    max_runs: int = 20_000,
) -> dict[str, Any]:
    """absmc (all properties, ``keep_going``, no CPython confirmation) against the oracle's
    exhaustive enumeration on generated program ``seed``: per property ``agree``,
    ``disagree`` or ``unknown`` (either side), or ``refused`` by absmc."""
    g = generate(seed, styles, max_threads)
    path = tmp / f"gen_{seed}.py"
    path.write_text(g.source)
    out: dict[str, Any] = {"seed": seed, "pattern": g.pattern, "style": g.style}
    try:
        res, _ = check_file(
            path,
            "run",
            [],
            ["*"],
            ComponentOptions(keep_going=True, confirm=False, limits=Limits(timeout=60)),
        )
    except Exception as e:  # a located refusal (Unsupported, UsageError)
        out["refused"] = f"{type(e).__name__}: {e}"
        return out
    absmc = {r.property: r.verdict.value for r in res.results}
    ex = explore(Program(path, "run"), max_runs=max_runs, timeout=120)
    out["oracle_runs"] = ex.runs
    for p, ov in ex.verdicts.items():
        a = absmc[p]
        out[p] = (
            "unknown"
            if "unknown" in (a, ov)
            else f"agree ({a})"
            if a == ov
            else f"disagree (absmc {a}, CPython {ov})"
        )
    return out


def _tally(rows: list[dict[str, Any]]) -> dict[str, int]:
    counts = {"agree": 0, "disagree": 0, "unknown": 0, "refused": 0}
    for row in rows:
        if "refused" in row:
            counts["refused"] += 1
            continue
        for p in ("assert", "no-uncaught-exception", "no-deadlock"):
            counts[row[p].split(" ")[0]] += 1
    return counts


#: programs of the fast subset: two threads created by explicit statements or a loop in run()
#: (seeds 0-7 in CI, 8-15 under -m slow)
FAST_SEEDS = range(8)


def _fast_subset(seeds: range, tmp_path: Path) -> None:
    rows = [differential(s, tmp_path, ("explicit", "loop"), 2, 2500) for s in seeds]
    counts = _tally(rows)
    print(f"differential (fast subset, {len(rows)} programs): {counts}")
    bad = [r for r in rows if any(str(v).startswith("disagree") for v in r.values())]
    assert not bad, bad
    assert counts["agree"] >= 2 * len(rows)
    agreed = [v for r in rows for v in r.values() if str(v).startswith("agree")]
    assert "agree (violated)" in agreed and "agree (holds)" in agreed
    print(f"  violated on both sides: {agreed.count('agree (violated)')}")


def test_differential_fast_subset(tmp_path: Path) -> None:
    _fast_subset(FAST_SEEDS, tmp_path)


@pytest.mark.slow
def test_differential_fast_subset_seeds_8_to_15(tmp_path: Path) -> None:
    _fast_subset(range(8, 16), tmp_path)


@pytest.mark.slow
def test_differential_200_programs(tmp_path: Path) -> None:
    rows = [differential(s, tmp_path) for s in range(1000, 1200)]
    counts = _tally(rows)
    print(f"differential (200 programs): {counts}")
    bad = [
        r
        for r in rows
        if any(str(v).startswith("disagree") for v in r.values()) and r["style"] not in FLAGGED
    ]
    assert not bad, bad
