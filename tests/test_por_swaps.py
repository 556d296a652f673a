"""Two creators' runs racing for a slot (docs/reductions.md, "Two runs racing for a slot"):
differential tests over generated models, SPIN's mobile1.pml, and the models the rule must
leave alone."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import pytest

from absmc.engines.explicit.check import check_explicit
from absmc.engines.registry import slots_exhausted
from absmc.ir.span import ModelError
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import Result
from absmc.lang.loader import load_model
from absmc.native import native_available

from .promela_gen import random_promela_swaps

# outcomes, not speed: the native back end compiles at -O0 (the semantics do not depend on it)
pytestmark = pytest.mark.usefixtures("native_fast_compile")

needs_cc = pytest.mark.skipif(not native_available(), reason="no C compiler")


def _verdicts(r: Result) -> dict[str, str]:
    return {p.property: str(p.verdict) for p in r.results}


def _states(r: Result) -> int:
    return r.results[0].stats.states


def _swaps(
    tmp: Path, seeds: Iterable[int], backend: str = "python", order: str = "bfs"
) -> tuple[int, int, int]:
    """random_promela_swaps over ``seeds``: the verdicts of the reduced search equal the full
    search's and the reduced search's without the rule (the same System with
    ``swappable`` empty), the reduced search stores no more states than the full one, and its
    violations have replayed traces. A search that meets absmc's own process-slot limit
    (``unknown``) is no test. Returns (models the rule applies to, models it reduced
    further, models with a violation)."""
    on = fewer = violated = 0
    for seed in seeds:
        p = tmp / f"s{seed}.pml"
        p.write_text(random_promela_swaps(seed))
        opts = CheckOptions(keep_going=True, reduce=True, order=order)  # type: ignore[arg-type]
        runs: list[Result] = []
        for extra in (0, 3):  # slots open to every proctype: creators in other orders
            try:
                system = load_model(str(p), extra_slots=extra)
            except ModelError:  # a generated model the front end refuses is no test
                runs = []
                break
            runs = [
                slots_exhausted(check_explicit(s, o, backend))  # type: ignore[arg-type]
                for s, o in (
                    (system, replace(opts, reduce=False)),
                    (system, opts),
                    (system.with_(swappable=frozenset()), opts),
                )
            ]
            if all(str(r.verdict) != "unknown" for r in runs):
                break
        if not runs or any(str(r.verdict) == "unknown" for r in runs):
            continue
        full, red, off = runs
        assert _verdicts(red) == _verdicts(full) == _verdicts(off), p.read_text()
        assert _states(red) <= _states(full), p.read_text()
        for x in red.results:
            if str(x.verdict) == "violated":
                assert x.trace is not None  # replayed on the concrete semantics
                violated += 1
        on += bool(system.swappable)
        fewer += _states(red) < _states(off)
    return on, fewer, violated


def test_promela_differential_swaps(tmp_path: Path) -> None:
    # two creators' runs of workers that never end (random_promela_swaps): verdicts equal the
    # full search's; a model that reads a stored pid (the rule off) is among them. CI runs
    # four seeds of 0-11 (the rule applied and reduced further: 0, 3, 6; violations: 6, 10,
    # which reads a stored pid); -m slow runs 300 more
    on, fewer, violated = _swaps(tmp_path, (0, 3, 6, 10))
    assert on >= 3 and fewer >= 2 and violated >= 2


def test_promela_differential_swaps_dfs(tmp_path: Path) -> None:
    on, fewer, _ = _swaps(tmp_path, (101, 102), order="dfs")  # of 100-103: reduced, violated
    assert on >= 2 and fewer >= 1


@needs_cc
def test_promela_differential_swaps_native(tmp_path: Path) -> None:
    on, fewer, _ = _swaps(tmp_path, (201,), "native")  # of 200-201: the one the rule reduces
    assert on >= 1 and fewer >= 1


@pytest.mark.slow
def test_promela_differential_swaps_many(tmp_path: Path) -> None:
    on, fewer, violated = _swaps(tmp_path, range(1000, 1300))
    assert on >= 180 and fewer >= 60 and violated >= 40
    assert _swaps(tmp_path, range(1300, 1400), order="dfs")[0] >= 60
    if native_available():
        assert _swaps(tmp_path, range(1400, 1450), "native")[0] >= 30


def _full_and_reduced(p: Path, extra: int = 0) -> tuple[Result, Result, Result]:
    """The full search, the reduced one and the reduced one without the rule; ``extra``:
    slots open to every proctype (the creators' other orders may need them)."""
    system = load_model(str(p), extra_slots=extra)
    opts = CheckOptions(keep_going=True, reduce=True)
    return (
        check_explicit(system, replace(opts, reduce=False), "python"),
        check_explicit(system, opts, "python"),
        check_explicit(system.with_(swappable=frozenset()), opts, "python"),
    )


def test_a_stored_pid_that_is_read_keeps_the_runs_apart(tmp_path: Path) -> None:
    # A's runs and B's race for slots 3 to 5; B's location is not safe (it writes g, which
    # init reads), so with A's runs taken first B's worker would always get pid 5 and the
    # assertion (wid is 3 when B runs first) would never fail. wid is read: no swappable
    # proctype, the rule is off, and the reduced search finds the violation.
    p = tmp_path / "m.pml"
    p.write_text(
        "byte g, wid;\nproctype W() { do :: skip od }\n"
        "proctype A() { atomic { run W(); run W() }; do :: skip od }\n"
        "proctype B() { atomic { g = 1; wid = run W() }; do :: skip od }\n"
        "init { atomic { run A(); run B() }; g == 1; assert(wid != 3) }\n"
    )
    assert not load_model(str(p)).swappable
    full, red, _ = _full_and_reduced(p, 3)
    assert _verdicts(red) == _verdicts(full)
    bad = [x for x in red.results if str(x.verdict) == "violated"]
    assert [x.kind for x in bad] == ["assert"] and bad[0].trace is not None


def test_workers_that_read_their_pid_do_not_trade_slots(tmp_path: Path) -> None:
    # the pid-3 model's kind of observation (tests/test_promela_slots.py) in a worker that
    # never ends: U reads _pid, so U is not swappable, and A's runs, which start a U, stay
    # dependent on B's: the assertion fails when B's worker runs first (U gets pid 4)
    p = tmp_path / "m.pml"
    p.write_text(
        "byte g;\nproctype W() { do :: skip od }\n"
        "proctype U() { do :: assert(_pid != 4) od }\n"
        "proctype A() { atomic { run W(); run U() }; do :: skip od }\n"
        "proctype B() { atomic { g = 1; run W() }; do :: skip od }\n"
        "init { atomic { run A(); run B() }; g == 1 }\n"
    )
    system = load_model(str(p))
    assert {v for _, v in system.swappable} and not any(
        x.startswith("U") for x, _ in system.swappable
    )
    full, red, _ = _full_and_reduced(p, 3)
    assert _verdicts(red) == _verdicts(full)
    assert [x.kind for x in red.results if str(x.verdict) == "violated"] == ["assert"]


def test_runs_of_workers_that_never_end_go_in_one_order(tmp_path: Path) -> None:
    # SPIN's mobile1.pml in small: P and Q each start two workers that never end (Q storing
    # one's pid in a variable nothing reads), and P's first worker, C, starts two more; C's
    # runs race with Q's for slots. With the rule C's location is safe (its runs of workers
    # that never end go first, up to renumbering the slots) and the search stores fewer
    # states, with the same verdicts as the full search.
    p = tmp_path / "m.pml"
    p.write_text(
        "byte g, a_id;\nchan c = [1] of { byte };\n"
        "proctype H() { do :: c!1 :: atomic { g < 2 -> g++ } od }\n"
        "proctype K() { byte x; do :: c?x :: atomic { g > 0 -> g-- } od }\n"
        "proctype C() { atomic { run H(); run K() } }\n"
        "proctype P() { atomic { run C(); run K() } }\n"
        "proctype Q() { atomic { a_id = run H(); run K() } }\n"
        "init { atomic { run P(); run Q() } }\n"
    )
    system = load_model(str(p))
    assert system.swappable
    full, red, off = _full_and_reduced(p)
    assert _verdicts(red) == _verdicts(full) == _verdicts(off)
    assert (_states(red), _states(off), _states(full)) == (147, 183, 183)
