"""The member processes of a portfolio: one process per engine, its answer sent back pickled,
stopped (SIGTERM, then SIGKILL) when it is no longer needed. No process outlives the call that
started it."""

from __future__ import annotations

import dataclasses
import gc
import multiprocessing
import os
import pickle
import queue
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from typing import Any

from absmc.engines.engine import AnyEngine
from absmc.errors import UsageError
from absmc.ir.span import ModelError
from absmc.ir.system import System
from absmc.kernel.model.initial import check_per_initial_state
from absmc.kernel.run.isolate import die_with_parent
from absmc.kernel.run.limits import handle_pending_signals
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import PropertyResult, Result


@dataclass(frozen=True)
class Report:
    """What a member process sends back: its ``result``, or ``error`` (a typed error's message,
    or with ``internal`` an exception that is a bug); ``time_s`` its wall time. ``early``: one
    property's conclusive result sent as soon as the engine had it (``CheckOptions.decided``);
    the process goes on."""

    engine: str
    result: Result | None
    error: str | None = None
    internal: bool = False
    time_s: float = 0.0
    early: bool = False


def _context() -> Any:
    """``fork`` where the platform has it (the model is inherited, not pickled), else spawn."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


#: the signals that stop a run; blocked while a member process is being started, so that the
#: parent registers every child it forked before it handles them
_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def _member(
    engine: AnyEngine, system: System, options: CheckOptions, own: object, out: Any
) -> None:
    """The body of a member process: check, pickle the report, send it.

    The objects a forked member inherits are its parent's, garbage among them: frozen
    (``gc.freeze``), so that the member's collections never scan or free them (each member
    would otherwise free the same garbage again; a z3 context in a reference cycle, left by an
    earlier check in the same process, takes seconds to delete)."""
    gc.freeze()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the portfolio stops it: just end
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the portfolio's to handle
    die_with_parent()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)  # blocked by Pool.start
    t0 = time.monotonic()

    def decided(r: PropertyResult) -> None:
        partial = Result(system.file or system.name, engine.name, (r,))
        spent = time.monotonic() - t0
        out.put(pickle.dumps(Report(engine.name, partial, time_s=spent, early=True)))

    try:
        if system.init_constraint is None or engine.capabilities.initial_sets:
            # one run over all initial states: its early answers are answers for the model
            result = engine.check(system, dataclasses.replace(options, decided=decided), own)
        else:  # as the registry runs it: once per initial state (a ModelError if unbounded)
            result = check_per_initial_state(engine.check, system, options, own)
        report = Report(engine.name, result)
    except (UsageError, ModelError) as e:
        report = Report(engine.name, None, str(e).splitlines()[0])
    except Exception as e:  # a bug of the engine: reported by the portfolio, never hidden
        report = Report(engine.name, None, f"{type(e).__name__}: {e}", internal=True)
    elapsed = time.monotonic() - t0
    try:
        data = pickle.dumps(
            Report(report.engine, report.result, report.error, report.internal, elapsed)
        )
    except Exception as e:
        data = pickle.dumps(
            Report(engine.name, None, f"its result does not pickle: {e}", True, elapsed)
        )
    out.put(data)
    out.close()
    out.join_thread()


class Pool:
    """Member processes started with :meth:`start`; :meth:`reports` yields their answers as
    they come; :meth:`stop` ends every process still running (also on exit of a ``with``)."""

    def __init__(self) -> None:
        self._ctx = _context()
        self._queue: Any = self._ctx.Queue()
        self.running: dict[str, BaseProcess] = {}
        self.started: dict[str, float] = {}

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self._queue.close()
        self._queue.cancel_join_thread()

    def start(self, engine: AnyEngine, system: System, options: CheckOptions, own: object) -> None:
        """Start ``engine``'s process."""
        p = self._ctx.Process(
            target=_member,
            args=(engine, system, options, own, self._queue),
            name=f"absmc-{engine.name}",
            # not a daemon: a member may start processes of its own (symbolic's deadline
            # child, kernel/run/isolate.py); stop() ends every member, and each dies with the
            # portfolio (die_with_parent)
            daemon=False,
        )
        # known to stop() before the fork: blocking the signals holds them off only in this
        # thread, and a Ctrl-C another thread receives may raise KeyboardInterrupt anywhere in
        # start(), after the fork; a forked member missing from ``running`` would outlive the
        # portfolio, and multiprocessing's exit handler would wait for it forever
        self.running[engine.name] = p
        self.started[engine.name] = time.monotonic()
        old = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
        try:
            p.start()
        except BaseException:
            if p.pid is None:  # not forked: nothing to stop
                self.running.pop(engine.name, None)
            raise
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    def reports(self, deadline: float | None) -> Iterator[Report]:
        """Answers as they arrive, until no process is left or ``deadline`` (monotonic
        seconds) passes. A process that ends without an answer yields an ``internal`` report
        naming its exit code."""
        while self.running:
            handle_pending_signals()  # a Ctrl-C whose handler CPython has not run yet
            wait = 0.1 if deadline is None else min(0.1, deadline - time.monotonic())
            if wait <= 0:
                return
            try:
                data = self._queue.get(timeout=wait)
            except queue.Empty:
                for name, p in list(self.running.items()):
                    if not p.is_alive() and self._queue.empty():
                        p.join()
                        del self.running[name]
                        spent = time.monotonic() - self.started[name]
                        yield Report(name, None, f"its process ended ({p.exitcode})", True, spent)
                continue
            report: Report = pickle.loads(data)
            if report.engine in self.running and not report.early:
                self.running.pop(report.engine).join(timeout=5)
            yield report

    def stop_one(self, name: str) -> None:
        """End the process of engine ``name`` (SIGTERM, SIGKILL after a second)."""
        p = self.running.pop(name, None)
        if p is None or p.pid is None:  # none, or never forked (start() cut short)
            return
        if p.is_alive():
            p.terminate()
        p.join(timeout=1)
        if p.is_alive() and p.pid is not None:
            os.kill(p.pid, signal.SIGKILL)
            p.join()

    def stop(self) -> list[str]:
        """End every running process (SIGTERM, SIGKILL after a second); their names."""
        names = list(self.running)
        started = [p for p in self.running.values() if p.pid is not None]  # forked
        for p in started:
            if p.is_alive():
                p.terminate()
        for p in started:
            p.join(timeout=1)
            if p.is_alive() and p.pid is not None:
                os.kill(p.pid, signal.SIGKILL)
                p.join()
        self.running.clear()
        return names
