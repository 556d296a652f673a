"""The run's time limit inside isl: one isl operation (a convex hull, a coalesce) can run far
longer than the time between two deadline checks, so :class:`IslBudget` turns the remaining
time into isl's operation quota (``isl_ctx_set_max_operations``, islpy's
``Context.set_max_operations``). isl counts elementary steps (pivots, samples) and fails an
operation that exceeds the quota with ``isl_error_quota``; :meth:`IslBudget.stopped` tells
that error apart from real ones.

The quota is ``remaining seconds × rate``, where the rate (operations per second) is
calibrated once per process on a small fixed computation (about 10 ms) and scaled by
``SLACK``: a slower machine (or a loaded one) overruns the limit by about the factor the rate
dropped; a faster one stops a little early (the verdict is ``unknown`` either way).
"""

from __future__ import annotations

import time

import islpy as isl

__all__ = ["Deadline", "IslBudget"]

#: the calibrated rate is scaled by this before it sets a quota (less early stopping)
SLACK = 1.0
#: quota when the remaining time is tiny (lets the current operation fail quickly)
MIN_OPERATIONS = 1_000

_rate: float | None = None


class Deadline(Exception):
    """The time limit ran out (raised between isl operations by :meth:`IslBudget.tick`)."""


def _calibration_set() -> isl.Set:
    return isl.Set(
        "{ [x, y, z] : exists (e : x = 3e + 1) and 0 <= y <= x + z and z <= 40 and x <= 60 "
        "and (y >= 7 or z >= 3 or x <= 5) }"
    )


def calibrate() -> float:
    """Operations isl does per second on this machine (measured once per process on a
    convex hull; raises nothing)."""
    global _rate
    if _rate is not None:
        return _rate
    ctx = isl.DEFAULT_CONTEXT
    s = _calibration_set()

    # the number of operations of the calibration computation (within 3%): the smallest quota
    # it fits in, by doubling and then bisection
    def fits(quota: int) -> bool:
        ctx.reset_operations()
        ctx.set_max_operations(quota)
        try:
            s.convex_hull()
            return True
        except isl.Error:
            return False

    hi = 256
    while not fits(hi) and hi < 1 << 30:
        hi *= 2
    lo = hi // 2
    while hi - lo > hi // 32:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    ctx.set_max_operations(0)
    ops = hi
    t0 = time.perf_counter()
    runs = 0
    while runs < 200 and time.perf_counter() - t0 < 0.008:
        s.convex_hull()
        runs += 1
    elapsed = max(time.perf_counter() - t0, 1e-6)
    _rate = max(ops * runs / elapsed, 1e4)
    return _rate


class IslBudget:
    """The isl operation quota of one run with the wall-clock ``deadline`` (monotonic s, or
    ``None`` for no limit)."""

    def __init__(self, deadline: float | None) -> None:
        self.deadline = deadline
        self.rate = calibrate() * SLACK if deadline is not None else 0.0

    def arm(self) -> None:
        """Set the quota to the operations the remaining time allows (call between isl
        operations)."""
        if self.deadline is None:
            return
        ctx = isl.DEFAULT_CONTEXT
        remaining = self.deadline - time.monotonic()
        ctx.reset_operations()
        ctx.set_max_operations(max(MIN_OPERATIONS, int(remaining * self.rate)))

    def tick(self) -> None:
        """Between isl operations: raise :class:`Deadline` past the deadline, else give isl
        the operation quota of the remaining time (:meth:`arm`)."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise Deadline
        self.arm()

    def disarm(self) -> None:
        """No quota (the state isl is left in after the run)."""
        if self.deadline is not None:
            isl.DEFAULT_CONTEXT.set_max_operations(0)
            isl.DEFAULT_CONTEXT.reset_operations()

    @staticmethod
    def stopped(err: BaseException) -> bool:
        """Whether ``err`` is isl's quota error (the time limit, not a failure)."""
        return isinstance(err, isl.Error) and "maximal number of operations" in str(err)
