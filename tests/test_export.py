"""`absmc export --to promela`: SPIN accepts the output and finds the same reachable states."""

from __future__ import annotations

from pathlib import Path

import pytest

from absmc.engines.explicit import search
from absmc.ir.compile import compile_system
from absmc.lang.gcl import parse_gcl, parse_gcl_file
from absmc.lang.promela.export import to_promela

from .conftest import GCL_EXAMPLES, run_cli
from .spin import run_spin

FINITE = ["peterson", "philosophers", "nonterminating"]


@pytest.mark.parametrize("name", FINITE)
def test_spin_counts_the_same_states(name: str, tmp_path: Path) -> None:
    system = parse_gcl_file(GCL_EXAMPLES / f"{name}.gcl")
    model = tmp_path / f"{name}.pml"
    r = run_cli("export", str(GCL_EXAMPLES / f"{name}.gcl"), "--to", "promela", "-o", str(model))
    assert r.code == 0, r.err
    spin = run_spin(model, tmp_path)
    ours = search(compile_system(system), keep_going=True)
    assert spin.states == ours.states
    assert spin.errors == sum(v.count for v in ours.violations.values())


def test_simultaneous_updates_and_model_errors_survive_export(tmp_path: Path) -> None:
    system = parse_gcl(
        """
        var a : 0..7 = 1; var b : 0..7 = 2; var n : 0..3;
        process P {
          n < 3 -> a := b, b := a, n := n + 1;
          n == 3 -> a := a + 7;
        }
        invariant sum: a + b == 3;
        """,
        "swap.gcl",
    )
    text = to_promela(system)
    assert "hidden int" in text
    model = tmp_path / "swap.pml"
    model.write_text(text)
    spin = run_spin(model, tmp_path)
    ours = search(compile_system(system), keep_going=True)
    assert spin.states == ours.states == 4
    # one out-of-range assignment (a := a + 7 from a == 2), reported by both
    assert spin.errors == 1 and list(ours.violations) == ["no-model-error"]


def test_export_to_gcl_round_trips() -> None:
    r = run_cli("export", "examples/gcl/rax.gcl", "--to", "gcl")
    assert r.code == 0
    again = parse_gcl(r.out, "rax2.gcl")
    assert len(again.commands) == 14
