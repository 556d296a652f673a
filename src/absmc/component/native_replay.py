"""Re-executing a ``violated`` trace of the component checker on real CPython (issue 27, the
independent oracle of :mod:`absmc.component.oracle`): the *original* program file is run
again — not absmc's translation — with the trace's schedule forced, and must fail the same
way (the same ``assert`` line in the same thread; an uncaught exception of the same type in
the same thread; a deadlock with the live threads blocked at the same lines).

**Mapping absmc's steps to CPython's scheduling points.** A step of absmc is one
instruction of its translation (a statement, a hoisted call, a ``with`` exit), with the
thread-local instructions after it joined; a point of the oracle is a ``sys.settrace`` line
event, a return into a traced caller or a blocking call. The two do not correspond one to
one, so the mapping keeps what both share: the *order of the threads* and the *source lines
they execute*. The trace is cut into runs of consecutive steps of one thread ``(thread,
[lines])`` (thread ids are start order in both); natively the threads take their turns in
the same order, and a turn ends at a point once its thread has executed the run's lines (a
subsequence of its line events). Where a turn could also end earlier or later (absmc's step
boundary lies inside a line, or a line repeats in a loop), the other choice is tried too:
a depth-first search over those binary choices, at most ``max_runs`` executions, stopping at
the first that fails as the trace does.

Traced code: the component's functions and the entry (by their source ranges in the file);
the environment's functions run inside one step, as in absmc.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Sequence
from typing import Any

from absmc.component.machine import ASSERT_PROPERTY, LABELS, UNCAUGHT_PROPERTY
from absmc.component.oracle.runtime import DEADLOCK, Program, Run, RunResult
from absmc.ir.system import NO_DEADLOCK
from absmc.kernel.run.result import Trace

CONFIRMED = "confirmed"
REFUTED = "refuted"
NOT_APPLICABLE = "not-applicable"

#: native executions tried per trace (a trace of the reduced search, whose turns are long,
#: needed up to about 1,500 on the 4-thread buffer and job queue: two or three turn ends moved)
MAX_RUNS = 2500


def _line(source: str | None) -> int:
    if not source or ":" not in source:
        return 0
    tail = source.rsplit(":", 1)[1]
    return int(tail) if tail.isdigit() else 0


def thread_runs(trace: Trace) -> list[tuple[int, list[int]]]:
    """The trace as runs of consecutive steps of one thread: ``(thread id, [lines])`` (a
    line repeated by consecutive steps counted once: one line event natively)."""
    runs: list[tuple[int, list[int]]] = []
    for row in trace.steps[1:]:
        if row.command_index is None:
            continue
        tid = row.command_index // LABELS
        line = _line(row.source)
        if runs and runs[-1][0] == tid:
            if line and (not runs[-1][1] or runs[-1][1][-1] != line):
                runs[-1][1].append(line)
        else:
            runs.append((tid, [line] if line else []))
    return runs


class _Guide:
    """The chooser of one guided execution: follows ``runs``; at the points where a turn may
    end or go on it takes the preferred option, except at the decision indices in ``flips``;
    ``made`` counts those decisions.

    Preferred: end the turn once the thread has executed the turn's lines (its line events
    contain them as a subsequence), after the last one ran — or just before it when the
    thread's next turn starts on the same line (absmc split that line into two steps)."""

    def __init__(self, runs: list[tuple[int, list[int]]], flips: frozenset[int]) -> None:
        self.runs = runs
        self.flips = flips
        self.made = 0
        self.k = 0
        self.pos = 0
        self.steps = 1
        self.seen = 0
        self.at: tuple[int, int] = (-1, -1)
        self.lines: list[tuple[int, int]] = []
        self.derailed = False

    def _split(self) -> bool:
        """Does the current thread's next turn start on its turn's last line?"""
        tid, want = self.runs[self.k]
        for other, lines in self.runs[self.k + 1 :]:
            if other == tid:
                return bool(lines and want and lines[0] == want[-1])
        return False

    def __call__(self, idx: int, current: int, enabled: tuple[int, ...]) -> int:
        runs = self.runs
        for i in range(self.seen, len(self.lines)):
            tid, line = self.lines[i]
            if self.k < len(runs) and tid == runs[self.k][0]:
                want = runs[self.k][1]
                if self.pos < len(want) and want[self.pos] == line:
                    self.pos += 1
                    self.at = (i, idx)
        self.seen = len(self.lines)
        free = current if current in enabled else enabled[0]
        if self.k >= len(runs):
            return free
        me = runs[self.k][0]
        cont = me in enabled
        last = self.k == len(runs) - 1
        nxt = -1 if last else runs[self.k + 1][0]
        switch = not last and nxt in enabled and (self.steps > 0 or not cont)
        if cont and switch:
            done = self.pos >= len(runs[self.k][1])
            ran = self.at[0] < len(self.lines) - 1 or idx > self.at[1]
            prefer_switch = done and (ran or self._split())
            take_switch = prefer_switch != (self.made in self.flips)
            self.made += 1
        elif cont:
            take_switch = False
        elif switch:
            take_switch = True
        else:
            if not last:
                self.derailed = True
            self.k = len(runs)
            return free
        if take_switch:
            self.k += 1
            self.pos = 0
            self.steps = 1
            self.at = (-1, -1)
            return nxt
        self.steps += 1
        return me


def _matches(prop: str, expected: dict[str, Any], res: RunResult) -> bool:
    for v in res.violations:
        if v.thread != expected.get("thread", v.thread) and prop != NO_DEADLOCK:
            continue
        if prop == ASSERT_PROPERTY and v.prop == "assert" and v.line == expected["line"]:
            return True
        if (
            prop == UNCAUGHT_PROPERTY
            and v.prop == UNCAUGHT_PROPERTY
            and v.message.startswith(f"uncaught {expected['type']}")
        ):
            return True
        if prop == NO_DEADLOCK and v.prop == DEADLOCK:
            return bool(sorted(line for _, line in v.blocked) == expected["lines"])
    return False


def _expected(prop: str, trace: Trace) -> dict[str, Any]:
    last = trace.steps[-1]
    out: dict[str, Any] = {}
    if prop != NO_DEADLOCK and last.command_index is not None:
        out["thread"] = last.command_index // LABELS
    if prop == ASSERT_PROPERTY:
        # the failing assert's own line: the last step may end before it (thread-local
        # statements joined to the step, as `x = n` followed by `assert x <= 2`)
        m = re.search(r"assertion failed at .*?:(\d+)", trace.note or "")
        out["line"] = int(m.group(1)) if m else _line(last.source)
    elif prop == UNCAUGHT_PROPERTY:
        m = re.search(r"uncaught (\w+)", trace.note or "")
        out["type"] = m.group(1) if m else ""
    else:
        out["lines"] = sorted(int(x) for x in re.findall(r"blocked at .*?:(\d+)", trace.note or ""))
    return out


def replay_native(
    program: Program, prop: str, trace: Trace, max_runs: int = MAX_RUNS
) -> tuple[str, str]:
    """Re-execute ``trace`` (a violation of ``prop``) on ``program``: ``(status, detail)``
    with status ``confirmed`` (the same failure with the same thread order), ``refuted`` (no
    execution of the searched ones failed so) or ``not-applicable`` (the program could not
    run natively: the reason)."""
    runs = thread_runs(trace)
    expected = _expected(prop, trace)
    # limited discrepancy search: the preferred execution, then those that deviate at one
    # decision, then at two, ... (Harvey & Ginsberg, IJCAI 1995)
    queue: list[tuple[int, ...]] = [()]
    n = 0
    while queue and n < max_runs:
        flips = queue.pop(0)
        n += 1
        guide = _Guide(runs, frozenset(flips))
        run = Run(program, guide)
        guide.lines = run.result.lines
        res = run.execute()
        if res.end == "error":
            return NOT_APPLICABLE, f"the program does not run on the oracle: {res.note}"
        if not guide.derailed and _matches(prop, expected, res):
            return CONFIRMED, f"re-executed on CPython ({n} run{'s' if n > 1 else ''})"
        start = flips[-1] + 1 if flips else 0
        queue.extend((*flips, j) for j in range(start, guide.made))
    return REFUTED, (
        f"no CPython execution with the trace's order of threads ({len(runs)} turns) fails "
        f"so ({n} tried)"
    )


def program_of(sem: Any, granularity: str) -> Program | str:
    """The oracle's :class:`Program` for a component check (``sem``: its
    ``ComponentSemantics``), or why there is none (the entry not in a program file, a
    component function defined elsewhere, arguments that cannot be copied)."""
    entry = sem.prog.funcs[0].func
    if sem.prog.env_choices:
        return "the environment's results are chosen by the checker (env_choices)"
    path = sem.prog.namespace.get("__file__")
    if not path or entry.__code__.co_filename != path:
        return "the entry is not a function of a program file"
    ranges: list[tuple[int, int]] = []
    for fc in sem.prog.funcs:
        code = fc.func.__code__
        if code.co_filename != path:
            return f"{fc.func.__qualname__} is not defined in {path}"
        try:
            lines, start = inspect.getsourcelines(fc.func)
        except (OSError, TypeError):
            return f"no source for {fc.func.__qualname__}"
        ranges.append((start, start + len(lines) - 1))
    args: Sequence[Any] = getattr(sem, "args", ())
    kwargs: dict[str, Any] = dict(getattr(sem, "kwargs", {}))
    try:
        return Program(path, entry.__name__, args, kwargs, ranges, granularity)
    except (OSError, SyntaxError) as e:
        return f"cannot read the program: {e}"


def confirm_on_cpython(sem: Any, granularity: str, prop: str, trace: Trace) -> tuple[str, str]:
    """:func:`replay_native` of a component check's trace (``sem``: its semantics), or
    ``not-applicable`` with the reason when the program cannot be run again."""
    program = program_of(sem, granularity)
    if isinstance(program, str):
        return NOT_APPLICABLE, program
    return replay_native(program, prop, trace)
