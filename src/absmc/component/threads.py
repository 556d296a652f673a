"""Threads started the way programs start them (Bao's thesis, ch. 3.3 and Fig. 3.1: the
environment registers the threads it creates with the model checker): a checker ``Thread``
started by the component or by natively run code, and ``threading.Thread`` subclasses of
the component (their ``__init__``, ``start``, ``join``, ``is_alive``). Mixed into
:class:`~absmc.component.machine.ComponentSemantics`."""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any

from absmc.component.guard import REAL_THREAD, THREAD_KEY, NativeUseError, thread_init
from absmc.component.guard import STATE as GUARD
from absmc.component.values import NativeSyncUse, SyncHandle, SyncMethod

if TYPE_CHECKING:
    from absmc.component.machine import Program, _Thread
    from absmc.component.translate import Instr


class ThreadSteps:
    """Thread creation for the machine (which provides ``prog``, ``_stepping``, ``_push``,
    ``_deliver``, ``_sync`` and ``_new_thread``)."""

    prog: Program
    _stepping: list[_Thread] | None

    def _push(
        self,
        th: _Thread,
        fid: int,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        mode: int = 0,
        closure: tuple[Any, ...] | None = None,
    ) -> None:
        raise NotImplementedError

    def _deliver(self, frame: list[Any], ins: Instr, value: Any, nalts: int = 1) -> int:
        raise NotImplementedError

    def _sync(
        self,
        threads: list[_Thread],
        tid: int,
        th: _Thread,
        frame: list[Any],
        ins: Instr,
        m: SyncMethod,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> int:
        raise NotImplementedError

    def _new_thread(self, name: str, handle: SyncHandle, daemon: bool) -> _Thread:
        raise NotImplementedError

    def _native_start(self, h: SyncHandle) -> None:
        """A checker thread started by natively run code (an environment helper): it joins
        the component as a new thread (thesis Fig. 3.1)."""
        threads = self._stepping
        if threads is None:
            raise NativeSyncUse("Thread.start")
        if h.fields[0] >= 0:
            raise RuntimeError("threads can only be started once")
        self._start_thread(threads, h)

    def _start_thread(self, threads: list[_Thread], h: SyncHandle, obj: Any = None) -> None:
        """Start the checker thread ``h`` (``obj``: the ``threading.Thread`` subclass instance
        whose ``run`` it runs) as thread ``len(threads)``; an unnamed thread is named
        ``Thread-N (target)`` as CPython does, N its thread number (distinct in every state).
        Raises ``NativeUseError`` when the target is not a function of the component."""
        target, targs, tkw = h.fields[1], h.fields[2], h.fields[3]
        tname = getattr(target, "__name__", "") if target is not None else ""
        if obj is not None and type(obj).run is not REAL_THREAD.run:
            target, targs, tkw = obj.run, (), ()
        new = len(threads)
        ft = type(target)
        fid = None
        closure = None
        if ft is types.FunctionType:
            fid = self.prog.fid_of.get(id(target))
            if fid is None and target.__closure__ is not None:
                fid = self.prog.nested_fid.get(target.__code__)
                closure = target.__closure__
        elif ft is types.MethodType:
            fid = self.prog.fid_of.get(id(target.__func__))
            targs = (target.__self__, *targs)
        if fid is None:
            what = (
                f"the thread target {getattr(target, '__qualname__', repr(target))} is not a "
                "function of the component (name it with --component; nested functions and "
                "lambdas cannot be thread targets)"
            )
            if GUARD.violation is None:
                GUARD.violation = what
            raise NativeUseError(what)
        h.fields[0] = new
        if h.fields[4] is None:
            h.fields[4] = f"Thread-{new} ({tname})" if tname else f"Thread-{new}"
        name = str(h.fields[4])
        if any(t.name == name for t in threads):
            name = f"{name}#{new}"
        if obj is not None:
            obj.__dict__["_name"] = h.fields[4]
        nt = self._new_thread(name, h, bool(h.fields[5]))
        self._push(nt, fid, tuple(targs), dict(tkw), closure=closure)
        threads.append(nt)

    def _thread_method(
        self,
        threads: list[_Thread],
        tid: int,
        th: _Thread,
        frame: list[Any],
        ins: Instr,
        obj: Any,
        name: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> int:
        """A ``threading.Thread`` method called on an instance of a component subclass: its
        ``__init__`` records a checker thread in the object, ``start`` starts the object's
        ``run`` as a checker thread, ``join``/``is_alive`` are the checker's."""
        if name == "__init__":
            thread_init(obj, args, kwargs)
            return self._deliver(frame, ins, None)
        h = obj.__dict__.get(THREAD_KEY)
        if not isinstance(h, SyncHandle):
            raise RuntimeError("thread.__init__() not called")
        if name == "start":
            if h.fields[0] >= 0:
                raise RuntimeError("threads can only be started once")
            self._start_thread(threads, h, obj)
            return self._deliver(frame, ins, None)
        return self._sync(threads, tid, th, frame, ins, SyncMethod(h, name), args, kwargs)
