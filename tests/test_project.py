"""Project conventions: README commands, CI script, shipped examples."""

from __future__ import annotations

from .conftest import GCL_EXAMPLES, ROOT


def _readme_commands() -> list[str]:
    lines = (ROOT / "README.md").read_text().splitlines()
    return [line.strip() for line in lines[:2]]


def test_readme_starts_with_install_run_and_test_commands() -> None:
    run, test = _readme_commands()
    assert run.startswith("python3 -m pip install . && absmc check examples/")
    assert "pytest" in test and ".[test]" in test
    model = run.split("absmc check ")[1].split()[0]
    assert (ROOT / model).is_file()


def test_ci_runs_the_readme_test_command() -> None:
    _, test = _readme_commands()
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test in [line.strip() for line in ci]


def test_required_examples_are_shipped() -> None:
    names = {p.stem for p in GCL_EXAMPLES.glob("*.gcl")}
    assert {"bakery", "rax", "nonterminating"} <= names
    assert len(names - {"bakery", "rax", "nonterminating"}) >= 2
