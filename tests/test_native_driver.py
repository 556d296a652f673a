"""The slice driver shared by the native searches (absmc.native.driver): each limit ends the
run with the kernel's reason, a final status ends it without one."""

from __future__ import annotations

import time
from collections.abc import Callable

from absmc.kernel.explore.search import HANDED_OVER
from absmc.kernel.run.limits import INTERRUPTED, memory_limit, time_limit
from absmc.kernel.run.options import Limits, Progress
from absmc.native.driver import drive_slices

SLICE, DONE = 6, 1


def slices_then(done_after: int) -> tuple[list[int], Callable[[], int]]:
    calls: list[int] = []

    def run() -> int:
        calls.append(1)
        return DONE if len(calls) > done_after else SLICE

    return calls, run


def test_final_status_ends_the_loop_without_a_reason() -> None:
    calls, run = slices_then(3)
    status, stopped = drive_slices(run, SLICE, Limits(), time.monotonic(), None)
    assert (status, stopped, len(calls)) == (DONE, None, 4)


def test_deadline_ends_after_one_slice() -> None:
    calls, run = slices_then(100)
    limits = Limits(timeout=1.0)
    status, stopped = drive_slices(run, SLICE, limits, time.monotonic(), time.monotonic() - 1)
    assert (status, stopped, len(calls)) == (SLICE, time_limit(limits), 1)


def test_memory_limit_ends_the_run() -> None:
    _calls, run = slices_then(100)
    limits = Limits(max_memory_mb=1)  # this process holds more than 1 MB
    _status, stopped = drive_slices(run, SLICE, limits, time.monotonic(), None)
    assert stopped == memory_limit(1)


def test_hand_over_and_interrupt() -> None:
    calls, run = slices_then(100)
    asked: list[int] = []

    def hand_over() -> bool:
        asked.append(1)
        return len(asked) == 2

    _s, stopped = drive_slices(run, SLICE, Limits(), time.monotonic(), None, hand_over=hand_over)
    assert (stopped, len(calls)) == (HANDED_OVER, 2)

    def interrupted() -> int:
        raise KeyboardInterrupt

    assert drive_slices(interrupted, SLICE, Limits(), time.monotonic(), None) == (
        SLICE,
        INTERRUPTED,
    )


def test_progress_reports_at_most_once_a_second() -> None:
    _calls, run = slices_then(3)
    seen: list[Progress] = []
    drive_slices(
        run,
        SLICE,
        Limits(),
        time.monotonic() - 5,  # the first check is past a second since the start
        None,
        seen.append,
        lambda t: Progress(7, 8, 9, t),
    )
    assert len(seen) == 1 and seen[0].states == 7 and seen[0].elapsed_s >= 5
