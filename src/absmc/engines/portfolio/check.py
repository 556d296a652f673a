"""The portfolio run: plan the members, start their processes, collect and check their answers,
stop them once every property is decided (or at the time limit, or on Ctrl-C) and report per
property which method decided it and why the others did not."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

from absmc.codegen.python import compile_system
from absmc.engines.engine import Engine
from absmc.engines.portfolio.decide import Board, LassoCheck
from absmc.engines.portfolio.engine import METHOD, PortfolioOptions
from absmc.engines.portfolio.members import Member, member_options, plan, start_order
from absmc.engines.portfolio.slices import Slices
from absmc.engines.portfolio.workers import Pool, Report
from absmc.ir.system import System
from absmc.kernel.run.limits import INTERRUPTED
from absmc.kernel.run.options import CheckOptions, property_kind, select_properties
from absmc.kernel.run.result import Result, Stats

#: seconds past ``--timeout`` the portfolio waits for members to report their partial answers
GRACE_S = 2.0


def check_portfolio(
    system: System,
    options: CheckOptions,
    own: PortfolioOptions,
    engines: Sequence[Engine[object]],
) -> Result:
    """Check ``system`` with the ``engines`` that can answer the selected properties, each in
    its own process (see :mod:`absmc.engines.portfolio`). Per property, the first conclusive
    accepted answer decides (``PropertyResult.method`` is its engine; ``extra["methods"]``
    records every engine's outcome: decided, agrees, unknown with its reason, sat out,
    stopped). ``--timeout`` and Ctrl-C end the run with ``unknown`` for what is undecided.
    Raises ``Disagreement`` (an internal error) when two engines contradict each other,
    ``OptionError`` for unknown property names."""
    t0 = time.monotonic()
    selection = select_properties(system, options)
    names = [*selection.all_names(), *(p.name for p in selection.ctl)]
    kinds = {n: property_kind(system, n) for n in names}
    members = plan(system, options, names, engines, dict(own.members))
    lassos = LassoCheck({p.name: p for p in selection.ltl}, weakly_fair=options.fairness == "weak")
    board = Board(compile_system(system, selection.user), kinds, engines, lassos)
    for m in members:
        if m.absent is not None:
            board.note_all(m.engine.name, None, f"sat out: {m.absent}")
    running = [m for m in members if m.runs]
    deadline = options.limits.end(t0)
    statuses: dict[str, str] = {}
    graphs: list[dict[str, object]] = []
    stopped_why = "stopped: every property was decided before it answered"
    limit = max(1, own.workers or os.cpu_count() or 1)
    waiting = start_order(running, system)
    slices = Slices(t0, deadline, limit, len(running))
    early: dict[str, int] = {}  # member -> properties it sent as soon as it decided them
    with Pool() as pool:
        try:

            def launch() -> None:
                while (waiting or slices.again) and len(pool.running) < limit:
                    m = waiting.pop(0) if waiting else slices.again.pop(0)
                    pool.start(
                        m.engine,
                        system,
                        member_options(options, m, slices.time_for(m), min(limit, len(running))),
                        m.options,
                    )

            grace = None if deadline is None else deadline + GRACE_S

            def done() -> bool:
                # as every search does without --keep-going: stop at the first violation
                return board.complete or (
                    not options.keep_going and board.first_violation() is not None
                )

            while (pool.running or waiting or slices.again) and not done():
                launch()
                for report in pool.reports(slices.wake(grace)):
                    member = _member(running, report.engine)
                    if report.early:  # one property, the member goes on
                        early[report.engine] = early.get(report.engine, 0) + 1
                        n = early[report.engine]
                        statuses[report.engine] = f"decided {n} early, still running"
                        _take(board, report, member)
                        if done():
                            break
                        continue
                    statuses[report.engine] = _status(report)
                    if report.result is not None:
                        graphs += report.result.graphs
                    _take(board, report, member)
                    if done():
                        break
                    slices.answered(member, report, board)
                    launch()
                for name in slices.overrun(list(pool.running), running, board):
                    pool.stop_one(name)
                    statuses[name] = "stopped at the end of its time slice"
                    board.note_all(name, None, statuses[name], _member(running, name).properties)
                if grace is not None and time.monotonic() >= grace:
                    stopped_why = "no answer by the time limit"
                    break
            if not board.complete and board.first_violation() is not None:
                stopped_why = f"stopped at the first violation ({board.first_violation()})"
        except KeyboardInterrupt:
            stopped_why = INTERRUPTED
        for name in pool.stop():
            n = early.get(name, 0)
            statuses[name] = stopped_why if not n else f"{stopped_why}; it decided {n} early"
            board.note_all(name, None, stopped_why, _member(running, name).properties)
        for m in waiting + slices.again:
            why = "not started: " + _not_started(stopped_why, board)
            if m.engine.name in statuses:  # a second slice that never began
                why = f"{statuses[m.engine.name]}; its second run did not start"
            statuses[m.engine.name] = why
            board.note_all(m.engine.name, None, why, m.properties)
    total = time.monotonic() - t0
    order = [e.name for e in engines]
    notes = [f"{e}: {statuses.get(e, _absent(members, e))}" for e in order]
    if running:
        notes.append(slices.describe(start_order(running, system)))
    if stopped_why == INTERRUPTED:
        notes.append("interrupted: undecided properties are unknown")
    results = board.results(order, Stats(time_s=total))
    # abstract pictures first: they are what only a portfolio with abstraction can show
    graphs.sort(key=lambda g: g.get("kind") != "abstract")
    notes = [*notes, *board.notes]
    return Result(system.file or system.name, METHOD, tuple(results), tuple(notes), graphs)


def _not_started(stopped_why: str, board: Board) -> str:
    """Why a member waiting for a worker process never ran."""
    if stopped_why == INTERRUPTED:
        return "interrupted"
    if board.complete:
        return "every property was decided first"
    if stopped_why.startswith("stopped at the first violation"):
        return stopped_why.removeprefix("stopped ")
    return "no worker process was free before the time limit"


def _member(members: Sequence[Member], name: str) -> Member:
    return next(m for m in members if m.engine.name == name)


def _absent(members: Sequence[Member], name: str) -> str:
    m = next(m for m in members if m.engine.name == name)
    return f"sat out: {m.absent}" if m.absent else "did not run"


def _status(report: Report) -> str:
    if report.result is not None:
        verdicts = [r.verdict.value for r in report.result.results]
        counts = ", ".join(f"{verdicts.count(v)} {v}" for v in dict.fromkeys(verdicts))
        return f"answered in {report.time_s:.2f} s ({counts})"
    what = "internal error" if report.internal else "error"
    return f"{what}: {report.error}"


def _take(board: Board, report: Report, member: Member) -> None:
    if report.result is not None:
        board.offer(report.result)
        return
    what = "internal error" if report.internal else "error"
    board.note_all(report.engine, None, f"{what}: {report.error}", member.properties)
    if report.internal:
        board.notes.append(f"{report.engine} failed ({what}): {report.error}")
