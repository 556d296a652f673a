"""kernel/run/isolate.py: a hard wall-clock deadline for a computation that holds the GIL, and its
use by ``--method symbolic`` (an isl operation that does not return in time)."""

from __future__ import annotations

import gc
import os
import time
from pathlib import Path

import pytest

import absmc.engines.symbolic.check as symbolic_check
from absmc.engines.symbolic.check import check_symbolic
from absmc.engines.symbolic.options import SymbolicOptions
from absmc.kernel.run.isolate import run_with_deadline
from absmc.kernel.run.limits import Limits
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import Verdict
from absmc.lang.gcl.parser import parse_gcl_file
from tests.conftest import GarbageCycle

SYMBOLIC = Path(__file__).resolve().parent.parent / "examples" / "symbolic"


def _spin_forever() -> int:
    while True:  # holds the GIL between short sleeps: only a kill ends it
        time.sleep(0.01)


def test_the_value_comes_back_from_the_child() -> None:
    out = run_with_deadline(lambda: [1, 2, 3], time.monotonic() + 60, 1.0)
    assert not out.killed and not out.interrupted
    assert out.get() == [1, 2, 3]


def _collect() -> int:
    return gc.collect()


def test_the_child_leaves_its_parents_garbage_to_the_parent(tmp_path: Path) -> None:
    """The child's collections never free what it inherited (each isolated check freed the
    parent's garbage again: z3 contexts left by earlier checks took seconds)."""
    log = tmp_path / "deleted"
    gc.disable()  # the cycle is garbage, not yet collected, when the child forks
    try:
        GarbageCycle(log)
        out = run_with_deadline(_collect, time.monotonic() + 60, 1.0)
        freed_before = log.exists()
    finally:
        gc.enable()
    assert not out.killed and out.get() is not None
    assert not freed_before  # the child's full collection did not free it
    gc.collect()
    assert log.read_text().split() == [str(os.getpid())]


def test_an_exception_of_the_computation_is_raised_again() -> None:
    def fail() -> int:
        raise ValueError("from the child")

    out = run_with_deadline(fail, time.monotonic() + 60, 1.0)
    with pytest.raises(ValueError, match="from the child"):
        out.get()


def test_a_computation_past_its_deadline_is_killed() -> None:
    out = run_with_deadline(_spin_forever, time.monotonic() + 0.2, 0.2)
    assert out.killed and not out.interrupted
    assert out.get() is None


def test_without_a_deadline_it_runs_here() -> None:
    marks: list[int] = []

    def mark() -> int:
        marks.append(1)
        return 7

    out = run_with_deadline(mark, None, 1.0)
    assert out.get() == 7 and marks == [1]  # the side effect happened in this process


def test_symbolic_ends_at_the_deadline_inside_an_operation(monkeypatch: pytest.MonkeyPatch) -> None:
    """An isl operation that never returns (stood in for by a loop the quota cannot stop):
    every property ``unknown`` with the time-limit reason, and a note saying so."""

    def never_returns(*args: object) -> object:
        return _spin_forever()

    monkeypatch.setattr(symbolic_check, "_check_all", never_returns)
    system = parse_gcl_file(SYMBOLIC / "bakery2.gcl")
    options = CheckOptions(limits=Limits(timeout=0.3))
    res = check_symbolic(system, options, SymbolicOptions())
    assert res.results and {r.verdict for r in res.results} == {Verdict.UNKNOWN}
    assert all(r.reason == "time limit of 0.3 s reached" for r in res.results)
    assert any("ended an isl operation" in n for n in res.notes)


def test_symbolic_verdicts_come_back_through_the_child() -> None:
    system = parse_gcl_file(SYMBOLIC / "bakery2.gcl")
    with_limit = check_symbolic(system, CheckOptions(limits=Limits(timeout=600)), SymbolicOptions())
    without = check_symbolic(system, CheckOptions(), SymbolicOptions())
    assert [(r.property, r.verdict) for r in with_limit.results] == [
        (r.property, r.verdict) for r in without.results
    ]
    assert Verdict.HOLDS in {r.verdict for r in with_limit.results}
