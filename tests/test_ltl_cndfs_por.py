"""Partial-order reduction of the multi-core LTL search (CNDFS, ``--workers N`` >= 2:
runtime_ltl.c ``l_ample_static``, runtime_cndfs.c): the static cycle proviso (Kurshan, Levin,
Minea, Peled & Yenigün, TACAS 1998) over the forward commands
(:func:`absmc.ir.dependency.forward_commands`), so that every thread's blue and red searches
see one reduced graph. The same verdicts as the unreduced one-thread search on generated
cyclic Promela models and on a model where ignoring a process would hide the violation;
lassos replayed; fewer product states where it reduces; weak fairness left unreduced,
saying so."""

from __future__ import annotations

from pathlib import Path

import pytest

from absmc.engines.explicit.check import check_explicit
from absmc.ir.dependency import forward_commands
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import PropertyResult, Verdict
from absmc.lang.loader import load_model
from absmc.native import native_available
from absmc.native.ltl import POR

from .test_ltl_por import _LOCAL_LOOP, cyclic_promela

pytestmark = [
    pytest.mark.skipif(not native_available(), reason="no C compiler"),
    pytest.mark.usefixtures("native_fast_compile"),  # outcomes, not speed
]


def _one(path: Path, name: str, workers: int, **kw: object) -> PropertyResult:
    system = load_model(path)
    opts = CheckOptions(ltl=name, **kw)  # type: ignore[arg-type]
    result = check_explicit(system, opts, "native", workers)
    return next(r for r in result.results if r.property == name)


def test_forward_commands_are_those_that_raise_the_pcs_they_set(tmp_path: Path) -> None:
    """A's loop ``l = 1; l = 2; l = 3; g = 1; l = 0`` (the first three merged into one step, as
    SPIN does) raises A's pc by rank at its first two commands; the last one goes back to the
    loop's head, whatever the locations' numbers (the head's is the highest). A rendezvous
    with a receive that loops on itself is not forward."""
    path = tmp_path / "loops.pml"
    path.write_text(_LOCAL_LOOP)
    system = load_model(path)
    fwd = dict(
        zip(
            (c.source_text for c in system.commands if c.process.startswith("A")),
            (
                f
                for c, f in zip(system.commands, forward_commands(system), strict=True)
                if c.process.startswith("A")
            ),
            strict=True,
        )
    )
    assert fwd == {"l = 1; l = 2; l = 3": True, "g = 1": True, "l = 0": False}
    path.write_text(
        "chan c = [0] of { byte };\n"
        "active proctype S() { c!1; c!2 }\n"
        "active proctype R() { byte x; do :: c?x od }\n"
    )
    system = load_model(path)
    by_text = {
        c.source_text: f for c, f in zip(system.commands, forward_commands(system), strict=True)
    }
    joint = [t for t in by_text if t is not None and "||" in t]
    assert joint and all(not by_text[t] for t in joint)  # R's do loop: back to its head


_IGNORED = """
byte g;
active proctype A() { byte l; do :: l = 1; l = 0 od }
active proctype B() { g = 1 }
ltl zero { [] (g == 0) }
"""


def test_the_static_proviso_keeps_a_step_a_local_loop_would_hide(tmp_path: Path) -> None:
    """A loops on its local ``l`` (a safe location: an ample set of its own); B's one step
    writes the atom's ``g``. Ample sets of A alone around A's loop would never let B move: the
    proviso expands fully where A's step goes back to its loop's head, B moves, the violation
    is found and its lasso replays."""
    path = tmp_path / "ignored.pml"
    path.write_text(_IGNORED)
    for workers in (2, 4):
        r = _one(path, "zero", workers)
        assert r.verdict is Verdict.VIOLATED and r.trace is not None
        assert POR in r.stats.extra["reductions"]
        assert r.stats.extra["workers"] == workers


def test_cndfs_reduces_independent_local_loops(tmp_path: Path) -> None:
    path = tmp_path / "loops.pml"
    path.write_text(_LOCAL_LOOP)
    full = _one(path, "holds", 1, reduce=False)
    red = _one(path, "holds", 2)
    assert full.verdict is red.verdict is Verdict.HOLDS
    assert POR in red.stats.extra["reductions"] and red.stats.extra["reduced_states"] > 0
    assert red.stats.states < full.stats.states
    bad = _one(path, "stays", 2)
    assert bad.verdict is Verdict.VIOLATED and bad.trace is not None
    fair = _one(path, "holds", 2, fairness="weak")
    assert fair.verdict is Verdict.HOLDS
    assert "weak fairness" in fair.stats.extra["reduction_note"]
    assert fair.stats.states == _one(path, "holds", 2, fairness="weak", reduce=False).stats.states


def _differential(tmp: Path, seeds: range) -> tuple[int, int, int]:
    """Each seed's 3 properties: CNDFS in 2 threads with reduction against the one-thread
    search without: the same verdict, a replayed lasso, at most the states when it holds.
    Returns (properties, violated, with strictly fewer states)."""
    compared = violated = fewer = 0
    for seed in seeds:
        path = tmp / f"c{seed}.pml"
        path.write_text(cyclic_promela(seed))
        for name in ("f0", "f1", "f2"):
            full = _one(path, name, 1, reduce=False)
            red = _one(path, name, 2)
            assert red.verdict is full.verdict, (seed, name)
            compared += 1
            if red.verdict is Verdict.VIOLATED:
                assert red.trace is not None and red.trace.cycle_start is not None
                violated += 1
            if red.verdict is Verdict.HOLDS:
                assert red.stats.states <= full.stats.states, (seed, name)
                if red.stats.states < full.stats.states:
                    assert red.stats.extra["reduced_states"] > 0
                    fewer += 1
    print(f"CNDFS POR differential: {compared} properties, {violated} violated, {fewer} fewer")
    return compared, violated, fewer


def test_generated_cyclic_models_same_verdicts(tmp_path: Path) -> None:
    # seeds 37, 38 and 41 reduce (of seeds 0-59, 8 reduce: the static proviso keeps every
    # state fully expanded where the ample process's step closes its loop)
    compared, violated, fewer = _differential(tmp_path, range(36, 42))
    assert compared == 18 and violated >= 2 and fewer >= 2


@pytest.mark.slow
def test_generated_cyclic_models_same_verdicts_many(tmp_path: Path) -> None:
    compared, violated, fewer = _differential(tmp_path, range(42, 242))
    assert compared == 600 and violated >= 100 and fewer >= 10
