"""``absmc check``: check the properties of a model with the engine ``--method`` names.

No per-method code here: the registry (:mod:`absmc.engines.registry`) lists the engines and
refuses what one cannot do; :mod:`absmc.cli.methods` builds each engine's options.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

import click

from absmc.cli.args import (
    DFS_DEPTH_BOUND,
    METHOD_SHARED,
    SHARED,
    CheckArgs,
    flag_of,
    registered_options,
)
from absmc.cli.common import (
    CONTEXT,
    EXIT_INTERNAL,
    EXIT_UNKNOWN,
    GroupedCommand,
    LoadTimeout,
    ProgressLine,
    add_options,
    add_predicates,
    console,
    echo,
    emit,
    error_json,
    groups_of,
    guarded,
    load,
    write_file,
)
from absmc.cli.methods import all_params, method_cli, owners_text
from absmc.cli.replay import trail_path, trails_off, write_trail
from absmc.engines import registry
from absmc.engines.engine import STORES, AnyEngine
from absmc.engines.portfolio import Disagreement
from absmc.errors import UsageError
from absmc.ir.system import System
from absmc.kernel.run.memory import machine_memory_mb
from absmc.kernel.run.options import CheckOptions, Limits, StoreKind, reduces
from absmc.kernel.run.result import SCHEMA_VERSION, Result
from absmc.option import defaults


def _store(name: str) -> StoreKind:
    if name == "bitstate":
        return "bitstate"
    if name == "hash-compact":
        return "hash-compact"
    if name == "tree":
        return "tree"
    return "exact"


def _depth_bound(args: CheckArgs) -> int | None:
    """``--max-depth``, or SPIN's default bound for a depth-first search (reported when hit)."""
    if args.max_depth is not None:
        return args.max_depth
    return DFS_DEPTH_BOUND if args.order == "dfs" else None


def default_max_memory_mb() -> float | None:
    """The default ``--max-memory``: 80% of the machine's physical memory (MiB)."""
    total = machine_memory_mb()
    return round(total * 0.8) if total is not None else None


def check_options(
    args: CheckArgs, progress: ProgressLine | None, program: bool = False
) -> CheckOptions:
    """The options shared by every method (a method's own store counts as ``exact``). With
    ``program`` (a Python program's check) ``--order`` and ``--reduce`` not given mean
    depth-first (it finds bugs in far fewer states, docs/component.md) and no reduction."""
    order = args.order if args.order is not None else ("dfs" if program else "bfs")
    return CheckOptions(
        properties=list(args.properties) or None,
        order="dfs" if order == "dfs" else "bfs",
        store=_store(args.store),
        bitstate_bits=args.bitstate_bits,
        hash_functions=args.hash_functions,
        limits=Limits(
            args.max_states,
            _depth_bound(args),
            args.timeout,
            args.max_memory if args.max_memory is not None else default_max_memory_mb(),
        ),
        keep_going=args.keep_going,
        check_deadlock=not args.no_deadlock,
        progress=progress,
        graph_bound=args.graph_bound if (args.html or args.dot) else None,
        ltl=args.ltl,
        fairness="weak" if args.fairness == "weak" else "none",
        non_progress=args.non_progress,
        reduce=reduces(args.reduce, program=program),
    )


def _refuse_foreign(args: CheckArgs, engine: AnyEngine) -> None:
    """Raise ``UsageError`` for a method-specific argument or store ``engine`` does not
    take."""
    mine = method_cli(engine.name)
    for param in sorted(all_params() - mine.params):
        if not args.is_default(param):
            flag = "ARGS" if param == "entry_args" else flag_of(param)
            raise UsageError(f"{flag} applies to {owners_text(param)}")
    if args.store not in STORES and args.store not in mine.stores:
        takers = [e for e in registry.ENGINES if args.store in method_cli(e.name).stores]
        alike = [e for e in takers if e.reads_files == engine.reads_files]
        which = " and ".join(e.where() for e in alike or takers)
        raise UsageError(f"--store {args.store} applies to {which} only")


def report_disagreement(e: Disagreement, err: TextIO) -> None:
    """Both contradicting answers of a portfolio on ``err`` (an internal error, exit 4)."""
    echo(err, f"absmc: internal error: {e} (this is a bug in absmc; both answers follow)")
    both = Result("", "auto", (e.holds, e.violated))
    from absmc.report.text import render_result

    render_result(both, console(err))


def write_pictures(result: Result, args: CheckArgs, err: TextIO, method: str) -> None:
    """``--html FILE`` (the report page) and ``--dot FILE`` (the explored state graph, the
    concrete one when there are several) of ``--method method``'s result. Raises
    ``UsageError`` when a file cannot be written."""
    if args.html:
        from absmc.report.html import render_html  # jinja2: only with --html

        write_file(args.html, render_html(result.to_json()))
    if args.dot:
        graphs = sorted(result.graphs, key=lambda g: g.get("kind") != "concrete")
        if not graphs:
            echo(err, f"absmc: note: --method {method} drew no state graph; {args.dot} not written")
            return
        traces = [r.trace for r in result.results if r.verdict == "violated" and r.trace]
        rows = [s.to_json() for s in traces[0].steps] if traces else []
        from absmc.report.dot import to_dot, trace_path

        path = trace_path(graphs[0], rows)
        write_file(args.dot, to_dot(graphs[0], path))


def _automata(system: System, args: CheckArgs) -> dict[str, str]:
    """The violation automaton of each selected ltl block as text (Spot's HOA text or never
    claim; a hand-written claim as its edge list), by property name."""
    from absmc.kernel.ltl.buchi import automaton_text

    picked = [p for p in system.ltl if args.ltl is None or p.name == args.ltl]
    texts = {}
    for p in picked:
        if p.formula is not None:
            texts[p.name] = automaton_text(p.formula, args.show_automaton or "hoa")
        elif p.claim is not None:
            texts[p.name] = p.claim.describe()
    return texts


def _reloading(first: System, args: CheckArgs) -> Callable[[int], System]:
    """The model ``first`` (``args.model`` loaded) with ``k`` more process slots, loaded
    again (``k == 0``: ``first`` itself), for :func:`registry.run_growing`."""

    def load_with(k: int) -> System:
        if k == 0:
            return first
        again = load(args.model, args.defines, reduce=reduces(args.reduce), extra_slots=k)
        return add_predicates(again, args.predicates)

    return load_with


def run_check(args: CheckArgs, out: TextIO, err: TextIO, debug: bool = False) -> int:
    """``absmc check``: print one verdict per property (or JSON) on ``out``, errors on ``err``;
    returns the exit code (0 holds, 1 violated, 2 usage/model error, 3 unknown, 4 internal)."""

    def body() -> int:
        registry.forget_earlier_interrupts()
        method = None if args.is_default("method") else args.method
        engine = registry.for_file(args.model, method)
        _refuse_foreign(args, engine)
        for flag, target in (("--html", args.html), ("--dot", args.dot), ("--trail", args.trail)):
            folder = Path(target).parent if target else None
            if folder is not None and not folder.is_dir():  # say so before the search
                raise UsageError(f"{flag} {target}: no folder '{folder}' to write it in")
        model: System | str = args.model  # an engine that reads its files takes the name
        automata: dict[str, str] = {}
        if not engine.reads_files:
            try:
                loaded = load(args.model, args.defines, args.timeout, reduce=reduces(args.reduce))
            except (LoadTimeout, KeyboardInterrupt) as e:
                if not args.as_json:
                    raise
                # nothing was checked: no property results, the whole run is unknown
                why = (
                    str(e) if isinstance(e, LoadTimeout) else "interrupted while loading the model"
                )
                echo(err, f"absmc: {why} (verdict unknown)")
                payload = {"schema_version": SCHEMA_VERSION, "model": args.model}
                payload |= {"method": engine.name, "verdict": "unknown"}
                echo(out, json.dumps({**payload, "results": [], "notes": [why]}))
                return EXIT_UNKNOWN
            model = add_predicates(loaded, args.predicates)
            automata = _automata(model, args) if args.show_automaton is not None else {}
        if not args.as_json:
            for name, text in automata.items():
                echo(out, f"// violation automaton of '{name}'\n{text}")
        own = method_cli(engine.name).build(args)
        show = args.progress if args.progress is not None else err.isatty()
        line = ProgressLine(err) if show else None
        try:
            opts = check_options(args, line, program=engine.reads_files)
            if isinstance(model, System):
                result = registry.run_growing(engine, _reloading(model, args), opts, own)
            else:
                result = registry.run(engine, model, opts, own)
        except Disagreement as e:
            report_disagreement(e, err)
            if args.as_json:
                echo(out, json.dumps(error_json(f"internal error: {e}", EXIT_INTERNAL)))
            return EXIT_INTERNAL
        finally:
            if line is not None:
                line.close()
        result = dataclasses.replace(result, model=args.model)
        if automata and args.as_json:
            shown = [f"violation automaton of '{n}':\n{t}" for n, t in automata.items()]
            result = dataclasses.replace(result, notes=(*result.notes, *shown))
        trail = None
        # a trail replays on a System: not for an engine that reads its own files
        wanted = not (args.no_trail or trails_off()) or args.trail is not None
        if wanted and not engine.reads_files:
            where = args.trail if args.trail is not None else trail_path(args.model)
            trail = write_trail(result, args.defines, args.fairness, where, err)
        emit(result, args.as_json, out, show_iterations=args.table, trail=trail)
        write_pictures(result, args, err, engine.name)
        return result.exit_code

    return guarded(body, err, debug, out if args.as_json else None)


def _method_help() -> str:
    lines = "; ".join(f"{e.name} = {e.description}" for e in registry.ENGINES)
    return f"Checking method: {lines}."


def make_check_command() -> click.Command:
    """The ``absmc check`` command, its options generated from their declarations: the shared
    ones (:mod:`absmc.cli.args`) and each registered engine's own (``Engine.options``), listed
    in ``--help`` by group. Raises ``ValueError`` when two declarations share a name."""
    method = replace(SHARED[0], choices=tuple(registry.names()), help=_method_help())
    declared = (method, *SHARED[1:], *METHOD_SHARED, *registered_options())
    defaults(declared)  # one declaration per name

    @click.command(
        "check", cls=GroupedCommand, context_settings=CONTEXT, groups=groups_of(declared)
    )
    @click.argument("model", type=click.Path(dir_okay=False))
    @click.argument("entry_args", nargs=-1, metavar="[ARGS]...")
    @add_options(declared)
    @click.pass_context
    def check_command(ctx: click.Context, /, **params: Any) -> None:
        """Check the properties of MODEL (or of a Python component: MODEL.py --entry FUNC
        [ARGS]... --component NAME).

        Checks every invariant and unreachable property of the model, plus the built-in
        no-deadlock (some command is always enabled) and no-model-error (no out-of-range
        assignment, no division by zero). Prints one verdict per property, statistics, and a
        counterexample table for each violation.
        """
        debug = bool(ctx.obj and ctx.obj.get("debug"))
        sys.exit(run_check(CheckArgs.from_params(params), sys.stdout, sys.stderr, debug))

    return check_command


check_command = make_check_command()
