"""``absmc export --method types``: the abstract model as Promela (SPIN accepts it and finds the
same abstract states) and as GCL (parses back to the same abstract System); paper 001's
"verifier code generation"."""

from __future__ import annotations

from pathlib import Path

import pytest

from absmc.codegen.python import compile_system
from absmc.engines.typeabs import TypesOptions, build_abstraction
from absmc.kernel.explore.search import search
from absmc.lang.domains import parse_bindings
from absmc.lang.gcl import parse_gcl, parse_gcl_file
from absmc.lang.promela import load_promela

from .conftest import EXAMPLES, GCL_EXAMPLES, run_cli
from .spin import run_spin

ARGS = ("--method", "types", "--abstract", "period_id=signs")


def test_spin_accepts_the_abstract_deos_and_counts_the_same_states(tmp_path: Path) -> None:
    model = tmp_path / "deos_fixed_abs.pml"
    r = run_cli(
        "export", str(GCL_EXAMPLES / "deos_fixed.gcl"), *ARGS, "--to", "promela", "-o", str(model)
    )
    assert r.code == 0, r.err
    text = model.read_text()
    assert "/* period_id: signs (0=NEG, 1=ZERO, 2=POS) */" in text
    # -o2 keeps write-only variables (last_compl) in SPIN's state vector, as absmc does
    spin = run_spin(model, tmp_path, spin_options=("-o1", "-o2"))
    abstraction = build_abstraction(
        parse_gcl_file(GCL_EXAMPLES / "deos_fixed.gcl"),
        TypesOptions(parse_bindings(["period_id=signs"])),
    )
    ours = search(compile_system(abstraction.export_system()), keep_going=True)
    assert spin.errors == 0 and not ours.violations
    assert spin.states == ours.states == 12438


def test_spin_finds_the_abstract_violation_of_deos(tmp_path: Path) -> None:
    model = tmp_path / "deos_abs.pml"
    r = run_cli(
        "export", str(GCL_EXAMPLES / "deos.gcl"), *ARGS, "--to", "promela", "-o", str(model)
    )
    assert r.code == 0, r.err
    spin = run_spin(model, tmp_path, spin_options=("-o1", "-o2"))
    assert spin.errors > 0 and "assertion violated" in spin.output


def test_abstract_model_errors_become_assertions_spin_reports(tmp_path: Path) -> None:
    source = tmp_path / "div.gcl"
    source.write_text(
        "var x, y : int;\nvar pc : 0..2;\n"
        "process P { pc == 0 -> x := 0, pc := 1; pc == 1 -> y := 10 / x, pc := 2; "
        "pc == 2 -> skip; }\n"
    )
    model = tmp_path / "div.pml"
    r = run_cli(
        "export",
        str(source),
        "--method",
        "types",
        "--abstract",
        "x=signs",
        "--to",
        "promela",
        "-o",
        str(model),
    )
    assert r.code == 0, r.err
    assert "_abs_error" in model.read_text()
    spin = run_spin(model, tmp_path, spin_options=("-o1", "-o2"))
    assert spin.errors == 1


def test_abstract_gcl_parses_back_to_the_same_state_space() -> None:
    r = run_cli("export", str(GCL_EXAMPLES / "deos_fixed.gcl"), *ARGS, "--to", "gcl")
    assert r.code == 0, r.err
    assert r.out.startswith("// abstraction of ")
    again = parse_gcl(r.out, "abstract.gcl")
    assert again.var("period_id").sort.hi == 2  # type: ignore[union-attr]
    out = search(compile_system(again), keep_going=True)
    assert out.states == 12438 and not out.violations


def test_export_options_are_checked() -> None:
    r = run_cli("export", str(GCL_EXAMPLES / "deos.gcl"), "--to", "gcl", "--abstract", "cp=signs")
    assert r.code == 2 and "need --method types" in r.err


@pytest.mark.parametrize(
    ("name", "violations"),
    # deos_fixed (the same atomic sequences, no violation) only under -m slow: ~15 s
    [("deos", 6912), pytest.param("deos_fixed", 0, marks=pytest.mark.slow)],
)
def test_spin_explores_the_abstract_promela_deos_alike(
    name: str, violations: int, tmp_path: Path
) -> None:
    """The abstraction of a Promela model keeps its atomic sequences (exclusive control, with
    the release commands of the abstraction) and its assertions: SPIN stores exactly the
    abstract states absmc stores and counts the same assertion violations."""
    source = EXAMPLES / "promela" / f"{name}.pml"
    model = tmp_path / f"{name}_abs.pml"
    r = run_cli("export", str(source), *ARGS, "--to", "promela", "-o", str(model))
    assert r.code == 0, r.err
    text = model.read_text()
    assert "atomic {" in text and "hold_1:" in text and "assert(" in text
    spin = run_spin(model, tmp_path, spin_options=("-o1", "-o2"), optimize="-O0")
    abstraction = build_abstraction(
        load_promela(source), TypesOptions(parse_bindings(["period_id=signs"]))
    )
    ours = search(compile_system(abstraction.export_system()), keep_going=True)
    assert spin.states == ours.states
    assert 100_000 < ours.states < 200_000
    counted = {p: v.count for p, v in ours.violations.items()}
    assert spin.errors == sum(counted.values()) == violations
    if violations:
        assert list(counted) == ["assert@60"] and "assertion violated" in spin.output
