"""`absmc export --to promela`: SPIN accepts the output and finds the same reachable states."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from absmc.codegen.python import compile_system
from absmc.kernel.explore.search import search
from absmc.kernel.run.options import Limits
from absmc.lang.gcl import parse_gcl, parse_gcl_file
from absmc.lang.promela import load_promela
from absmc.lang.promela.export import to_promela

from .conftest import GCL_EXAMPLES, SHARED, needs_shared, run_cli
from .spin import require_spin, run_spin

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


@pytest.mark.parametrize("name", ["rax", "bakery", "peterson", "philosophers", "nonterminating"])
def test_every_example_exports_to_a_model_spin_explores_alike(name: str, tmp_path: Path) -> None:
    """Breadth-first to depth 10 (the infinite examples need a bound), SPIN (``-DBFS -m10``,
    pan compiled at ``-O0``: a fifth of ``-O2``'s compile time, and depth 10 is a small search)
    and absmc store the same states and agree on whether an error is reachable."""
    require_spin()
    model = tmp_path / f"{name}.pml"
    r = run_cli("export", str(GCL_EXAMPLES / f"{name}.gcl"), "--to", "promela", "-o", str(model))
    assert r.code == 0, r.err
    subprocess.run(["spin", "-o1", "-a", model.name], cwd=tmp_path, check=True, capture_output=True)
    subprocess.run(
        ["gcc", "-O0", "-DBFS", "-DNOREDUCE", "-DNOCLAIM", "-DSAFETY", "-o", "pan", "pan.c"],
        cwd=tmp_path,
        check=True,
        capture_output=True,
    )
    out = subprocess.run(
        ["./pan", "-c0", "-n", "-m10"], cwd=tmp_path, capture_output=True, text=True
    ).stdout
    states = int(re.search(r"(\d+) states, stored", out).group(1))  # type: ignore[union-attr]
    errors = int(re.search(r"errors: (\d+)", out).group(1))  # type: ignore[union-attr]
    system = parse_gcl_file(GCL_EXAMPLES / f"{name}.gcl")
    ours = search(compile_system(system), keep_going=True, limits=Limits(max_depth=10))
    assert ours.states == states
    assert bool(ours.violations) == (errors > 0)


@needs_shared
@pytest.mark.parametrize("name", ["abp.pml", "brp.1.pm", "fischer.1.pm", "p117.pml"])
def test_promela_derived_systems_export_with_their_semantics(name: str, tmp_path: Path) -> None:
    """Exclusive chains (one ``atomic`` block with ``hold`` loops), ``timeout`` (abp),
    assertions and error conditions (p117), 32-bit wrap-around constants (brp): SPIN stores
    exactly the states absmc stores for the lowered System and counts the same errors (these
    models have no valid end states apart from deadlocks, which the export does not carry)."""
    system = load_promela(SHARED / "benchmarks" / "promela" / name)
    model = tmp_path / "m.pml"
    model.write_text(to_promela(system))
    spin = run_spin(model, tmp_path, spin_options=("-o1", "-o2"), optimize="-O0")
    assert "warning" not in spin.output
    ours = search(compile_system(system), keep_going=True)
    assert spin.states == ours.states
    assert spin.errors == sum(v.count for v in ours.violations.values())


@needs_shared
def test_export_refuses_variables_wider_than_spin_int() -> None:
    system = load_promela(SHARED / "benchmarks" / "promela" / "sort.pml")
    with pytest.raises(ValueError, match=r"cannot export 'q\[0\]#data' .* 32 bits"):
        to_promela(system)


@needs_shared
def test_gcl_export_refuses_what_gcl_cannot_express() -> None:
    r = run_cli("export", "../shared/benchmarks/promela/peterson.pml", "--to", "gcl")
    assert r.code == 2
    assert "GCL cannot express" in r.err and "Traceback" not in r.err


def test_gcl_export_renames_names_that_are_not_identifiers() -> None:
    from absmc.ir import INT, Command, Process, Property, System, Variable
    from absmc.ir.expr import Var, const, op
    from absmc.lang.gcl.export import to_gcl

    x = Var("a[0]", INT)
    system = System(
        (Variable("a[0]", INT), Variable("var", INT)),
        (Process("P(0)"),),
        (Command("P(0)", op("<", x, const(3)), (("a[0]", op("+", x, const(1))),), "l@1"),),
        (Property("assert@1", "invariant", op("<=", x, const(3))),),
    )
    text = to_gcl(system)
    again = parse_gcl(text, "renamed.gcl")
    assert [v.name for v in again.variables] == ["a_0_", "_var"]
    assert again.commands[0].label == "l_1"
    assert search(compile_system(again), keep_going=True).states == 4
