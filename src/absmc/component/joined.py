"""Steps joined to the thread's previous step (Lipton's reduction, "Reduction: a method of
proving properties of parallel programs", CACM 18(12), 1975: a step that commutes with every
other thread's steps is a both-mover and may run in the same transition as the step before
it, keeping every reachable deadlock, failed assertion and uncaught exception). Mixed into
:class:`~absmc.component.machine.ComponentSemantics`: the steps on the thread's private
locals, a return into a caller of the same thread, a call of a translated function, and
reads of *stable* attributes of component objects (:mod:`absmc.component.stable`)."""

from __future__ import annotations

import types
from collections import defaultdict, deque
from typing import TYPE_CHECKING, Any

from absmc.component.stable import stable_values
from absmc.component.translate import (
    BRANCH,
    CALL,
    EXEC,
    FOR_NEXT,
    NONE_PIECE,
    RETURN,
    FuncCode,
    Instr,
)
from absmc.component.values import UNBOUND, SyncHandle

if TYPE_CHECKING:
    from absmc.component.machine import Program

#: the longest run of invisible steps joined to one transition (a local loop may not end)
MAX_INVISIBLE = 1000

_NONE: frozenset[str] = frozenset()

_HEAP_TYPES = frozenset({list, dict, set, SyncHandle, deque, defaultdict, bytearray})


class JoinedSteps:
    """Which next instruction joins the previous step (the machine provides ``prog``,
    ``unstable``, ``stable_used`` and ``_piece``)."""

    prog: Program
    unstable: frozenset[str] | None
    stable_used: bool

    def _piece(self, ins: Instr, loc: list[Any], fc: FuncCode, kill: bool = True) -> Any:
        raise NotImplementedError

    def _invisible(self, frame: list[Any], depth: int) -> bool:
        """The frame's next instruction only touches values private to its thread (locals
        that are not heap objects, new objects, calls of component functions, a return into
        a caller of the same thread): it commutes with every other thread's steps, so it is
        executed in the same transition (a reduction that keeps every reachable deadlock,
        assertion and exception). ``depth``: the thread's number of frames — a return from
        its last frame ends the thread, which ``join``/``is_alive`` of others observe."""
        fc = self.prog.funcs[frame[0]]
        ins = fc.instrs[frame[1]]
        if ins.op == RETURN:
            if depth < 2:
                return False
            if ins.fn is NONE_PIECE:
                # the ``return None`` at the end of a body (a constructor's returns self)
                return True
        if not ins.local:
            if ins.attrs is None or self.unstable is None:
                return False
            if not self._stable_reads(fc, ins, frame[2]):
                return False
            self.stable_used = True
            return True
        loc = frame[2]
        op = ins.op
        if op == FOR_NEXT:
            return type(loc[ins.dest]) in (range, tuple, str)
        if op == CALL:
            # the arguments are computed in this step: a local that an operator uses
            # (``f(xs + ys)``, ``f(*xs)``, ``f(a < b)``) must be an atom, else computing them
            # reads a shared object (references passed on as they are read nothing)
            if ins.attrs is None or not stable_values(
                ins.attrs, loc, _NONE, self.prog.owned_classes, UNBOUND
            ):
                return False
            try:
                f, args, kwargs = self._piece(ins, loc, fc, kill=False)
            except Exception:
                return False
            t = type(f)
            if t is types.FunctionType:
                return id(f) in self.prog.fid_of
            if t is type and f in self.prog.classes:
                return True
            if t is types.BuiltinFunctionType or t is type:
                return not any(self._reaches_heap(a) for a in args) and not any(
                    self._reaches_heap(a) for a in kwargs.values()
                )
            return False
        return all(not self._reaches_heap(loc[i]) for i in ins.slots)

    def _stable_reads(self, fc: FuncCode, ins: Instr, loc: list[Any]) -> bool:
        """The piece reads only locals and stable attributes (:func:`stable.stable_values`);
        a ``CALL`` must call a translated function (a new frame of this thread)."""
        op = ins.op
        if op != EXEC and op != BRANCH and op != CALL and op != RETURN:
            return False
        assert self.unstable is not None and ins.attrs is not None
        owned = self.prog.owned_classes
        if not stable_values(ins.attrs, loc, self.unstable, owned, UNBOUND):
            return False
        if op != CALL:
            return True
        try:
            f, _, _ = self._piece(ins, loc, fc, kill=False)
        except Exception:
            return False
        if type(f) is types.MethodType:
            return id(f.__func__) in self.prog.fid_of and type(f.__self__) in owned
        return type(f) is types.FunctionType and id(f) in self.prog.fid_of

    def _heap_type(self, t: type) -> bool:
        return t in _HEAP_TYPES or t in self.prog.owned_classes

    def _reaches_heap(self, v: Any) -> bool:
        """``v`` is a heap object or a tuple/frozenset holding one (comparing, printing or
        hashing it reads that object)."""
        t = type(v)
        if t is tuple or t is frozenset:
            return any(self._reaches_heap(x) for x in v)
        return t in _HEAP_TYPES or t in self.prog.owned_classes


__all__ = ["MAX_INVISIBLE", "JoinedSteps"]
