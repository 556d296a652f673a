"""Start-up and signals (issue 26 item 5): a command imports only its own module; Ctrl-C (or
SIGTERM, which raises the same KeyboardInterrupt) ends with one line — exit 130 before a model
is being loaded, exit 3 (verdict unknown, JSON when asked) once loading has begun."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from typing import NoReturn

import pytest

import absmc.cli
from absmc.cli.args import CheckArgs
from absmc.cli.check import run_check
from absmc.cli.simulate import run_simulate

from .conftest import GCL_EXAMPLES, ROOT

RAX = str(GCL_EXAMPLES / "rax.gcl")


def _interrupt(*args: object, **kwargs: object) -> NoReturn:
    raise KeyboardInterrupt


def test_a_command_imports_only_its_own_module() -> None:
    probe = (
        "import sys\n"
        "from absmc.cli import main\n"
        "try:\n"
        "    main(['simulate', 'examples/gcl/rax.gcl', '--steps', '1'])\n"
        "except SystemExit as e:\n"
        "    print(e.code)\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith(('absmc.cli.', "
        "'absmc.engines')))))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=ROOT
    ).stdout.splitlines()
    assert out[-2:] == ["0", "absmc.cli.common absmc.cli.simulate"]


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
