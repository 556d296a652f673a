"""One controlled execution of the real program on CPython: every program thread is a real
thread that runs only while it holds the baton (a per-thread lock), and the thread holding
it hands it on at each *scheduling point* to the thread a ``chooser`` picks among the enabled
ones, so exactly one program thread runs between two points.

Scheduling points (``sys.settrace`` events in the traced code of the program's file):

* a ``line`` event (before the line runs), except lines that only read and write the
  frame's own locals holding immutable values (:mod:`.lines`): such a line commutes with
  every other thread's steps, so it runs in the step before it;
* a ``return`` event into a traced caller (the caller's rest of the line is a new step);
* with ``granularity="access"``, an ``opcode`` event before a store into an attribute, an
  element or a global (the read of ``x.a += 1`` and its write are two steps);
* a blocking call of a primitive (:mod:`.primitives`) whose condition is false: the thread
  is *blocked* (enabled again when the condition holds, or at once when a timeout may end
  the wait); a thread is ``enabled`` when it is ready, or blocked with a true condition or a
  timeout.

A run ends when no thread is enabled: every non-daemon thread ended (a valid end), or a
*deadlock*. Violations: an ``assert`` statement that fails (``assert``), an exception that
leaves a thread (``no-uncaught-exception``), a deadlock (``no-deadlock``) — the properties
of absmc's component check. Only the standard library is imported.
"""

from __future__ import annotations

import _thread
import contextlib
import copy
import sys
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import absmc.component.oracle.primitives as primitives
from absmc.component.oracle.fingerprint import state_key
from absmc.component.oracle.lines import LineInfo, analyse

#: the properties (absmc's names)
ASSERT = "assert"
UNCAUGHT = "no-uncaught-exception"
DEADLOCK = "no-deadlock"

#: chooser(point index, current thread id, enabled thread ids) -> the thread to run
Chooser = Callable[[int, int, tuple[int, ...]], int]


class _Abort(BaseException):
    """Ends a program thread when its run is over (not an ``Exception``: ``except
    Exception`` in the program does not catch it)."""


@dataclass(frozen=True)
class Violation:
    """A property violated in a run: ``prop``, the thread id, the program line (the failed
    ``assert``, the line an uncaught exception came from; 0 for a deadlock), a message, and
    for a deadlock the ``(thread id, line)`` of every live thread."""

    prop: str
    thread: int
    line: int
    message: str
    blocked: tuple[tuple[int, int], ...] = ()


@dataclass
class RunResult:
    """The outcome of one run: ``end`` is ``"done"`` (valid end), ``"deadlock"``, ``"limit"``
    (more than ``max_steps`` line events) or ``"error"`` (the program could not be run: the
    reason in ``note``); ``choices`` the (enabled, chosen) pair of every scheduling point,
    ``lines`` every traced ``(thread, line)`` event in order."""

    end: str = "done"
    note: str = ""
    violations: list[Violation] = field(default_factory=list)
    choices: list[tuple[tuple[int, ...], int]] = field(default_factory=list)
    lines: list[tuple[int, int]] = field(default_factory=list)


@dataclass
class Program:
    """What to run: the program file, its entry function and arguments, which code is
    traced (``traced``: ``(first, last)`` line ranges of the functions whose steps are
    scheduled; ``None``: every function of the file) and the ``granularity``."""

    path: Path
    entry: str
    args: Sequence[Any] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    traced: Sequence[tuple[int, int]] | None = None
    granularity: str = "statement"

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        source = self.path.read_text(encoding="utf-8")
        self.code = compile(source, str(self.path), "exec")
        self.filename = str(self.path)
        self.info: LineInfo = analyse(source)


class _T:
    """A program thread: id (start order), status (``ready``, ``blocked``, ``done``), its
    baton (a real lock, held while the thread may not run) and blocking condition."""

    def __init__(self, tid: int, obj: Any, daemon: bool) -> None:
        self.id = tid
        self.obj = obj
        self.daemon = daemon
        self.status = "ready"
        self.can: Callable[[], bool] | None = None
        self.timed = False
        self.line = 0
        self.started = False
        self.ident: int | None = None
        #: every frame's evaluation stack could be read at the last point
        #: (:mod:`.fingerprint`); else ``hist``, the hash of the choices up to its last
        #: step, stands for what the stacks hold
        self.clean = True
        self.hist = 0
        self.baton = _thread.allocate_lock()
        self.baton.acquire()
        self.exited = _thread.allocate_lock()
        self.exited.acquire()

    def enabled(self) -> bool:
        if self.status == "ready":
            return True
        if self.status == "blocked":
            assert self.can is not None
            return self.timed or bool(self.can())
        return False


_STORES = frozenset(
    op
    for name, op in __import__("dis").opmap.items()
    if name in ("STORE_ATTR", "STORE_SUBSCR", "STORE_GLOBAL", "DELETE_ATTR", "DELETE_SUBSCR")
)


class Run:
    """One execution of ``program`` under ``chooser``; :meth:`execute` returns the
    :class:`RunResult`. ``max_steps`` bounds the traced line events (an endless loop ends
    the run as ``limit``); ``wall_s`` bounds the real time (a program that blocks outside
    the primitives)."""

    def __init__(
        self,
        program: Program,
        chooser: Chooser,
        max_steps: int = 20_000,
        wall_s: float = 30.0,
        cache: set[Any] | None = None,
        prefix_len: int = 0,
        start_points: bool = True,
    ) -> None:
        self.program = program
        self.chooser = chooser
        self.max_steps = max_steps
        self.wall_s = wall_s
        self.result = RunResult()
        self.threads: list[_T] = []
        self.cur: _T
        self.thread_counter = 0
        self.steps = 0
        self.aborting = False
        self.finished = _thread.allocate_lock()
        self.finished.acquire()
        self._seen: set[int] = set()
        self._importing = False
        self._access = program.granularity == "access"
        self._ranges = program.traced
        #: visited states (:mod:`.fingerprint`), checked after the first ``prefix_len``
        #: points (those replay an earlier run); a visited state ends the run (``pruned``)
        self.cache = cache
        self.prefix_len = prefix_len
        #: a new thread's first line is a point of its own (else it runs in the step that
        #: chose the thread first: the same states, fewer of them)
        self.start_points = start_points
        Run._serial += 1
        self.serial = Run._serial
        self.ns: dict[str, Any] = {}
        #: a hash of the choices so far (what a thread with unread stack values depends on)
        self.path = 0

    _serial = 0

    # -- driving ---------------------------------------------------------------------------
    def execute(self) -> RunResult:
        """Run the program to its end (or deadlock, or a limit) and return the result."""
        shims = primitives.shim_modules()
        primitives.ACTIVE.append(self)
        try:
            main = _T(0, primitives._MainThread(), False)
            main.obj._t = main
            self.threads.append(main)
            self.cur = main
            _thread.start_new_thread(self._bootstrap, (main, lambda: self._main(shims)))
            main.baton.release()
            if not self.finished.acquire(timeout=self.wall_s):
                self._end("error", f"no end within {self.wall_s:g} s of real time")
            for t in list(self.threads):
                if t.status != "done" and t is not self.cur:
                    t.baton.release()
            for t in list(self.threads):
                t.exited.acquire(timeout=1.0)
        finally:
            primitives.ACTIVE.remove(self)
            sys.modules.pop(self._modname, None)
        return self.result

    _modname = "absmc_oracle_program"

    def _main(self, shims: dict[str, types.ModuleType]) -> None:
        module = types.ModuleType(self._modname)
        module.__file__ = self.program.filename
        ns = module.__dict__
        self.ns = ns
        bi = dict(vars(__import__("builtins")))
        bi["__import__"] = primitives.importer(shims)
        ns["__builtins__"] = bi
        sys.modules[self._modname] = module
        self._importing = True
        try:
            exec(self.program.code, ns)
        except BaseException as e:
            raise _ImportFailed(f"importing the program raised {type(e).__name__}: {e}") from e
        finally:
            self._importing = False
        entry = ns.get(self.program.entry)
        if not callable(entry):
            raise _ImportFailed(f"the program defines no function '{self.program.entry}'")
        entry(*copy.deepcopy(tuple(self.program.args)), **copy.deepcopy(self.program.kwargs))

    def _bootstrap(self, t: _T, body: Callable[[], Any]) -> None:
        t.baton.acquire()
        t.ident = _thread.get_ident()
        try:
            if self.aborting:
                return
            sys.settrace(self._global)
            try:
                body()
            except _Abort:
                pass
            except _ImportFailed as e:
                self._end("error", str(e))
            except BaseException as e:
                if not self.aborting:
                    line = self._origin(e)
                    text = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
                    self.result.violations.append(
                        Violation(UNCAUGHT, t.id, line, f"uncaught {text} at line {line}")
                    )
            finally:
                sys.settrace(None)
            t.status = "done"
            if not self.aborting:
                with contextlib.suppress(_Abort):
                    self._point(t)
        finally:
            t.exited.release()

    def spawn(self, obj: primitives.Thread) -> None:
        """``obj.start()``: a new program thread (ready; when chosen it runs to its first
        scheduling point, the line event of its first line)."""
        t = _T(len(self.threads), obj, obj.daemon)
        obj._t = t
        self.threads.append(t)
        _thread.start_new_thread(self._bootstrap, (t, obj.run))

    # -- scheduling ------------------------------------------------------------------------
    def block(self, t: _T, can: Callable[[], bool], timed: bool) -> bool:
        """Thread ``t`` waits until ``can()`` (or, with ``timed``, until a timeout may end
        the wait, whenever it is chosen). Returns ``can()`` when it runs again."""
        if can():
            return True
        t.status, t.can, t.timed = "blocked", can, timed
        t.line = self._user_line()
        try:
            self._point(t)
        finally:
            t.status, t.can, t.timed = "ready", None, False
        return bool(can())

    def _point(self, t: _T) -> None:
        """A scheduling point of the thread ``t`` (which holds the baton)."""
        if self.aborting:
            raise _Abort
        enabled = tuple(u.id for u in self.threads if u.enabled())
        if not enabled:
            live = [u for u in self.threads if u.status != "done"]
            if all(u.daemon for u in live):
                self._end("done", "")
            else:
                blocked = tuple((u.id, u.line) for u in live)
                where = "; ".join(f"thread {i} blocked at line {ln}" for i, ln in blocked)
                self.result.violations.append(
                    Violation(DEADLOCK, t.id, 0, f"deadlock: {where}", blocked)
                )
                self._end("deadlock", "")
            if t.status != "done":
                raise _Abort
            return
        if self.cache is not None and len(self.result.choices) >= self.prefix_len:
            key = state_key(self, _T)
            if key in self.cache:
                self._end("pruned", "")
                if t.status != "done":
                    raise _Abort
                return
            self.cache.add(key)
        nxt = self.chooser(len(self.result.choices), t.id, enabled)
        if nxt not in enabled:
            self._end("error", f"the chooser picked thread {nxt}, not enabled in {enabled}")
            raise _Abort
        self.result.choices.append((enabled, nxt))
        self.path = hash((self.path, nxt))
        self.threads[nxt].hist = self.path
        if nxt == t.id:
            return
        u = self.threads[nxt]
        self.cur = u
        u.baton.release()
        if t.status == "done":
            return
        t.baton.acquire()
        if self.aborting:
            raise _Abort

    def _end(self, end: str, note: str) -> None:
        if self.aborting:
            return
        self.result.end = end
        self.result.note = note
        self.aborting = True
        self.finished.release()

    # -- tracing ---------------------------------------------------------------------------
    def _traced(self, code: types.CodeType) -> bool:
        if code.co_filename != self.program.filename or code.co_name == "<module>":
            return False
        if self._ranges is None:
            return True
        first = code.co_firstlineno
        return any(a <= first <= b for a, b in self._ranges)

    def _global(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        if self._importing or not self._traced(frame.f_code):
            return None
        if self._access:
            frame.f_trace_opcodes = True
        return self._local

    def _local(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        if self.aborting:
            raise _Abort
        t = self.cur
        if event == "line":
            self.steps += 1
            if self.steps > self.max_steps:
                self._end("limit", f"more than {self.max_steps} line events in one run")
                raise _Abort
            line = frame.f_lineno
            self.result.lines.append((t.id, line))
            t.line = line
            if not t.started and not self.start_points:
                t.started = True
            elif not self.program.info.local_only(frame, line):
                self._point(t)
        elif event == "return":
            back = frame.f_back
            if back is not None and back.f_trace is not None and self._traced(back.f_code):
                t.line = back.f_lineno
                self._point(t)
        elif event == "exception":
            exc = arg[1]
            tb = arg[2]
            if (
                type(exc) is AssertionError
                and id(exc) not in self._seen
                and tb is not None
                and tb.tb_next is None
                and frame.f_lineno in self.program.info.asserts
            ):
                self._seen.add(id(exc))
                text = f": {exc}" if str(exc) else ""
                self.result.violations.append(
                    Violation(
                        ASSERT,
                        t.id,
                        frame.f_lineno,
                        f"assertion failed at line {frame.f_lineno}{text}",
                    )
                )
        elif event == "opcode" and self._access and frame.f_code.co_code[frame.f_lasti] in _STORES:
            self._point(t)
        return self._local

    def _user_line(self) -> int:
        f: types.FrameType | None = sys._getframe(2)
        while f is not None:
            if f.f_code.co_filename == self.program.filename:
                return f.f_lineno
            f = f.f_back
        return 0

    def _origin(self, e: BaseException) -> int:
        line = 0
        tb = e.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == self.program.filename:
                line = tb.tb_lineno
            tb = tb.tb_next
        return line


class _ImportFailed(Exception):
    """The program could not be imported or has no such entry (not a violation)."""
