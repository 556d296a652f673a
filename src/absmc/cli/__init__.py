"""The ``absmc`` command line: one module per command (``check``, ``simulate``, ``export``,
``domains``, ``abstract``), shared loading/printing/error handling in :mod:`.common`, and the
per-method options of ``check`` in :mod:`.methods`.

Each command is a plain function (``run_check``, ``run_simulate``, ...) taking its arguments
and the output and error streams and returning the exit code; the click commands only parse
arguments and call it. Exit codes: 0 holds, 1 violated, 2 usage or model error, 3 unknown, 4
internal error (``--debug`` prints its traceback).
"""

from __future__ import annotations

import signal
from types import FrameType

import click

from absmc import __version__
from absmc.cli.abstract import abstract_command
from absmc.cli.check import check_command
from absmc.cli.common import CONTEXT
from absmc.cli.domains import domains_command
from absmc.cli.export import export_command
from absmc.cli.report import report_command
from absmc.cli.simulate import simulate_command

__all__ = ["cli", "main"]


@click.group(context_settings=CONTEXT)
@click.version_option(__version__, prog_name="absmc")
@click.option(
    "--debug", is_flag=True, help="Print the traceback of an internal error (exit code 4)."
)
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """absmc — model checking with abstraction.

    absmc explores the state space of a guarded-command (.gcl) or Promela model and says, for
    each property, whether it holds (a proof), is violated (a real bug, with a counterexample
    replayed on the concrete semantics) or is unknown (a limit was reached).

    \b
    Examples:
      absmc check examples/gcl/rax.gcl              # find the RAX deadlock
      absmc check examples/gcl/peterson.gcl --json  # machine-readable result
      absmc check model.gcl --order dfs --store bitstate --bitstate-bits 30
      absmc simulate examples/gcl/philosophers.gcl --steps 20 --seed 1

    Exit codes: 0 holds, 1 violated, 2 usage or model error, 3 unknown, 4 internal error.
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


cli.add_command(check_command)
cli.add_command(simulate_command)
cli.add_command(export_command)
cli.add_command(domains_command)
cli.add_command(abstract_command)
cli.add_command(report_command)


def _terminate(signum: int, frame: FrameType | None) -> None:
    """SIGTERM ends a run as Ctrl-C does: the search stops with verdict ``unknown``, reason
    "interrupted", its statistics and (with ``--json``) well-formed JSON; exit 3."""
    raise KeyboardInterrupt


def main() -> None:
    """Console-script entry point."""
    signal.signal(signal.SIGTERM, _terminate)
    cli(prog_name="absmc")
