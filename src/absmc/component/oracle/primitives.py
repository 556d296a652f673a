"""Baton-aware stand-ins for ``threading`` and ``queue`` inside an oracle run.

The program under test imports these instead of the real modules (:func:`shim_modules`), so
every thread it starts is a real CPython thread that runs only while it holds the scheduler's
baton, and every blocking call tells the scheduler what it waits for
(:meth:`absmc.component.oracle.runtime.Run.block`: a condition on the objects below and
whether a timeout may end the wait). The semantics are CPython's (``threading.py``,
``queue.py``): a ``Lock`` may be released by any thread, an ``RLock`` only by its owner;
``Condition.wait`` releases the lock completely, waits (FIFO) for ``notify`` and reacquires
it; a notification without waiter is lost; ``Semaphore.acquire`` blocks while the value is 0.

Only the standard library is imported (the oracle is independent of absmc's translation).
"""

from __future__ import annotations

import builtins
import collections
import heapq
import queue as _real_queue
import threading as _real_threading
import time as _real_time
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from absmc.component.oracle.runtime import _T, Run

#: the run the primitives belong to (one run at a time)
ACTIVE: list[Run] = []


def _run() -> Run:
    if not ACTIVE:
        raise RuntimeError("an oracle primitive used outside an oracle run")
    return ACTIVE[-1]


class Lock:
    """``threading.Lock``: ``_owner`` is the holder's thread id (any thread may release)."""

    def __init__(self) -> None:
        self._owner: int | None = None

    def _free_for(self, t: _T) -> bool:
        return self._owner is None

    def _take(self, t: _T, saved: Any = None) -> None:
        self._owner = t.id

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        run = _run()
        t = run.cur
        if self._free_for(t):
            self._take(t)
            return True
        if not blocking:
            return False
        if run.block(t, lambda: self._free_for(t), timeout is not None and timeout >= 0):
            self._take(t)
            return True
        return False

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: Any) -> None:
        self.release()

    def release(self) -> None:
        if self._owner is None:
            raise RuntimeError("release unlocked lock")
        self._owner = None

    def locked(self) -> bool:
        return self._owner is not None

    def _owned_by(self, t: _T) -> bool:
        return self._owner is not None

    def _release_save(self) -> Any:
        self._owner = None
        return None


class RLock(Lock):
    """``threading.RLock``: owner and recursion count; only the owner releases."""

    def __init__(self) -> None:
        super().__init__()
        self._count = 0

    def _free_for(self, t: _T) -> bool:
        return self._owner is None or self._owner == t.id

    def _take(self, t: _T, saved: Any = None) -> None:
        self._owner = t.id
        self._count = saved if saved is not None else self._count + 1

    def release(self) -> None:
        if self._owner != _run().cur.id:
            raise RuntimeError("cannot release un-acquired lock")
        self._count -= 1
        if self._count == 0:
            self._owner = None

    def _owned_by(self, t: _T) -> bool:
        return self._owner == t.id

    def _release_save(self) -> Any:
        count = self._count
        self._owner, self._count = None, 0
        return count


class Condition:
    """``threading.Condition`` over a ``Lock``/``RLock`` of the run (a new ``RLock`` when
    none is given); waiters are woken in FIFO order."""

    def __init__(self, lock: Lock | None = None) -> None:
        self._lock = lock if lock is not None else RLock()
        self._waiters: list[list[Any]] = []

    def acquire(self, *args: Any, **kwargs: Any) -> bool:
        return self._lock.acquire(*args, **kwargs)

    def release(self) -> None:
        self._lock.release()

    def __enter__(self) -> bool:
        return self._lock.acquire()

    def __exit__(self, *exc: Any) -> None:
        self._lock.release()

    def wait(self, timeout: float | None = None) -> bool:
        run = _run()
        t = run.cur
        if not self._lock._owned_by(t):
            raise RuntimeError("cannot wait on un-acquired lock")
        saved = self._lock._release_save()
        waiter: list[Any] = [t.id, False]
        self._waiters.append(waiter)
        lock = self._lock
        run.block(t, lambda: bool(waiter[1]) and lock._free_for(t), timeout is not None)
        notified = bool(waiter[1])
        if not notified and waiter in self._waiters:
            self._waiters.remove(waiter)
        if not lock._free_for(t):
            run.block(t, lambda: lock._free_for(t), False)
        lock._take(t, saved)
        return notified

    def wait_for(self, predicate: Callable[[], Any], timeout: float | None = None) -> Any:
        result = predicate()
        while not result:
            notified = self.wait(timeout)
            result = predicate()
            if timeout is not None and not notified:
                break
        return result

    def notify(self, n: int = 1) -> None:
        if not self._lock._owned_by(_run().cur):
            raise RuntimeError("cannot notify on un-acquired lock")
        woken, self._waiters = self._waiters[:n], self._waiters[n:]
        for w in woken:
            w[1] = True

    def notify_all(self) -> None:
        self.notify(len(self._waiters))

    notifyAll = notify_all


class Semaphore:
    """``threading.Semaphore``: ``acquire`` blocks while the value is 0."""

    def __init__(self, value: int = 1) -> None:
        if value < 0:
            raise ValueError("semaphore initial value must be >= 0")
        self._value = value

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool:
        run = _run()
        t = run.cur
        if self._value > 0:
            self._value -= 1
            return True
        if not blocking:
            return False
        if run.block(t, lambda: self._value > 0, timeout is not None):
            self._value -= 1
            return True
        return False

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: Any) -> None:
        self.release()

    def release(self, n: int = 1) -> None:
        if n < 1:
            raise ValueError("n must be one or more")
        self._value += n


class BoundedSemaphore(Semaphore):
    """``threading.BoundedSemaphore``: releasing above the initial value is a ``ValueError``."""

    def __init__(self, value: int = 1) -> None:
        super().__init__(value)
        self._initial_value = value

    def release(self, n: int = 1) -> None:
        if self._value + n > self._initial_value:
            raise ValueError("Semaphore released too many times")
        super().release(n)


class Event:
    """``threading.Event``."""

    def __init__(self) -> None:
        self._flag = False

    def is_set(self) -> bool:
        return self._flag

    isSet = is_set

    def set(self) -> None:
        self._flag = True

    def clear(self) -> None:
        self._flag = False

    def wait(self, timeout: float | None = None) -> bool:
        run = _run()
        if not self._flag:
            run.block(run.cur, lambda: self._flag, timeout is not None)
        return self._flag


class Thread:
    """``threading.Thread`` whose ``start`` registers the thread with the run's scheduler
    (ids in start order: the entry's thread is 0). Subclasses may override ``run``."""

    def __init__(
        self,
        group: Any = None,
        target: Callable[..., Any] | None = None,
        name: str | None = None,
        args: Any = (),
        kwargs: dict[str, Any] | None = None,
        *,
        daemon: bool | None = None,
    ) -> None:
        run = _run()
        run.thread_counter += 1
        self._target = target
        self._args = tuple(args)
        self._kwargs = dict(kwargs or {})
        self._name = str(name) if name is not None else f"Thread-{run.thread_counter}"
        self._daemon = bool(daemon) if daemon is not None else run.cur.daemon
        self._t: _T | None = None

    @property
    def name(self) -> str:
        return self._name

    @name.setter
    def name(self, value: str) -> None:
        self._name = str(value)

    @property
    def daemon(self) -> bool:
        return self._daemon

    @daemon.setter
    def daemon(self, value: bool) -> None:
        if self._t is not None:
            raise RuntimeError("cannot set daemon status of active thread")
        self._daemon = bool(value)

    @property
    def ident(self) -> int | None:
        return None if self._t is None else self._t.id + 1

    native_id = ident

    def getName(self) -> str:
        return self._name

    def isDaemon(self) -> bool:
        return self._daemon

    def start(self) -> None:
        if self._t is not None:
            raise RuntimeError("threads can only be started once")
        _run().spawn(self)

    def run(self) -> None:
        if self._target is not None:
            self._target(*self._args, **self._kwargs)

    def join(self, timeout: float | None = None) -> None:
        run = _run()
        t = self._t
        if t is None:
            raise RuntimeError("cannot join thread before it is started")
        if t is run.cur:
            raise RuntimeError("cannot join current thread")
        if t.status != "done":
            run.block(run.cur, lambda: t.status == "done", timeout is not None)

    def is_alive(self) -> bool:
        return self._t is not None and self._t.status != "done"

    def __repr__(self) -> str:
        return f"<Thread({self._name})>"


class _MainThread(Thread):
    def __init__(self) -> None:
        self._target = None
        self._args = ()
        self._kwargs = {}
        self._name = "MainThread"
        self._daemon = False
        self._t = None


class Queue:
    """``queue.Queue`` (FIFO; ``maxsize <= 0``: unbounded); raises the real ``queue.Full``
    and ``queue.Empty``."""

    def __init__(self, maxsize: int = 0) -> None:
        self.maxsize = maxsize
        self.queue: Any = self._init_items()
        self.unfinished_tasks = 0

    def _init_items(self) -> Any:
        return collections.deque()

    def _put(self, item: Any) -> None:
        self.queue.append(item)

    def _get(self) -> Any:
        return self.queue.popleft()

    def _full(self) -> bool:
        return 0 < self.maxsize <= len(self.queue)

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        run = _run()
        if self._full():
            if not block:
                raise _real_queue.Full
            if not run.block(run.cur, lambda: not self._full(), timeout is not None):
                raise _real_queue.Full
        self._put(item)
        self.unfinished_tasks += 1

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        run = _run()
        if not self.queue:
            if not block:
                raise _real_queue.Empty
            if not run.block(run.cur, lambda: bool(self.queue), timeout is not None):
                raise _real_queue.Empty
        return self._get()

    def put_nowait(self, item: Any) -> None:
        self.put(item, False)

    def get_nowait(self) -> Any:
        return self.get(False)

    def task_done(self) -> None:
        if self.unfinished_tasks <= 0:
            raise ValueError("task_done() called too many times")
        self.unfinished_tasks -= 1

    def join(self) -> None:
        run = _run()
        if self.unfinished_tasks:
            run.block(run.cur, lambda: self.unfinished_tasks == 0, False)

    def qsize(self) -> int:
        return len(self.queue)

    def empty(self) -> bool:
        return not self.queue

    def full(self) -> bool:
        return self._full()


class LifoQueue(Queue):
    """``queue.LifoQueue``."""

    def _init_items(self) -> Any:
        return []

    def _get(self) -> Any:
        return self.queue.pop()


class PriorityQueue(Queue):
    """``queue.PriorityQueue``."""

    def _init_items(self) -> Any:
        return []

    def _put(self, item: Any) -> None:
        heapq.heappush(self.queue, item)

    def _get(self) -> Any:
        return heapq.heappop(self.queue)


class SimpleQueue(Queue):
    """``queue.SimpleQueue`` (unbounded, no ``task_done``/``join``)."""

    def __init__(self) -> None:
        super().__init__(0)


def current_thread() -> Thread:
    """The calling program thread's ``Thread`` object."""
    obj: Thread = _run().cur.obj
    return obj


def get_ident() -> int:
    return _run().cur.id + 1


def main_thread() -> Thread:
    obj: Thread = _run().threads[0].obj
    return obj


def active_count() -> int:
    return sum(1 for t in _run().threads if t.status != "done")


def enumerate_threads() -> list[Thread]:
    return [t.obj for t in _run().threads if t.status != "done"]


def _sleep(seconds: float = 0) -> None:
    """``time.sleep`` inside a run: no real delay (the schedule decides what happens)."""


def shim_modules() -> dict[str, types.ModuleType]:
    """The modules the program gets for ``import threading``, ``import queue`` and ``import
    time``: only the names above (a name not listed is an ``AttributeError``, so the program
    cannot start a real thread the scheduler does not control), the real modules'
    exceptions and constants, and ``time`` with a ``sleep`` that does not wait."""
    th = types.ModuleType("threading")
    for name, value in {
        "Thread": Thread,
        "Lock": Lock,
        "RLock": RLock,
        "Condition": Condition,
        "Semaphore": Semaphore,
        "BoundedSemaphore": BoundedSemaphore,
        "Event": Event,
        "current_thread": current_thread,
        "currentThread": current_thread,
        "get_ident": get_ident,
        "get_native_id": get_ident,
        "main_thread": main_thread,
        "active_count": active_count,
        "activeCount": active_count,
        "enumerate": enumerate_threads,
        "local": _real_threading.local,
        "TIMEOUT_MAX": _real_threading.TIMEOUT_MAX,
        "BrokenBarrierError": _real_threading.BrokenBarrierError,
        "ThreadError": _real_threading.ThreadError,
    }.items():
        setattr(th, name, value)
    qu = types.ModuleType("queue")
    for name, value in {
        "Queue": Queue,
        "LifoQueue": LifoQueue,
        "PriorityQueue": PriorityQueue,
        "SimpleQueue": SimpleQueue,
        "Empty": _real_queue.Empty,
        "Full": _real_queue.Full,
    }.items():
        setattr(qu, name, value)
    tm = types.ModuleType("time")
    tm.__dict__.update({k: v for k, v in vars(_real_time).items() if not k.startswith("__")})
    tm.sleep = _sleep  # type: ignore[attr-defined]
    return {"threading": th, "queue": qu, "time": tm}


def importer(shims: dict[str, types.ModuleType]) -> Callable[..., Any]:
    """An ``__import__`` that answers the shim modules for their names (absolute imports)."""
    real = builtins.__import__

    def _import(
        name: str,
        globals: Any = None,
        locals: Any = None,
        fromlist: Any = (),
        level: int = 0,
    ) -> Any:
        if level == 0 and name in shims:
            return shims[name]
        return real(name, globals, locals, fromlist, level)

    return _import
