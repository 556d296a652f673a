"""Memory of this process, for ``--max-memory`` (a limit checked while a search runs)."""

from __future__ import annotations

import os
import resource

_PAGE_MB = os.sysconf("SC_PAGE_SIZE") / (1024.0 * 1024.0) if hasattr(os, "sysconf") else 0.0


def current_rss_mb() -> float:
    """The resident set size of this process now, in MiB: ``/proc/self/statm`` on Linux, the
    peak resident set size elsewhere (an upper bound)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * _PAGE_MB
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def machine_memory_mb() -> float | None:
    """Physical memory of the machine in MiB, or ``None`` when it cannot be read."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / (1024.0 * 1024.0)
    except (ValueError, OSError, AttributeError):
        return None
