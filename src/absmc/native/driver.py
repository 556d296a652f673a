"""The loop that drives a C search in time slices, shared by the breadth-first search
(:func:`absmc.native.search.native_search`), the nested depth-first product search
(:class:`absmc.native.ltl.NativeLtl`) and the state-graph search for CTL
(:class:`absmc.native.graph.NativeGraph`).

The C loop runs for about :data:`SLICE_S` seconds and returns; between two slices Python
checks, in this order, a hand-over request, the deadline, the resident memory against
``--max-memory`` and Ctrl-C (which Python raises between two calls; pending signal handlers
are run explicitly each slice, :func:`~absmc.kernel.run.limits.handle_pending_signals`), and reports
``--progress`` at most once a second. So every C search stops on the same limits, with the
same reasons, as the kernel's searches (:mod:`absmc.kernel.run.limits`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from absmc.kernel.explore.search import HANDED_OVER
from absmc.kernel.run.limits import (
    INTERRUPTED,
    handle_pending_signals,
    memory_limit,
    time_limit,
)
from absmc.kernel.run.memory import current_rss_mb
from absmc.kernel.run.options import Limits, Progress

__all__ = ["SLICE_S", "drive_slices"]

#: seconds the C loop runs between two checks in Python
SLICE_S = 0.2


def drive_slices(
    run_slice: Callable[[], int],
    slice_status: int,
    limits: Limits,
    start: float,
    end: float | None,
    progress: Callable[[Progress], None] | None = None,
    progress_of: Callable[[float], Progress] | None = None,
    hand_over: Callable[[], bool] | None = None,
) -> tuple[int, str | None]:
    """Call ``run_slice()`` (one C slice; returns the search's status code) until it returns
    something other than ``slice_status`` or a limit ends the run: ``end`` (a
    ``time.monotonic()`` deadline, ``None``: none), ``limits.max_memory_mb`` (resident MB),
    Ctrl-C, or ``hand_over()`` returning true. ``progress(progress_of(seconds since start))``
    at most once a second. Returns ``(status, stopped)``: the last status (``slice_status``
    when a limit ended the run) and the limit's reason
    (:func:`~absmc.kernel.run.limits.time_limit`, :func:`~absmc.kernel.run.limits.memory_limit`,
    :data:`~absmc.kernel.run.limits.INTERRUPTED`,
    :data:`~absmc.kernel.explore.search.HANDED_OVER`) or ``None``."""
    last = start
    try:
        while True:
            status = run_slice()
            handle_pending_signals()  # a Ctrl-C whose handler CPython has not run yet
            if status != slice_status:
                return status, None
            if hand_over is not None and hand_over():
                return status, HANDED_OVER
            now = time.monotonic()
            if end is not None and now >= end:
                return status, time_limit(limits)
            if limits.max_memory_mb is not None and current_rss_mb() >= limits.max_memory_mb:
                return status, memory_limit(limits.max_memory_mb)
            if progress is not None and progress_of is not None and now - last >= 1.0:
                last = now
                progress(progress_of(now - start))
    except KeyboardInterrupt:
        return slice_status, INTERRUPTED
