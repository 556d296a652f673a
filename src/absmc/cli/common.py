"""What every command shares: loading a model, printing results, the progress line, and the
one place where errors become a message and an exit code.

Exit codes (stable, for scripts): 0 every checked property holds, 1 some property is violated,
2 usage error or error in the model (only typed errors: :class:`~absmc.errors.UsageError` and
its kinds, :class:`~absmc.ir.span.ModelError`, a file that cannot be read), 3 unknown, 4
internal error (any other exception: a bug in absmc; ``--debug`` or ``ABSMC_DEBUG=1`` prints
the traceback); 130 Ctrl-C before loading began; 141, silently, when the reader of standard
output went away (``| head``).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, TextIO, TypeVar

import click

from absmc import errors
from absmc.errors import CapabilityError, ExportError, OptionError, UsageError
from absmc.ir.intsem import IntegerTooLarge
from absmc.ir.span import ModelError
from absmc.ir.system import System
from absmc.kernel.run.options import Progress
from absmc.kernel.run.result import Result, peak_rss_mb
from absmc.option import Option

if TYPE_CHECKING:
    from rich.console import Console
    from rich.live import Live

    from absmc.lang.basl import BaslAbstraction  # its parser (lark) only with --basl
    from absmc.report.text import PlainConsole

EXIT_USAGE: Final = 2
EXIT_UNKNOWN: Final = 3
EXIT_INTERNAL: Final = 4
EXIT_INTERRUPTED: Final = 130
#: the reader of standard output went away (a shell's code for a process SIGPIPE ended)
EXIT_BROKEN_PIPE: Final = 141

CONTEXT: Final = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

#: option fields of the engines and front ends (``OptionError.option``) -> the flag naming them
FLAGS: Final[Mapping[str, str]] = {
    "properties": "--property",
    "ltl": "--ltl",
    "bindings": "--abstract",
    "predicates": "--predicate",
    "store": "--store",
    "rest": "--rest",
    "seed_predicates": "--seed-predicates",
    "backend": "--backend",
    "workers": "--workers",
    "ray": "--ray",
    "entry": "--entry",
    "component": "--component",
}


def console(stream: TextIO) -> Console:
    """A rich console writing to ``stream``: on a terminal, its width; otherwise (a pipe, a
    file) plain text that is never wrapped — lines and tables take the width they need. rich is
    imported here, not with this module (it costs a run ~0.07 s of start-up)."""
    from rich.console import Console

    if stream.isatty():
        return Console(file=stream, highlight=False, soft_wrap=False)
    return Console(file=stream, highlight=False, width=100_000, soft_wrap=True, color_system=None)


def report_console(stream: TextIO) -> Console | PlainConsole:
    """The console :func:`absmc.report.text.render_result` prints to: :func:`console`'s on a
    terminal; otherwise a :class:`~absmc.report.text.PlainConsole`, which writes the same bytes
    and imports rich only for what plain lines cannot say (tables, tabs, control characters)."""
    if stream.isatty():
        return console(stream)
    from absmc.report.text import PlainConsole

    return PlainConsole(stream)


def echo(stream: TextIO, text: str, nl: bool = True) -> None:
    """Write ``text`` (and a newline) to ``stream``."""
    stream.write(text + ("\n" if nl else ""))
    stream.flush()


def phrase(err: UsageError) -> str:
    """A typed usage error in the CLI's terms (flags, ``--method``), one line."""
    if isinstance(err, CapabilityError):
        use = f"; use --method {' or --method '.join(err.alternatives)}" if err.alternatives else ""
        return f"--method {err.engine} does not support {err.what}{use}"
    if isinstance(err, ExportError) and err.target == "gcl":
        return f"{err}; export it --to promela"
    if isinstance(err, OptionError) and err.option is not None and err.option in FLAGS:
        return f"{FLAGS[err.option]}: {err.message}"
    return str(err)


#: ``began``: a command of this process started loading a model (so Ctrl-C from then on ends
#: the run with verdict unknown, exit 3, rather than exit 130)
LOADING: Final[dict[str, bool]] = {"began": False}


def error_json(
    message: str,
    exit_code: int,
    file: str | None = None,
    line: int | None = None,
    column: int | None = None,
) -> dict[str, Any]:
    """The JSON object of an error under ``--json`` (``schema/absmc.schema.json``'s
    ``error``): the message, where (``file``, 1-based ``line`` and ``column``, each ``null``
    when unknown) and the exit code."""
    from absmc.kernel.run.result import SCHEMA_VERSION

    return {
        "schema_version": SCHEMA_VERSION,
        "error": message,
        "file": file,
        "line": line,
        "column": column,
        "exit_code": exit_code,
    }


def guarded(
    body: Callable[[], int], err: TextIO, debug: bool = False, json_out: TextIO | None = None
) -> int:
    """Run ``body`` and return its exit code; every error becomes one line on ``err`` and an
    exit code (module docstring), never a traceback unless ``debug`` (or ``ABSMC_DEBUG``).
    With ``json_out`` (``--json`` was asked), an error is also written there as one JSON
    object (:func:`error_json`). Ctrl-C (or SIGTERM) ends with one line: exit 3 (verdict
    unknown) once the command began loading its model, else 130."""
    debug = debug or bool(os.environ.get("ABSMC_DEBUG"))
    sys.set_int_max_str_digits(0)  # JSON writes unbounded integers in full (up to MAX_BITS)
    LOADING["began"] = False
    where: tuple[str | None, int | None, int | None] = (None, None, None)
    try:
        return body()
    except ModelError as e:
        echo(err, e.render())
        message, code = e.message, EXIT_USAGE
        span = e.span
        where = (span.file, span.line, span.column) if span else (e.file or None, None, None)
    except UsageError as e:
        message, code = phrase(e), EXIT_USAGE
        echo(err, f"absmc: error: {message}")
    except BrokenPipeError:
        # the reader went away (``absmc check m.pml | head``): end quietly, as a process that
        # SIGPIPE ended (the shell's 128 + 13); stdout goes to /dev/null so that the
        # interpreter's own flush at exit does not fail again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except OSError as e:
        name = f" '{e.filename}'" if e.filename else ""
        message, code = f"cannot read{name}: {e.strerror or e}", EXIT_USAGE
        echo(err, f"absmc: error: {message}")
        where = (str(e.filename) if e.filename else None, None, None)
    except KeyboardInterrupt:
        if LOADING["began"]:
            message, code = "interrupted (verdict unknown)", EXIT_UNKNOWN
        else:
            message, code = "interrupted", EXIT_INTERRUPTED
        echo(err, f"absmc: {message}")
    except errors.LoadTimeout as e:  # the front ends' and a program's import
        message, code = f"{e} (verdict unknown)", EXIT_UNKNOWN
        echo(err, f"absmc: {message}")
    except IntegerTooLarge as e:  # a resource limit met outside a search
        message, code = f"stopped: {e} (verdict unknown)", EXIT_UNKNOWN
        echo(err, f"absmc: {message}")
    except Exception as e:
        if debug:
            traceback.print_exc(file=err)
        first = str(e).splitlines()[0] if str(e) else ""
        message, code = f"internal error: {type(e).__name__}: {first}", EXIT_INTERNAL
        echo(err, f"absmc: {message} (this is a bug in absmc; run with --debug for the traceback)")
    if json_out is not None:
        echo(json_out, json.dumps(error_json(message, code, *where), ensure_ascii=False))
    return code


class LoadTimeout(errors.LoadTimeout):
    """Loading the model took longer than the run's time limit (``seconds``)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"time limit of {seconds:g} s reached while loading the model")
        self.seconds = seconds


def load(
    model: str,
    defines: tuple[str, ...] = (),
    timeout: float | None = None,
    reduce: bool = False,
    extra_slots: int = 0,
) -> System:
    """Load a model file with the front end its extension names; ``defines`` are ``-D
    NAME[=VALUE]`` items; ``timeout`` (seconds, main thread only) bounds the loading;
    ``reduce``: with the front end's reductions; ``extra_slots``: more Promela process slots
    (both :func:`absmc.lang.loader.load_model`). Raises ``UsageError``, ``ModelError``,
    ``OSError`` and ``LoadTimeout``."""
    LOADING["began"] = True
    from absmc.lang.loader import load_model

    defs: dict[str, str] = {}
    for d in defines:
        name, _, value = d.partition("=")
        if not name:
            raise UsageError(f"bad definition '-D {d}' (expected NAME or NAME=VALUE)")
        defs[name] = value or "1"
    if timeout is None or threading.current_thread() is not threading.main_thread():
        return load_model(model, defs or None, reduce, extra_slots)

    def expire(signum: int, frame: object) -> None:
        raise LoadTimeout(timeout)

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        return load_model(model, defs or None, reduce, extra_slots)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def add_predicates(system: System, predicates: tuple[str, ...]) -> System:
    """``system`` with the ``--predicate`` expressions (GCL expression syntax) added to its seed
    predicates. A bad expression is a ``ModelError`` located in ``--predicate``, a non-bool
    one a ``UsageError``."""
    if not predicates:
        return system
    from absmc.lang.gcl import parse_gcl_expr

    extra = tuple(parse_gcl_expr(text, system, "--predicate") for text in predicates)
    for text, e in zip(predicates, extra, strict=True):
        if not e.is_bool:
            raise UsageError(f"--predicate {text!r} is not a bool expression")
    return system.with_(predicates=system.predicates + extra)


def emit(
    result: Result,
    as_json: bool,
    out: TextIO,
    show_iterations: bool = False,
    trail: str | None = None,
) -> None:
    """Print a result as one JSON object or as text; ``trail``: the trail file written for it
    (JSON field ``trail``; a last line of text)."""
    if as_json:
        data = result.to_json()
        if trail is not None:
            data["trail"] = trail
        echo(out, json.dumps(data, indent=2, ensure_ascii=False))
    else:
        from absmc.report.text import render_result

        render_result(result, report_console(out), show_iterations)
        if trail is not None:
            echo(out, f"trail: {trail} (absmc replay {result.model} shows the violation)")


def write_text(text: str, output: str | None, out: TextIO) -> None:
    """``text`` to the file ``output``, or to ``out`` when ``output`` is ``None``."""
    if output is None:
        echo(out, text, nl=False)
    else:
        write_file(output, text)


def write_file(path: str, text: str) -> None:
    """Write ``text`` to the file ``path``. Raises ``UsageError`` ("cannot write ...") when
    it cannot be written (a missing folder, no permission)."""
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as e:
        raise UsageError(f"cannot write '{path}': {e.strerror or e}") from None


def read_basl(files: tuple[str, ...]) -> tuple[BaslAbstraction, ...]:
    """The BASL abstractions of ``files`` in order (:func:`absmc.lang.basl.parse_basl_file`).
    Raises ``ModelError`` and ``OSError``."""
    from absmc.lang.basl import parse_basl_file

    return tuple(spec for f in files for spec in parse_basl_file(f))


class ProgressLine:
    """The progress report on ``err``: a rich live line rewritten in place on a terminal, one
    printed line per report otherwise (``--progress`` into a log)."""

    def __init__(self, err: TextIO) -> None:
        from rich.console import Console  # rich only with --progress

        self.console = Console(file=err, highlight=False)
        self.live: Live | None = None

    def __call__(self, p: Progress) -> None:
        from rich.live import Live
        from rich.text import Text

        rate = p.states / p.elapsed_s if p.elapsed_s > 0 else 0.0
        line = Text.assemble(
            ("states ", "dim"),
            f"{p.states:,}",
            ("  transitions ", "dim"),
            f"{p.transitions:,}",
            ("  depth ", "dim"),
            f"{p.depth:,}",
            ("  states/s ", "dim"),
            f"{rate:,.0f}",
            ("  memory ", "dim"),
            f"{peak_rss_mb():,.0f} MB",
            ("  elapsed ", "dim"),
            f"{p.elapsed_s:,.0f} s",
        )
        if not self.console.is_terminal:
            self.console.print(line.plain, soft_wrap=True)
            return
        if self.live is None:
            self.live = Live(line, console=self.console, transient=True, auto_refresh=False)
            self.live.start()
        self.live.update(line, refresh=True)

    def close(self) -> None:
        """Remove the live line."""
        if self.live is not None:
            self.live.stop()
            self.live = None


F = TypeVar("F", bound=Callable[..., Any])

# -- options from their declarations (absmc.option.Option) ----------------------------------
#: the section of options no declaration places (``--help`` itself)
OTHER = "Other options"


def _type(o: Option) -> click.ParamType[Any] | None:
    if o.kind == "choice":
        return click.Choice(list(o.choices))
    if o.kind == "path":
        return click.Path(dir_okay=False)
    if o.kind == "int":
        if o.min is None and o.max is None:
            return click.INT
        lo = int(o.min) if o.min is not None else None
        return click.IntRange(lo, int(o.max) if o.max is not None else None)
    if o.kind == "float":
        return click.FloatRange(o.min, o.max, min_open=o.min_open)
    return None


def click_option(o: Option, help: str | None = None) -> Callable[[F], F]:
    """The click option of declaration ``o`` (``help`` replaces its help text, for a command
    that gives the same option another meaning)."""
    text = o.help if help is None else help
    if o.kind == "flag":
        return click.option(*o.flags, o.name, is_flag=True, help=text)
    extra: dict[str, Any] = {"help": text, "show_default": o.show_default}
    if o.metavar is not None:
        extra["metavar"] = o.metavar
    if o.multiple:
        extra["multiple"] = True
    else:
        extra["default"] = o.default
    kind = _type(o)
    if kind is not None:
        extra["type"] = kind
    return click.option(*o.flags, o.name, **extra)


def add_options(options: Iterable[Option]) -> Callable[[F], F]:
    """A decorator adding the click options of ``options`` (in that order in ``--help``)."""
    listed = list(options)

    def decorate(f: F) -> F:
        for o in reversed(listed):
            f = click_option(o)(f)
        return f

    return decorate


class GroupedCommand(click.Command):
    """A click command whose ``--help`` lists its options in sections: ``groups`` maps a
    parameter name to its section title (sections in the order of their first option; others
    under :data:`OTHER`)."""

    def __init__(self, *args: Any, groups: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.groups = dict(groups or {})

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Write the options, one ``--help`` section per group."""
        sections: dict[str, list[tuple[str, str]]] = {}
        for param in self.get_params(ctx):
            if not isinstance(param, click.Option):
                continue  # arguments are in the usage line and the text
            record = param.get_help_record(ctx)
            if record is not None:
                title = self.groups.get(param.name or "", OTHER)
                sections.setdefault(title, []).append(record)
        for title, rows in sections.items():
            with formatter.section(title):
                formatter.write_dl(rows)


def groups_of(options: Iterable[Option]) -> dict[str, str]:
    """``name -> group`` of ``options`` (for :class:`GroupedCommand`)."""
    return {o.name: o.group for o in options}


#: ``-D NAME[=VALUE]``: preprocessor definitions for Promela models (every command that loads
#: a model)
DEFINES: Final = Option(
    "defines",
    ("-D",),
    "Preprocessor definition for Promela models (as spin -D).",
    metavar="NAME[=VALUE]",
    multiple=True,
)

#: the options that pick and cut a saved trace (``absmc replay``; ``absmc simulate --replay``
#: gives them its own help)
TRACE_PROPERTY: Final = Option(
    "name",
    ("-N", "--property"),
    "Replay the trace of this property (default: the first in the trail).",
    metavar="NAME",
)
STOP_AT: Final = Option(
    "stop_at",
    ("--stop-at",),
    "Replay the first N steps only (with -i: then choose the next steps yourself).",
    kind="int",
    min=0,
    metavar="N",
)
INTERACTIVE: Final = Option(
    "interactive",
    ("-i", "--interactive"),
    "Go on interactively from step N of --stop-at N (without it: from the initial "
    "state), choosing each step yourself (SPIN's -i).",
    kind="flag",
)

defines_option = click_option(DEFINES)
