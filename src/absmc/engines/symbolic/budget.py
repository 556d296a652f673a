"""The run's time limit inside isl: one isl operation (a convex hull, a coalesce) can run far
longer than the time between two deadline checks, and isl holds the GIL all along (no Python
thread can stop it), so :class:`IslBudget` turns the wall-clock time left until the check's
deadline into isl's operation quota (``isl_ctx_set_max_operations``, islpy's
``Context.set_max_operations``), re-armed before every operation (:meth:`IslBudget.tick`).
isl counts elementary steps (pivots, samples) and fails an operation that exceeds the quota
with ``isl_error_quota``.

The quota is ``seconds left × rate``, the rate (operations per second) being measured on a
small fixed computation (about 10 ms): once per process at first, then again whenever
:data:`REMEASURE_S` seconds passed since the last measurement, so the quota follows the load
of the machine during the run instead of the load at its start (a rate measured once let a
run on a busy machine stop at 37 s of 120 and another go on for 510 s).

After a quota error isl may leave half-built objects behind that fail in other ways (``None``
where islpy expects a value, "syntax error" from a set read while the quota is spent): an
exception raised while the quota is spent is the time limit (:meth:`IslBudget.explains`), never
an internal error.
"""

from __future__ import annotations

import time

import islpy as isl

__all__ = ["Deadline", "IslBudget", "calibrate", "quota_spent"]

#: the calibrated rate is scaled by this before it sets a quota (less early stopping)
SLACK = 1.0
#: quota when the remaining time is tiny (lets the current operation fail quickly)
MIN_OPERATIONS = 1_000
#: seconds between two measurements of the rate during a run
REMEASURE_S = 1.0

_ops: int | None = None  # operations of the calibration computation
_rate: float | None = None
_measured_at = 0.0


class Deadline(Exception):
    """The time limit ran out (raised between isl operations by :meth:`IslBudget.tick`)."""


def _calibration_set() -> isl.Set:
    return isl.Set(
        "{ [x, y, z] : exists (e : x = 3e + 1) and 0 <= y <= x + z and z <= 40 and x <= 60 "
        "and (y >= 7 or z >= 3 or x <= 5) }"
    )


_probe = isl.BasicSet("{ [x, y] : 0 <= x <= 10 and 0 <= y <= x }")


def _count_operations(s: isl.Set) -> int:
    """The number of operations of ``s.convex_hull()`` (within 3%): the smallest quota it
    fits in, by doubling and then bisection."""
    ctx = isl.DEFAULT_CONTEXT

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
    return hi


def calibrate(again: bool = False) -> float:
    """Operations isl does per second on this machine now (measured on a convex hull: the
    first time in a process, and again with ``again``; leaves no quota set; raises
    nothing)."""
    global _ops, _rate, _measured_at
    if _rate is not None and not again:
        return _rate
    ctx = isl.DEFAULT_CONTEXT
    ctx.set_max_operations(0)
    ctx.reset_operations()
    s = _calibration_set()
    if _ops is None:
        _ops = _count_operations(s)
        ctx.set_max_operations(0)
    t0 = time.perf_counter()
    runs = 0
    while runs < 200 and time.perf_counter() - t0 < 0.008:
        s.convex_hull()
        runs += 1
    elapsed = max(time.perf_counter() - t0, 1e-6)
    _rate = max(_ops * runs / elapsed, 1e4)
    _measured_at = time.monotonic()
    return _rate


class IslBudget:
    """The isl operation quota of one run with the wall-clock ``deadline`` (monotonic s, or
    ``None`` for no limit), armed at once (the operations before the first :meth:`tick`, such
    as an abstraction's α in a ``Split``'s constructor, are bounded too)."""

    def __init__(self, deadline: float | None) -> None:
        self.deadline = deadline
        if deadline is not None:
            calibrate()
            self.arm()

    @property
    def rate(self) -> float:
        """The operations per second the quota is computed with (the latest measurement)."""
        return (_rate or 0.0) * SLACK

    def arm(self) -> None:
        """Set the quota to the operations the remaining time allows (call between isl
        operations), measuring the rate again when the last measurement is older than
        :data:`REMEASURE_S`."""
        if self.deadline is None:
            return
        now = time.monotonic()
        if now - _measured_at >= REMEASURE_S:
            calibrate(again=True)
            now = time.monotonic()
        ctx = isl.DEFAULT_CONTEXT
        remaining = self.deadline - now
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

    def explains(self, err: BaseException) -> bool:
        """Whether ``err`` is the time limit: :class:`Deadline`, isl's quota error, or (with a
        deadline) any error raised while the quota is spent or the deadline has passed — the
        aftermath of a quota error inside islpy (see the module doc)."""
        if isinstance(err, Deadline) or self.stopped(err):
            return True
        if self.deadline is None:
            return False
        return time.monotonic() >= self.deadline or quota_spent()

    @staticmethod
    def stopped(err: BaseException) -> bool:
        """Whether ``err`` is isl's quota error (the time limit, not a failure)."""
        return isinstance(err, isl.Error) and "maximal number of operations" in str(err)


def quota_spent() -> bool:
    """Whether isl's operation quota is used up now (a small sample fails)."""
    if not isl.DEFAULT_CONTEXT.get_max_operations():
        return False
    try:
        _probe.sample_point()
    except isl.Error:
        return True
    return False
