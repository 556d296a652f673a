"""The one explicit-state search (BFS and DFS) over a
:class:`~absmc.kernel.model.semantics.Semantics`.

Every method that explores concrete states uses :func:`search`: exhaustive explicit search
(exact, bitstate or hash-compact store), under-approximation with abstract matching (a
:class:`~absmc.kernel.explore.store.KeyedStore` plus :class:`SearchHooks` for the precision checks),
and the abstract Systems of the type-based and four-valued methods.

The search stores states in a :class:`~absmc.kernel.explore.store.Store`, checks the selected state
properties on every new state (on every *generated* state when the store merges distinct states
by design, as abstract matching does), the failures (model errors, failed assertions) of every
expanded state, and deadlocks (no step, not a valid end state). Counterexamples are *paths*: the
step labels from the initial state (BFS: parent pointers, two ints per state; DFS: the stack),
built only for the first violation of each property (later ones are counted, SPIN's ``-c0``).
Traces are made from paths by :mod:`absmc.kernel.replay.trace`. Limits end the search with a reason
(``stopped``), never an exception; so does ``KeyboardInterrupt``.

Extension point: :class:`SearchHooks` sees every expansion, every step and (DFS) every state
leaving the stack in post-order — where a nested depth-first search for acceptance cycles
(Courcoubetis, Vardi, Wolper, Yannakakis) starts its inner search.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from absmc.ir.intsem import IntegerTooLarge
from absmc.ir.steps import NO_DEADLOCK, NO_MODEL_ERROR, Failures, State, Successors
from absmc.kernel.explore.por import AmpleSets
from absmc.kernel.explore.store import ExactStore, Store
from absmc.kernel.model.semantics import Semantics
from absmc.kernel.run.limits import (
    INTERRUPTED,
    OUT_OF_MEMORY,
    depth_limit,
    memory_limit,
    state_limit,
    time_limit,
)
from absmc.kernel.run.memory import current_rss_mb
from absmc.kernel.run.options import Limits, Order, Progress

#: how many expanded states between two clock reads (timeout, progress); a power of two
CLOCK_EVERY = 1024

#: ``SearchOutcome.stopped`` of a search its ``hand_over`` callback ended
HANDED_OVER = "handed over to another back end"

#: seconds between two reads of the resident set size (``Limits.max_memory_mb``)
_MEMORY_EVERY_S = 0.05


@dataclass
class Violation:
    """The first violation found of one property (``path`` = step labels from the initial
    state to the violating state; for model errors and failed assertions the last label is the
    failing step) and how many violations of it were counted."""

    property: str
    path: list[int]
    message: str
    count: int = 1


@dataclass
class SearchOutcome:
    """What a search found. ``stopped`` gives the reason when the search did not exhaust the
    state space (a limit, or the first violation without ``keep_going``). ``states`` counts
    stored states (store insertions that were new), ``transitions`` the steps generated,
    ``max_depth`` the deepest level reached, ``time_s`` wall-clock seconds."""

    violations: dict[str, Violation] = field(default_factory=dict)
    states: int = 0
    transitions: int = 0
    max_depth: int = 0
    time_s: float = 0.0
    stopped: str | None = None
    limit_hit: bool = False
    reduced: int = 0


def path_from(parent: Sequence[int], via: Sequence[int], node: int) -> list[int]:
    """The labels from the initial state (node 0) to ``node`` in a search tree kept as parent
    pointers: ``parent[n]`` is ``n``'s parent node, ``via[n]`` the label that reached it."""
    labels: list[int] = []
    while node > 0:
        labels.append(via[node])
        node = parent[node]
    labels.reverse()
    return labels


class SearchHooks:
    """Extension points of :func:`search`; every method is a no-op here. A subclass sees:

    * :meth:`expanded` — a state was expanded: its node and its steps, before its failures and
      deadlock are checked and before any of its steps is handled;
    * :meth:`transition` — one step of an expanded state, before its target is looked up in the
      store (in order; DFS: when the search takes the step, so a whole subtree may lie between
      two calls for the same node);
    * :meth:`finished` — every step of the node was handled (DFS: the state leaves the stack,
      post-order — where a nested DFS starts its cycle search; BFS: right after the steps).

    ``node`` identifies a state for :meth:`Search.path_to` while it is being handled (BFS: its
    id in the search tree; DFS: its depth on the stack). Hooks may call :meth:`Search.record`
    to report a violation (which may stop the search) and raise nothing else."""

    def attach(self, search: Search) -> None:
        """Called once before the search starts."""

    def expanded(self, node: int, state: State, steps: Successors) -> None:
        """A state was expanded."""

    def transition(self, node: int, label: int, target: State) -> None:
        """One step of node ``node``."""

    def finished(self, node: int, state: State) -> None:
        """All steps of ``node`` were handled."""


class _Stop(Exception):
    pass


class Search:
    """One run of the search (see :func:`search`, which is how to start one)."""

    def __init__(
        self,
        semantics: Semantics,
        store: Store,
        order: Order,
        limits: Limits,
        keep_going: bool,
        check_deadlock: bool,
        progress: Callable[[Progress], None] | None,
        hooks: SearchHooks | None = None,
        check_every_state: bool = False,
        deadline: float | None = None,
        clock_every: int = CLOCK_EVERY,
        hand_over: Callable[[int], bool] | None = None,
        reduce: AmpleSets | None = None,
    ) -> None:
        self.c = semantics
        self.reduce = reduce if reduce is not None and reduce.active else None
        #: states expanded by an ample set only (partial-order reduction)
        self.reduced = 0
        self.hand_over = hand_over
        self.store = store
        self.order = order
        self.limits = limits
        self.keep_going = keep_going
        self.check_deadlock = check_deadlock
        self.progress = progress
        self.hooks = hooks
        self.check_every_state = check_every_state
        self.clock_every = clock_every
        self.out = SearchOutcome()
        self.start = time.monotonic()
        self.last_progress = self.start
        self.last_memory = self.start - _MEMORY_EVERY_S
        self.deadline = limits.end(self.start)
        if deadline is not None and (self.deadline is None or deadline < self.deadline):
            self.deadline = deadline
        self.truncated_depth = False
        self.count = 0
        self.parent = array("i")
        self.via = array("i")
        #: DFS only: the states on the search stack and the labels between them (what a
        #: nested DFS checks "closes a cycle through the stack" against)
        self.stack_states: list[State] = []
        self.stack_labels: list[int] = []

    # -- bookkeeping -------------------------------------------------------------------
    def path_to(self, node: int) -> list[int]:
        """The step labels from the initial state to ``node`` (see :class:`SearchHooks`)."""
        if self.order == "bfs":
            return path_from(self.parent, self.via, node)
        return self.stack_labels[:node]

    def record(
        self, prop: str, path: Callable[[], list[int]], message: str, stop: bool = False
    ) -> None:
        """Count a violation of ``prop``; the first one keeps its path (``path()`` is called
        only then). Stops the search unless ``keep_going`` (always with ``stop``)."""
        v = self.out.violations.get(prop)
        if v is None:
            self.out.violations[prop] = Violation(prop, path(), message)
        else:
            v.count += 1
        if stop or not self.keep_going:
            self.out.stopped = f"stopped at the first violation ({prop})"
            raise _Stop

    def check_state(self, state: State, path: Callable[[], list[int]]) -> None:
        for k in self.c.violated(state):
            p = self.c.properties[k]
            self.record(p.name, path, f"{p.kind} '{p.name}' violated")

    def expand_checks(
        self,
        state: State,
        succ: Successors,
        fails: Failures,
        path: Callable[[], list[int]],
    ) -> None:
        """Failures of an expanded state, and the deadlock check (a state where a command is a
        model error is no deadlock)."""
        if fails:
            blocked = False
            for f in fails:
                label = f[0]
                self.record(f[2], lambda label=label: [*path(), label], f[1])  # type: ignore[misc]
                blocked = blocked or f[2] == NO_MODEL_ERROR
            if blocked:
                return
        if not succ and self.check_deadlock and not self.c.valid_end(state):
            self.record(NO_DEADLOCK, path, "deadlock: no command is enabled")

    def tick(self, depth: int) -> None:
        now = time.monotonic()
        lim = self.limits
        if lim.max_memory_mb is not None and now - self.last_memory >= _MEMORY_EVERY_S:
            # reading the resident set size costs a system call: a few times a second
            self.last_memory = now
            if current_rss_mb() >= lim.max_memory_mb:
                self.out.stopped = memory_limit(lim.max_memory_mb)
                self.out.limit_hit = True
                raise _Stop
        if self.deadline is not None and now >= self.deadline:
            self.out.stopped = time_limit(lim)
            self.out.limit_hit = True
            raise _Stop
        if self.progress is not None and now - self.last_progress >= 1.0:
            self.last_progress = now
            self.progress(Progress(len(self.store), self.out.transitions, depth, now - self.start))
        if self.hand_over is not None and self.hand_over(len(self.store)):
            self.out.stopped = HANDED_OVER
            self.out.limit_hit = True
            raise _Stop

    @contextmanager
    def ending(self) -> Iterator[None]:
        """How a search loop ends early: a limit or a first violation (``_Stop``, reason already
        set), Ctrl-C, a ``MemoryError`` or an integer past ``intsem.MAX_BITS`` — each leaves the
        statistics gathered so far."""
        try:
            yield
        except _Stop:
            pass
        except KeyboardInterrupt:
            self.out.stopped = INTERRUPTED
            self.out.limit_hit = True
        except MemoryError:
            self.out.stopped = OUT_OF_MEMORY
            self.out.limit_hit = True
        except IntegerTooLarge as err:
            self.out.stopped = str(err)
            self.out.limit_hit = True

    def state_limit(self) -> None:
        noun = self.store.noun
        self.out.stopped = state_limit(self.limits.max_states, noun)
        self.out.limit_hit = True
        raise _Stop

    def split(self, state: State, succ: Successors) -> list[Successors]:
        """The groups of steps to take in order (:meth:`AmpleSets.ample`), stopping after the
        first that meets the cycle proviso: under partial-order reduction the candidate ample
        sets and the rest, else ``[succ]``."""
        if self.reduce is not None:
            found = self.reduce.ample(state, succ)
            if found is not None:
                return found
        return [succ]

    # -- BFS ---------------------------------------------------------------------------
    def bfs(self) -> None:
        c = self.c
        successors, ok = c.successors, c.ok
        checks = c.state_checks
        store = self.store
        exact = isinstance(store, ExactStore)
        seen = store.states if isinstance(store, ExactStore) else set()
        insert = store.insert
        max_states = self.limits.max_states if self.limits.max_states is not None else -1
        max_depth = self.limits.max_depth
        hooks = self.hooks
        check_all = self.check_every_state and checks
        parent = array("i", [-1])
        via = array("i", [-1])
        self.parent, self.via = parent, via
        clock = self.clock_every

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
        with self.ending():
            if not ok(init):
                self.check_state(init, lambda: [])
            while frontier:
                at_bound = max_depth is not None and depth >= max_depth
                nxt: list[State] = []
                next_first = len(parent)
                sid = first_id - 1
                if exact and not at_bound and hooks is None and not check_all:
                    # the hot loop (exact store, below the depth bound), kept lean
                    sid, transitions, expanded = self._bfs_level(
                        frontier, nxt, sid, transitions, expanded, depth, path_of
                    )
                    frontier, first_id = nxt, next_first
                    if frontier:
                        depth += 1
                    continue
                later: set[State] = set()  # the states inserted in this level's expansion
                reducing = self.reduce is not None
                # the states of this level not yet expanded (inserted after the one expanded)
                ahead = set(frontier) if reducing and exact else set()
                for s in frontier:
                    sid += 1
                    ahead.discard(s)
                    succ, fails = successors(s)
                    if hooks is not None:
                        hooks.expanded(sid, s, succ)
                    if fails or not succ:
                        self.expand_checks(s, succ, fails, lambda sid=sid: path_of(sid))  # type: ignore[misc]
                    if at_bound:
                        # count and check states at the depth bound, do not go deeper
                        transitions += len(succ)
                        if succ and not (exact and all(t in seen for _, t in succ)):
                            self.truncated_depth = True
                        if hooks is not None:
                            hooks.finished(sid, s)
                        continue
                    groups = self.split(s, succ)
                    for gi, steps in enumerate(groups):
                        transitions += len(steps)
                        fresh = False
                        for ci, t in steps:
                            if hooks is not None:
                                hooks.transition(sid, ci, t)
                            if check_all and not ok(t):
                                self.out.transitions = transitions
                                self.out.max_depth = max(self.out.max_depth, depth + 1)
                                self.check_state(t, lambda sid=sid, ci=ci: [*path_of(sid), ci])  # type: ignore[misc]
                            if exact:
                                if t in seen:
                                    # the cycle proviso holds for a state inserted after s
                                    # (in this level's expansion, or later in this level)
                                    fresh = fresh or t in later or t in ahead
                                    continue
                                if reducing:
                                    later.add(t)
                            elif not insert(t):
                                continue
                            fresh = True
                            tid = len(parent)
                            if tid == max_states:
                                self.out.transitions = transitions
                                self.out.max_depth = depth + 1
                                self.state_limit()
                            if exact:
                                seen.add(t)
                            parent.append(sid)
                            via.append(ci)
                            if checks and not check_all and not ok(t):
                                self.out.transitions = transitions
                                self.out.max_depth = depth + 1
                                self.check_state(t, lambda tid=tid: path_of(tid))  # type: ignore[misc]
                            nxt.append(t)
                        if fresh and any(groups[gi + 1 :]):
                            self.reduced += 1
                            break
                        # the cycle proviso: no step reached a state inserted after s, take
                        # the next group (pan's Resume, then its full expansion)
                    if hooks is not None:
                        hooks.finished(sid, s)
                    expanded += 1
                    if not expanded % clock:
                        self.out.transitions = transitions
                        self.tick(depth)
                if at_bound:
                    break
                frontier, first_id = nxt, next_first
                if frontier:
                    depth += 1
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
        successors, ok, checks = c.successors, c.ok, c.state_checks
        assert isinstance(self.store, ExactStore)
        seen = self.store.states
        seen_add = seen.add
        parent, via = self.parent, self.via
        p_app, v_app, n_app = parent.append, via.append, nxt.append
        count = len(parent)
        size = len(seen)
        limit = self.limits.max_states if self.limits.max_states is not None else -1
        fusable = limit < 0 and self.keep_going and self.reduce is None
        expand = getattr(c, "expand_level", None) if fusable else None  # generated on first use
        if expand is not None:
            # generated code puts new states straight into the store, 1024 states at a time
            for i in range(0, len(frontier), CLOCK_EVERY):
                chunk = frontier[i : i + CLOCK_EVERY]
                sid, trans, flagged = expand(chunk, sid, seen, p_app, v_app, n_app)
                transitions += trans
                for st, ssid, k, fails in flagged:
                    succ: Successors = [(0, st)] if k else []
                    self.expand_checks(st, succ, fails, lambda ssid=ssid: path_of(ssid))  # type: ignore[misc]
                expanded += len(chunk)
                self.out.transitions = transitions
                self.tick(depth)
            return sid, transitions, expanded
        reduce = self.reduce
        later: set[State] = set()  # the states inserted in this level's expansion
        # the states of this level not yet expanded (inserted after the one expanded)
        ahead = set(frontier) if reduce is not None else set()
        for s in frontier:
            sid += 1
            if reduce is not None:
                ahead.discard(s)
            succ, fails = successors(s)
            if fails or not succ:
                self.expand_checks(s, succ, fails, lambda sid=sid: path_of(sid))  # type: ignore[misc]
            groups = [succ] if reduce is None else self.split(s, succ)
            for gi, steps in enumerate(groups):
                transitions += len(steps)
                fresh = False
                for ci, t in steps:
                    # one hash lookup per transition: add, and see whether the set grew
                    seen_add(t)
                    if len(seen) == size:
                        # the cycle proviso holds for a state inserted after s (the next
                        # level, or later in this one)
                        fresh = fresh or t in later or t in ahead
                        continue
                    if reduce is not None:
                        later.add(t)
                    fresh = True
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
                if fresh and any(groups[gi + 1 :]):
                    self.reduced += 1
                    break
                # the cycle proviso failed: the next group (pan's Resume)
            expanded += 1
            if not expanded & (CLOCK_EVERY - 1):
                self.out.transitions = transitions
                self.tick(depth)
        return sid, transitions, expanded

    # -- DFS ---------------------------------------------------------------------------
    def dfs(self) -> None:
        c = self.c
        successors, ok = c.successors, c.ok
        checks = c.state_checks
        store = self.store
        insert = store.insert
        max_states = self.limits.max_states if self.limits.max_states is not None else -1
        max_depth = self.limits.max_depth if self.limits.max_depth is not None else -1
        hooks = self.hooks
        check_all = self.check_every_state and checks
        clock = self.clock_every
        cmds = self.stack_labels  # cmds[i]: the step that led from states[i] to states[i + 1]
        states = self.stack_states
        pending: list[Successors] = []
        positions: list[int] = []
        #: per stack entry: the groups of steps still to take when the cycle proviso asks
        #: (partial-order reduction, :meth:`split`) and whether a step of the current group
        #: reached a state off the DFS stack (SPIN's stack proviso, pan's ``tau&64``)
        rests: list[list[Successors]] = []
        fresh: list[bool] = []
        split = self.split
        reducing = self.reduce is not None
        on_stack: set[State] = set()  # the states on the stack (when reducing)
        # a stored state off the stack counts for the proviso only when the store is exact (a
        # hash-compact or bitstate match may be a state never stored)
        off_stack_counts = reducing and isinstance(store, ExactStore)
        transitions = 0
        expanded = 0
        deepest = 0
        count = 1

        def stack_path() -> list[int]:
            return list(cmds)

        def push(s: State) -> None:
            nonlocal transitions, expanded, deepest
            succ, fails = successors(s)
            states.append(s)
            depth = len(states) - 1
            if depth > deepest:
                deepest = depth
            if depth == max_depth:
                # at the depth bound: checked, not expanded
                transitions += len(succ)
                pending.append(succ)
                rests.append([])
                positions.append(len(succ))
                if succ:
                    self.truncated_depth = True
            else:
                steps, *rest = split(s, succ)
                transitions += len(steps)
                pending.append(steps)
                rests.append(rest)
                positions.append(0)
                if reducing:
                    on_stack.add(s)
            fresh.append(False)
            expanded += 1
            if hooks is not None:
                hooks.expanded(depth, s, succ)
            if fails or not succ:
                self.out.transitions = transitions
                self.expand_checks(s, succ, fails, stack_path)
            if not expanded % clock:
                self.out.transitions = transitions
                self.tick(depth)

        init = c.initial
        insert(init)
        with self.ending():
            if not ok(init):
                self.check_state(init, lambda: [])
            push(init)
            while states:
                i = positions[-1]
                succ = pending[-1]
                if i == len(succ):
                    if rests[-1] and not fresh[-1]:
                        # the cycle proviso (SPIN's): every step of the group met a state on
                        # the stack, take the next group (pan's Resume, then all steps)
                        pending[-1] = rests[-1].pop(0)
                        positions[-1] = 0
                        transitions += len(pending[-1])
                        continue
                    self.reduced += any(rests[-1])
                    if hooks is not None:
                        hooks.finished(len(states) - 1, states[-1])
                    if reducing:
                        on_stack.discard(states[-1])
                    states.pop()
                    pending.pop()
                    positions.pop()
                    rests.pop()
                    fresh.pop()
                    if cmds:
                        cmds.pop()
                    continue
                positions[-1] = i + 1
                ci, t = succ[i]
                if hooks is not None:
                    hooks.transition(len(states) - 1, ci, t)
                if check_all and not ok(t):
                    self.out.transitions = transitions
                    self.check_state(t, lambda ci=ci: [*cmds, ci])  # type: ignore[misc]
                if not insert(t):
                    if off_stack_counts and not fresh[-1] and t not in on_stack:
                        fresh[-1] = True
                    continue
                fresh[-1] = True
                if count == max_states:
                    self.out.transitions = transitions
                    self.out.max_depth = deepest
                    self.state_limit()
                count += 1
                cmds.append(ci)
                if checks and not check_all and not ok(t):
                    self.out.transitions = transitions
                    self.check_state(t, stack_path)
                push(t)
        self.count = count
        self.out.transitions = transitions
        self.out.max_depth = max(self.out.max_depth, deepest)

    def run(self) -> SearchOutcome:
        if self.hooks is not None:
            self.hooks.attach(self)
        if self.order == "bfs":
            self.bfs()
        else:
            self.dfs()
        if self.truncated_depth and self.out.stopped is None:
            self.out.stopped = depth_limit(self.limits.max_depth)
            self.out.limit_hit = True
        self.out.states = self.count
        self.out.reduced = self.reduced
        self.out.time_s = time.monotonic() - self.start
        return self.out


def search(
    semantics: Semantics,
    store: Store | None = None,
    order: Order = "bfs",
    limits: Limits | None = None,
    keep_going: bool = False,
    check_deadlock: bool = True,
    progress: Callable[[Progress], None] | None = None,
    *,
    hooks: SearchHooks | None = None,
    check_every_state: bool = False,
    deadline: float | None = None,
    clock_every: int = CLOCK_EVERY,
    hand_over: Callable[[int], bool] | None = None,
    reduce: AmpleSets | None = None,
) -> SearchOutcome:
    """Explore the state space of ``semantics`` from its initial state.

    Checks ``semantics.properties`` on every stored state (``check_every_state``: on every
    generated state, for stores that merge distinct states), failures on every expanded state,
    and (``check_deadlock``) states without steps that are not valid end states. Stops at the
    first violation unless ``keep_going`` (then each property's first violation is kept and the
    rest are counted, as SPIN's ``-c0``). Limits (``limits``; ``deadline``, a
    ``time.monotonic()`` instant) end the search early with ``stopped`` set and ``limit_hit``
    true; nothing is raised (``limits.max_memory_mb`` is checked with the clock; a
    ``MemoryError`` also ends the search with a reason). ``progress`` is called about once a
    second; the clock is read every ``clock_every`` expansions (1 when each expansion is
    expensive, as with prover checks in ``hooks``). ``hand_over(states stored)``, asked at the
    same rate, ends the search with ``stopped`` = :data:`HANDED_OVER` when it returns true.
    ``reduce``: partial-order reduction with these ample sets (:mod:`absmc.kernel.explore.por`; the
    cycle proviso, pan's, is applied here: the groups of :meth:`AmpleSets.ample` are taken in
    order up to the first with a step that reaches a state off the DFS stack — in BFS with the
    exact store one inserted after the state, with other stores a new one);
    ``SearchOutcome.reduced`` counts the states expanded by an ample set only.
    """
    s = Search(
        semantics,
        store if store is not None else ExactStore(),
        order,
        limits or Limits(),
        keep_going,
        check_deadlock,
        progress,
        hooks,
        check_every_state,
        deadline,
        clock_every,
        hand_over,
        reduce,
    )
    return s.run()
