"""No silent native thread: while a component is checked, every thread and synchronization
object the program creates belongs to the checker (Bao's thesis, ch. 3.3 and Fig. 3.1: the
environment registers the threads it creates with the model checker).

While :func:`guarded` is active and the checking thread executes a step of the component:

* ``threading.Thread``/``Lock``/``RLock``/``Condition``/``Semaphore``/``BoundedSemaphore``/
  ``Event`` and ``queue.Queue``/``LifoQueue``/``SimpleQueue`` called from *any* code — the
  component's natively run comprehensions and lambdas, the environment's helpers, library
  code — create the checker's primitives (:class:`~absmc.component.values.SyncHandle`), not
  real ones. The names are replaced in the ``threading`` and ``queue`` modules and in the
  program's namespace (``from threading import Thread``), and put back afterwards; outside a
  step (absmc's own code, another thread) they create the real objects.
* the library classes themselves (``Thread``, ``Condition``, ``Semaphore``, ``Event``,
  ``Queue``, ...) get a ``__new__`` that does the same, so a reference taken before the check
  (``field(default_factory=threading.Condition)``) creates the checker's primitive too
  (installed at the first check and kept, inert outside a step);
  ``Lock``/``RLock`` are C functions: a real lock reaching the component is refused;
* a checker ``Thread`` started by natively run code (an environment helper ``spawn()``) is
  registered with the checker as a new thread of the component (``native_start``);
* a *real* ``threading.Thread.start()`` (a thread the checker did not create: a subclass of a
  class outside the component, a thread created before the check) aborts the run with a
  located error: it is recorded here (:attr:`GuardState.violation`) even when the code that
  called it swallows the exception.

Real synchronization objects the component calls are refused by the machine
(``machine._native``); a checker primitive used by native code raises
:class:`~absmc.component.values.NativeSyncUse`.
"""

from __future__ import annotations

import contextlib
import queue
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import absmc.component.values as values
from absmc.component.sync import CONSTRUCTORS
from absmc.component.values import NativeSyncUse, SyncHandle
from absmc.ir.span import ModelError

REAL_THREAD = threading.Thread
_REAL_START = threading.Thread.start
_REAL_JOIN = threading.Thread.join
_REAL_IS_ALIVE = threading.Thread.is_alive

if TYPE_CHECKING:
    from absmc.component.translate import FuncCode


class NativeUseError(ModelError):
    """The component did something the checker cannot schedule (a synchronization primitive
    used from natively run code, a thread whose target is not part of the component, a real
    thread started): ``FILE:LINE:COL: error: ...`` of the statement, the run is refused."""


class RealThreadStart(NativeSyncUse):
    """A real ``threading.Thread.start()`` while a step of the component ran."""


class GuardState:
    """Who checks now: the checking thread's id (``owner``), whether a step is executing
    (``depth``), the hook that registers a thread started by native code, and the first
    refused use (``violation``)."""

    def __init__(self) -> None:
        self.owner = -1
        self.depth = 0
        self.native_start: Callable[[SyncHandle], None] | None = None
        self.violation: str | None = None

    def active(self) -> bool:
        """A step of the component is executing in the checking thread."""
        return self.depth > 0 and threading.get_ident() == self.owner


STATE = GuardState()


def _guarded_start(self: threading.Thread) -> None:
    if STATE.active():
        what = (
            f"a real thread ({type(self).__name__} {self.name!r}) was started that the checker "
            "did not create; it would run unscheduled (create threads with threading.Thread in "
            "the program, and name a Thread subclass with --component)"
        )
        if STATE.violation is None:
            STATE.violation = what
        raise RealThreadStart(what)
    _REAL_START(self)


def _guarded_join(self: threading.Thread, timeout: float | None = None) -> None:
    if STATE.active():
        raise NativeSyncUse("Thread.join")
    _REAL_JOIN(self, timeout)


def _guarded_is_alive(self: threading.Thread) -> bool:
    if STATE.active():
        raise NativeSyncUse("Thread.is_alive")
    return _REAL_IS_ALIVE(self)


class NativeComponentCall(NativeSyncUse):
    """Natively run code (the environment) entered a function of the component."""


def call_native(f: Any, args: Any, kwargs: Any, codes: dict[Any, str]) -> Any:
    """``f(*args, **kwargs)`` run natively, refusing any entry into a function of the
    component (``codes``: its code objects -> names): the environment calling into the
    component would run the component's code unscheduled, in one step — a silent
    approximation. The entry is recorded (:attr:`GuardState.violation`) and raises
    :class:`NativeComponentCall`. Under another tracer (a debugger, coverage) the call is
    made as it is."""
    if sys.gettrace() is not None:
        return f(*args, **kwargs)

    def tracer(frame: Any, event: str, arg: Any) -> None:
        name = codes.get(frame.f_code)
        if name is not None and event == "call":
            sys.settrace(None)
            what = (
                f"the environment ({getattr(f, '__qualname__', repr(f))}) called the "
                f"component's {name} natively: it would run unscheduled, as one step (name the "
                "calling function with --component)"
            )
            if STATE.violation is None:
                STATE.violation = what
            raise NativeComponentCall(what)

    sys.settrace(tracer)
    try:
        return f(*args, **kwargs)
    finally:
        sys.settrace(None)


class _CheckerType(type):
    """The type of a stand-in for a library class: calling it inside a step creates the
    checker's primitive, outside it the real object; ``isinstance`` accepts both."""

    real: Any
    kinds: tuple[str, ...]
    ctor: Callable[..., SyncHandle]

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if STATE.active():
            return cls.ctor(*args, **kwargs)
        return cls.real(*args, **kwargs)

    def __instancecheck__(cls, obj: Any) -> bool:
        if isinstance(obj, SyncHandle):
            return obj.kind in cls.kinds
        return isinstance(obj, cls.real)

    def __subclasscheck__(cls, sub: Any) -> bool:
        return isinstance(sub, type) and issubclass(sub, cls.real)


def _stand_in(real: Any, kinds: tuple[str, ...], ctor: Callable[..., SyncHandle]) -> Any:
    if isinstance(real, type):
        return _CheckerType(real.__name__, (), {"real": real, "kinds": kinds, "ctor": ctor})

    def factory(*args: Any, **kwargs: Any) -> Any:
        if STATE.active():
            return ctor(*args, **kwargs)
        return real(*args, **kwargs)

    factory.__name__ = getattr(real, "__name__", "factory")
    factory.__qualname__ = factory.__name__
    return factory


_STAND_INS: dict[int, Any] = {}


def stand_ins(constructors: dict[Any, Callable[..., SyncHandle]]) -> dict[Any, Any]:
    """The stand-in of each real constructor of ``constructors`` (made once, kept)."""
    out = {}
    for real, ctor in constructors.items():
        s = _STAND_INS.get(id(real))
        if s is None:
            kind = ctor().kind
            s = _STAND_INS[id(real)] = _stand_in(real, (kind,), ctor)
        out[real] = s
    return out


_MODULES = (threading, queue)


@contextlib.contextmanager
def guarded(
    namespace: dict[str, Any],
    constructors: dict[Any, Callable[..., SyncHandle]],
    native_start: Callable[[SyncHandle], None],
) -> Iterator[GuardState]:
    """Install the guard for a check of the program whose module namespace is ``namespace``
    (see the module docstring); ``native_start(handle)`` registers a thread started by
    native code. Nested use (a replay inside a check) keeps the outer installation."""
    if STATE.owner >= 0:
        saved_hook = STATE.native_start
        STATE.native_start = native_start
        try:
            yield STATE
        finally:
            STATE.native_start = saved_hook
        return
    subs = stand_ins(constructors)
    by_id = {id(r): s for r, s in subs.items()}
    undo: list[tuple[Any, str, Any]] = []
    for mod in _MODULES:
        for name, v in list(vars(mod).items()):
            s = by_id.get(id(v))
            if s is not None:
                undo.append((mod, name, v))
                setattr(mod, name, s)
    ns_undo: list[tuple[str, Any]] = []
    for name, v in list(namespace.items()):
        s = by_id.get(id(v))
        if s is not None:
            ns_undo.append((name, v))
            namespace[name] = s
    for real, ctor in constructors.items():
        ok = isinstance(real, type) and real.__module__ in ("threading", "queue")
        if ok and "__new__" not in vars(real):
            # installed once and kept: inert outside a step, and CPython cannot take a
            # __new__ back (a class whose __new__ was deleted refuses its arguments)
            real.__new__ = _new_for(real, ctor)
    REAL_THREAD.start = _guarded_start  # type: ignore[method-assign]
    REAL_THREAD.join = _guarded_join  # type: ignore[method-assign]
    REAL_THREAD.is_alive = _guarded_is_alive  # type: ignore[method-assign]
    STATE.owner = threading.get_ident()
    STATE.native_start = native_start
    STATE.violation = None
    values.native_start = _native_start
    try:
        yield STATE
    finally:
        REAL_THREAD.start = _REAL_START  # type: ignore[method-assign]
        REAL_THREAD.join = _REAL_JOIN  # type: ignore[method-assign]
        REAL_THREAD.is_alive = _REAL_IS_ALIVE  # type: ignore[method-assign]
        for mod, name, v in undo:
            setattr(mod, name, v)
        for name, v in ns_undo:
            namespace[name] = v
        STATE.owner = -1
        STATE.depth = 0
        STATE.native_start = None
        values.native_start = None


def _new_for(real: type, ctor: Callable[..., SyncHandle]) -> Any:
    """A ``__new__`` for the library class ``real``: inside a step, ``real(...)`` called by
    a reference taken before the check (``field(default_factory=threading.Condition)``)
    gives the checker's primitive (``__init__`` is then skipped); subclasses and calls
    outside a step are untouched."""

    def __new__(cls: type, *args: Any, **kwargs: Any) -> Any:
        if cls is real and STATE.active():
            return ctor(*args, **kwargs)
        return object.__new__(cls)

    return staticmethod(__new__)


def _native_start(h: SyncHandle) -> bool:
    """A checker thread started by natively run code: registered when a step runs."""
    hook = STATE.native_start
    if hook is None or not STATE.active():
        return False
    hook(h)
    return True


#: the library constructors and their stand-ins while a check runs (:mod:`.guard`)
CHECK_CONSTRUCTORS: dict[Any, Callable[..., SyncHandle]] = {
    **CONSTRUCTORS,
    **{s: CONSTRUCTORS[r] for r, s in stand_ins(CONSTRUCTORS).items()},
}

#: ``threading.Thread`` methods handled by the checker on component subclasses
THREAD_METHODS: dict[Any, str] = {
    REAL_THREAD.__init__: "__init__",
    _REAL_START: "start",
    _guarded_start: "start",
    _REAL_JOIN: "join",
    _guarded_join: "join",
    _REAL_IS_ALIVE: "is_alive",
    _guarded_is_alive: "is_alive",
}

#: where a component ``threading.Thread`` subclass instance keeps its checker thread
THREAD_KEY = "_absmc_thread"


def thread_init(obj: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """``threading.Thread.__init__(obj, ...)`` for the checker: the thread's handle and the
    attributes ``Thread``'s properties read (``name``, ``daemon``)."""
    h = CONSTRUCTORS[REAL_THREAD](*args, **kwargs)
    d = obj.__dict__
    d[THREAD_KEY] = h
    d["_name"] = h.fields[4]
    d["_daemonic"] = h.fields[5]
    d["_initialized"] = True


def zero_arg_super(fc: FuncCode, frame: list[Any]) -> Any:
    """``super()`` in a translated method: the class from the method's ``__class__`` cell,
    the instance from its first argument."""
    code = fc.func.__code__
    if "__class__" not in code.co_freevars or not frame[2]:
        raise RuntimeError("super(): no arguments")
    cell = (fc.func.__closure__ or ())[code.co_freevars.index("__class__")]
    return super(cell.cell_contents, frame[2][0])
