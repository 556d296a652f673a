"""``absmc check PROGRAM.py --entry FUNC [ARGS...] --component NAME[,NAME...]``: check a
Python component inside its natively executed environment (:mod:`absmc.component`, paper
003). The common options (``--store``, ``--order``, limits, ``--keep-going``,
``--no-deadlock``, ``--json``, ``--progress``) mean what they mean for models;
``--reduce`` turns the threads' partial-order reduction on."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any, TextIO

from absmc.cli.args import CheckArgs, flag_of
from absmc.cli.common import EXIT_UNKNOWN, ProgressLine, echo, emit
from absmc.errors import UsageError
from absmc.kernel.run.options import Limits, reduces
from absmc.kernel.run.result import Result

#: the check arguments that apply to models only
_MODEL_ONLY = (
    "defines",
    "seed_predicates",
    "concrete_after",
    "local_predicates",
    "abstract",
    "basl",
    "rest",
    "table",
)

PY_SUFFIXES = (".py",)


def parse_arg(text: str) -> Any:
    """An entry argument: a Python literal (``3``, ``[1, 2]``, ``'a'``), else the string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def run_component(
    args: CheckArgs,
    limits: Limits,
    out: TextIO,
    err: TextIO,
    pictures: Callable[[Result], None] | None = None,
) -> int:
    """Check the program ``args.model``; prints like every method; returns the exit code.
    ``pictures`` is called with the result once it is printed (``--html``, ``--dot``).
    Raises ``UsageError`` for missing or misapplied options (the caller's ``guarded`` turns
    it into one line and exit 2)."""
    from absmc.component import ComponentOptions, check_file
    from absmc.component.program import ImportTimeout
    from absmc.component.tests import write_tests

    if not args.entry:
        raise UsageError("checking a Python program needs --entry FUNC")
    if not args.component:
        raise UsageError("checking a Python program needs --component NAME[,NAME...]")
    if args.method != "explicit":
        raise UsageError("--method applies to models; a Python program is checked as a component")
    for name in _MODEL_ONLY:
        if not args.is_default(name):
            raise UsageError(f"{flag_of(name)} applies to models, not to Python programs")
    if args.store not in ("exact", "bitstate", "hash-compact", "range", "predicates"):
        raise UsageError(f"--store {args.store} does not apply to Python programs")
    abstraction = {"range": "range", "predicates": "prover"}.get(args.store, "none")
    if args.predicates and abstraction == "none":
        abstraction = "predicates"
    names = [n.strip() for c in args.component for n in c.split(",") if n.strip()]
    show = args.progress if args.progress is not None else err.isatty()
    line = ProgressLine(err) if show else None
    opts = ComponentOptions(
        store="exact" if args.store in ("range", "predicates") else args.store,
        granularity="access" if args.granularity == "access" else "statement",
        # not given: depth-first (finds bugs in far fewer states, docs/component.md)
        order="bfs" if args.order == "bfs" else "dfs",
        limits=limits,
        keep_going=args.keep_going,
        check_deadlock=not args.no_deadlock,
        bitstate_bits=args.bitstate_bits,
        hash_functions=args.hash_functions,
        record_border=args.emit_tests is not None,
        predicates=tuple(p for p in args.predicates if p != "guards"),
        abstraction=abstraction,
        progress=line,
        reduce=reduces(args.reduce, program=True),
    )
    try:
        result, sem = check_file(
            args.model, args.entry, [parse_arg(a) for a in args.entry_args], names, opts
        )
    except ImportTimeout as e:
        echo(err, f"absmc: {e} (verdict unknown)")
        return EXIT_UNKNOWN
    finally:
        if line is not None:
            line.close()
    if args.emit_tests is not None:
        n = write_tests(args.emit_tests, sem)
        result = type(result)(
            result.model,
            result.method,
            result.results,
            (*result.notes, f"{n} environment tests written to {args.emit_tests}"),
        )
    emit(result, args.as_json, out)
    if pictures is not None:
        pictures(result)
    return result.exit_code
