"""The Python API (issue 26 item 2): ``absmc.load``, ``absmc.check``, the README's example run
as a doctest, ``python -m absmc``, and a light ``import absmc``."""

from __future__ import annotations

import doctest
import os
import subprocess
import sys
from pathlib import Path

import pytest

import absmc

from .conftest import EXAMPLES, GCL_EXAMPLES, ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_example_runs() -> None:
    block = README.split("### From Python", 1)[1].split("```pycon", 1)[1].split("```", 1)[0]
    parser = doctest.DocTestParser()
    test = parser.get_doctest(block, {}, "README.md", "README.md", 0)
    assert len(test.examples) >= 8
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    old = os.getcwd()
    os.chdir(ROOT)
    try:
        runner.run(test)
    finally:
        os.chdir(old)
    outcome = runner.summarize(verbose=False)
    assert outcome.failed == 0 and outcome.attempted == len(test.examples)


def test_check_takes_a_path_or_a_loaded_model() -> None:
    path = str(GCL_EXAMPLES / "philosophers.gcl")
    by_path = absmc.check(path, keep_going=True)
    model = absmc.load(path)
    by_model = absmc.check(model, keep_going=True, backend="python")
    assert by_path.verdict == by_model.verdict == "violated"
    assert isinstance(by_path.verdict, absmc.Verdict)
    assert by_path.results[0].stats.states == by_model.results[0].stats.states == 35
    assert by_path.model == path and by_model.model == "<model>"
    assert by_path.to_json()["schema_version"] == 1
    assert "verdict='violated'" in repr(by_path) and "'no-deadlock': violated" in repr(by_path)


def test_properties_are_a_name_or_a_list() -> None:
    path = GCL_EXAMPLES / "philosophers.gcl"
    one = absmc.check(path, properties="neighbours01")
    assert [r.property for r in one.results] == ["neighbours01", "no-model-error"]
    assert one.verdict == "holds"
    two = absmc.check(path, properties=["neighbours01", "no-deadlock"], order="dfs")
    assert {r.property: r.verdict.value for r in two.results}["no-deadlock"] == "violated"


def test_limits_and_timeout_end_with_unknown() -> None:
    r = absmc.check(GCL_EXAMPLES / "bakery.gcl", max_states=50, timeout=60)
    assert r.verdict == "unknown" and r.exit_code == 3


def test_errors_are_exceptions() -> None:
    with pytest.raises(absmc.UsageError, match="unknown options colour"):
        absmc.check(GCL_EXAMPLES / "rax.gcl", colour="red")
    with pytest.raises(absmc.UsageError, match="unknown method"):
        absmc.check(GCL_EXAMPLES / "rax.gcl", method="magic")
    with pytest.raises(absmc.UsageError, match="needs the entry function"):
        absmc.check(EXAMPLES / "python" / "bank.py")
    with pytest.raises(absmc.UsageError, match="checked as a component"):
        absmc.load(EXAMPLES / "python" / "bank.py")
    bad = ROOT / "tests" / "fixtures" / "gcl_errors" / "assign_undeclared.gcl"
    with pytest.raises(absmc.ModelError) as e:
        absmc.load(bad)
    assert e.value.span is not None and e.value.span.line >= 1


def test_defines_as_a_list_or_a_mapping() -> None:
    pml = EXAMPLES / "promela" / "lamport.pml"
    a = absmc.check(pml, defines=["MAX=4"], properties="assert@46")
    b = absmc.check(absmc.load(pml, defines={"MAX": 4}), properties="assert@46")
    # partial-order reduction is on by default (358 states without: SPIN's -o1 -DNOREDUCE)
    assert a.results[0].stats.states == b.results[0].stats.states == 353


def test_component_takes_a_string_or_a_list(monkeypatch: pytest.MonkeyPatch) -> None:
    import absmc.component

    monkeypatch.syspath_prepend(str(EXAMPLES / "python"))
    from bank import run  # type: ignore[import-not-found]

    one = absmc.component.check(run, component="Account", granularity="access")
    listed = absmc.component.check(run, component=["Account"], granularity="access")
    assert one.verdict == listed.verdict == "violated"
    assert one.results[0].stats.states == listed.results[0].stats.states


def _python(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
    )


def test_python_dash_m_absmc_runs_the_cli() -> None:
    r = _python("-m", "absmc", "check", "examples/gcl/rax.gcl", "--no-trail")
    assert r.returncode == 1 and "verdict: violated" in r.stdout
    assert _python("-m", "absmc", "--version").stdout.startswith("absmc, version")


def test_import_absmc_is_light_and_typed() -> None:
    probe = (
        "import sys, absmc\n"
        "print(sorted(m for m in sys.modules if m.startswith('absmc.') or m in {'z3', 'lark', "
        "'rich', 'click'}))\n"
        "absmc.Result\n"
        "print('absmc.kernel.run.result' in sys.modules)"
    )
    lines = _python("-c", probe).stdout.splitlines()
    assert lines == ["[]", "True"]
    assert Path(absmc.__file__).with_name("py.typed").is_file()


def test_predicates_are_expressions_as_on_the_command_line() -> None:
    bakery = GCL_EXAMPLES / "bakery.gcl"
    r = absmc.check(bakery, method="under", predicates=["x < y"], properties="mutex")
    assert r.verdict == "holds" and r.method == "under"
    with pytest.raises(absmc.ModelError, match="unexpected end of the expression"):
        absmc.check(bakery, method="under", predicates="x <")
    with pytest.raises(absmc.UsageError, match="not a bool expression"):
        absmc.check(bakery, method="under", predicates="x + 1")
