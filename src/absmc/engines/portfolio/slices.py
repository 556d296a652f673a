"""Time slices of a portfolio that has fewer worker processes than members.

With ``--timeout T``, ``w`` worker processes and ``n > w`` members, each member's first run
gets a slice of ``max(MIN_SLICE_S, T * w / n)`` seconds (at most the time left), so that no
member that never ends on a model (an exhaustive search of an infinite state space, a solver
that does not converge) keeps the others from starting. A member that used its whole slice
while some of its properties are still undecided runs again, once, with all the time left,
after every member has had its first slice (members start in :func:`start_order`: cheap
first). Without ``--timeout`` there are no slices: members run to their end, in that order.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

from absmc.engines.portfolio.decide import Board
from absmc.engines.portfolio.members import Member
from absmc.engines.portfolio.workers import Report

__all__ = ["MIN_SLICE_S", "SLICE_GRACE_S", "Slices"]

#: the shortest first slice (seconds)
MIN_SLICE_S = 10.0
#: seconds past its slice a member may take to report before it is stopped
SLICE_GRACE_S = 2.0
#: a member that answers this close (seconds) to its slice's end ran out of it
SLACK_S = 1.0


class Slices:
    """The time given to each member run of a portfolio started at ``t0`` (monotonic s) that
    ends at ``deadline`` (``None``: no limit), with ``workers`` processes for ``members``
    members (see the module doc). ``again``: the members waiting for their second run."""

    def __init__(self, t0: float, deadline: float | None, workers: int, members: int) -> None:
        self.workers = workers
        self.sliced = deadline is not None and members > workers
        self.deadline = deadline
        total = 0.0 if deadline is None else deadline - t0
        self.slice_s = max(MIN_SLICE_S, total * workers / max(1, members))
        self.again: list[Member] = []
        self._ends: dict[str, float] = {}
        self._cut: dict[str, bool] = {}
        self._runs: dict[str, int] = {}

    def time_for(self, member: Member) -> float | None:
        """Seconds for ``member``'s run starting now (``None``: no limit); records its end."""
        if self.deadline is None:
            return None
        now = time.monotonic()
        left = self.deadline - now
        name = member.engine.name
        first = self._runs.get(name, 0) == 0
        self._runs[name] = self._runs.get(name, 0) + 1
        given = min(left, self.slice_s) if self.sliced and first else left
        self._ends[name] = now + given
        self._cut[name] = given < left
        return given

    def answered(self, member: Member, report: Report, board: Board) -> None:
        """Take ``member``'s answer: it runs again when it answered at the end of a slice
        shorter than the time left and some of its properties are still undecided."""
        name = member.engine.name
        ran_out = time.monotonic() >= self._ends.get(name, 0.0) - SLACK_S
        if report.result is not None and ran_out:
            self._queue(member, board)

    def overrun(self, running: Iterable[str], members: Sequence[Member], board: Board) -> list[str]:
        """The running members past their slice (and its grace): to be stopped; each is queued
        for its second run as :meth:`answered` would."""
        now = time.monotonic()
        late = [n for n in running if self._cut.get(n) and now >= self._ends[n] + SLICE_GRACE_S]
        for n in late:
            self._queue(next(m for m in members if m.engine.name == n), board)
        return late

    def _queue(self, member: Member, board: Board) -> None:
        name = member.engine.name
        undecided = any(not board.accepted[p] for p in member.properties if p in board.accepted)
        if self._cut.get(name) and self._runs.get(name, 0) == 1 and undecided:
            self.again.append(member)

    def wake(self, grace: float | None) -> float | None:
        """When the portfolio must look at its members again: ``grace`` (the end of the run),
        or earlier the end of a running slice's grace."""
        ends = [e + SLICE_GRACE_S for n, e in self._ends.items() if self._cut.get(n)]
        later = [e for e in ends if e > time.monotonic()]
        if not later:
            return grace
        first = min(later)
        return first if grace is None else min(first, grace)

    def describe(self, order: Sequence[Member]) -> str:
        """One note: how many processes ran at once, in which order, with which slices."""
        names = ", ".join(m.engine.name for m in order)
        what = f"portfolio: {self.workers} worker process{'es' if self.workers != 1 else ''}"
        out = f"{what} at once, started in the order {names}"
        if self.sliced:
            out += (
                f"; first runs in slices of {self.slice_s:.1f} s, members that ran out of "
                "theirs ran again with the time left"
            )
        return out
