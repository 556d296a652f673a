"""Building a model's :class:`~absmc.native.semantics.NativeSemantics` in the background.

``--backend auto`` searches in Python first; a :class:`BackgroundBuild` started beside that
search generates the C source and compiles it after ``delay`` seconds (models whose Python
search ends sooner never start the compiler). The C compiler is a process of its own, so it runs
on another core while Python searches (the thread itself only waits for it, without the GIL,
except while the C source is generated). When the Python search ends first the build is
cancelled: the compiler's session is killed and nobody waits for the thread.

Generating the C source is Python work (~1 s for SPIN's pftp, 450 KB of C) that would hold the
GIL against the search beside it, so where the platform forks (:func:`os.fork`) a child process
generates it (:func:`run_forked`) and the thread only reads the result; the parent's
:class:`~absmc.native.cgen.CGen` is made before the fork and never generates (its layout, all
the semantics needs of it, is set by its constructor and deterministic in the System).
``ABSMC_BUILD_FORK=0`` generates in the thread instead.

A :class:`BackgroundRecompile` compiles a source already made at another level (``auto``'s
upgrade of a long C search from ``-O0``), under the same delay, ski-rental and cancel rules.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import subprocess
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from absmc.ir.system import Property, System
from absmc.native.build import (
    default_opt,
    estimate_compile_s,
    is_cached,
    kill_compiler,
    runtime_sources,
)
from absmc.native.cgen import CGen
from absmc.native.semantics import NativeSemantics

__all__ = [
    "FORK_ENV",
    "Background",
    "BackgroundBuild",
    "BackgroundRecompile",
    "ForkedValue",
    "OnCompile",
    "can_fork",
    "kill_child",
    "run_forked",
]

T = TypeVar("T")

#: what receives the compiler's process as it starts (:func:`~absmc.native.build.load_library`)
OnCompile = Callable[[subprocess.Popen[str]], None]

#: ``0`` generates the C source in the build's thread rather than in a forked child
FORK_ENV = "ABSMC_BUILD_FORK"


def can_fork() -> bool:
    """Whether :func:`run_forked` forks here (``os.fork`` exists and ``$ABSMC_BUILD_FORK`` is
    not ``0``)."""
    return hasattr(os, "fork") and os.environ.get(FORK_ENV, "") != "0"


def _fork(produce: Callable[[], bytes], own_group: bool) -> tuple[int, int]:
    """A forked child that writes ``produce()`` into a pipe and exits (no atexit handlers, no
    flushing of the parent's buffers; ``produce`` catches what it means to report).
    ``own_group``: the child leads a process group of its own, so that :func:`kill_child` ends
    it with the children it forks. Returns (its pid, the pipe's read end)."""
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():  # 3.12+: "multi-threaded ... fork()": the child only
        warnings.simplefilter("ignore", DeprecationWarning)  # computes, writes and exits
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child (coverage does not follow it)
        try:
            os.close(read_end)
            if own_group:
                with contextlib.suppress(OSError):
                    os.setpgid(0, 0)
            view = memoryview(produce())
            while view:
                view = view[os.write(write_end, view) :]
        finally:
            os._exit(0)
    os.close(write_end)
    return pid, read_end


def _collect(pid: int, read_end: int) -> tuple[bytes, int]:
    """What the child :func:`_fork` made wrote, once it has ended, and its exit code."""
    chunks: list[bytes] = []
    try:
        while chunk := os.read(read_end, 1 << 20):
            chunks.append(chunk)
    finally:
        os.close(read_end)
        _, status = os.waitpid(pid, 0)
    return b"".join(chunks), os.waitstatus_to_exitcode(status)


def run_forked(make: Callable[[], str], on_child: Callable[[int], None]) -> str:
    """``make()`` (a C source generator: pure Python work) run in a forked child process, so
    that the caller's interpreter keeps the GIL for its other threads; the child writes the
    text into a pipe (no file is left behind by a child or a parent that dies). The child's
    pid goes to ``on_child`` as it starts (killing it, :func:`kill_child`, ends the generation
    and the processes it forked: ForkedValue's analyses beside it). Raises what ``make``
    raised in the child (``Unsupported``; a ``RuntimeError`` for a child that died, e.g.
    killed by :meth:`BackgroundBuild.cancel`)."""

    def produce() -> bytes:
        try:
            return b"0" + make().encode("utf-8")
        except Exception as e:  # Unsupported: the parent re-raises it
            return b"3" + _pickled_error(e)

    pid, read_end = _fork(produce, own_group=True)
    try:
        on_child(pid)
    finally:
        data, code = _collect(pid, read_end)
    if code != 0 or not data:
        raise RuntimeError(f"the C source generator ended with status {code}")
    if data[:1] == b"3":
        raise pickle.loads(data[1:])
    return data[1:].decode("utf-8")


class ForkedValue(Generic[T]):
    """``compute()`` (pure Python work whose result pickles) started in a forked child, while
    the caller goes on with other work (:func:`can_fork`; else computed on :meth:`result`):
    on 2 CPUs the C source of SPIN's mobile1 (0.75 s) is generated while the child analyses
    its partial-order tables (0.4 s). :meth:`result` waits for the child's value; a child that
    failed or died has it computed again in the caller (the same function: the same value).
    :meth:`cancel` kills the child; one of the two must be called."""

    def __init__(self, compute: Callable[[], T]) -> None:
        self._compute = compute
        self._pid = 0
        self._read = -1
        if not can_fork():
            return

        def produce() -> bytes:
            try:
                return pickle.dumps(compute(), protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # the parent computes it again and meets it there
                return b""

        self._pid, self._read = _fork(produce, own_group=False)

    def result(self) -> T:
        """The value (waiting for the child). Raises what ``compute`` raises."""
        if self._pid:
            data = self._reap()
            with contextlib.suppress(Exception):  # a child that died: computed here
                if data:
                    value: T = pickle.loads(data)
                    return value
        return self._compute()

    def cancel(self) -> None:
        """Kill the child (its value is not needed)."""
        if self._pid:
            kill_child(self._pid)
            self._reap()

    def _reap(self) -> bytes:
        data, _code = _collect(self._pid, self._read)
        self._pid, self._read = 0, -1
        return data


def _pickled_error(e: Exception) -> bytes:
    try:
        return pickle.dumps(e)
    except Exception:  # an exception that does not pickle: its words
        return pickle.dumps(RuntimeError(f"{type(e).__name__}: {e}"))


class Background(Generic[T]):
    """A build in a daemon thread that starts ``delay`` seconds after :meth:`start` and
    compiles only once ``ratio`` times the compiler's estimated time (:func:`~absmc.native.
    build.estimate_compile_s`) has passed since :meth:`start` (0: at once; at once too when the
    compiled module is in the cache) — the ski-rental rule: a search that ends sooner never pays
    for a compilation much longer than itself. :meth:`ready` says whether it is built,
    :meth:`result` gives it (building it in the caller's thread when it has not started),
    :meth:`cancel` abandons it (the compiler and a forked generator killed). Subclasses make
    the product in :meth:`_produce`."""

    def __init__(self, delay: float = 0.0, ratio: float = 0.0) -> None:
        self._ratio = ratio
        self._t0 = time.monotonic()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._started = False
        self._cancelled = False
        self._done = threading.Event()
        self._proc: subprocess.Popen[str] | None = None
        self._child: int | None = None
        self._product: T | None = None
        self._error: Exception | None = None
        self._timer = threading.Timer(delay, self._run)
        self._timer.daemon = True

    def start(self) -> None:
        """Start the delay (then the build)."""
        self._t0 = time.monotonic()
        self._timer.start()

    def _claim(self) -> bool:
        with self._lock:
            if self._started or self._cancelled:
                return False
            self._started = True
            return True

    def _on_compile(self, proc: subprocess.Popen[str]) -> None:
        with self._lock:
            self._proc = proc
            cancelled = self._cancelled
        if cancelled:
            kill_compiler(proc)

    def _run(self) -> None:
        if self._claim():
            self._build(wait=True)

    def _on_child(self, pid: int) -> None:
        with self._lock:
            self._child = pid
            cancelled = self._cancelled
        if cancelled:
            kill_child(pid)

    def _wait_to_compile(self, source: str, opt: str) -> None:
        """The ski-rental wait before compiling ``source`` at ``opt`` (none when cached).
        Raises ``RuntimeError`` when cancelled meanwhile."""
        if is_cached(source, opt):
            return
        left = self._ratio * estimate_compile_s(len(source), opt) - (time.monotonic() - self._t0)
        if left > 0 and self._stop.wait(left):
            raise RuntimeError("the native build was cancelled")

    def _produce(self, wait: bool) -> T:
        """The product (``wait``: in the background thread, so the ski-rental wait applies)."""
        raise NotImplementedError

    def _build(self, wait: bool = False) -> None:
        try:
            self._product = self._produce(wait)
        except Exception as e:  # Unsupported, CompilerError, OSError: the caller's to judge
            self._error = e
        finally:
            self._done.set()

    @property
    def started(self) -> bool:
        """Whether the build has begun (the delay is over)."""
        return self._started

    def ready(self) -> bool:
        """Whether the product is built (not: still building, failed, not started)."""
        return self._done.is_set() and self._product is not None

    def failed(self) -> Exception | None:
        """The exception the build ended with (``None``: none, or not finished)."""
        return self._error if self._done.is_set() else None

    def result(self) -> T:
        """The product: waits for a running build, or builds it now when the delay has not
        passed. Raises what the build raised (``Unsupported``, ``CompilerError``) and
        ``RuntimeError`` after :meth:`cancel`."""
        self._timer.cancel()
        if self._claim():
            self._build()
        elif not self._started:
            raise RuntimeError("the native build was cancelled")
        self._done.wait()
        if self._product is None:
            raise self._error or RuntimeError("the native build was cancelled")
        return self._product

    def cancel(self) -> None:
        """Abandon the build: no start after the delay, the compiler (if running) killed; does
        not wait for the thread."""
        self._timer.cancel()
        self._stop.set()
        with self._lock:
            self._cancelled = True
            proc = self._proc
            child = self._child
        if proc is not None:
            kill_compiler(proc)
        if child is not None:
            kill_child(child)


class BackgroundBuild(Background[NativeSemantics]):
    """``NativeSemantics(system, properties, opt)`` built in the background (the rules of
    :class:`Background`): it generates the source (in a forked child where
    :func:`can_fork`), then compiles it at ``opt`` (``None``: :func:`~absmc.native.build.
    default_opt` of the source's length)."""

    def __init__(
        self,
        system: System,
        properties: Sequence[Property],
        delay: float = 0.0,
        opt: str | None = None,
        ratio: float = 0.0,
    ) -> None:
        super().__init__(delay, ratio)
        self._system = system
        self._opt = opt
        self._properties = tuple(properties)

    def _produce(self, wait: bool) -> NativeSemantics:
        gen = CGen(self._system, self._properties)

        def make() -> str:
            return gen.source(*runtime_sources())

        if wait and can_fork():
            source = run_forked(make, self._on_child)  # the child's gen generates
            with self._lock:
                self._child = None
        else:
            source = make()
        opt = self._opt or default_opt(len(source))
        if wait:
            self._wait_to_compile(source, opt)
        return NativeSemantics(
            self._system, self._properties, opt, on_compile=self._on_compile, prepared=(gen, source)
        )


class BackgroundRecompile(Background[T]):
    """A library whose C ``source`` is already made, compiled again at ``opt`` in the
    background (the rules of :class:`Background`): ``construct(on_compile)`` loads it (e.g.
    :meth:`absmc.native.ltl.NativeLtl.recompiled`), passing ``on_compile`` to
    :func:`~absmc.native.build.load_library` so that :meth:`cancel` can end the compiler."""

    def __init__(
        self,
        source: str,
        opt: str,
        construct: Callable[[OnCompile], T],
        delay: float = 0.0,
        ratio: float = 0.0,
    ) -> None:
        super().__init__(delay, ratio)
        self._source = source
        self._opt = opt
        self._construct = construct

    def _produce(self, wait: bool) -> T:
        if wait:
            self._wait_to_compile(self._source, self._opt)
        return self._construct(self._on_compile)


def kill_child(pid: int) -> None:
    """End the forked generator ``pid`` (:func:`run_forked`) and the processes it forked (its
    process group, once it has made one); nothing when it has ended."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:  # no group of its own yet
            os.kill(pid, signal.SIGKILL)
