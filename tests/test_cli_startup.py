"""Start-up and signals (issue 26 item 5): a command imports only its own module; Ctrl-C (or
SIGTERM, which raises the same KeyboardInterrupt) ends with one line — exit 130 before a model
is being loaded, exit 3 (verdict unknown, JSON when asked) once loading has begun."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

import pytest

import absmc.cli
from absmc.cli.args import CheckArgs
from absmc.cli.check import run_check
from absmc.cli.simulate import run_simulate
from absmc.native.build import find_compiler

from .conftest import GCL_EXAMPLES, ROOT

RAX = str(GCL_EXAMPLES / "rax.gcl")


def _interrupt(*args: object, **kwargs: object) -> NoReturn:
    raise KeyboardInterrupt


def test_a_command_imports_only_its_own_module() -> None:
    out, modules = _main_in_process(["simulate", "examples/gcl/rax.gcl", "--steps", "1"])
    assert out[-1] == "exit 0"
    assert sorted(m for m in modules if m.startswith(("absmc.cli.", "absmc.engines"))) == [
        "absmc.cli.common",
        "absmc.cli.simulate",
    ]


def test_a_safety_check_of_promela_imports_no_solver_nor_rich(tmp_path: Path) -> None:
    """The explicit check of a Promela model without ltl, its verdict piped: neither the
    solvers (z3, islpy), nor Spot (ltl only), nor rich (terminals and tables only) are loaded."""
    model = tmp_path / "counter.pml"
    model.write_text(
        "byte x;\n"
        "active proctype p() { do :: x < 3 -> x++ :: x == 3 -> break od; assert(x == 3) }\n"
    )
    out, modules = _main_in_process(["check", str(model), "--no-trail"])
    assert out[-2:] == ["verdict: holds", "exit 0"]
    assert "states 10," in out[-3]  # x = 0..3, each with the loop and the guard taken
    heavy = {"z3", "islpy", "spot", "rich", "jinja2", "networkx"}
    assert {m.split(".")[0] for m in modules} & heavy == set()


def test_ctrl_c_before_loading_is_one_line_and_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(absmc.cli.importlib, "import_module", _interrupt)
    with pytest.raises(SystemExit) as e:
        absmc.cli.main(["check", RAX])
    assert e.value.code == 130
    assert capsys.readouterr().err == "absmc: interrupted\n"


def test_ctrl_c_while_loading_ends_unknown_with_json(monkeypatch: pytest.MonkeyPatch) -> None:
    import absmc.lang.loader

    monkeypatch.setattr(absmc.lang.loader, "load_model", _interrupt)
    out, err = io.StringIO(), io.StringIO()
    assert run_check(CheckArgs(model=RAX, as_json=True), out, err) == 3
    data = json.loads(out.getvalue())
    assert data["verdict"] == "unknown" and data["results"] == []
    assert data["notes"] == ["interrupted while loading the model"]
    assert err.getvalue() == "absmc: interrupted while loading the model (verdict unknown)\n"
    out, err = io.StringIO(), io.StringIO()
    assert run_check(CheckArgs(model=RAX), out, err) == 3
    assert out.getvalue() == "" and err.getvalue() == "absmc: interrupted (verdict unknown)\n"
    out, err = io.StringIO(), io.StringIO()
    assert run_simulate(RAX, out, err, as_json=True) == 3
    data = json.loads(out.getvalue())
    assert data["exit_code"] == 3 and data["error"] == "interrupted (verdict unknown)"


def test_ctrl_c_before_the_model_is_read_is_130(monkeypatch: pytest.MonkeyPatch) -> None:
    import absmc.cli.replay

    monkeypatch.setattr(absmc.cli.replay, "_read", _interrupt)  # reading the trail
    out, err = io.StringIO(), io.StringIO()
    assert absmc.cli.replay.run_replay(RAX, None, out, err) == 130
    assert err.getvalue() == "absmc: interrupted\n"


#: what a ``check`` of a model without LTL, CTL, BASL or --html/--dot must not import
_NOT_NEEDED = (
    "jinja2",
    "spot",
    "absmc.report.html",
    "absmc.report.dot",
    "absmc.lang.basl",
    "absmc.engines.explicit.ctl",
    "absmc.engines.explicit.parallel",
)

_PROMELA = """
byte x;
active [2] proctype P() {
  do
  :: atomic { x < 3 -> x++ }
  :: x == 3 -> break
  od;
  assert(x == 3)
}
"""


def _main_in_process(argv: list[str], **env: str) -> tuple[list[str], set[str]]:
    """Run ``absmc ARGV`` in a fresh interpreter (absmc from ``src``, ``env`` added to the
    environment); (its output lines, ending with ``exit N``; the modules it held)."""
    probe = (
        "import sys\n"
        "from absmc.cli import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit as e:\n"
        "    print('exit', e.code)\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    out = _python(probe, **env).stdout.splitlines()
    return out[:-1], set(out[-1].split())


def _python(probe: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -c PROBE`` in a fresh interpreter with absmc from ``src`` (``env`` added to
    the environment), its output captured."""
    return subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src"), **env},
        cwd=ROOT,
    )


def _check_in_process(args: list[str], cache: str) -> tuple[str, set[str]]:
    """Run ``absmc check ARGS`` in a fresh interpreter; (its exit code, the modules it held)."""
    out, modules = _main_in_process(["check", *args], ABSMC_CACHE_DIR=cache, ABSMC_NATIVE_OPT="-O0")
    return out[-1], modules


def _loaded(modules: set[str], name: str) -> bool:
    return name in modules or any(m.startswith(name + ".") for m in modules)


@pytest.mark.parametrize("backend", ["python", "auto"])
def test_check_without_ltl_or_html_imports_no_report_or_ltl_modules(
    tmp_path: Path, backend: str
) -> None:
    model = tmp_path / "count.pml"
    model.write_text(_PROMELA)
    html = tmp_path / "report.html"
    cache = str(tmp_path / "cache")
    for path in (str(model), str(GCL_EXAMPLES / "peterson.gcl")):
        code, modules = _check_in_process([path, "--backend", backend], cache)
        assert code == "exit 0"  # the check ran to a verdict (holds)
        assert "absmc.engines.explicit.check" in modules
        assert [m for m in _NOT_NEEDED if _loaded(modules, m)] == []
    if backend != "python":
        return  # (the control does not depend on the back end: one interpreter fewer)
    # the guard's control: the same run with --html does load the report and jinja2
    code, modules = _check_in_process(
        [str(model), "--backend", backend, "--html", str(html)], cache
    )
    assert code == "exit 0" and html.exists()
    assert _loaded(modules, "jinja2") and "absmc.report.html" in modules


@pytest.mark.skipif(not find_compiler(), reason="no C compiler")
def test_native_check_reuses_the_cached_declarations_and_library(tmp_path: Path) -> None:
    model = tmp_path / "count.pml"
    model.write_text(_PROMELA)
    cache = tmp_path / "cache"
    code, first = _check_in_process([str(model), "--backend", "native"], str(cache))
    assert code == "exit 0" and _loaded(first, "pycparser")  # the declarations parsed once
    libraries = sorted(p.name for p in cache.glob("m_*.so"))
    assert len(libraries) == 1 and len(list(cache.glob("ffi_*.py"))) == 1
    code, second = _check_in_process([str(model), "--backend", "native"], str(cache))
    assert code == "exit 0"
    assert not _loaded(second, "pycparser") and not _loaded(second, "cffi.cparser")
    assert sorted(p.name for p in cache.glob("m_*.so")) == libraries  # the library was hit
    assert [m for m in _NOT_NEEDED if _loaded(second, m)] == []


@pytest.mark.parametrize(
    ("argv", "code", "where"),
    [(["check", RAX], 1, "stdout"), (["check", "missing.gcl"], 2, "stderr")],
)
def test_the_script_exits_with_its_code_output_flushed_and_exit_handlers_run(
    argv: list[str], code: int, where: str, tmp_path: Path
) -> None:
    """``python -m absmc`` (the script's :func:`absmc.cli.run`) ends the process without the
    interpreter's teardown, but with the exit code, everything written (here to a pipe, which
    buffers) and the exit handlers run."""
    marker = tmp_path / "atexit"
    probe = (
        "import atexit, pathlib, sys\n"
        f"atexit.register(lambda: pathlib.Path({str(marker)!r}).write_text('ran'))\n"
        f"sys.argv = ['absmc', *{argv!r}]\n"
        "from absmc.cli import run\n"
        "run()\n"
    )
    done = _python(probe)
    assert done.returncode == code
    if where == "stdout":
        assert done.stdout.splitlines()[-1] == "verdict: violated"
    else:
        assert done.stderr.startswith("absmc: error: cannot read 'missing.gcl'")
    assert marker.read_text() == "ran"
