"""αSEARCH: concrete search with abstract matching (paper 000, Fig. 2).

Concrete commands are executed; only ``α(s)`` is stored. For each explored state and *each*
command the precision checks of :mod:`absmc.engines.under.checks` collect new predicates.
Every concrete state generated is a real reachable state, so any violation found is a real
error (its path is replayed before it is reported).
"""

from __future__ import annotations

import time
from array import array
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from absmc.engines.explicit.search import Violation, path_from
from absmc.engines.options import Limits, Order
from absmc.engines.under.abstraction import Abstraction, AbstractState
from absmc.engines.under.checks import PrecisionChecks
from absmc.ir.compile import CompiledSystem, State
from absmc.ir.expr import Expr
from absmc.ir.system import NO_DEADLOCK, NO_MODEL_ERROR, STATE_PROPERTY_KINDS

#: at most this many concrete source states are remembered per failing command
_SOURCES_KEPT = 8


@dataclass
class Refinement:
    """A new predicate and the command (index) and source state whose check produced it
    (``None`` for labelling checks and the range store)."""

    atom: Expr
    command: int | None
    source: AbstractState | None


@dataclass
class SearchRun:
    """What one αSEARCH found.

    ``concrete_states`` counts successor states generated (commands executed, as the paper's
    tables count), ``abstract_states`` the stored abstract states. ``inexact`` maps a command
    index to a few concrete source states of transitions whose exactness check failed.
    ``merged`` lists, for the range store, ``(abstract state, variable, min value)`` of
    abstract states that matched concrete states with different data values.
    """

    concrete_states: int = 0
    abstract_states: int = 0
    abstract_transitions: int = 0
    refinements: list[Refinement] = field(default_factory=list)
    violations: dict[str, Violation] = field(default_factory=dict)
    inexact: dict[int, list[State]] = field(default_factory=dict)
    merged: list[tuple[AbstractState, str, int]] = field(default_factory=list)
    stopped: str | None = None
    max_depth: int = 0
    time_s: float = 0.0


class _Stop(Exception):
    pass


def alpha_search(
    compiled: CompiledSystem,
    abstraction: Abstraction,
    checks: PrecisionChecks | None,
    order: Order = "bfs",
    keep_going: bool = False,
    check_deadlock: bool = True,
    limits: Limits | None = None,
    deadline: float | None = None,
    track_ranges: bool = False,
) -> SearchRun:
    """One αSEARCH(M, Φ) (Fig. 2) over ``compiled`` with abstract matching by ``abstraction``.

    ``checks=None`` skips the precision checks (the range store refines from value ranges
    instead: ``track_ranges`` records, per abstract state, each data variable's minimum and
    maximum over the concrete states matched to it — Kudra & Mercer's scheme). ``order`` is
    breadth-first (a queue) or depth-first (recursive order: a new successor is explored before
    the next command of its parent). Stops at the first violation unless ``keep_going``;
    ``limits.max_states`` bounds stored abstract states, ``deadline`` is a ``time.monotonic()``
    instant. Never raises for limits: ``stopped`` says why the search is incomplete.
    """
    system = compiled.system
    commands = system.commands
    key = abstraction.key
    successors = compiled.successors
    errs = compiled.errors
    ok = compiled.ok
    run = SearchRun()
    start = time.monotonic()
    limits = limits or Limits()
    max_states = limits.max_states or -1

    states: set[AbstractState] = set()
    transitions: set[tuple[AbstractState, int, AbstractState]] = set()
    parent = array("i")
    via = array("i")
    depth_of = array("i")
    data_idx = [system.index_of[v.name] for v in system.data_vars]
    ranges: dict[AbstractState, list[list[int]]] = {}

    def path_of(node: int) -> list[int]:
        return path_from(parent, via, node)

    def record(prop: str, path: list[int], message: str) -> None:
        v = run.violations.get(prop)
        if v is None:
            run.violations[prop] = Violation(prop, path, message)
        else:
            v.count += 1
        if not keep_going:
            run.stopped = f"stopped at the first violation ({prop})"
            raise _Stop

    def refine(atoms: tuple[Expr, ...], ci: int | None, a: AbstractState | None) -> None:
        for atom in atoms:
            run.refinements.append(Refinement(atom, ci, a))

    def check_state(s: State, path: Callable[[], list[int]]) -> None:
        if not ok(s):
            for k in compiled.violated(s):
                p = compiled.properties[k]
                record(p.name, path(), f"{p.kind} '{p.name}' violated")

    def note_range(a: AbstractState, s: State) -> None:
        r = ranges.get(a)
        if r is None:
            ranges[a] = [[s[i], s[i]] for i in data_idx]
            return
        for slot, i in zip(r, data_idx, strict=True):
            x = s[i]
            if x < slot[0]:
                slot[0] = x
            elif x > slot[1]:
                slot[1] = x

    def store(a: AbstractState, p: int, ci: int, depth: int) -> int:
        if len(states) == max_states:
            run.stopped = f"state limit of {limits.max_states} abstract states reached"
            raise _Stop
        states.add(a)
        node = len(parent)
        parent.append(p)
        via.append(ci)
        depth_of.append(depth)
        if depth > run.max_depth:
            run.max_depth = depth
        return node

    def expand(s: State, node: int) -> Iterator[tuple[State, int]]:
        """Run every command on ``s`` in order; yield each successor whose abstract state is
        new (already stored, with its node id) before going on with the next command."""
        if deadline is not None and time.monotonic() >= deadline:
            run.stopped = "time limit reached"
            raise _Stop
        a = key(s)
        if checks is not None:
            for prop in compiled.properties:
                if prop.kind in STATE_PROPERTY_KINDS:
                    refine(checks.label(a, prop), None, None)
        succ = successors(s)
        enabled = {ci: t for ci, t in succ}
        blocked = False
        if errs:
            failing = list(errs)
            errs.clear()
            for ci, msg, pname in failing:
                record(pname, [*path_of(node), ci], msg)
                blocked = blocked or pname == NO_MODEL_ERROR
        if not blocked and not succ and check_deadlock and not compiled.valid_end(s):
            record(NO_DEADLOCK, path_of(node), "deadlock: no command is enabled")
        for cmd in commands:
            ci = cmd.index
            t = enabled.get(ci)
            if t is None:
                if checks is not None:
                    refine(checks.disabled(a, cmd), ci, a)
                continue
            run.concrete_states += 1
            a2 = key(t)
            if checks is not None:
                refine(checks.enabled(a, cmd), ci, a)
                found = checks.exactness(a, cmd, a2)
                if found:
                    sources = run.inexact.setdefault(ci, [])
                    if len(sources) < _SOURCES_KEPT and s not in sources:
                        sources.append(s)
                refine(found, ci, a)
            transitions.add((a, ci, a2))
            check_state(t, lambda ci=ci: [*path_of(node), ci])  # type: ignore[misc]
            if track_ranges:
                note_range(a2, t)
            if a2 not in states:
                yield t, store(a2, node, ci, depth_of[node] + 1)

    init = compiled.initial
    try:
        a0 = key(init)
        root = store(a0, -1, -1, 0)
        if track_ranges:
            note_range(a0, init)
        check_state(init, lambda: [])
        if order == "bfs":
            queue: deque[tuple[State, int]] = deque([(init, root)])
            while queue:
                s, node = queue.popleft()
                queue.extend(expand(s, node))
        else:
            # recursive DFS: a stack of suspended expansions
            stack: list[Iterator[tuple[State, int]]] = [expand(init, root)]
            while stack:
                nxt = next(stack[-1], None)
                if nxt is None:
                    stack.pop()
                else:
                    stack.append(expand(*nxt))
    except _Stop:
        pass
    except KeyboardInterrupt:
        run.stopped = "interrupted by the user"
    if track_ranges:
        names = [v.name for v in system.data_vars]
        for a, r in ranges.items():
            for name, (lo, hi) in zip(names, r, strict=True):
                if lo != hi:
                    run.merged.append((a, name, lo))
    run.abstract_states = len(states)
    run.abstract_transitions = len(transitions)
    run.time_s = time.monotonic() - start
    return run
