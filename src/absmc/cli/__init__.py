"""The ``absmc`` command line: one module per command (``check``, ``simulate``, ``replay``,
``export``, ``domains``, ``abstract``, ``report``), shared loading/printing/error handling in
:mod:`.common`, and the per-method options of ``check`` in :mod:`.methods`.

Each command is a plain function (``run_check``, ``run_simulate``, ...) taking its arguments
and the output and error streams and returning the exit code; the click commands only parse
arguments and call it. A command's module is imported when the command runs (the group knows
each one's name and summary), so ``absmc simulate`` never loads ``check``'s engines. Exit
codes: 0 holds, 1 violated, 2 usage or model error, 3 unknown, 4 internal error (``--debug``
prints its traceback); Ctrl-C before a model is being loaded: 130.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import json
import os
import signal
import sys
from types import FrameType
from typing import Any, Final, NoReturn

import click

from absmc import __version__

__all__ = ["cli", "main", "run"]

_CONTEXT: Final = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

#: command name -> (module, name of the click command in it); ``absmc --help`` imports them
#: all for their summaries, a command imports only its own module
COMMANDS: Final[dict[str, tuple[str, str]]] = {
    name: (f"absmc.cli.{name}", f"{name}_command")
    for name in ("check", "simulate", "replay", "export", "domains", "abstract", "report")
}


def _interrupted(code: int = 130) -> None:
    sys.stderr.write("absmc: interrupted\n")
    sys.stderr.flush()
    sys.exit(code)


class LazyGroup(click.Group):
    """A group whose commands are imported when one is run (or its help is shown)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        spec = COMMANDS.get(cmd_name)
        if spec is None:
            return None
        try:
            module = importlib.import_module(spec[0])
        except KeyboardInterrupt:
            _interrupted()
        command = getattr(module, spec[1])
        assert isinstance(command, click.Command)
        return command


@click.group(cls=LazyGroup, context_settings=_CONTEXT)
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
      absmc check examples/gcl/rax.gcl              # find the RAX deadlock, write its trail
      absmc replay examples/gcl/rax.gcl             # replay the trail up to the deadlock
      absmc check examples/gcl/peterson.gcl --json  # machine-readable result
      absmc check model.gcl --order dfs --store bitstate --bitstate-bits 30
      absmc simulate examples/gcl/philosophers.gcl --steps 20 --seed 1

    Exit codes: 0 holds, 1 violated, 2 usage or model error, 3 unknown, 4 internal error.
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


def _terminate(signum: int, frame: FrameType | None) -> None:
    """SIGTERM ends a run as Ctrl-C does: the search stops with verdict ``unknown``, reason
    "interrupted", its statistics and (with ``--json``) well-formed JSON; exit 3."""
    raise KeyboardInterrupt


def _usage_error(e: click.ClickException, args: list[str]) -> int:
    """A command-line error: click's message, or under ``--json`` also one JSON object on
    standard output (``error``, ``exit_code``; no file position)."""
    e.show()
    if "--json" in args:
        from absmc.kernel.run.result import SCHEMA_VERSION

        payload: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "error": e.format_message()}
        payload |= {"file": None, "line": None, "column": None, "exit_code": e.exit_code}
        sys.stdout.write(json.dumps(payload) + "\n")
    return e.exit_code


def main(args: list[str] | None = None) -> None:
    """Console-script entry point (``args``: the arguments, default ``sys.argv[1:]``).
    Ctrl-C or SIGTERM at any moment ends with one line on standard error."""
    argv = sys.argv[1:] if args is None else list(args)
    try:
        signal.signal(signal.SIGTERM, _terminate)
        try:
            code = cli.main(argv, prog_name="absmc", standalone_mode=False)
        except click.exceptions.Abort:
            _interrupted()
        except click.ClickException as e:
            sys.exit(_usage_error(e, argv))
    except KeyboardInterrupt:
        _interrupted()
    sys.exit(code if isinstance(code, int) else 0)


def run() -> NoReturn:
    """The ``absmc`` script and ``python -m absmc``: :func:`main`, then the process ends
    without tearing down the interpreter (after the exit handlers and a flush of standard
    output and error, :func:`os._exit`): freeing a large check's objects one by one took
    0.16 s of SPIN's mobile1 LTL check (3.7 s in all) for nothing. In-process callers use
    :func:`main`, which raises ``SystemExit``."""
    try:
        main()
        code = 0
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            code = e.code or 0
        else:  # sys.exit("message"), as Python reports it
            print(e.code, file=sys.stderr)
            code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a closed pipe: nothing more to say
            stream.flush()
    os._exit(code)
