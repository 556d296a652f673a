"""Exhaustive enumeration of a program's schedules on real CPython (stateless search: every
schedule is executed from the start, Godefroid's VeriSoft, POPL 1997, without its
persistent/sleep sets): a depth-first walk of the tree of choices at the scheduling points
(:mod:`.runtime`), one run per leaf. A run replays the choices of its prefix, takes a new
alternative at the deepest point that has one, and then prefers the thread that was running
(fewest context switches first).

Verdicts per property (absmc's names): ``violated`` when some run violates it; ``holds``
when every schedule was run and none did; ``unknown`` when the walk stopped at
``max_runs`` or a run could not finish (a step limit, an error, a program that does not
replay deterministically).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from absmc.component.oracle.runtime import (
    ASSERT,
    DEADLOCK,
    UNCAUGHT,
    Program,
    Run,
    RunResult,
    Violation,
)

PROPERTIES = (ASSERT, UNCAUGHT, DEADLOCK)


@dataclass
class Exploration:
    """The result of :func:`explore`: ``verdicts`` (property -> ``holds``/``violated``/
    ``unknown``), the first violation of each property found with the choices that reach
    it (``witness``), ``runs`` executed, ``complete`` (every schedule run), ``reason`` why
    not, ``time_s`` (wall seconds)."""

    verdicts: dict[str, str] = field(default_factory=dict)
    witness: dict[str, tuple[Violation, tuple[int, ...]]] = field(default_factory=dict)
    runs: int = 0
    complete: bool = False
    reason: str = ""
    time_s: float = 0.0


class _Prefix:
    """A chooser that follows ``prefix`` (the chosen thread at every point) and then
    prefers the running thread, else the lowest enabled id."""

    def __init__(self, prefix: list[int]) -> None:
        self.prefix = prefix
        self.diverged = ""

    def __call__(self, k: int, current: int, enabled: tuple[int, ...]) -> int:
        if k < len(self.prefix):
            want = self.prefix[k]
            if want in enabled:
                return want
            self.diverged = f"point {k}: thread {want} not enabled in {enabled} on replay"
            return enabled[0]
        return current if current in enabled else enabled[0]


def explore(
    program: Program,
    max_runs: int = 20_000,
    max_steps: int = 5_000,
    timeout: float | None = None,
    caching: bool = True,
) -> Exploration:
    """Run every schedule of ``program`` (at most ``max_runs`` runs, ``timeout`` wall
    seconds) and return the verdicts."""
    t0 = time.monotonic()
    out = Exploration()
    enabled: list[tuple[int, ...]] = []
    chosen: list[int] = []
    tried: list[set[int]] = []
    prefix: list[int] = []
    stop = ""
    cache: set[Any] | None = set() if caching else None
    while True:
        chooser = _Prefix(prefix)
        res: RunResult = Run(
            program,
            chooser,
            max_steps=max_steps,
            cache=cache,
            prefix_len=len(prefix),
            start_points=False,
        ).execute()
        out.runs += 1
        if chooser.diverged:
            stop = f"the program does not replay deterministically ({chooser.diverged})"
            break
        if res.end in ("error", "limit"):
            stop = f"a run ended early: {res.note}"
            break
        for v in res.violations:
            if v.prop not in out.witness:
                out.witness[v.prop] = (v, tuple(c for _, c in res.choices))
        for k, (en, c) in enumerate(res.choices):
            if k < len(enabled):
                if en != enabled[k]:
                    stop = f"the program does not replay deterministically (point {k})"
                    break
                continue
            enabled.append(en)
            chosen.append(c)
            tried.append({c})
        if stop:
            break
        del enabled[len(res.choices) :], chosen[len(res.choices) :], tried[len(res.choices) :]
        while enabled and tried[-1] >= set(enabled[-1]):
            enabled.pop()
            chosen.pop()
            tried.pop()
        if not enabled:
            out.complete = True
            break
        alt = next(e for e in enabled[-1] if e not in tried[-1])
        tried[-1].add(alt)
        chosen[-1] = alt
        prefix = list(chosen)
        if out.runs >= max_runs:
            stop = f"more than {max_runs} schedules"
            break
        if timeout is not None and time.monotonic() - t0 > timeout:
            stop = f"time limit of {timeout:g} s"
            break
    out.reason = stop
    out.time_s = time.monotonic() - t0
    for p in PROPERTIES:
        if p in out.witness:
            out.verdicts[p] = "violated"
        elif out.complete:
            out.verdicts[p] = "holds"
        else:
            out.verdicts[p] = "unknown"
    return out


def explore_file(path: Any, entry: str, *args: Any, **kw: Any) -> Exploration:
    """:func:`explore` of ``entry(*args)`` of the program at ``path`` (every function of
    the file traced, statement granularity)."""
    return explore(Program(path, entry, args))
