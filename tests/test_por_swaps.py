"""Two creators' runs racing for a slot (docs/reductions.md, "Two runs racing for a slot"):
differential tests over generated models, SPIN's mobile1.pml, and the models the rule must
leave alone."""

from __future__ import annotations

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

needs_cc = pytest.mark.skipif(not native_available(), reason="no C compiler")


def _verdicts(r: Result) -> dict[str, str]:
    return {p.property: str(p.verdict) for p in r.results}


def _states(r: Result) -> int:
    return r.results[0].stats.states


def _swaps(
    tmp: Path, seeds: range, backend: str = "python", order: str = "bfs"
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
    # full search's; a model that reads a stored pid (the rule off) is among them
    on, fewer, violated = _swaps(tmp_path, range(12))
    assert on >= 6 and fewer >= 2 and violated >= 2


def test_promela_differential_swaps_dfs(tmp_path: Path) -> None:
    on, fewer, _ = _swaps(tmp_path, range(100, 104), order="dfs")
    assert on >= 2 and fewer >= 1


@needs_cc
def test_promela_differential_swaps_native(tmp_path: Path) -> None:
    on, fewer, _ = _swaps(tmp_path, range(200, 202), "native")
    assert on >= 1 and fewer >= 1


@pytest.mark.slow
def test_promela_differential_swaps_many(tmp_path: Path) -> None:
    on, fewer, violated = _swaps(tmp_path, range(1000, 1300))
    assert on >= 180 and fewer >= 60 and violated >= 40
    assert _swaps(tmp_path, range(1300, 1400), order="dfs")[0] >= 60
    if native_available():
        assert _swaps(tmp_path, range(1400, 1450), "native")[0] >= 30
