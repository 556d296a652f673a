"""Canonical encoding of the component's data: Python objects <-> immutable, hashable values.

A component state must be a value that any kernel store can keep (Bao's thesis, ch. 2 and 3:
the component's state is stored, the environment's is not). The component's heap — lists,
dicts, sets, deques, instances of the program's own classes, and the checker's
synchronization objects (:class:`SyncHandle`) — is numbered in the order a depth-first walk
from the roots first meets each object, so two heaps that differ only in object identities
(addresses) encode equally, and aliasing is kept (two roots that reach one list reach one
cell).

Encoded values (``Enc``): ``int``, ``str`` and ``None`` stand for themselves; every other
value is a tuple whose first item is a tag (user tuples too, so tags never clash):

* ``("b", bool)``, ``("f", float)``, ``("y", bytes)``, ``("c", complex)``, ``("R", start,
  stop, step)`` (a range), ``("t", items...)`` (a tuple), ``("F", frozenset)``;
* ``("r", n)`` — a reference to heap cell ``n``;
* ``("e", type, args)`` — an exception (type as an opaque id, arguments encoded);
* ``("M", self, function)`` a bound method, ``("P", class, self)`` a ``super()`` object,
  ``("N", template, captured)`` a function defined inside a component function;
* ``("o", n)`` — an opaque object of the environment (a function, a class, a module, an
  object of a library) by identity: its inner state belongs to the environment.

Heap cells: ``("L", items...)``, ``("D", k1, v1, ...)`` (insertion order), ``("S",
frozenset)``, ``("Q", items...)`` (a deque), ``("DD", factory, k1, v1, ...)`` (a
defaultdict), ``("O", class, name1, v1, ...)`` (attributes sorted by name), ``("$", kind,
fields...)`` (a synchronization object).
"""

from __future__ import annotations

import contextlib
import operator
import threading
from collections import defaultdict, deque
from collections.abc import Callable
from types import BuiltinMethodType, CellType, CodeType, FunctionType, MethodType, ModuleType
from typing import Any, cast

Enc = Any
"""An encoded value (see the module docstring)."""


class _Unbound:
    """The value of a local variable that is not bound yet (encoded ``("u",)``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<unbound>"


UNBOUND = _Unbound()
UNB_ENC = ("u",)
#: ``True`` encoded
ENC_TRUE = ("b", True)
_ENC_FALSE = ("b", False)


_REFS = tuple(("r", n) for n in range(4096))


def ref(n: int) -> Enc:
    """The reference ``("r", n)`` (one shared tuple per number below 4096: states share
    them, and an unchanged reference stays the same object)."""
    return _REFS[n] if n < 4096 else ("r", n)


class Hashed(tuple):  # type: ignore[type-arg]
    """A tuple that computes its hash once (equal to the tuple's): a state's heap and
    thread entries, which many states share (memoized steps, threads that did not move),
    so that hashing a state (the store, the memo's keys) does not walk them again."""

    _hash: int

    def __hash__(self) -> int:
        try:
            return self._hash
        except AttributeError:
            h = self._hash = tuple.__hash__(self)
            return h

    def __reduce__(self) -> tuple[Any, ...]:
        # pickled without the hash (another process may hash strings differently)
        return (Hashed, (tuple(self),))


class Opaque:
    """Environment objects kept by identity: ``("o", n)`` names ``objects[n]`` (kept alive
    for the whole check, so ids are never reused)."""

    def __init__(self) -> None:
        self.objects: list[Any] = []
        self._ids: dict[int, int] = {}

    def key(self, obj: Any) -> int:
        """The opaque number of ``obj`` (assigned on first sight)."""
        k = self._ids.get(id(obj))
        if k is None:
            k = self._ids[id(obj)] = len(self.objects)
            self.objects.append(obj)
        return k


class SyncHandle:
    """A checker-owned synchronization object (Lock, RLock, Condition, Semaphore, Event,
    Queue, Thread): ``kind`` and mutable ``fields`` (see ``absmc.component.sync``). Methods the
    component calls on it are intercepted by the machine; a call from native code raises
    :class:`NativeSyncUse`."""

    __slots__ = ("fields", "kind")

    def __init__(self, kind: str, fields: list[Any]) -> None:
        self.kind = kind
        self.fields = fields

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name not in ("__enter__", "__exit__"):
            raise AttributeError(name)
        if self.kind == "Thread" and name in ("name", "daemon"):
            return self.fields[4 if name == "name" else 5]
        return SyncMethod(self, name)

    def __repr__(self) -> str:
        k, f = self.kind, self.fields
        if k in ("Lock", "RLock"):
            return f"<{k} {'free' if f[0] < 0 else f'held by T{f[0]}'}>"
        if k == "Semaphore":
            return f"<Semaphore {f[0]}>"
        if k == "Event":
            return f"<Event {'set' if f[0] else 'clear'}>"
        if k == "Queue":
            return f"<Queue {list(f[1])!r}>"
        if k == "Condition":
            return f"<Condition waiters={list(f[1])}>"
        if k == "Thread":
            return f"<Thread {f[4]}>" if f[4] is not None else "<Thread (not started)>"
        return f"<{k}>"


class SyncMethod:
    """A method of a :class:`SyncHandle` (``handle.acquire``): the machine recognises it as a
    checker primitive when the component calls it."""

    __slots__ = ("handle", "name")

    def __init__(self, handle: SyncHandle, name: str) -> None:
        self.handle = handle
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        h = self.handle
        if (
            h.kind == "Thread"
            and self.name == "start"
            and not args
            and native_start is not None
            and native_start(h)
        ):
            return None
        raise NativeSyncUse(f"{h.kind}.{self.name}")


#: set by :mod:`absmc.component.guard` while a check runs: registers a checker thread that
#: natively run code starts (thesis Fig. 3.1); ``False`` when no step is executing
native_start: Callable[[SyncHandle], bool] | None = None


class NativeSyncUse(Exception):
    """A synchronization primitive was used by natively executed code (the environment, or a
    part of the component the translator runs as one step): the checker cannot schedule it."""


class Renumbered(Exception):
    """An encoding with a given numbering met an object that has none (a new heap object)."""


class Encoder:
    """One canonical walk: ``enc(obj)`` encodes a live value, numbering heap objects as they are
    met; ``heap`` holds the cells in number order. ``owned(obj)`` tells whether an instance is
    component data (else it is opaque); ``old`` (optional) is the decoder of the previous
    state, for :meth:`reenc` of encoded values that were not decoded."""

    __slots__ = ("_dirty", "_num", "cells", "fixed", "ident", "old", "opaque", "owned", "same")

    def __init__(
        self,
        opaque: Opaque,
        owned: Callable[[type], bool],
        old: Decoder | None = None,
        fixed: dict[int, int] | None = None,
    ) -> None:
        self.opaque = opaque
        self.owned = owned
        self.old = old
        #: with ``fixed`` (id of an object -> its number), the numbering is given: meeting
        #: any other heap object raises :class:`Renumbered`
        self.fixed = fixed is not None
        self._num: dict[int, int] = {} if fixed is None else fixed
        self.cells: list[Any] = []
        #: while ``same``, every cell numbered so far kept its number of the previous state:
        #: cells ``0 .. ident-1`` are the old cells of those numbers (then an unchanged block
        #: of the old heap is copied as it is instead of being walked)
        self.same = old is not None
        self.ident = 0
        #: prefix counts of the materialized cells of ``old`` a step changed (on first use)
        self._dirty: list[int] | None = None

    @property
    def heap(self) -> tuple[Any, ...]:
        return Hashed(self.cells)

    def reenc(self, v: Enc) -> Enc:
        """Re-number an encoded value of the previous state: a reference to a cell that was
        materialized encodes its live object (``old.objs``), one that was not is renumbered
        with its old cell's contents (``old.heap``)."""
        if v is None or type(v) is int or type(v) is str:
            return v
        tag = v[0]
        if tag == "r":
            old = self.old
            assert old is not None
            n = v[1]
            live = old.objs.get(n)
            if live is not None:
                m = self._num.get(id(live))
                if m is not None:
                    return v if m == n else ref(m)
                return self.enc(live)
            if n < self.ident:
                return v
            key = -1 - n
            m = self._num.get(key)
            if m is not None:
                return v if m == n else ref(m)
            m = len(self.cells)
            if self.same:
                if m == n:
                    if self._copy_block(n):
                        return v
                    self.ident = n + 1
                else:
                    self.same = False
            self._num[key] = m
            self.cells.append(None)
            cell = old.heap[n]
            if cell[0] == "S":
                self.cells[m] = ("S", frozenset([self.reenc(x) for x in cell[1]]))
            else:
                reenc = self.reenc
                self.cells[m] = (
                    cell[0],
                    *[reenc(x) if type(x) is tuple else x for x in cell[1:]],
                )
            return v if m == n else ref(m)
        if tag in _COMPOUND_TAGS:
            parts = [self.reenc(x) for x in v[1:]]
            for a, b in zip(parts, v[1:], strict=True):
                if a is not b:
                    return (tag, *parts)
            return v
        if tag == "F":
            return ("F", frozenset([self.reenc(x) for x in v[1]]))
        return v

    def _copy_block(self, n: int) -> bool:
        """While every cell so far kept its number, the next cell is the previous state's
        cell ``n``: when nothing in its block (``n`` and the cells first met below it) was
        changed by the step (cells not materialized, or materialized and still
        :meth:`Decoder.clean`) and no set in it holds references, the block is copied as
        it was (the walk would number and encode it so) and True is returned."""
        old = self.old
        assert old is not None
        ends, unsafe = _blocks(old.heap)
        end = ends[n]
        if unsafe[end] != unsafe[n]:
            return False
        objs = old.objs
        if objs:
            dirty = self._dirty
            if dirty is None:
                dirty = [0] * (len(old.heap) + 1)
                for k in old.changed():
                    dirty[k + 1] = 1
                for k in range(len(old.heap)):
                    dirty[k + 1] += dirty[k]
                self._dirty = dirty
            if dirty[end] != dirty[n]:
                return False
            num = self._num
            for k in range(n, end):
                o = objs.get(k)
                if o is not None:
                    num[id(o)] = k
        self.cells.extend(old.heap[n:end])
        self.ident = end
        return True

    def enc(self, obj: Any) -> Enc:
        t = type(obj)
        if t is int or t is str or obj is None:
            return obj
        if t is bool:
            return ENC_TRUE if obj else _ENC_FALSE
        if t is tuple:
            enc = self.enc
            return (
                "t",
                *[x if type(x) is int or type(x) is str or x is None else enc(x) for x in obj],
            )
        if t is float:
            return ("f", obj)
        if obj is UNBOUND:
            return UNB_ENC
        if t in _CONTAINERS or t is SyncHandle or (t not in _ATOMS and self.owned(t)):
            n = self._num.get(id(obj))
            if n is not None:
                return ref(n)
            if self.fixed:
                raise Renumbered
            n = len(self.cells)
            if self.same:
                old = self.old
                assert old is not None
                if old.objs.get(n) is obj:
                    if self._copy_block(n):
                        return ref(n)
                    self.ident = n + 1
                else:
                    self.same = False
            self._num[id(obj)] = n
            self.cells.append(None)
            self.cells[n] = self._cell(obj, t)
            return ref(n)
        if t is range:
            return ("R", obj.start, obj.stop, obj.step)
        if t is bytes:
            return ("y", obj)
        if t is complex:
            return ("c", obj)
        if t is frozenset:
            return ("F", frozenset(self.enc(x) for x in obj))
        if isinstance(obj, BaseException):
            return ("e", self.opaque.key(t), self.enc(obj.args))
        if t is MethodType:
            return ("M", self.enc(obj.__self__), self.enc(obj.__func__))
        if t is super:
            return ("P", self.enc(obj.__thisclass__), self.enc(obj.__self__))
        if t is SyncMethod:
            return ("m", self.enc(obj.handle), obj.name)
        if t is BuiltinMethodType:
            owner = obj.__self__
            if owner is not None and not isinstance(owner, ModuleType):
                return ("B", self.enc(owner), obj.__name__)
        if t is FunctionType:
            tmpl = NESTED.get(obj.__code__)
            if tmpl is not None:
                cells = tuple(c.cell_contents for c in obj.__closure__ or ())
                return ("N", self.opaque.key(tmpl), self.enc(cells))
        return ("o", self.opaque.key(obj))

    def _cell(self, obj: Any, t: type) -> Any:
        enc = self.enc
        # int, str and None encode as themselves: inline (most list elements and fields)
        if t is list:
            return (
                "L",
                *[x if type(x) is int or type(x) is str or x is None else enc(x) for x in obj],
            )
        if t is dict:
            out: list[Any] = ["D"]
            for k, v in obj.items():
                out.append(enc(k))
                out.append(enc(v))
            return tuple(out)
        if t is set:
            return ("S", frozenset(enc(x) for x in obj))
        if t is deque:
            return (
                "Q",
                *[x if type(x) is int or type(x) is str or x is None else enc(x) for x in obj],
            )
        if t is defaultdict:
            dd: list[Any] = ["DD", enc(obj.default_factory)]
            for k, v in obj.items():
                dd.append(enc(k))
                dd.append(enc(v))
            return tuple(dd)
        if t is SyncHandle:
            return (
                "$",
                obj.kind,
                *[
                    x if type(x) is int or type(x) is str or x is None else enc(x)
                    for x in obj.fields
                ],
            )
        attrs: list[Any] = ["O", self.opaque.key(t)]
        try:
            d = obj.__dict__
        except AttributeError:
            d = slot_values(obj)
        for k in sorted(d):
            attrs.append(k)
            attrs.append(enc(d[k]))
        return tuple(attrs)


def slot_names(cls: type) -> tuple[str, ...]:
    """The ``__slots__`` attributes of ``cls`` and its bases (``__dict__``/``__weakref__``
    excepted)."""
    out: list[str] = []
    for c in cls.__mro__:
        sl = c.__dict__.get("__slots__", ())
        for n in (sl,) if isinstance(sl, str) else sl:
            if n not in ("__dict__", "__weakref__") and n not in out:
                out.append(n)
    return tuple(out)


def slot_values(obj: Any) -> dict[str, Any]:
    """The bound slot attributes of an instance of a class with ``__slots__``."""
    out = {}
    for n in slot_names(type(obj)):
        with contextlib.suppress(AttributeError):
            out[n] = object.__getattribute__(obj, n)
    return out


_CONTAINERS = frozenset({list, dict, set, deque, defaultdict})
_ATOMS = frozenset({int, str, bool, float, bytes, complex, range, frozenset, type(None), tuple})


_is = operator.is_
#: keys whose hash cannot change while their identity does not
_STABLE_KEYS = frozenset({int, str, type(None), bool, float, bytes})


def _shallow(o: Any, tag: str) -> tuple[Any, ...] | None:
    """The contents of heap object ``o`` (of a cell tagged ``tag``) one level deep, as a
    tuple compared item by item by identity (:meth:`Decoder.clean`); None for the kinds
    that are never taken as unchanged (sets; dicts with keys that are not plain atoms)."""
    if tag == "L" or tag == "Q":
        return tuple(o)
    if tag == "$":
        return tuple(o.fields)
    if tag == "O":
        try:
            d = o.__dict__
        except AttributeError:
            d = slot_values(o)
        return (type(o), len(d), *d, *d.values())
    if tag == "D" or tag == "DD":
        for k in o:
            if type(k) not in _STABLE_KEYS:
                return None
        head = o.default_factory if tag == "DD" else None
        return (head, len(o), *o, *o.values())
    return None


class Decoder:
    """Materializes cells of a heap (tuple of cells) as live objects on demand: ``obj(n)``
    (and ``dec`` of a reference) creates cell ``n`` and what it reaches; ``objs`` maps the
    materialized cell numbers to their objects (what :meth:`Encoder.reenc` reads).

    ``snap[n]`` is the shallow contents object ``n`` had when it was materialized (its items,
    fields or attributes, see :func:`_shallow`): an object whose contents are still those
    (compared by identity) encodes as its cell did, if what it references does too. That lets
    a decoder be kept from one step to the next (:meth:`rebase`): its objects are changed in
    place into another heap's cells instead of being created again. ``unsafe``: a cell held a
    value whose encoding can change while its identity does not (a nested function, an
    exception, a synchronization method), so the objects are not kept."""

    __slots__ = ("_changed", "cell_of", "heap", "in_cell", "objs", "opaque", "snap", "unsafe")

    def __init__(self, heap: tuple[Any, ...], opaque: Opaque) -> None:
        self.heap = heap
        self.opaque = opaque
        self.objs: dict[int, Any] = {}
        #: id of a materialized object -> its cell number
        self.cell_of: dict[int, int] = {}
        self._changed: list[int] | None = None
        self.snap: dict[int, tuple[Any, ...] | None] = {}
        self.in_cell = False
        self.unsafe = False

    def all(self) -> None:
        """Materialize every cell."""
        for n in range(len(self.heap)):
            self.obj(n)

    def obj(self, n: int) -> Any:
        o = self.objs.get(n)
        if o is not None:
            return o
        cell = self.heap[n]
        tag = cell[0]
        dec = self.dec
        outer = self.in_cell
        self.in_cell = True
        # the shell first (so that cycles and aliasing resolve), then its contents
        if tag == "L":
            o = self.objs[n] = []
        elif tag == "$":
            o = self.objs[n] = SyncHandle(cell[1], [])
        elif tag == "D":
            o = self.objs[n] = {}
        elif tag == "S":
            o = self.objs[n] = set()
        elif tag == "Q":
            o = self.objs[n] = deque()
        elif tag == "DD":
            o = self.objs[n] = defaultdict()
        else:
            cls = self.opaque.objects[cell[1]]
            o = self.objs[n] = cls.__new__(cls)
        self.cell_of[id(o)] = n
        self._fill(o, cell, dec)
        self.in_cell = outer
        self.snap[n] = _shallow(o, tag)
        return o

    @staticmethod
    def _fill(o: Any, cell: Any, dec: Callable[[Enc], Any]) -> None:
        """Set the contents of the (empty or stale) object ``o`` of cell ``cell``'s kind."""
        tag = cell[0]
        if tag == "L" or tag == "Q":
            o.extend([dec(x) if type(x) is tuple else x for x in cell[1:]])
        elif tag == "$":
            o.fields = [dec(x) if type(x) is tuple else x for x in cell[2:]]
        elif tag == "D":
            for i in range(1, len(cell), 2):
                o[dec(cell[i])] = dec(cell[i + 1])
        elif tag == "S":
            o.update(dec(x) for x in cell[1])
        elif tag == "DD":
            o.default_factory = dec(cell[1])
            for i in range(2, len(cell), 2):
                o[dec(cell[i])] = dec(cell[i + 1])
        else:
            try:
                d = o.__dict__
            except AttributeError:
                for i in range(2, len(cell), 2):
                    object.__setattr__(o, cell[i], dec(cell[i + 1]))
            else:
                for i in range(2, len(cell), 2):
                    d[cell[i]] = dec(cell[i + 1])

    def changed(self) -> list[int]:
        """The materialized cells whose objects no longer have the contents they were
        materialized with (compared one level deep, by identity: :func:`_shallow`); all of
        them when a cell held an unsafe value. Computed once after a step (the objects do
        not change again until :meth:`rebase`)."""
        out = self._changed
        if out is None:
            out = []
            snap = self.snap
            unsafe = self.unsafe
            heap = self.heap
            for n, o in self.objs.items():
                sn = snap[n]
                if unsafe or sn is None:
                    out.append(n)
                    continue
                t = type(o)
                if t is list:
                    if len(o) != len(sn) or not all(map(_is, o, sn)):
                        out.append(n)
                    continue
                if t is SyncHandle:
                    f = o.fields
                    if o.kind != heap[n][1] or len(f) != len(sn) or not all(map(_is, f, sn)):
                        out.append(n)
                    continue
                now = _shallow(o, heap[n][0])
                if now is None or len(now) != len(sn) or not all(map(_is, now, sn)):
                    out.append(n)
            self._changed = out
        return out

    def rebase(self, heap: tuple[Any, ...]) -> bool:
        """Make the materialized objects those of ``heap`` (a heap with the same cell kinds
        at the numbers materialized): every object whose cell differs, or that a step
        :meth:`changed`, gets its contents again, in place, so that every reference to it
        stays right. False (the decoder is then unusable) when a kind differs or a cell
        held an unsafe value."""
        if self.unsafe:
            return False
        old = self.heap
        objs = self.objs
        size = len(heap)
        stale = self.changed()
        self._changed = None
        if heap is not old:
            done = set(stale)
            for n in objs:
                if n in done:
                    continue
                if n >= size:
                    stale.append(n)
                    continue
                cell = heap[n]
                was = old[n]
                if cell is was or cell == was:
                    continue
                if cell[0] != was[0] or ((cell[0] == "$" or cell[0] == "O") and cell[1] != was[1]):
                    return False
                stale.append(n)
        self.heap = heap
        if not stale:
            return True
        for n in stale:
            if n >= size:
                del self.cell_of[id(objs.pop(n))]
                del self.snap[n]
        dec = self.dec
        self.in_cell = True
        # hashed containers last: their keys' contents are final by then
        for late in (False, True):
            for n in stale:
                if n >= size:
                    continue
                cell = heap[n]
                tag = cell[0]
                if (tag == "D" or tag == "S" or tag == "DD") is not late:
                    continue
                o = objs[n]
                if tag == "$":
                    o.kind = cell[1]
                    o.fields = []
                elif tag == "L" or tag == "Q" or late:
                    o.clear()
                elif type(o) is not self.opaque.objects[cell[1]]:
                    return False
                else:
                    try:
                        o.__dict__.clear()
                    except AttributeError:
                        for k in slot_names(type(o)):
                            with contextlib.suppress(AttributeError):
                                object.__delattr__(o, k)
                self._fill(o, cell, dec)
                self.snap[n] = _shallow(o, tag)
        self.in_cell = False
        return not self.unsafe

    def dec(self, v: Enc) -> Any:
        if v is None or type(v) is int or type(v) is str:
            return v
        tag = v[0]
        if tag == "r":
            o = self.objs.get(v[1])
            return o if o is not None else self.obj(v[1])
        if tag == "b" or tag == "f" or tag == "y" or tag == "c":
            return v[1]
        if tag == "t":
            dec = self.dec
            return tuple([dec(x) if type(x) is tuple else x for x in v[1:]])
        if tag == "o":
            return self.opaque.objects[v[1]]
        if tag == "R":
            return range(v[1], v[2], v[3])
        if tag == "u":
            return UNBOUND
        if tag == "M":
            return MethodType(self.dec(v[2]), self.dec(v[1]))
        if tag == "N":
            if self.in_cell:
                self.unsafe = True
            tmpl = self.opaque.objects[v[1]]
            f = FunctionType(
                tmpl.__code__,
                tmpl.__globals__,
                tmpl.__name__,
                tmpl.__defaults__,
                tuple(CellType(x) for x in self.dec(v[2])),
            )
            f.__kwdefaults__ = tmpl.__kwdefaults__
            f.__qualname__ = tmpl.__qualname__
            return f
        if tag == "P":
            return super(self.dec(v[1]), self.dec(v[2]))
        if tag == "B":
            return getattr(self.dec(v[1]), v[2])
        if tag == "m":
            if self.in_cell:
                self.unsafe = True
            return SyncMethod(self.dec(v[1]), v[2])
        if tag == "F":
            return frozenset(self.dec(x) for x in v[1])
        if tag == "e":
            if self.in_cell:
                self.unsafe = True
            cls = self.opaque.objects[v[1]]
            args = self.dec(v[2])
            try:
                return cls(*args)
            except Exception:  # an exception type whose constructor takes other arguments
                exc = cls.__new__(cls)
                exc.args = args
                return exc
        raise ValueError(f"not an encoded value: {v!r}")


def _refs(v: Enc, out: list[int]) -> None:
    if type(v) is not tuple:
        return
    tag = v[0]
    if tag == "r":
        out.append(v[1])
    elif tag in _REF_TAGS:
        for x in v[1] if tag == "F" else v[1:]:
            _refs(x, out)


def seq_refs(seq: Any) -> list[int]:
    """The heap references of the encoded values of ``seq``, in walk order."""
    out: list[int] = []
    tags = _REF_TAGS
    for x in seq:
        if type(x) is tuple:
            tag = x[0]
            if tag == "r":
                out.append(x[1])
            elif tag in tags:
                _refs(x, out)
    return out


_BLOCKS: list[Any] = [None, None]


def _blocks(heap: tuple[Any, ...]) -> tuple[list[int], list[int]]:
    """For a heap numbered in depth-first preorder: ``ends[n]`` (cells ``n .. ends[n]-1`` are
    the ones first met below cell ``n``: a reference from ``n`` to a later cell can only be
    to a descendant) and the prefix counts of cells whose walk order is not their element
    order (sets holding references). Cached for the last heap (a state's successors are
    computed one thread after the other from the same heap)."""
    if _BLOCKS[0] is heap:
        return cast(tuple[list[int], list[int]], _BLOCKS[1])
    size = len(heap)
    ends = list(range(1, size + 1))
    unsafe = [0] * (size + 1)
    for n in range(size - 1, -1, -1):
        cell = heap[n]
        out: list[int] = []
        if cell[0] == "S":
            for x in cell[1]:
                _refs(x, out)
            if out:
                unsafe[n + 1] = 1
        else:
            for x in cell[1:]:
                _refs(x, out)
        e = ends[n]
        for c in out:
            if c > n and ends[c] > e:
                e = ends[c]
        ends[n] = e
    for n in range(size):
        unsafe[n + 1] += unsafe[n]
    _BLOCKS[0] = heap
    _BLOCKS[1] = (ends, unsafe)
    return ends, unsafe


#: tags of encoded values that may contain heap references (renumbered by ``reenc``)
_REF_TAGS = frozenset({"r", "t", "e", "M", "B", "m", "F", "P", "N"})
_COMPOUND_TAGS = frozenset({"t", "e", "M", "B", "m", "P", "N"})

#: functions defined inside component functions: their code -> the translated template
#: (such a function is encoded by value, ``("N", template, captured values)``)
NESTED: dict[CodeType, FunctionType] = {}


def enc_seq(enc: Callable[[Any], Enc], seq: list[Any]) -> tuple[Any, ...]:
    """``tuple(enc(x) for x in seq)`` with the common atoms (int, str, None, unbound)
    encoded inline (the hot path of every step: a frame's locals)."""
    return tuple(
        [
            x
            if type(x) is int or type(x) is str or x is None
            else (UNB_ENC if x is UNBOUND else enc(x))
            for x in seq
        ]
    )


def dec_seq(dec: Callable[[Enc], Any], seq: tuple[Any, ...]) -> list[Any]:
    """``[dec(x) for x in seq]`` with the common atoms decoded inline."""
    return [
        x
        if type(x) is int or type(x) is str or x is None
        else (UNBOUND if x is UNB_ENC else dec(x))
        for x in seq
    ]


def reenc_seq(reenc: Callable[[Enc], Enc], seq: tuple[Any, ...]) -> tuple[Any, ...]:
    """``seq`` re-encoded (references renumbered, in order); ``seq`` itself when that
    changes nothing."""
    tags = _REF_TAGS
    for i, x in enumerate(seq):
        if type(x) is tuple and x[0] in tags:
            y = reenc(x)
            if y is not x:
                out = list(seq[:i])
                out.append(y)
                out.extend(
                    [reenc(z) if type(z) is tuple and z[0] in tags else z for z in seq[i + 1 :]]
                )
                return tuple(out)
    return seq


def fingerprint(value: Any, opaque: Opaque, owned: Callable[[type], bool]) -> tuple[Any, ...]:
    """A self-contained canonical encoding of ``value`` and everything it reaches (for the
    environment's border states: equal fingerprints mean equal data, whatever the addresses)."""
    e = Encoder(opaque, owned)
    root = e.enc(value)
    return (root, e.heap)


_OBJECT_REPR: Any = object.__repr__
_THREAD_REPR: Any = threading.Thread.__repr__


def render(value: Any, depth: int = 0) -> str:
    """A short readable text of a live value for traces (cycles cut at depth 4)."""
    if depth > 4:
        return "…"
    if isinstance(value, list):
        return "[" + ", ".join(render(x, depth + 1) for x in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(render(x, depth + 1) for x in value)
        return f"({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, dict):
        return (
            "{" + ", ".join(f"{render(k)}: {render(v, depth + 1)}" for k, v in value.items()) + "}"
        )
    rep = getattr(type(value), "__repr__", None)
    if (rep is _OBJECT_REPR or rep is _THREAD_REPR) and hasattr(value, "__dict__"):
        items = sorted(vars(value).items())
        if rep is _THREAD_REPR:  # a component Thread subclass: its own attributes
            items = [(k, v) for k, v in items if not k.startswith("_")]
        attrs = ", ".join(f"{k}={render(v, depth + 1)}" for k, v in items)
        return f"{type(value).__name__}({attrs})"
    try:
        text = repr(value)
    except Exception as e:  # a half-initialized object of the program
        text = f"<{type(value).__name__} (repr raised {type(e).__name__})>"
    return text if len(text) <= 80 else text[:77] + "..."
