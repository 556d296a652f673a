"""CTL's graph building (``engines/explicit/ctl.explore``) stops at the check's shared limits:
issue 23 measured that it ignored ``--max-memory``, ``--progress`` and Ctrl-C (only
``--max-states`` and ``--timeout`` ended it)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from absmc.codegen.python import CompiledSystem, compile_system
from absmc.engines.explicit import ctl
from absmc.ir.steps import Expansion, State
from absmc.kernel.run.limits import INTERRUPTED, Limits, memory_limit
from absmc.kernel.run.options import CheckOptions, Progress
from absmc.lang.gcl.parser import parse_gcl

from .conftest import run_cli

#: a ring of 5,001 states: x counts up and wraps around; from every state x == 0 is reachable
MODEL = """
var x : 0..5000;
process P {
  x < 5000 -> x := x + 1;
  x == 5000 -> x := 0;
}
ctl back: AG(EF(x == 0));
"""

STATES = 5_001


def _sem() -> CompiledSystem:
    return compile_system(parse_gcl(MODEL, "ring.gcl"))


def test_max_memory_ends_a_ctl_check_with_unknown_and_the_memory_limit(tmp_path: Path) -> None:
    path = tmp_path / "ring.gcl"
    path.write_text(MODEL)
    r = run_cli("check", str(path), "--no-deadlock", "--max-memory", "1", "--json")
    assert r.code == 3, (r.code, r.err)
    res = {p["property"]: p for p in json.loads(r.out)["results"]}
    assert res["back"]["verdict"] == "unknown"
    assert memory_limit(1) in res["back"]["reason"], res["back"]["reason"]


def test_the_graph_stops_at_the_memory_limit() -> None:
    g = ctl.explore(_sem(), CheckOptions(limits=Limits(max_memory_mb=1)))
    assert not g.complete and g.stopped == memory_limit(1)
    assert len(g.states) < STATES


def test_progress_is_reported_while_the_graph_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    # a clock that advances 0.25 s at every reading: progress is due every fourth check (each
    # 256 expansions), whatever the machine's speed
    now = [0.0]

    def monotonic() -> float:
        now[0] += 0.25
        return now[0]

    monkeypatch.setattr(ctl, "time", SimpleNamespace(monotonic=monotonic))
    seen: list[Progress] = []
    g = ctl.explore(_sem(), CheckOptions(progress=seen.append))
    assert g.complete and len(g.states) == STATES
    assert len(seen) >= STATES // (4 * 256) - 1
    counts = [p.states for p in seen]
    assert counts == sorted(counts) and 0 < counts[0] < counts[-1] <= STATES


def test_ctrl_c_ends_the_graph_with_the_states_so_far() -> None:
    sem = _sem()
    real = sem.successors
    calls = [0]

    def successors(s: State) -> Expansion:
        calls[0] += 1
        if calls[0] == 1_000:
            raise KeyboardInterrupt
        out: Expansion = real(s)
        return out

    model = SimpleNamespace(initial=sem.initial, successors=successors)
    g = ctl.explore(model, CheckOptions())
    assert not g.complete and g.stopped == INTERRUPTED
    assert 999 <= len(g.states) < STATES
