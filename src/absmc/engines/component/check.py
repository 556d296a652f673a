"""The component engine's check: a program file and the shared options to
:func:`absmc.component.check_file` (paper 003; ``docs/component.md``)."""

from __future__ import annotations

from dataclasses import replace

from absmc.component.check import ComponentOptions, check_file, component_names
from absmc.component.tests import write_tests
from absmc.engines.component import ProgramOptions
from absmc.errors import OptionError
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import Result


def check_program(path: str, options: CheckOptions, own: ProgramOptions) -> Result:
    """Check the component ``own.component`` of the program in file ``path``, started by
    ``own.entry(*own.args)``, with the shared search options (order, store, limits, deadlock,
    keep-going, progress, reduction) and the program's own. With ``own.emit_tests`` the
    environment's border states are written there as pytest tests (a note says how many).
    Raises ``OptionError`` (no entry function, no component, an unknown abstraction),
    ``ModelError`` (a syntax error, a failed import, an untranslatable construct),
    ``UsageError`` (an unknown entry) and ``ImportTimeout`` (a ``LoadTimeout``: importing took
    longer than the time limit)."""
    if not own.entry:
        raise OptionError("a Python program needs the entry function it starts in", "entry")
    names = component_names(own.component)
    if not names:
        raise OptionError("a Python program needs the component to check", "component")
    opts = ComponentOptions(
        store=options.store,
        granularity="access" if own.granularity == "access" else "statement",
        order=options.order,
        limits=options.limits,
        keep_going=options.keep_going,
        check_deadlock=options.check_deadlock,
        bitstate_bits=options.bitstate_bits,
        hash_functions=options.hash_functions,
        env_choices=own.env_choices,
        predicates=own.predicates,
        abstraction=own.abstraction,
        record_border=own.emit_tests is not None,
        confirm=own.confirm,
        progress=options.progress,
        reduce=options.reduce,
    )
    result, sem = check_file(path, own.entry, own.args, names, opts)
    if own.emit_tests is not None:
        n = write_tests(own.emit_tests, sem)
        result = replace(
            result, notes=(*result.notes, f"{n} environment tests written to {own.emit_tests}")
        )
    return result
