"""One check's limits (``--timeout``, ``--max-states``, ``--max-depth``, ``--max-memory``) and
the one vocabulary of stop reasons.

A :class:`Limits` is created once per check from the user's options and *started* once
(:meth:`Limits.started`: the time limit becomes a wall-clock deadline, a ``time.monotonic()``
instant). Everything the check runs — the search from each initial state, each property's
search, each refinement round, an isl or Z3 computation — ends at that same deadline, and the
state limit is what is left of ``max_states`` after the searches before (:meth:`Limits.less`).
So ``--timeout 2`` on a model with 8 initial states ends the check after about 2 s, not 16.

Stop reasons (``SearchOutcome.stopped``, a ``PropertyResult.reason`` of ``unknown``) are worded
here only: :func:`time_limit`, :func:`state_limit`, :func:`depth_limit`, :func:`memory_limit`,
:data:`INTERRUPTED`, :data:`OUT_OF_MEMORY`.
"""

from __future__ import annotations

import signal
import threading
import time
from dataclasses import dataclass, replace
from typing import Final

__all__ = [
    "INTERRUPTED",
    "OUT_OF_MEMORY",
    "Limits",
    "depth_limit",
    "memory_limit",
    "state_limit",
    "time_limit",
]

#: the stop reason of Ctrl-C and SIGTERM
INTERRUPTED: Final = "interrupted by the user"
#: the stop reason of a ``MemoryError``
OUT_OF_MEMORY: Final = "out of memory (the process could not allocate more)"


@dataclass(frozen=True)
class Limits:
    """Resource limits of one check; ``None`` means unlimited. ``max_states``: states stored,
    summed over the check's searches (each initial state, each property's product search);
    ``max_depth``: steps from an initial state; ``timeout``: wall-clock seconds for the whole
    check; ``max_memory_mb``: the resident set size (MiB) at which a search stops.
    ``deadline``: the ``time.monotonic()`` instant the time limit ends, fixed once per check
    by :meth:`started` (``None`` before, or without a time limit)."""

    max_states: int | None = None
    max_depth: int | None = None
    timeout: float | None = None
    max_memory_mb: float | None = None
    deadline: float | None = None

    def started(self, now: float | None = None) -> Limits:
        """These limits with the deadline fixed ``timeout`` seconds after ``now`` (default:
        the current ``time.monotonic()``); unchanged when the deadline is already fixed or
        there is no time limit. Call once where a check begins."""
        if self.timeout is None or self.deadline is not None:
            return self
        return replace(self, deadline=(time.monotonic() if now is None else now) + self.timeout)

    def end(self, start: float) -> float | None:
        """The instant (``time.monotonic()`` seconds) a computation that begins at ``start``
        must end: the check's deadline, or ``start + timeout`` when not started; ``None``
        without a time limit."""
        if self.deadline is not None:
            return self.deadline
        return None if self.timeout is None else start + self.timeout

    def time_left(self) -> float | None:
        """Seconds until the deadline (0 once it passed; the whole ``timeout`` when not
        started); ``None`` without a time limit."""
        end = self.end(time.monotonic())
        return None if end is None else max(0.0, end - time.monotonic())

    def expired(self) -> bool:
        """Whether the check's deadline has passed (never before :meth:`started`)."""
        return self.deadline is not None and time.monotonic() >= self.deadline

    def less(self, states: int) -> Limits:
        """These limits after searches that stored ``states`` states: ``max_states`` reduced
        by them (at least 1: check :meth:`states_spent` before starting another search)."""
        if self.max_states is None or states <= 0:
            return self
        return replace(self, max_states=max(1, self.max_states - states))

    def states_spent(self, states: int) -> bool:
        """Whether searches that stored ``states`` states used up ``max_states``."""
        return self.max_states is not None and states >= self.max_states

    def exhausted_reason(self, states: int) -> str | None:
        """Why no further search may start after ``states`` stored states: the time limit
        (deadline passed) or the state limit; ``None`` when neither is used up."""
        if self.expired():
            return time_limit(self)
        if self.states_spent(states):
            return state_limit(self.max_states)
        return None


def time_limit(limits: Limits | float | None, where: str = "") -> str:
    """``time limit of T s reached`` (``T`` the user's ``--timeout``), followed by ``where``
    (e.g. ``"while building the abstraction"``) when given."""
    timeout = limits.timeout if isinstance(limits, Limits) else limits
    text = "time limit reached" if timeout is None else f"time limit of {timeout:g} s reached"
    return f"{text} {where}" if where else text


def state_limit(max_states: int | None, noun: str = "states") -> str:
    """``state limit of N states reached`` (``noun``: what the store keeps, e.g.
    ``"abstract states"``)."""
    return f"state limit of {max_states} {noun} reached"


def depth_limit(max_depth: int | None) -> str:
    """``depth limit of N steps reached``."""
    return f"depth limit of {max_depth} steps reached"


def memory_limit(max_memory_mb: float) -> str:
    """``memory limit of M MB reached``."""
    return f"memory limit of {max_memory_mb:g} MB reached"


def handle_pending_signals() -> None:
    """Run the Python handlers of signals that arrived but were not handled yet (raising
    ``KeyboardInterrupt`` after a Ctrl-C, or SIGTERM in the CLI); does nothing outside the main
    thread or where ``signal.pthread_sigmask`` is missing.

    CPython runs a handler when the main thread next checks its "eval breaker" flag. A signal
    that the kernel delivers to another thread (any thread, while the main thread blocks it;
    or when another Python thread recomputes the flag, CPython 3.11's ``COMPUTE_EVAL_BREAKER``)
    can leave the flag clear: the handler then waits for the next explicit check, and a loop of
    C calls (a native search's slices, a portfolio waiting for its members) may never make one.
    ``pthread_sigmask`` makes that check (``PyErr_CheckSignals``) after setting the mask; an
    empty ``SIG_BLOCK`` changes nothing else. Loops that poll for Ctrl-C call this each round."""
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, ())
