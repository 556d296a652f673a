"""The verdict text written to a pipe or file (issue 25 item 6): :class:`PlainConsole` writes
the bytes rich's console for pipes writes, without importing rich for plain lines."""

from __future__ import annotations

import io

from rich.console import Console

from absmc.cli.common import console, report_console
from absmc.kernel.run.result import PropertyResult, Result, Stats, Trace, TraceStep, Verdict
from absmc.report.text import PlainConsole, render_result


def _result(reason: str, note: str) -> Result:
    stats = Stats(states=1461, transitions=3707, max_depth=47, time_s=0.031, peak_mb=37.1)
    trace = Trace(
        (
            TraceStep(0, {"x": 0, "a[1]": False}),
            TraceStep(1, {"x": 1, "a[1]": True}, "p[0]", "x = x + 1", "m.pml:3"),
        ),
        replayed=True,
        note=note,
        cycle_start=0,
    )
    return Result(
        "m.pml",
        "explicit",
        (
            PropertyResult("no-deadlock", "deadlock", "explicit", Verdict.HOLDS, reason, stats),
            PropertyResult(
                "[bold]p[/]", "ltl", "explicit", Verdict.VIOLATED, "a lasso", stats, trace, 2
            ),
        ),
        notes=("searched in Python: tab\there", "é wide 中文 ✓"),
    )


def _rich_text(result: Result) -> str:
    buf = io.StringIO()
    con = console(buf)  # a StringIO is no terminal: rich's console for pipes
    assert isinstance(con, Console)
    render_result(result, con, show_iterations=True)
    return buf.getvalue()


def _plain_text(result: Result) -> str:
    buf = io.StringIO()
    con = report_console(buf)
    assert isinstance(con, PlainConsole)
    render_result(result, con, show_iterations=True)
    return buf.getvalue()


def test_plain_lines_are_rich_s_bytes() -> None:
    for reason, note in [
        ("no violation in the 1,461 reachable states", "deadlock"),
        ("  leading and trailing  ", "a\x07bell and a\rreturn"),
        ("two\nlines", "[red]not markup[/red]"),
    ]:
        result = _result(reason, note)
        plain = _plain_text(result)
        assert plain == _rich_text(result)
        assert plain.endswith("verdict: violated\n")
        assert "counterexample for '" in plain and "x = x + 1" in plain  # the table, by rich


def test_a_holding_verdict_is_written_without_rich_objects() -> None:
    stats = Stats(states=3, transitions=2, max_depth=2, time_s=0.001, peak_mb=1.0)
    result = Result(
        "m.gcl",
        "explicit",
        (PropertyResult("no-deadlock", "deadlock", "explicit", Verdict.HOLDS, "ok", stats),),
    )
    con = PlainConsole(io.StringIO())
    render_result(result, con)
    assert con._rich is None  # no line needed rich
    assert isinstance(con.file, io.StringIO)
    assert con.file.getvalue().splitlines()[-1] == "verdict: holds"
    assert con.file.getvalue() == _rich_text(result)
