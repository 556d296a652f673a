"""Explicit-state model checking (the SPIN-style baseline every abstraction is checked against).

:func:`check_explicit` compiles the System, runs the kernel's search (BFS or DFS; exact,
bitstate or hash-compact store) and turns what it found into a
:class:`~absmc.kernel.result.Result` whose counterexamples were replayed on the compiled
semantics.
"""

from __future__ import annotations

from absmc.engines.explicit.check import check_explicit, make_store

__all__ = ["check_explicit", "make_store"]
