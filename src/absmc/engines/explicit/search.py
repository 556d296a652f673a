"""Explicit-state search (BFS and DFS) over compiled successor functions.

The search stores states in a :class:`~absmc.engines.explicit.store.Store`, checks the compiled
properties on every new state, model errors on every executed command, and deadlocks on every
state without successors. Counterexamples are kept as *paths*: the list of successor labels
(command indices, or chain labels: see :mod:`absmc.ir.compile`) from the initial state (BFS:
parent pointers, two ints per state; DFS: the search stack). They are turned into traces by
replay (:mod:`absmc.engines.explicit.replay`). An exhaustive breadth-first ``keep_going`` search
with the exact store and no state property uses the compiled ``expand_level`` (new states go
straight into the store); otherwise one level is expanded state by state.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from absmc.engines.explicit.store import ExactStore, Store
from absmc.engines.options import Limits, Order, Progress
from absmc.ir.compile import CompiledSystem, State
from absmc.ir.system import NO_DEADLOCK, NO_MODEL_ERROR

#: how many expanded states between two clock reads (timeout, progress); a power of two
_CLOCK_EVERY = 1024


@dataclass
class Violation:
    """The first violation found of one property (``path`` = successor labels from the initial
    state to the violating state; for model errors and failed assertions the last label is the
    failing command or chain) and how many violations of it were counted."""

    property: str
    path: list[int]
    message: str
    count: int = 1


@dataclass
class SearchOutcome:
    """What a search found. ``stopped`` gives the reason when the search did not exhaust the
    state space (a limit, or the first violation without ``keep_going``)."""

    violations: dict[str, Violation] = field(default_factory=dict)
    states: int = 0
    transitions: int = 0
    max_depth: int = 0
    time_s: float = 0.0
    stopped: str | None = None
    limit_hit: bool = False


def path_from(parent: Sequence[int], via: Sequence[int], node: int) -> list[int]:
    """The labels from the initial state (node 0) to ``node`` in a search tree kept as parent
    pointers: ``parent[n]`` is ``n``'s parent node, ``via[n]`` the label that reached it."""
    labels: list[int] = []
    while node > 0:
        labels.append(via[node])
        node = parent[node]
    labels.reverse()
    return labels


class _Stop(Exception):
    pass


class _Search:
    def __init__(
        self,
        compiled: CompiledSystem,
        store: Store,
        order: Order,
        limits: Limits,
        keep_going: bool,
        check_deadlock: bool,
        progress: Callable[[Progress], None] | None,
    ) -> None:
        self.c = compiled
        self.store = store
        self.order = order
        self.limits = limits
        self.keep_going = keep_going
        self.check_deadlock = check_deadlock
        self.progress = progress
        self.out = SearchOutcome()
        self.start = time.monotonic()
        self.last_progress = self.start
        self.deadline = self.start + limits.timeout if limits.timeout is not None else None
        self.truncated_depth = False
        self.count = 0
        self.parent = array("i")
        self.via = array("i")

    # -- bookkeeping -------------------------------------------------------------------
    def record(self, prop: str, path: list[int], message: str) -> None:
        v = self.out.violations.get(prop)
        if v is None:
            self.out.violations[prop] = Violation(prop, path, message)
        else:
            v.count += 1
        if not self.keep_going:
            self.out.stopped = f"stopped at the first violation ({prop})"
            raise _Stop

    def check_state(self, state: State, path: Callable[[], list[int]]) -> None:
        for k in self.c.violated(state):
            p = self.c.properties[k]
            self.record(p.name, path(), f"{p.kind} '{p.name}' violated")

    def expand_checks(
        self, state: State, succ: list[tuple[int, State]], path: Callable[[], list[int]]
    ) -> None:
        errs = self.c.errors
        if errs:
            blocked = False
            for ci, msg, prop in errs:
                self.record(prop, [*path(), ci], msg)
                blocked = blocked or prop == NO_MODEL_ERROR
            errs.clear()
            if blocked:
                return
        if not succ and self.check_deadlock and not self.c.valid_end(state):
            self.record(NO_DEADLOCK, path(), "deadlock: no command is enabled")

    def tick(self, depth: int) -> None:
        now = time.monotonic()
        lim = self.limits
        if self.deadline is not None and now >= self.deadline:
            self.out.stopped = f"time limit of {lim.timeout:g} s reached"
            self.out.limit_hit = True
            raise _Stop
        if self.progress is not None and now - self.last_progress >= 1.0:
            self.last_progress = now
            self.progress(Progress(len(self.store), self.out.transitions, depth, now - self.start))

    def interrupted(self) -> None:
        self.out.stopped = "interrupted by the user"
        self.out.limit_hit = True

    def state_limit(self) -> None:
        self.out.stopped = f"state limit of {self.limits.max_states} states reached"
        self.out.limit_hit = True
        raise _Stop

    # -- BFS ---------------------------------------------------------------------------
    def bfs(self) -> None:
        c = self.c
        successors, ok = c.successors, c.ok
        checks = c.state_checks
        errs = c.errors
        store = self.store
        exact = isinstance(store, ExactStore)
        seen = store.states if isinstance(store, ExactStore) else set()
        insert = store.insert
        max_states = self.limits.max_states if self.limits.max_states is not None else -1
        max_depth = self.limits.max_depth
        parent = array("i", [-1])
        via = array("i", [-1])
        self.parent, self.via = parent, via

        def path_of(node: int) -> list[int]:
            return path_from(parent, via, node)

        init = c.initial
        insert(init)
        # node ids are handed out in BFS order, so a frontier is a contiguous id range
        frontier: list[State] = [init]
        first_id = 0
        depth = 0
        transitions = 0
        expanded = 0
        try:
            if not ok(init):
                self.check_state(init, lambda: [])
            while frontier:
                at_bound = max_depth is not None and depth >= max_depth
                nxt: list[State] = []
                next_first = len(parent)
                sid = first_id - 1
                if exact and not at_bound:
                    # the hot loop (exact store, below the depth bound), kept lean
                    sid, transitions, expanded = self._bfs_level(
                        frontier, nxt, sid, transitions, expanded, depth, path_of
                    )
                    frontier, first_id = nxt, next_first
                    if frontier:
                        depth += 1
                    continue
                for s in frontier:
                    sid += 1
                    succ = successors(s)
                    transitions += len(succ)
                    if errs or not succ:
                        self.expand_checks(s, succ, lambda sid=sid: path_of(sid))  # type: ignore[misc]
                    if at_bound:
                        # count and check states at the depth bound, do not go deeper
                        if succ and not (exact and all(t in seen for _, t in succ)):
                            self.truncated_depth = True
                        continue
                    for ci, t in succ:
                        if exact:
                            if t in seen:
                                continue
                        elif not insert(t):
                            continue
                        tid = len(parent)
                        if tid == max_states:
                            self.out.transitions = transitions
                            self.out.max_depth = depth + 1
                            self.state_limit()
                        if exact:
                            seen.add(t)
                        parent.append(sid)
                        via.append(ci)
                        if checks and not ok(t):
                            self.out.transitions = transitions
                            self.out.max_depth = depth + 1
                            self.check_state(t, lambda tid=tid: path_of(tid))  # type: ignore[misc]
                        nxt.append(t)
                    expanded += 1
                    if not expanded % _CLOCK_EVERY:
                        self.out.transitions = transitions
                        self.tick(depth)
                if at_bound:
                    break
                frontier, first_id = nxt, next_first
                if frontier:
                    depth += 1
        except _Stop:
            pass
        except KeyboardInterrupt:
            self.interrupted()
        self.count = len(parent)
        self.out.transitions = transitions
        self.out.max_depth = max(self.out.max_depth, depth)

    def _bfs_level(
        self,
        frontier: list[State],
        nxt: list[State],
        sid: int,
        transitions: int,
        expanded: int,
        depth: int,
        path_of: Callable[[int], list[int]],
    ) -> tuple[int, int, int]:
        """Expand one BFS level into ``nxt`` (exact store): the same checks as the general
        loop, with the bookkeeping bound to locals."""
        c = self.c
        successors, ok, checks, errs = c.successors, c.ok, c.state_checks, c.errors
        assert isinstance(self.store, ExactStore)
        seen = self.store.states
        seen_add = seen.add
        parent, via = self.parent, self.via
        p_app, v_app, n_app = parent.append, via.append, nxt.append
        count = len(parent)
        size = len(seen)
        limit = self.limits.max_states if self.limits.max_states is not None else -1
        expand = c.expand_level
        if expand is not None and limit < 0 and self.keep_going:
            # generated code puts new states straight into the store, 1024 states at a time
            for i in range(0, len(frontier), _CLOCK_EVERY):
                chunk = frontier[i : i + _CLOCK_EVERY]
                sid, trans, flagged = expand(chunk, sid, seen, p_app, v_app, n_app)
                transitions += trans
                for st, ssid, k, errors in flagged:
                    c.errors.extend(errors)
                    succ: list[tuple[int, State]] = [(0, st)] if k else []
                    self.expand_checks(st, succ, lambda ssid=ssid: path_of(ssid))  # type: ignore[misc]
                expanded += len(chunk)
                self.out.transitions = transitions
                self.tick(depth)
            return sid, transitions, expanded
        for s in frontier:
            sid += 1
            succ = successors(s)
            transitions += len(succ)
            if errs or not succ:
                self.expand_checks(s, succ, lambda sid=sid: path_of(sid))  # type: ignore[misc]
            for ci, t in succ:
                # one hash lookup per transition: add, and see whether the set grew
                seen_add(t)
                if len(seen) == size:
                    continue
                size += 1
                if count == limit:
                    seen.discard(t)
                    self.out.transitions = transitions
                    self.out.max_depth = depth + 1
                    self.state_limit()
                p_app(sid)
                v_app(ci)
                if checks and not ok(t):
                    self.out.transitions = transitions
                    self.out.max_depth = depth + 1
                    self.check_state(t, lambda tid=count: path_of(tid))  # type: ignore[misc]
                count += 1
                n_app(t)
            expanded += 1
            if not expanded & (_CLOCK_EVERY - 1):
                self.out.transitions = transitions
                self.tick(depth)
        return sid, transitions, expanded

    # -- DFS ---------------------------------------------------------------------------
    def dfs(self) -> None:
        c = self.c
        successors, ok = c.successors, c.ok
        checks = c.state_checks
        errs = c.errors
        store = self.store
        insert = store.insert
        max_states = self.limits.max_states if self.limits.max_states is not None else -1
        max_depth = self.limits.max_depth if self.limits.max_depth is not None else -1
        cmds: list[int] = []  # cmds[i]: the command that led from states[i] to states[i + 1]
        states: list[State] = []
        pending: list[list[tuple[int, State]]] = []
        positions: list[int] = []
        transitions = 0
        expanded = 0
        deepest = 0
        count = 1

        def push(s: State) -> None:
            nonlocal transitions, expanded, deepest
            succ = successors(s)
            transitions += len(succ)
            states.append(s)
            pending.append(succ)
            depth = len(states) - 1
            if depth > deepest:
                deepest = depth
            if depth == max_depth:
                # at the depth bound: checked, not expanded
                positions.append(len(succ))
                if succ:
                    self.truncated_depth = True
            else:
                positions.append(0)
            expanded += 1
            if errs or not succ:
                self.out.transitions = transitions
                self.expand_checks(s, succ, lambda: list(cmds))
            if not expanded % _CLOCK_EVERY:
                self.out.transitions = transitions
                self.tick(depth)

        init = c.initial
        insert(init)
        try:
            if not ok(init):
                self.check_state(init, lambda: [])
            push(init)
            while states:
                i = positions[-1]
                succ = pending[-1]
                if i == len(succ):
                    states.pop()
                    pending.pop()
                    positions.pop()
                    if cmds:
                        cmds.pop()
                    continue
                positions[-1] = i + 1
                ci, t = succ[i]
                if not insert(t):
                    continue
                if count == max_states:
                    self.out.transitions = transitions
                    self.out.max_depth = deepest
                    self.state_limit()
                count += 1
                cmds.append(ci)
                if checks and not ok(t):
                    self.out.transitions = transitions
                    self.check_state(t, lambda: list(cmds))
                push(t)
        except _Stop:
            pass
        except KeyboardInterrupt:
            self.interrupted()
        self.count = count
        self.out.transitions = transitions
        self.out.max_depth = max(self.out.max_depth, deepest)

    def run(self) -> SearchOutcome:
        if self.order == "bfs":
            self.bfs()
        else:
            self.dfs()
        self.c.errors.clear()
        if self.truncated_depth and self.out.stopped is None:
            self.out.stopped = f"depth limit of {self.limits.max_depth} steps reached"
            self.out.limit_hit = True
        self.out.states = self.count
        self.out.time_s = time.monotonic() - self.start
        return self.out


def search(
    compiled: CompiledSystem,
    store: Store | None = None,
    order: Order = "bfs",
    limits: Limits | None = None,
    keep_going: bool = False,
    check_deadlock: bool = True,
    progress: Callable[[Progress], None] | None = None,
) -> SearchOutcome:
    """Explore the state space of ``compiled`` from its initial state.

    Checks ``compiled.properties`` on every stored state, model errors on every executed
    command, and (``check_deadlock``) states without successors that are not valid end states.
    Stops at the first violation unless ``keep_going`` (then each property's first violation is
    kept and the rest are counted, as SPIN's ``-c0``). Limits end the search early with
    ``stopped`` set and ``limit_hit`` true; nothing is raised. ``progress`` is called about once
    a second.
    """
    s = _Search(
        compiled,
        store if store is not None else ExactStore(),
        order,
        limits or Limits(),
        keep_going,
        check_deadlock,
        progress,
    )
    return s.run()
