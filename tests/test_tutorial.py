"""docs/tutorial.md works as it says (issue 26 item 6): its files are written into an empty
folder, each ``$ absmc ...`` command is run there with trails on, its output must contain the
tutorial's lines in order (``...`` skips lines) and its exit code must be the one shown; the
``pycon`` session runs as a doctest."""

from __future__ import annotations

import doctest
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from .conftest import ROOT

TUTORIAL = (ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8")


def _files() -> dict[str, str]:
    found = re.findall(r"<!-- file: (\S+) -->\n```\w+\n(.*?)```", TUTORIAL, flags=re.S)
    return dict(found)


def _sessions() -> list[tuple[list[str], list[str], int]]:
    """Each console block: (the command's arguments, the output lines shown, the exit code)."""
    out = []
    for block in re.findall(r"```console\n(.*?)```", TUTORIAL, flags=re.S):
        lines = block.rstrip("\n").splitlines()
        assert lines[0].startswith("$ absmc "), lines[0]
        code = re.fullmatch(r"\[exit code (\d+)\]", lines[-1])
        assert code is not None, lines[-1]
        out.append((shlex.split(lines[0])[2:], lines[1:-1], int(code.group(1))))
    return out


def _contains_in_order(shown: list[str], actual: list[str]) -> None:
    """Every shown line (``...`` skips any number of lines) is an actual line, in order."""
    i = 0
    for want in shown:
        if want == "...":
            continue
        while i < len(actual) and actual[i].rstrip() != want.rstrip():
            i += 1
        assert i < len(actual), f"not printed (in this order): {want!r}\n" + "\n".join(actual)
        i += 1


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("ABSMC_NO_TRAIL", raising=False)
    monkeypatch.chdir(tmp_path)
    for name, text in _files().items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_the_tutorial_has_its_files_and_sessions() -> None:
    assert set(_files()) == {"counter.pml", "counter_atomic.pml", "counter.py"}
    commands = [args[:2] for args, _, _ in _sessions()]
    assert ["check", "counter.pml"] in commands and ["replay", "counter.pml"] in commands


def test_the_tutorial_commands_print_what_it_shows(folder: Path) -> None:
    from absmc.cli import cli

    for args, shown, code in _sessions():
        r = CliRunner().invoke(cli, args, catch_exceptions=False)
        assert r.exit_code == code, (args, r.stdout, r.stderr)
        _contains_in_order(shown, r.stdout.splitlines())
        if args[:2] == ["check", "counter.pml"]:
            assert (folder / "counter.pml.trail.json").is_file()
    assert not (folder / "counter_atomic.pml.trail.json").exists()


def test_the_tutorial_python_session(folder: Path) -> None:
    block = TUTORIAL.split("```pycon\n", 1)[1].split("```", 1)[0]
    test = doctest.DocTestParser().get_doctest(block, {}, "tutorial.md", "tutorial.md", 0)
    runner = doctest.DocTestRunner()
    runner.run(test)
    outcome = runner.summarize(verbose=False)
    assert outcome.attempted >= 7 and outcome.failed == 0
