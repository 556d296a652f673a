"""The component checker's command-line options, declared once (:class:`~absmc.option.Option`):
the CLI lists them in ``absmc check --help`` under *Python programs (.py)*, refuses them for
models and passes their values to :mod:`absmc.cli.component`. A light module (no checker code
is imported), as an engine package's ``OPTIONS``."""

from __future__ import annotations

from typing import Final

from absmc.option import Option

#: the ``--help`` section of a Python program's options
GROUP: Final = "Python programs (.py)"

#: the options of a Python program's check, refused for models (``--reduce/--no-reduce`` and
#: ``--predicate`` are shared with models: :mod:`absmc.cli.args`)
OPTIONS: Final[tuple[Option, ...]] = (
    Option(
        "entry",
        ("--entry",),
        "[.py] The function the program starts in (ARGS are its arguments, Python literals).",
        metavar="FUNC",
        group=GROUP,
    ),
    Option(
        "component",
        ("--component",),
        "[.py] The component: functions, classes, Class.method or the module; the rest of "
        "the program runs natively (paper 003).",
        metavar="NAME[,NAME...]",
        multiple=True,
        group=GROUP,
    ),
    Option(
        "granularity",
        ("--granularity",),
        "[.py] One step per statement, or split reads and writes of shared data.",
        default="statement",
        kind="choice",
        choices=("statement", "access"),
        show_default=True,
        group=GROUP,
    ),
    Option(
        "emit_tests",
        ("--emit-tests",),
        "[.py] Write the environment calls seen as a pytest file (border states).",
        metavar="FILE",
        group=GROUP,
    ),
)
