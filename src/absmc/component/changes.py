"""Encoding only what a step changed (the fast path of the component machine,
:mod:`absmc.component.machine`; the canonical numbering is that of
:mod:`absmc.component.values`).

After a step that created no heap object and moved no reference, the canonical walk from the
roots numbers the heap exactly as it numbered the state the step started from. Then the
successor is that state with the cells of the objects the step changed
(:meth:`~absmc.component.values.Decoder.changed`) and the roots (globals, closure cells, the
stepping thread, the statuses) encoded again, with the old numbering; the other threads'
encoded frames stay as they are. Whether the numbering stayed is checked on the encoded
result: every changed cell and root references the same cells in the same order, or
(for the threads, walked after the globals) a walk over cell numbers meets the cells the
globals do not reach in number order. Any other step returns None and the heap is walked
again (:class:`~absmc.component.values.Encoder`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from absmc.component.values import (
    UNBOUND,
    Decoder,
    Encoder,
    Hashed,
    Opaque,
    Renumbered,
    enc_seq,
    seq_refs,
)
from absmc.ir.steps import State


def encode_changes(
    threads: Sequence[Any],
    d: Decoder,
    src: State,
    prog: Any,
    opaque: Opaque,
    owned: Callable[[type], bool],
) -> tuple[State, bool] | None:
    """The state after a step from ``src`` (a ``(globals, cells, threads, heap)`` tuple of
    :mod:`absmc.component.machine`) that created no heap object and moved no reference:
    ``src`` with the cells of the objects the step changed (:meth:`Decoder.changed`) and
    the roots encoded again, and whether the step keeps the numbering of *every* state
    that differs from ``src`` only in the other threads' frames (no thread's references
    moved but to cells the globals reach: then the step may be memoized,
    :mod:`absmc.component.memo`); None for any other step (then the caller walks the heap).

    ``threads``: the machine's threads after the step (the stepping one live, the others
    with their encoded frames and statuses); ``d``: the decoder that materialized ``src``
    (its objects are the live ones); ``prog``: the ``Program`` (``namespace``, ``roots``,
    ``cells``); ``opaque``, ``owned``: as for :class:`Encoder`. Bao's thesis ch. 3
    (Fig. 3.2: one atomic step of the component, its state stored after it)."""
    g0, c0, tt0, heap0 = cast(Any, src)
    if len(threads) != len(tt0) or d.unsafe:
        return None
    for cell in heap0:
        if cell[0] == "S" and any(type(x) is tuple for x in cell[1]):
            # the walk meets a set's objects in the live set's order, not the cell's
            return None
    e = Encoder(opaque, owned, fixed=d.cell_of)
    enc = e.enc
    try:
        heap = heap0
        changed = d.changed()
        if changed:
            cells = list(heap0)
            objs = d.objs
            for n in changed:
                o = objs[n]
                new = e._cell(o, type(o))
                was = heap0[n]
                if new != was:
                    if new[0] == "S" or seq_refs(new[1:]) != seq_refs(was[1:]):
                        return None
                    cells[n] = new
            heap = Hashed(cells)
        ns = prog.namespace
        g = tuple([enc(ns.get(n, UNBOUND)) for n in prog.roots])
        if g != g0:
            if seq_refs(g) != seq_refs(g0):
                return None
        else:
            g = g0
        c = c0
        if c0:
            c = tuple([enc(cell.cell_contents) for cell in prog.cells])
            if c != c0:
                if seq_refs(c) != seq_refs(c0):
                    return None
            else:
                c = c0
        tt = []
        k = -1
        moved = False
        for t, was in zip(threads, tt0, strict=True):
            st = t.status
            if t.lazy:
                if st is was[2] or st == was[2]:
                    tt.append(was)
                    continue
                if k < 0:
                    k = globals_reach(g0, c0, heap0)
                if _after(status_refs(st), k) != _after(status_refs(was[2]), k) and _first_met(
                    k, thread_refs(st, was[3], was[1]), heap
                ) != _first_met(k, thread_refs(was[2], was[3], was[1]), heap0):
                    moved = True
                tt.append(Hashed((was[0], was[1], st, was[3], was[4])))
                continue
            if type(st) is tuple:
                st = (st[0], enc(st[1]), st[2], enc(st[3]), enc(st[4]))
            frames = tuple([(fr[0], fr[1], enc_seq(enc, fr[2]), fr[3]) for fr in t.frames])
            h = t.handle if t.henc else enc(t.handle)
            entry = Hashed((t.name, h, st, frames, t.daemon))
            if entry != was and not _same_refs(st, frames, h, was):
                # references to the cells the globals reach (met before any thread's)
                # do not number anything
                if k < 0:
                    k = globals_reach(g0, c0, heap0)
                now = thread_refs(st, frames, h)
                before = thread_refs(was[2], was[3], was[1])
                if _after(now, k) != _after(before, k) and _first_met(k, now, heap) != _first_met(
                    k, before, heap0
                ):
                    moved = True
            tt.append(entry)
    except Renumbered:
        return None
    if moved and not _numbered(k, [thread_refs(t[2], t[3], t[1]) for t in tt], heap):
        return None
    return cast(State, (g, c, tuple(tt), heap)), not moved


def status_refs(st: Any) -> list[int]:
    """The heap references of an encoded thread status, in walk order."""
    return seq_refs(st[1:]) if type(st) is tuple else []


def _same_refs(st: Any, frames: Any, handle: Any, was: Any) -> bool:
    """Whether a thread's encoded status, frames and handle reference the same cells in
    the same order as its entry ``was`` (frame by frame; False when unsure)."""
    if handle is not was[1] and handle != was[1]:
        return False
    if st is not was[2] and st != was[2] and status_refs(st) != status_refs(was[2]):
        return False
    old = was[3]
    if len(frames) != len(old):
        return False
    for fr, wfr in zip(frames, old, strict=True):
        a = fr[2]
        b = wfr[2]
        if a != b and seq_refs(a) != seq_refs(b):
            return False
    return True


#: the last :func:`globals_reach` (heap, globals, cells, result): a state's steps share it
_REACHED: list[Any] = [None, None, None, 0]


def _after(refs: list[int], k: int) -> list[int]:
    return [r for r in refs if r >= k]


def globals_reach(g: Any, c: Any, heap: tuple[Any, ...]) -> int:
    """The number of heap cells the encoded globals ``g`` and closure cells ``c`` reach
    (in a canonical state, cells ``0 .. n-1``: the walk meets them before any thread's)."""
    last = _REACHED
    if last[0] is heap and last[1] is g and last[2] is c:
        return cast(int, last[3])
    seen: set[int] = set()
    todo = seq_refs(g) + seq_refs(c)
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            cell = heap[n]
            todo += seq_refs(cell[1] if cell[0] == "S" else cell[1:])
    last[:] = [heap, g, c, len(seen)]
    return len(seen)


def _first_met(k: int, refs: list[int], heap: tuple[Any, ...]) -> list[int]:
    """The cells the walk meets first from ``refs`` when it has met cells ``0 .. k-1``.

    What the walk has met before a thread is closed under reachability (cells ``0 .. k-1``
    and whatever the threads before it reach), so the cells a thread meets first after any
    such set are this sequence without that set, in this order: two reference sequences
    with the same first-met cells number the rest of the heap alike whatever the other
    threads' frames."""
    seen: set[int] = set()
    out: list[int] = []
    stack = refs[::-1]
    while stack:
        n = stack.pop()
        if n < k or n in seen:
            continue
        seen.add(n)
        out.append(n)
        cell = heap[n]
        more = seq_refs(cell[1] if cell[0] == "S" else cell[1:])
        more.reverse()
        stack += more
    return out


def _numbered(k: int, pieces: list[list[int]], heap: tuple[Any, ...]) -> bool:
    """Whether the canonical walk, having met cells ``0 .. k-1`` (those the globals
    reach), meets the rest of ``heap`` in number order from the references ``pieces``
    (the threads', in walk order): then the heap is numbered canonically."""
    nxt = k
    for piece in pieces:
        stack = piece[::-1]
        while stack:
            n = stack.pop()
            if n < nxt:
                continue
            if n != nxt:
                return False
            nxt += 1
            cell = heap[n]
            refs = seq_refs(cell[1] if cell[0] == "S" else cell[1:])
            refs.reverse()
            stack += refs
    return nxt == len(heap)


def thread_refs(st: Any, frames: Any, handle: Any) -> list[int]:
    """The heap references of a thread's encoded status, frames and handle, in walk order."""
    out = status_refs(st)
    for fr in frames:
        out += seq_refs(fr[2])
    out += seq_refs((handle,))
    return out
