"""``absmc report RESULT.json -o report.html``: a saved result (``absmc check --json``) as one
self-contained HTML page (:mod:`absmc.report.html`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TextIO

import click

from absmc.cli.common import CONTEXT, EXIT_USAGE, echo, guarded, write_text
from absmc.errors import UsageError
from absmc.report.html import render_html


def run_report(result_file: str, output: str | None, out: TextIO, err: TextIO) -> int:
    """Render ``result_file`` to ``output`` (stdout when ``None``); exit 0, or 2 for a file
    that is not an absmc result."""

    def body() -> int:
        text = Path(result_file).read_text(encoding="utf-8")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            echo(err, f"{result_file}:{e.lineno}:{e.colno}: error: not JSON: {e.msg}")
            return EXIT_USAGE
        if not isinstance(data, dict) or not isinstance(data.get("results"), list):
            raise UsageError(f"{result_file}: error: not an absmc result (absmc check --json)")
        write_text(render_html(data), output, out)
        return 0

    return guarded(body, err)


@click.command("report", context_settings=CONTEXT)
@click.argument("result_file", metavar="RESULT.json", type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE",
    help="Write the page here (default: standard output).",
)
def report_command(result_file: str, output: str | None) -> None:
    """Render a saved result (absmc check --json) as one self-contained HTML page: verdicts
    with the deciding method, statistics, counterexamples (step table and message sequence
    chart), refinement rounds and state graphs."""
    sys.exit(run_report(result_file, output, sys.stdout, sys.stderr))
