"""The checker's synchronization primitives (Bao's thesis, ch. 3.3: the component's threads
are scheduled by the checker, not the operating system).

``threading.Thread``/``Lock``/``RLock``/``Condition``/``Semaphore``/``BoundedSemaphore``/
``Event`` and ``queue.Queue``/``LifoQueue`` created by the component become
:class:`~absmc.component.values.SyncHandle` objects in its heap; their methods are steps of
the state machine with CPython's semantics (``threading.py``): a lock may be released by any
thread, an ``RLock`` only by its owner; ``Condition.wait`` releases the lock completely, waits
until ``notify`` moves the thread (FIFO) out of the waiters, then reacquires; a notification
with no waiter is lost. A blocking call with a timeout is a nondeterministic choice: it may
time out whenever it would block.

Fields of each kind (``SyncHandle.fields``):

* ``Lock``: ``[owner]`` (thread id, -1 free); ``RLock``: ``[owner, count]``;
* ``Condition``: ``[lock handle, waiters (list of thread ids)]``;
* ``Semaphore``: ``[value, bound]`` (``bound`` -1 unless bounded);
* ``Event``: ``[flag]``; ``Queue``: ``[maxsize, items (list), unfinished tasks, lifo]``;
* ``Thread``: ``[thread id (-1 before start), target, args, kwargs (sorted item tuple),
  name, daemon]``.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

from absmc.component.values import SyncHandle

#: a call's outcome: (number of alternatives, result, advance the pc). 0 alternatives: the
#: calling thread is blocked; ``advance`` false: the thread stays at the call (it waits)
Outcome = tuple[int, Any, bool]

BLOCKED: Outcome = (0, None, False)


def _timed(
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    block_pos: int,
    timeout_pos: int,
    timeout_default: Any,
) -> tuple[bool, bool]:
    """(blocking, has a timeout) from the arguments of an acquire/get/put/wait."""
    blocking = kwargs.get("blocking", kwargs.get("block", True))
    if block_pos >= 0 and len(args) > block_pos:
        blocking = args[block_pos]
    timeout = kwargs.get("timeout", timeout_default)
    if timeout_pos >= 0 and len(args) > timeout_pos:
        timeout = args[timeout_pos]
    has_timeout = timeout is not None and timeout != -1
    return bool(blocking), has_timeout


def _lock_ctor(*args: Any, **kwargs: Any) -> SyncHandle:
    return SyncHandle("Lock", [-1])


def _rlock_ctor(*args: Any, **kwargs: Any) -> SyncHandle:
    return SyncHandle("RLock", [-1, 0])


def _cond_ctor(lock: Any = None) -> SyncHandle:
    if lock is None:
        lock = SyncHandle("RLock", [-1, 0])
    if not isinstance(lock, SyncHandle) or lock.kind not in ("Lock", "RLock"):
        raise TypeError("Condition needs a Lock or RLock of the component")
    return SyncHandle("Condition", [lock, []])


def _sem_ctor(value: int = 1) -> SyncHandle:
    if value < 0:
        raise ValueError("semaphore initial value must be >= 0")
    return SyncHandle("Semaphore", [value, -1])


def _bsem_ctor(value: int = 1) -> SyncHandle:
    if value < 0:
        raise ValueError("semaphore initial value must be >= 0")
    return SyncHandle("Semaphore", [value, value])


def _event_ctor() -> SyncHandle:
    return SyncHandle("Event", [False])


def _queue_ctor(maxsize: int = 0) -> SyncHandle:
    return SyncHandle("Queue", [maxsize, [], 0, False])


def _lifo_ctor(maxsize: int = 0) -> SyncHandle:
    return SyncHandle("Queue", [maxsize, [], 0, True])


def _simple_queue_ctor() -> SyncHandle:
    return SyncHandle("Queue", [0, [], 0, False])


def _thread_ctor(
    group: Any = None,
    target: Any = None,
    name: Any = None,
    args: Any = (),
    kwargs: Any = None,
    *,
    daemon: Any = None,
) -> SyncHandle:
    kw = tuple(sorted((kwargs or {}).items()))
    return SyncHandle("Thread", [-1, target, tuple(args), kw, name, bool(daemon)])


#: the library constructors the checker replaces (by identity)
CONSTRUCTORS: dict[Any, Callable[..., SyncHandle]] = {
    threading.Lock: _lock_ctor,
    threading.RLock: _rlock_ctor,
    threading.Condition: _cond_ctor,
    threading.Semaphore: _sem_ctor,
    threading.BoundedSemaphore: _bsem_ctor,
    threading.Event: _event_ctor,
    threading.Thread: _thread_ctor,
    queue.Queue: _queue_ctor,
    queue.LifoQueue: _lifo_ctor,
    queue.SimpleQueue: _simple_queue_ctor,
}


_LOCK_T = type(threading.Lock())
_RLOCK_T = type(threading.RLock())
REAL_TYPES = (
    _LOCK_T,
    _RLOCK_T,
    threading.Condition,
    threading.Semaphore,
    threading.Event,
    queue.Queue,
)


def convert(obj: Any, memo: dict[int, Any] | None = None) -> Any:
    """A real synchronization object the program created before the check (at import time)
    as the checker's primitive (unlocked, no waiters; a held lock or pending items cannot be
    taken over: ``ValueError``). Other values are returned as they are; lists and dicts are
    converted in place, one level deep."""
    memo = {} if memo is None else memo
    if id(obj) in memo:
        return memo[id(obj)]
    out: Any = obj
    if isinstance(obj, _LOCK_T):
        if obj.locked():
            raise ValueError("a lock held before the check starts")
        out = SyncHandle("Lock", [-1])
    elif isinstance(obj, _RLOCK_T):
        out = SyncHandle("RLock", [-1, 0])
    elif isinstance(obj, threading.Condition):
        out = SyncHandle("Condition", [convert(getattr(obj, "_lock"), memo), []])  # noqa: B009
    elif isinstance(obj, threading.BoundedSemaphore):
        out = SyncHandle("Semaphore", [getattr(obj, "_value"), getattr(obj, "_initial_value")])  # noqa: B009
    elif isinstance(obj, threading.Semaphore):
        out = SyncHandle("Semaphore", [getattr(obj, "_value"), -1])  # noqa: B009
    elif isinstance(obj, threading.Event):
        out = SyncHandle("Event", [obj.is_set()])
    elif isinstance(obj, queue.Queue):
        lifo = isinstance(obj, queue.LifoQueue)
        out = SyncHandle("Queue", [obj.maxsize, list(obj.queue), obj.unfinished_tasks, lifo])
    memo[id(obj)] = out
    if isinstance(obj, list):
        obj[:] = [convert(x, memo) for x in obj]
    elif isinstance(obj, dict):
        for k in list(obj):
            obj[k] = convert(obj[k], memo)
    return out


def lock_free_for(lock: SyncHandle, tid: int) -> bool:
    """Can thread ``tid`` acquire ``lock`` now (an RLock it owns: yes)?"""
    owner = lock.fields[0]
    return owner < 0 or (lock.kind == "RLock" and owner == tid)


def take(lock: SyncHandle, tid: int, count: int = 1) -> None:
    """Thread ``tid`` acquires ``lock`` (``count`` levels of an RLock)."""
    lock.fields[0] = tid
    if lock.kind == "RLock":
        lock.fields[1] += count


def owns(lock: SyncHandle, tid: int) -> bool:
    """CPython's ``Condition._is_owned``: an RLock is owned by its owner; a Lock by whoever
    holds it (the check only tries to acquire it)."""
    if lock.kind == "RLock":
        return bool(lock.fields[0] == tid)
    return bool(lock.fields[0] >= 0)


def release_all(lock: SyncHandle) -> int:
    """Release ``lock`` completely (a condition's wait); the count to restore later."""
    if lock.kind == "RLock":
        count = int(lock.fields[1])
        lock.fields[0], lock.fields[1] = -1, 0
        return count
    lock.fields[0] = -1
    return 1


def _acquire(h: SyncHandle, tid: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Outcome:
    blocking, timed = _timed(args, kwargs, 0, 1, -1)
    if lock_free_for(h, tid):
        take(h, tid)
        return (1, True, True)
    if not blocking or timed:
        return (1, False, True)
    return BLOCKED


def _release(h: SyncHandle, tid: int) -> Outcome:
    f = h.fields
    if h.kind == "RLock":
        if f[0] != tid:
            raise RuntimeError("cannot release un-acquired lock")
        f[1] -= 1
        if f[1] == 0:
            f[0] = -1
        return (1, None, True)
    if f[0] < 0:
        raise RuntimeError("release unlocked lock")
    f[0] = -1
    return (1, None, True)


def call(
    h: SyncHandle,
    name: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    tid: int,
    waiting: Callable[[SyncHandle, int, bool, Any], None],
    notify: Callable[[list[int]], None],
    thread_done: Callable[[int], bool],
    start: Callable[[SyncHandle], None],
) -> Outcome:
    """Thread ``tid`` calls ``h.name(*args, **kwargs)``. ``waiting(cond, count, timed,
    predicate)`` puts the caller into a condition's waiters; ``notify(tids)`` wakes waiters;
    ``thread_done(t)``: thread ``t`` has ended; ``start(h)`` starts a thread. Raises what
    CPython raises for misuse (``RuntimeError``, ``ValueError``, ``queue.Empty``/``Full``,
    ``AttributeError`` for an unknown method)."""
    k, f = h.kind, h.fields
    if k in ("Lock", "RLock"):
        if name in ("acquire", "__enter__"):
            return _acquire(h, tid, args if name == "acquire" else (), kwargs)
        if name == "release":
            return _release(h, tid)
        if name == "__exit__":
            _release(h, tid)
            return (1, None, True)
        if name == "locked":
            return (1, f[0] >= 0, True)
    elif k == "Condition":
        lock: SyncHandle = f[0]
        if name in ("acquire", "__enter__"):
            return _acquire(lock, tid, args if name == "acquire" else (), kwargs)
        if name == "release":
            return _release(lock, tid)
        if name == "__exit__":
            _release(lock, tid)
            return (1, None, True)
        if name in ("wait", "wait_for"):
            if not owns(lock, tid):
                raise RuntimeError("cannot wait on un-acquired lock")
            pred = None
            if name == "wait_for":
                pred = args[0] if args else kwargs["predicate"]
                result = pred()
                if result:
                    return (1, result, True)
                _, timed = _timed(args, kwargs, -1, 1, None)
            else:
                _, timed = _timed(args, kwargs, -1, 0, None)
            count = release_all(lock)
            f[1].append(tid)
            waiting(h, count, timed, pred)
            return (1, None, False)
        if name in ("notify", "notify_all", "notifyAll"):
            if not owns(lock, tid):
                raise RuntimeError("cannot notify on un-acquired lock")
            n = len(f[1]) if name != "notify" else (args[0] if args else kwargs.get("n", 1))
            woken = f[1][:n]
            del f[1][:n]
            notify(woken)
            return (1, None, True)
    elif k == "Semaphore":
        if name in ("acquire", "__enter__"):
            blocking, timed = _timed(args if name == "acquire" else (), kwargs, 0, 1, None)
            if f[0] > 0:
                f[0] -= 1
                return (1, True, True)
            if not blocking or timed:
                return (1, False, True)
            return BLOCKED
        if name in ("release", "__exit__"):
            n = args[0] if name == "release" and args else kwargs.get("n", 1)
            if f[1] >= 0 and f[0] + n > f[1]:
                raise ValueError("Semaphore released too many times")
            f[0] += n
            return (1, None, True)
    elif k == "Event":
        if name == "set":
            f[0] = True
            return (1, None, True)
        if name == "clear":
            f[0] = False
            return (1, None, True)
        if name == "is_set":
            return (1, f[0], True)
        if name == "wait":
            _, timed = _timed(args, kwargs, -1, 0, None)
            if f[0]:
                return (1, True, True)
            return (1, False, True) if timed else BLOCKED
    elif k == "Queue":
        maxsize, items = f[0], f[1]
        if name in ("put", "put_nowait"):
            item = args[0] if args else kwargs["item"]
            blocking, timed = _timed(args[1:], kwargs, 0, 1, None)
            if name == "put_nowait":
                blocking = False
            if maxsize <= 0 or len(items) < maxsize:
                items.append(item)
                f[2] += 1
                return (1, None, True)
            if not blocking or timed:
                raise queue.Full
            return BLOCKED
        if name in ("get", "get_nowait"):
            blocking, timed = _timed(args, kwargs, 0, 1, None)
            if name == "get_nowait":
                blocking = False
            if items:
                return (1, items.pop() if f[3] else items.pop(0), True)
            if not blocking or timed:
                raise queue.Empty
            return BLOCKED
        if name == "qsize":
            return (1, len(items), True)
        if name == "empty":
            return (1, not items, True)
        if name == "full":
            return (1, 0 < maxsize <= len(items), True)
        if name == "task_done":
            if f[2] <= 0:
                raise ValueError("task_done() called too many times")
            f[2] -= 1
            return (1, None, True)
        if name == "join":
            return (1, None, True) if f[2] == 0 else BLOCKED
    elif k == "Thread":
        if name == "start":
            if f[0] >= 0:
                raise RuntimeError("threads can only be started once")
            start(h)
            return (1, None, True)
        if name == "join":
            if f[0] < 0:
                raise RuntimeError("cannot join thread before it is started")
            if f[0] == tid:
                raise RuntimeError("cannot join current thread")
            _, timed = _timed(args, kwargs, -1, 0, None)
            if thread_done(f[0]):
                return (1, None, True)
            return (1, None, True) if timed else BLOCKED
        if name == "is_alive":
            return (1, f[0] >= 0 and not thread_done(f[0]), True)
    raise AttributeError(f"'{k}' object has no attribute '{name}' (for the checker)")
