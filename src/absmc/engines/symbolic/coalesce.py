"""Coalescing a union of many disjuncts in chunks.

isl's ``coalesce`` compares disjuncts pairwise, so its cost grows about quadratically with
their number; a partial abstraction's relation can have thousands before it is coalesced
(airportSM-bk2's round-3 predicate set of CEGAAR: 1536 basic maps for one command, 32 s in one
``coalesce``). :func:`coalesce_chunked` coalesces groups of ``CHUNK`` disjuncts, then groups
of the results, until one remains: the same set (a coalesce never changes the set, only its
representation), faster there (7 s for those 1536; the whole round-3 abstraction 99 -> 52 s,
though its fixpoints took 19 -> 38 s on the differently cut disjuncts, measured under load),
and a point between two chunks where the run's time limit is checked (``tick``), which one
long ``coalesce`` never reaches: isl counts few steps per second in a coalesce, so its
operation quota (:mod:`absmc.engines.symbolic.budget`) let that one run 25 s past a 1.5 s
limit. A union of at most ``CHUNK`` disjuncts is coalesced at once, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import islpy as isl

__all__ = ["coalesce_chunked"]

#: disjuncts coalesced together in one isl call (64: faster still, but the fixpoints on the
#: result were slower)
CHUNK = 256

_M = TypeVar("_M", isl.Map, isl.Set)


def coalesce_chunked(m: _M, tick: Callable[[], None] | None = None, chunk: int = CHUNK) -> _M:
    """``m`` coalesced, ``chunk`` disjuncts at a time (see the module doc). ``tick`` is called
    before each isl ``coalesce`` (it may raise to stop: the time limit)."""
    n = m.n_basic_map() if isinstance(m, isl.Map) else m.n_basic_set()
    if n <= chunk:
        if tick is not None:
            tick()
        return m.coalesce()
    parts: list[_M] = [
        type(m).from_basic_map(b) if isinstance(m, isl.Map) else type(m).from_basic_set(b)
        for b in (m.get_basic_maps() if isinstance(m, isl.Map) else m.get_basic_sets())
    ]
    while len(parts) > 1:
        merged: list[_M] = []
        for i in range(0, len(parts), chunk):
            group = parts[i : i + chunk]
            u = group[0]
            for p in group[1:]:
                u = u.union(p)
            if tick is not None:
                tick()
            merged.append(u.coalesce())
        parts = merged
    return parts[0]
