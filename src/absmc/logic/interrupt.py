"""Ctrl-C and SIGTERM reach a running Z3 call.

CPython runs a signal handler only between bytecodes, so a ``KeyboardInterrupt`` waits for a
solver call (seconds, or the whole ``--timeout``) to return. :func:`watch` closes that gap: the
C-level signal handler writes the signal number to a socket (``signal.set_wakeup_fd``), a daemon
thread reading it calls ``Context.interrupt()`` on every watched Z3 context — Z3's documented,
thread-safe way to stop a running check — and the call returns ``unknown``; the Python handler
then raises as usual (``KeyboardInterrupt`` for both signals in the CLI), so the run ends with
verdict ``unknown``, reason "interrupted", exit 3.

When the signal arrives between two Z3 calls, the next call fails instead (``Z3Exception``,
e.g. "push canceled"), and the ``KeyboardInterrupt`` may have been swallowed: CPython ignores
an exception raised in a ``__del__``, such as Z3's ``AstRef.__del__``. :func:`interruptible`
turns such a ``Z3Exception`` back into ``KeyboardInterrupt``, so the run still ends as
interrupted and not as an internal error. A loop of solver calls polls :func:`raise_if_since`
between its calls (``engines/under``), so a swallowed ``KeyboardInterrupt`` still stops it: the
canceled call itself answered ``unknown`` and raised nothing.

Installed once per process, from the main thread only (elsewhere :func:`watch` does nothing).
"""

from __future__ import annotations

import functools
import signal
import socket
import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar, cast

import z3

_INTERRUPTING = frozenset({int(signal.SIGINT), int(signal.SIGTERM)})

_contexts: weakref.WeakSet[z3.Context] = weakref.WeakSet()
_lock = threading.Lock()
_installed = False
#: set once SIGINT or SIGTERM has reached the listening thread
_received = threading.Event()
#: how many SIGINT/SIGTERM signals have reached the listening thread (under ``_lock``)
_count = 0


def _listen(sock: socket.socket) -> None:
    """Daemon thread: interrupt every watched context when SIGINT or SIGTERM arrives."""
    while True:
        try:
            data = sock.recv(64)
        except OSError:
            return
        if not data:
            return
        caught = sum(b in _INTERRUPTING for b in data)
        if caught:
            global _count
            _received.set()
            with _lock:
                _count += caught
                contexts = list(_contexts)
            for ctx in contexts:
                ctx.interrupt()


def watch(ctx: z3.Context) -> None:
    """Make SIGINT/SIGTERM interrupt Z3 calls running in ``ctx`` (kept as a weak reference).

    The first call installs the wakeup socket and the listening thread; later calls only add
    the context. Does nothing outside the main thread (``signal.set_wakeup_fd`` needs it)."""
    global _installed
    with _lock:
        _contexts.add(ctx)
        if _installed or threading.current_thread() is not threading.main_thread():
            return
        reader, writer = socket.socketpair()
        writer.setblocking(False)
        try:
            signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
        except ValueError:  # not the main interpreter's main thread
            reader.close()
            writer.close()
            return
        _installed = True
        # the sockets live as long as the process: keep them referenced
        _keep.extend([reader, writer])
        threading.Thread(
            target=_listen, args=(reader,), name="absmc-z3-interrupt", daemon=True
        ).start()


_keep: list[socket.socket] = []


F = TypeVar("F", bound=Callable[..., Any])


def received() -> bool:
    """Whether SIGINT or SIGTERM has arrived since :func:`watch` was first called."""
    return _received.is_set()


def reset() -> None:
    """Forget a SIGINT/SIGTERM that arrived before now for :func:`received` and
    :func:`interruptible` (:func:`count` goes on counting): a check that begins calls it, so
    that a signal an earlier check in the same process already ended with (``absmc.check`` in a
    notebook, tests in one process) does not turn this check's ``Z3Exception`` into
    ``KeyboardInterrupt``."""
    _received.clear()


def count() -> int:
    """How many SIGINT/SIGTERM signals have arrived since :func:`watch` was first called (a
    mark for :func:`raise_if_since`; 0 before)."""
    with _lock:
        return _count


def raise_if_since(mark: int) -> None:
    """Raise ``KeyboardInterrupt`` when SIGINT or SIGTERM arrived after :func:`count` returned
    ``mark``, even if the ``KeyboardInterrupt`` the signal raised was swallowed (in a
    ``__del__``); else return. A loop of solver calls calls it between calls."""
    if count() != mark:
        raise KeyboardInterrupt


def interruptible(fn: F) -> F:
    """``fn`` (a function making Z3 calls on watched contexts) with a ``Z3Exception`` raised
    after SIGINT/SIGTERM arrived turned into ``KeyboardInterrupt``; any other ``Z3Exception``
    propagates unchanged."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except z3.Z3Exception as e:
            if _received.is_set():
                raise KeyboardInterrupt from e
            raise

    return cast(F, wrapper)
