"""A hard wall-clock deadline for a computation that may not return in time: it runs in a
forked child process, which is killed when the deadline (plus a grace period) has passed.

For library code that holds the GIL inside one long native call (isl's operations through
islpy): there no watchdog thread and no Python signal handler runs until the call returns, so
the check's own deadline (:mod:`absmc.kernel.run.limits`) is met only as well as the library's
operation quota tracks wall time. The child keeps every other rule (its own limits, Ctrl-C and
SIGTERM ending it with ``unknown`` and statistics); the parent only enforces the end.

Where ``fork`` is not available the computation runs in the calling process.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import gc
import multiprocessing
import os
import pickle
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["Isolated", "die_with_parent", "run_with_deadline"]

T = TypeVar("T")

#: set in the child, so that a computation isolated there does not fork again
_IN_CHILD = False


def die_with_parent() -> None:
    """Linux: the kernel sends SIGKILL to this process when its parent ends (even by SIGKILL),
    so no child outlives the run that started it. Elsewhere nothing."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent ended before prctl took effect
        os._exit(1)


@dataclass(frozen=True)
class Isolated(Generic[T]):
    """What :func:`run_with_deadline` gives back: ``value`` (the computation's result) when it
    returned; else ``killed`` (the child was ended at the deadline) or ``interrupted``
    (Ctrl-C or SIGTERM reached the parent and the child did not answer within the grace
    period). ``error``: an exception the computation raised, re-raised by :meth:`get`."""

    value: T | None = None
    killed: bool = False
    interrupted: bool = False
    error: BaseException | None = None

    def get(self) -> T | None:
        """The value (``None`` when killed or interrupted); re-raises the child's exception."""
        if self.error is not None:
            raise self.error
        return self.value


def _child(fn: Callable[[], T], conn: multiprocessing.connection.Connection) -> None:
    global _IN_CHILD
    # what the child inherits is the parent's (its garbage too: a z3 context in a reference
    # cycle takes seconds to delete): frozen, never scanned or freed by the child's collections
    gc.freeze()
    _IN_CHILD = True
    die_with_parent()
    try:
        payload: tuple[str, object] = ("value", fn())
    except BaseException as e:  # handed to the parent, which re-raises it
        payload = ("error", e)
    # an interrupt passed on late must not cut the answer short
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        data = pickle.dumps(payload)
    except Exception as e:
        data = pickle.dumps(("error", RuntimeError(f"the result does not pickle: {e}")))
    with contextlib.suppress(OSError):
        conn.send_bytes(data)
    conn.close()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # no atexit handlers, no second flush of the parent's buffers


def run_with_deadline(fn: Callable[[], T], deadline: float | None, grace: float) -> Isolated[T]:
    """Run ``fn()`` in a forked child and return its result, or stop the child once
    ``deadline`` (a ``time.monotonic()`` instant) plus ``grace`` seconds has passed.

    ``fn`` runs in the calling process instead when ``deadline`` is ``None``, when ``fork``
    is unavailable, or when called inside such a child already. The result and any exception
    travel pickled. Ctrl-C/SIGTERM in the parent (a ``KeyboardInterrupt``) is passed on to the
    child as SIGTERM; its answer (``unknown``, "interrupted") is awaited ``grace`` seconds.
    Never raises for the child's end; :meth:`Isolated.get` re-raises ``fn``'s exception."""
    if deadline is None or _IN_CHILD or "fork" not in multiprocessing.get_all_start_methods():
        return _inline(fn)
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    sys.stdout.flush()
    sys.stderr.flush()
    proc = ctx.Process(target=_child, args=(fn, send), name="absmc-deadline", daemon=True)
    proc.start()
    send.close()
    interrupted = False
    forward_at: float | None = None  # when to pass an interrupt on to the child
    end = deadline + grace
    try:
        while True:
            try:
                now = time.monotonic()
                if forward_at is not None and now >= forward_at:
                    forward_at = None
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(proc.pid or 0, signal.SIGTERM)
                if now >= end:
                    return Isolated(killed=not interrupted, interrupted=interrupted)
                if recv.poll(min(end - now, 0.1)):
                    kind, payload = pickle.loads(recv.recv_bytes())
                    if kind == "error":
                        assert isinstance(payload, BaseException)
                        return Isolated(error=payload)
                    return Isolated(value=payload)
                if not proc.is_alive() and not recv.poll(0):
                    return Isolated(error=_ended(proc.exitcode))
            except KeyboardInterrupt:
                if interrupted:  # a second Ctrl-C: stop waiting
                    return Isolated(interrupted=True)
                interrupted = True
                # Ctrl-C reached the child too (one process group): give it a moment before
                # passing the interrupt on (a SIGTERM sent to this process alone)
                forward_at = time.monotonic() + min(grace, _FORWARD_AFTER)
                end = time.monotonic() + grace
            except EOFError:
                return Isolated(error=_ended(proc.exitcode))
    finally:
        recv.close()
        if proc.is_alive():
            proc.kill()
        proc.join(timeout=5)


#: seconds between an interrupt of the parent and its being passed on to the child
_FORWARD_AFTER = 0.3


def _ended(code: int | None) -> RuntimeError:
    return RuntimeError(f"the check's process ended (exit code {code}) without an answer")


def _inline(fn: Callable[[], T]) -> Isolated[T]:
    return Isolated(value=fn())
