"""A canonical encoding of a run's state at a scheduling point, for state caching in the
enumeration (:mod:`.explore`): two points with equal encodings have the same futures.

The encoding walks the program's data from its roots (the module's globals, then every
thread's ``Thread`` object and the locals of its traced frames, in thread order) and numbers
mutable objects in the order the walk meets them, so equal heaps encode equally whatever
their addresses and aliasing is kept. Objects the walk cannot read (iterators, files, ...)
are encoded by identity within the run, so they never match another run's.

What the locals do not show — the values on a frame's evaluation stack (a ``for`` loop's
iterator, a ``with`` block's exit, the partial values of a caller in the middle of a line)
— is read from the frame (CPython 3.11's frame layout, :func:`frame_stack`). A thread whose
stack cannot be read (another Python version; a frame suspended in a C call) is *unclean*:
its entry carries the hash of the whole schedule up to its last step, so its state only
matches one reached by the same choices. This is conservative: it may keep apart states
that are equal, never the converse.
"""

from __future__ import annotations

import collections
import ctypes
import dis
import itertools
import sys
import types
from typing import Any

import absmc.component.oracle.primitives as primitives

_SCALARS = (int, float, str, bool, type(None), complex, bytes)


class Encoder:
    """Encodes values with one numbering of the mutable objects (``heap``); the run's
    threads (``thread_type``) by their ids, the run itself (``run_type``) as a constant."""

    def __init__(self, run_serial: int, thread_type: type, run_type: type) -> None:
        self.serial = run_serial
        self.ids: dict[int, int] = {}
        self.heap: list[Any] = []
        self.thread_type = thread_type
        self.run_type = run_type
        self._keep: list[Any] = []

    def enc(self, v: Any) -> Any:
        t = type(v)
        if t in _SCALARS:
            return v if t is not float and t is not bool else (t.__name__, v)
        if t is tuple:
            return ("t", *[self.enc(x) for x in v])
        if t is frozenset:
            return ("fs", *sorted(repr(self.enc(x)) for x in v))
        if isinstance(v, (types.ModuleType, type)):
            return ("n", getattr(v, "__qualname__", getattr(v, "__name__", "?")))
        if isinstance(v, (types.BuiltinFunctionType, types.WrapperDescriptorType)):
            self_ = getattr(v, "__self__", None)
            if self_ is None or isinstance(self_, types.ModuleType):
                return ("b", getattr(v, "__qualname__", repr(v)))
            return ("bm", v.__name__, self.enc(self_))
        if t is types.MethodType:
            return ("m", v.__func__.__qualname__, self.enc(v.__self__))
        if t is self.thread_type:
            return ("T", v.id)
        if t is self.run_type:
            return "RUN"
        if t is _Null:
            return "NULL"
        if isinstance(v, BaseException):
            return ("exc", t.__qualname__, self.enc(v.args))
        if t.__name__ in _ITERATORS and t.__module__ == "builtins":
            return _iterator(self, v)
        key = id(v)
        n = self.ids.get(key)
        if n is not None:
            return ("r", n)
        n = len(self.heap)
        self.ids[key] = n
        self._keep.append(v)
        self.heap.append(None)
        self.heap[n] = self._cell(v, t)
        return ("r", n)

    def _cell(self, v: Any, t: type) -> Any:
        enc = self.enc
        if t is list:
            return ("list", *[enc(x) for x in v])
        if t is dict or t is collections.defaultdict or t is collections.OrderedDict:
            return (t.__name__, *[(enc(k), enc(x)) for k, x in v.items()])
        if t is set:
            return ("set", *sorted(repr(enc(x)) for x in v))
        if t is collections.deque:
            return ("deque", v.maxlen, *[enc(x) for x in v])
        if t is types.FunctionType:
            cells = tuple(
                enc(c.cell_contents) if _full(c) else "empty" for c in v.__closure__ or ()
            )
            return ("f", v.__qualname__, v.__code__.co_firstlineno, cells, enc(v.__defaults__))
        if t is types.CellType:
            return ("cell", enc(v.cell_contents) if _full(v) else "empty")
        d = getattr(v, "__dict__", None)
        slots = [s for k in t.__mro__ for s in getattr(k, "__slots__", ())]
        if d is None and not slots:
            return ("?", self.serial, id(v), t.__qualname__)
        fields = [(k, enc(x)) for k, x in (d or {}).items()]
        for s in slots:
            if isinstance(s, str) and hasattr(v, s):
                fields.append((s, enc(getattr(v, s))))
        return ("o", t.__module__, t.__qualname__, *fields)


def _full(c: types.CellType) -> bool:
    try:
        c.cell_contents  # noqa: B018
    except ValueError:
        return False
    return True


_ITERATORS = frozenset(
    {
        "list_iterator",
        "list_reverseiterator",
        "tuple_iterator",
        "range_iterator",
        "longrange_iterator",
        "str_ascii_iterator",
        "str_iterator",
        "enumerate",
        "zip",
        "reversed",
        "dict_keyiterator",
        "dict_valueiterator",
        "dict_itemiterator",
        "set_iterator",
        "map",
        "filter",
    }
)


def _iterator(enc: Encoder, v: Any) -> Any:
    """A built-in iterator by its ``__reduce__`` (the sequence and the position)."""
    return ("it", type(v).__name__, enc.enc(tuple(v.__reduce__()[1:])))


# -- reading a suspended frame's evaluation stack (CPython 3.11) ----------------------------
#: offsets in ``PyFrameObject`` (``f_frame``) and ``_PyInterpreterFrame`` (``f_code``,
#: ``stacktop``, ``localsplus``) of CPython 3.11 on a 64-bit build
_F_FRAME, _CODE, _STACKTOP, _LOCALSPLUS = 24, 32, 64, 72
STACKS = (
    sys.implementation.name == "cpython"
    and sys.version_info[:2] == (3, 11)
    and (ctypes.sizeof(ctypes.c_void_p) == 8)
)


def frame_stack(frame: types.FrameType) -> list[Any] | None:
    """The values on ``frame``'s evaluation stack (a ``for`` loop's iterator, a ``with``
    block's exit, a caller's partial values), or ``None`` where they cannot be read (another
    Python version; a frame running or suspended in a C call, whose stack pointer CPython
    has not saved: ``stacktop`` is then -1)."""
    if not STACKS:
        return None
    iframe = ctypes.c_void_p.from_address(id(frame) + _F_FRAME).value
    if not iframe:
        return None
    code = frame.f_code
    if ctypes.c_void_p.from_address(iframe + _CODE).value != id(code):
        return None
    top = ctypes.c_int.from_address(iframe + _STACKTOP).value
    nlocals = (
        len(code.co_varnames)
        + len([c for c in code.co_cellvars if c not in code.co_varnames])
        + len(code.co_freevars)
    )
    if top == -1:
        # suspended in a C call: the stack pointer was not saved. During a ``CALL`` (its
        # callable and arguments stay on the stack until it returns) and a ``BEFORE_WITH``
        # (the manager replaced by its ``__exit__``) the stack holds exactly the depth the
        # instruction starts with, computed from the bytecode
        op = code.co_code[frame.f_lasti]
        if op not in _SUSPENDS:
            return None
        depth = stack_depths(code).get(frame.f_lasti)
        if depth is None:
            return None
        top = nlocals + depth
    if not nlocals <= top <= nlocals + code.co_stacksize:
        return None
    out: list[Any] = []
    for i in range(nlocals, top):
        p = ctypes.c_void_p.from_address(iframe + _LOCALSPLUS + 8 * i).value
        out.append(_NULL if not p else ctypes.cast(p, ctypes.py_object).value)
    return out


_SUSPENDS = frozenset(dis.opmap[n] for n in ("CALL", "BEFORE_WITH") if n in dis.opmap)
_DEPTHS: dict[types.CodeType, dict[int, int]] = {}
_NO_FALL = frozenset(
    dis.opmap[n]
    for n in (
        "JUMP_FORWARD",
        "JUMP_BACKWARD",
        "JUMP_BACKWARD_NO_INTERRUPT",
        "RETURN_VALUE",
        "RAISE_VARARGS",
        "RERAISE",
    )
    if n in dis.opmap
)


def stack_depths(code: types.CodeType) -> dict[int, int]:
    """The evaluation stack's depth before each instruction of ``code`` (offset -> depth),
    by a walk over the bytecode with ``dis.stack_effect`` and the exception table's handler
    depths (CPython 3.11); cached per code object."""
    got = _DEPTHS.get(code)
    if got is not None:
        return got
    instrs = {i.offset: i for i in dis.get_instructions(code)}
    order = sorted(instrs)
    after = {a: b for a, b in itertools.pairwise(order)}
    depth: dict[int, int] = {}
    work: list[tuple[int, int]] = [(0, 0)]
    for entry in dis._parse_exception_table(code):  # type: ignore[attr-defined]
        work.append((entry.target, entry.depth + (1 if entry.lasti else 0) + 1))
    while work:
        off, d = work.pop()
        while off in instrs and off not in depth:
            depth[off] = d
            ins = instrs[off]
            if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs:
                target = ins.argval
                work.append((target, d + dis.stack_effect(ins.opcode, ins.arg, jump=True)))
            if ins.opcode in _NO_FALL:
                break
            d += dis.stack_effect(ins.opcode, ins.arg, jump=False)
            nxt = after.get(off)
            if nxt is None:
                break
            off = nxt
    _DEPTHS[code] = depth
    return depth


class _Null:
    def __repr__(self) -> str:
        return "NULL"


_NULL = _Null()


_PRIMITIVES = primitives.__file__
_THREAD_RUN = primitives.Thread.run.__code__


def state_key(run: Any, thread_type: type) -> Any:
    """The state of ``run`` (a :class:`~absmc.component.oracle.runtime.Run` at a scheduling
    point, called by the thread holding the baton) as an exact key. A thread with a stack
    that could not be read enters with its ``hist`` (the hash of the run's choices up to its
    last step: such a state only matches one reached by the same choices). Sets each
    thread's ``clean``."""
    enc = Encoder(run.serial, thread_type, type(run))
    e = enc.enc
    glob = tuple(
        (k, e(v)) for k, v in run.ns.items() if not (k.startswith("__") and k.endswith("__"))
    )
    current = sys._current_frames()
    per = []
    for t in run.threads:
        if t is run.cur:
            top: types.FrameType | None = sys._getframe(1)
        elif t.ident is None:
            top = None
        else:
            top = current.get(t.ident)
        frames = []
        clean = True
        while top is not None:
            fn = top.f_code.co_filename
            if top.f_code is _THREAD_RUN:
                pass  # Thread.run calling the target: nothing beyond the Thread object
            elif fn == run.program.filename or fn == _PRIMITIVES:
                stack = frame_stack(top)
                if stack is None:
                    clean = False
                frames.append(
                    (
                        top.f_code.co_qualname,
                        top.f_code.co_firstlineno,
                        top.f_lasti,
                        tuple((n, e(v)) for n, v in top.f_locals.items()),
                        None if stack is None else tuple(e(v) for v in stack),
                    )
                )
            top = top.f_back
        t.clean = clean
        per.append((t.status, t.timed, e(t.can), e(t.obj), tuple(frames)))
    return (
        glob,
        tuple(enc.heap),
        tuple((p, None if t.clean else t.hist) for p, t in zip(per, run.threads, strict=True)),
        run.thread_counter,
    )
