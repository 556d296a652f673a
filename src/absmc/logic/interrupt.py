"""Ctrl-C and SIGTERM reach a running Z3 call.

CPython runs a signal handler only between bytecodes, so a ``KeyboardInterrupt`` waits for a
solver call (seconds, or the whole ``--timeout``) to return. :func:`watch` closes that gap: the
C-level signal handler writes the signal number to a socket (``signal.set_wakeup_fd``), a daemon
thread reading it calls ``Context.interrupt()`` on every watched Z3 context — Z3's documented,
thread-safe way to stop a running check — and the call returns ``unknown``; the Python handler
then raises as usual (``KeyboardInterrupt`` for both signals in the CLI), so the run ends with
verdict ``unknown``, reason "interrupted", exit 3.

Installed once per process, from the main thread only (elsewhere :func:`watch` does nothing).
"""

from __future__ import annotations

import signal
import socket
import threading
import weakref

import z3

_INTERRUPTING = frozenset({int(signal.SIGINT), int(signal.SIGTERM)})

_contexts: weakref.WeakSet[z3.Context] = weakref.WeakSet()
_lock = threading.Lock()
_installed = False


def _listen(sock: socket.socket) -> None:
    """Daemon thread: interrupt every watched context when SIGINT or SIGTERM arrives."""
    while True:
        try:
            data = sock.recv(64)
        except OSError:
            return
        if not data:
            return
        if any(b in _INTERRUPTING for b in data):
            with _lock:
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
