"""Memoized steps of the component machine: a thread's step reads only its own frames, the
tracked globals and closure cells, the heap and the threads' statuses — never the other
threads' frames. So two states that agree on those (the *key*) have the same step by that
thread, and the second is assembled from the first's result instead of being executed (in a
concurrent program most states differ only in the other threads' positions: on the dining
philosophers three of four steps are found in the memo). While no other thread has frames
the key is the whole state, which a search does not expand twice: no memo then.

A step is kept only when reusing it is exact:

* it called no environment function (a repeated call keeps its place in the determinism
  check and the test generation);
* it created no thread and no heap cell, every object kept its number, and no reference
  moved (the same cells referenced in the same order by every heap cell and global; each
  thread's references meet first the same cells in the same order): then the canonical
  numbering (a walk from the roots, :mod:`absmc.component.values`) is the same for every
  state of the key, whatever the other threads' frames, and the successor is the state
  with the step's globals, heap, stepping thread and statuses. This is what the machine's
  encoding from the changed cells checks (:func:`absmc.component.changes.encode_changes`);
  a step encoded by the full walk is not kept. (Comparing encoded references alone is not
  enough: a step that swaps two objects referenced by two globals changes no encoded
  reference but renumbers both objects, and another thread holding one of them would then
  hold the other.)
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, cast

from absmc.component.values import Hashed
from absmc.ir.steps import State

#: the most memoized steps kept (then the memo starts again: bounded memory); with a store
#: that keeps no states (bitstate, hash-compact) the memo would keep states alive that the
#: store does not: :data:`SMALL_MEMO_LIMIT` there
MEMO_LIMIT = 200_000
SMALL_MEMO_LIMIT = 2_000

Delta = tuple[Any, ...]
"""``(globals, cells, heap, stepping thread's entry, statuses)`` of a step's successor, or
``None`` in the first place for a step that blocks."""


def shared_key(s: State) -> Hashable:
    """What every thread's step from ``s`` depends on (with the thread's own entry and the
    label: :func:`step_key`): the globals, cells, heap and the statuses."""
    g, c, tt, heap = cast(Any, s)
    return (g, c, heap, tuple([t[2] for t in tt]))


def step_key(s: State, tid: int, label: int) -> Hashable:
    """The rest of what thread ``tid``'s step ``label`` from ``s`` depends on."""
    return (label, cast(Any, s)[2][tid])


def delta(s: State, t: State, tid: int) -> Delta | None:
    """The part of the successor ``t`` of ``s`` (by thread ``tid``) a memo keeps, or None
    when the step changed another thread's frames or handle, or the numbers of threads or
    cells. The caller keeps only steps that kept every object's number for every state of
    the key (``same_numbers`` of :func:`absmc.component.changes.encode_changes`: references
    that two swapped objects make move no encoded reference, yet would renumber the other
    threads' references)."""
    _, _, tt, heap = cast(Any, s)
    g2, c2, tt2, heap2 = cast(Any, t)
    if len(tt2) != len(tt) or len(heap2) != len(heap):
        return None
    for j, (a, b) in enumerate(zip(tt, tt2, strict=True)):
        if j == tid:
            continue
        if (a[3] is not b[3] and a[3] != b[3]) or (a[1] is not b[1] and a[1] != b[1]):
            return None
    return (g2, c2, heap2, tt2[tid], tuple([x[2] for x in tt2]))


def apply(s: State, tid: int, d: Delta) -> State:
    """The successor of ``s`` by the memoized step ``d`` of thread ``tid``."""
    g2, c2, heap2, entry, statuses = d
    tt = cast(Any, s)[2]
    out = []
    for j, e in enumerate(tt):
        if j == tid:
            out.append(entry)
        elif e[2] is statuses[j] or e[2] == statuses[j]:
            out.append(e)
        else:
            out.append(Hashed((e[0], e[1], statuses[j], e[3], e[4])))
    return cast(State, (g2, c2, tuple(out), heap2))


class Memo:
    """Memoized steps: per :func:`shared_key` a table of :func:`step_key` -> value; at most
    ``limit`` steps (then it starts again)."""

    def __init__(self, limit: int = MEMO_LIMIT) -> None:
        self.limit = limit
        self.size = 0
        self.tables: dict[Hashable, dict[Hashable, Any]] = {}
        self._state: State | None = None
        self._table: dict[Hashable, Any] | None = None

    def table(self, s: State) -> dict[Hashable, Any] | None:
        """The steps from states sharing ``s``'s shared key (looked up once per state: a
        state's threads are expanded one after the other); None while fewer than two threads
        have frames (then nothing is memoized)."""
        if self._state is not s:
            self._state = s
            n = 0
            for t in cast(Any, s)[2]:
                if t[3]:
                    n += 1
            self._table = self.tables.setdefault(shared_key(s), {}) if n > 1 else None
        return self._table

    def remember(self, s: State, key: Hashable, value: Any) -> None:
        """Store ``value`` for ``s`` under ``key``."""
        if self.size >= self.limit:
            self.tables.clear()
            self.size = 0
            self._state = None
        table = self.table(s)
        if table is not None:
            table[key] = value
            self.size += 1


__all__ = [
    "MEMO_LIMIT",
    "SMALL_MEMO_LIMIT",
    "Delta",
    "Memo",
    "apply",
    "delta",
    "shared_key",
    "step_key",
]
