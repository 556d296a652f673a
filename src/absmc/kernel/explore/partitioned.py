"""Hash-partitioned explicit-state search: the state space split among ``N`` workers, each
owning the states ``s`` with ``owner(s) = (hash(s) >> 32) mod N`` (the distributed search of
Stern & Dill, "Parallelizing the Murφ verifier", CAV 1997; termination by Mattern's
four-counter method, "Algorithms for distributed termination detection", Distributed Computing
2(3), 1987).

Each worker keeps its own exact store of the states it owns and, per stored state, where it came
from: (parent's owner, parent's local id, step label in the parent owner's numbering, depth). It
expands its states first-in first-out; a successor it owns goes straight into its store, the
others are batched per owner (``BATCH`` states, or fewer when the worker runs out of work) and
sent as one ``marshal``-ed message. The search is
*asynchronous* (no barrier per BFS level: models with millions of narrow levels, like bakery,
would spend their time waiting), so the order is not breadth-first and a counterexample is not
necessarily a shortest one; state and transition counts of an exhaustive search equal the
one-worker search's (every reachable state is stored exactly once, by its owner, and expanded
once).

This module holds what does not depend on how messages travel: :class:`PartitionWorker` (one
worker's store, expansion loop and answers) and :func:`coordinate` (the driver: limits,
termination waves, violations, the rebuilt paths). A transport moves the messages:
:mod:`absmc.kernel.explore.partition_mp` (processes of this machine),
:mod:`absmc.kernel.explore.partition_ray` (Ray actors, one machine or a cluster).

Messages (plain tuples, picklable):

* coordinator -> worker: ``("probe", wave)``, ``("stop",)``, ``("parent", node)``,
  ``("chain", label)``, ``("quit",)``; worker -> worker: ``("batch", sender, payload)``;
* worker -> coordinator: ``("progress", w, states, transitions, rss_mb)``,
  ``("violation", w, prop, node, failing_label | None, message)``, ``("status", w, wave, idle,
  sent, received, states, transitions)``, ``("final", w, stats)``, ``("answer", w, value)``,
  ``("error", w, message, limit)``.
"""

from __future__ import annotations

import marshal
import time
from array import array
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from absmc.ir.intsem import IntegerTooLarge
from absmc.ir.steps import NO_DEADLOCK, NO_MODEL_ERROR, Failures, State, Successors
from absmc.kernel.explore.search import SearchOutcome, Violation
from absmc.kernel.model.semantics import Semantics, is_step_property
from absmc.kernel.replay.trace import concretize
from absmc.kernel.run.limits import INTERRUPTED, memory_limit, state_limit, time_limit
from absmc.kernel.run.memory import current_rss_mb
from absmc.kernel.run.options import Limits, Progress

__all__ = [
    "BATCH",
    "PartitionConfig",
    "PartitionWorker",
    "Transport",
    "WorkerLink",
    "coordinate",
    "owner_of",
]

#: states per message between two workers (a message is sent earlier when the sender idles)
BATCH = 2048

#: states expanded between two looks at the inbox
CHUNK = 512

#: seconds between two progress messages of a worker
_PROGRESS_S = 0.2

Message = tuple[Any, ...]


def owner_of(state: State, workers: int) -> int:
    """The worker that owns ``state`` (``0 <= owner < workers``). Python's tuple hash of ints
    is the same in every process and on every 64-bit machine (no hash randomization for ints);
    the high half is used so that a worker's own set does not see hashes with constant low
    bits."""
    return (hash(state) >> 32) % workers


@dataclass(frozen=True)
class PartitionConfig:
    """What every worker needs to know: ``workers`` (N), ``keep_going``, ``check_deadlock``."""

    workers: int
    keep_going: bool = False
    check_deadlock: bool = True


class WorkerLink(Protocol):
    """How a worker talks (one implementation per transport): ``get(timeout)`` the next message
    of its inbox or ``None`` (``timeout`` 0: do not wait), ``to_peer(j, message)``,
    ``to_coordinator(message)``, ``alive()`` (false when the coordinator is gone)."""

    def get(self, timeout: float) -> Message | None: ...

    def to_peer(self, j: int, message: Message) -> None: ...

    def to_coordinator(self, message: Message) -> None: ...

    def alive(self) -> bool: ...


@dataclass
class _Found:
    node: int
    label: int | None
    message: str
    count: int = 1


class PartitionWorker:
    """One worker of the partitioned search: owns the states with ``owner_of(s, N) == index``.

    ``run(link)`` is its whole life: search until the coordinator says ``stop`` (or, without
    ``keep_going``, until it found a violation and was stopped), then answer path queries until
    ``quit``. Node ids are local (insertion order, 0-based)."""

    def __init__(self, index: int, semantics: Semantics, config: PartitionConfig) -> None:
        self.index = index
        self.c = semantics
        self.cfg = config
        self.seen: set[State] = set()
        self.p_owner = array("b")
        self.p_node = array("q")
        self.via = array("i")
        self.depth = array("i")
        self.work: deque[State] = deque()
        self.expanded = 0
        self.transitions = 0
        self.max_depth = 0
        self.sent = 0
        self.received = 0
        self.bytes_sent = 0
        self.found: dict[str, _Found] = {}
        self.halted = False
        #: wall seconds spent waiting for messages; CPU seconds absorbing batches and expanding
        #: (flushes included)
        self.wait_s = 0.0
        self.absorb_s = 0.0
        self.expand_s = 0.0
        self.error: tuple[str, bool] | None = None
        n = config.workers
        self.out_states: list[list[State]] = [[] for _ in range(n)]
        self.out_meta: list[array[int]] = [array("q") for _ in range(n)]

    # -- storing and checking ----------------------------------------------------------
    def insert(self, t: State, p_owner: int, p_node: int, label: int, depth: int) -> None:
        """Store ``t`` if new (with where it came from), check its state properties, queue it."""
        seen = self.seen
        size = len(seen)
        seen.add(t)
        if len(seen) == size:
            return
        self.p_owner.append(p_owner)
        self.p_node.append(p_node)
        self.via.append(label)
        self.depth.append(depth)
        if depth > self.max_depth:
            self.max_depth = depth
        self.work.append(t)
        if self.c.state_checks and not self.c.ok(t):
            self.check_state(t, size)

    def check_state(self, t: State, node: int) -> None:
        c = self.c
        for k in c.violated(t):
            p = c.properties[k]
            self.record(p.name, node, None, f"{p.kind} '{p.name}' violated")

    def record(self, prop: str, node: int, label: int | None, message: str) -> None:
        f = self.found.get(prop)
        if f is not None:
            f.count += 1
            return
        self.found[prop] = _Found(node, label, message)
        self.pending_violations.append((prop, node, label, message))
        if not self.cfg.keep_going:
            self.halted = True

    pending_violations: list[tuple[str, int, int | None, str]]

    def _expand_checks(self, node: int, s: State, succ: Successors, fails: Failures) -> None:
        if fails:
            blocked = False
            for f in fails:
                self.record(f[2], node, f[0], f[1])
                blocked = blocked or f[2] == NO_MODEL_ERROR
            if blocked:
                return
        if not succ and self.cfg.check_deadlock and not self.c.valid_end(s):
            self.record(NO_DEADLOCK, node, None, "deadlock: no command is enabled")

    # -- the loop ----------------------------------------------------------------------
    def expand(self, budget: int) -> None:
        """Expand up to ``budget`` queued states; successors owned by others are buffered and
        sent per owner in messages of ``BATCH`` states (the hot loop: bookkeeping bound to
        locals, as in :meth:`absmc.kernel.explore.search.Search._bfs_level`)."""
        c = self.c
        successors, ok, checks = c.successors, c.ok, c.state_checks
        me = self.index
        n = self.cfg.workers
        work = self.work
        popleft, w_app = work.popleft, work.append
        depth = self.depth
        po_app, pn_app, v_app, d_app = (
            self.p_owner.append,
            self.p_node.append,
            self.via.append,
            depth.append,
        )
        out_states, out_meta = self.out_states, self.out_meta
        seen = self.seen
        seen_add = seen.add
        size = len(seen)
        transitions = 0
        max_depth = self.max_depth
        node = self.expanded - 1
        for _ in range(min(budget, len(work))):
            s = popleft()
            node += 1
            succ, fails = successors(s)
            transitions += len(succ)
            if fails or not succ:
                self._expand_checks(node, s, succ, fails)
            d = depth[node] + 1
            for ci, t in succ:
                o = (hash(t) >> 32) % n if n > 1 else me
                if o == me:
                    seen_add(t)
                    if len(seen) == size:
                        continue
                    po_app(me)
                    pn_app(node)
                    v_app(ci)
                    d_app(d)
                    w_app(t)
                    if d > max_depth:
                        max_depth = d
                    if checks and not ok(t):
                        self.check_state(t, size)
                    size += 1
                else:
                    out_states[o].append(t)
                    meta = out_meta[o]
                    meta.append(node)
                    meta.append(ci)
                    meta.append(d)
                    if len(meta) >= 3 * BATCH:
                        self.flush(o)
            if self.halted:
                break
        self.expanded = node + 1
        self.transitions += transitions
        self.max_depth = max_depth

    def flush(self, j: int) -> None:
        states = self.out_states[j]
        if not states:
            return
        payload = marshal.dumps((states, self.out_meta[j].tobytes()))
        self.out_states[j] = []
        self.out_meta[j] = array("q")
        self.sent += 1
        self.bytes_sent += len(payload)
        self.link.to_peer(j, ("batch", self.index, payload))

    def absorb(self, sender: int, payload: bytes) -> None:
        """Store the new states of a peer's batch (the bookkeeping of :meth:`insert`, inline)."""
        states, raw = marshal.loads(payload)
        meta = array("q")
        meta.frombytes(raw)
        seen = self.seen
        seen_add = seen.add
        size = len(seen)
        po_app, pn_app, v_app, d_app = (
            self.p_owner.append,
            self.p_node.append,
            self.via.append,
            self.depth.append,
        )
        w_app = self.work.append
        checks, ok = self.c.state_checks, self.c.ok
        k = -3
        for t in states:
            k += 3
            seen_add(t)
            if len(seen) == size:
                continue
            d = meta[k + 2]
            po_app(sender)
            pn_app(meta[k])
            v_app(meta[k + 1])
            d_app(d)
            w_app(t)
            if d > self.max_depth:
                self.max_depth = d
            if checks and not ok(t):
                self.check_state(t, size)
            size += 1
        self.received += 1

    link: WorkerLink

    def run(self, link: WorkerLink) -> None:
        """The worker's life (see the class doc). Never raises: a resource limit
        (``MemoryError``, ``IntegerTooLarge``) or a bug is reported to the coordinator as
        ``("error", w, message, limit)``."""
        self.link = link
        self.pending_violations = []
        try:
            self._search(link)
        except (MemoryError, IntegerTooLarge) as err:
            msg = "out of memory" if isinstance(err, MemoryError) else str(err)
            link.to_coordinator(("error", self.index, msg, True))
            self._serve(link)
        except Exception as err:  # reported, the coordinator raises it
            link.to_coordinator(("error", self.index, f"{type(err).__name__}: {err}", False))
            self._serve(link)

    def _search(self, link: WorkerLink) -> None:
        c = self.c
        init = c.initial
        if owner_of(init, self.cfg.workers) == self.index:
            self.insert(init, -1, -1, -1, 0)
        last = time.monotonic()
        while True:
            self._report_violations(link)
            idle = self.halted or not self.work
            t0 = time.perf_counter()
            msg = link.get(0.05 if idle else 0.0)
            self.wait_s += time.perf_counter() - t0
            while msg is not None:
                kind = msg[0]
                if kind == "batch":
                    c0 = time.thread_time()
                    self.absorb(msg[1], msg[2])
                    self.absorb_s += time.thread_time() - c0
                elif kind == "probe":
                    quiet = self.halted or not self.work
                    link.to_coordinator(
                        (
                            "status",
                            self.index,
                            msg[1],
                            quiet,
                            self.sent,
                            self.received,
                            len(self.seen),
                            self.transitions,
                        )
                    )
                elif kind == "stop":
                    self._final(link)
                    self._serve(link)
                    return
                elif kind == "quit":
                    return
                msg = link.get(0.0)
            if not self.halted and self.work:
                c0 = time.thread_time()
                self.expand(CHUNK)
                self.expand_s += time.thread_time() - c0
                self._report_violations(link)
            if self.halted or not self.work:
                # out of work: send what is buffered (flushing after every chunk instead cut
                # the waiting on narrow levels but cost more in messages than it saved)
                for j in range(self.cfg.workers):
                    self.flush(j)
            now = time.monotonic()
            if now - last >= _PROGRESS_S:
                last = now
                link.to_coordinator(
                    ("progress", self.index, len(self.seen), self.transitions, current_rss_mb())
                )
            if not link.alive():
                return

    def _report_violations(self, link: WorkerLink) -> None:
        for prop, node, label, message in self.pending_violations:
            link.to_coordinator(("violation", self.index, prop, node, label, message))
        self.pending_violations = []

    def _final(self, link: WorkerLink) -> None:
        counts = {p: f.count for p, f in self.found.items()}
        stats = {
            "states": len(self.seen),
            "transitions": self.transitions,
            "max_depth": self.max_depth,
            "expanded": self.expanded,
            "sent": self.sent,
            "bytes_sent": self.bytes_sent,
            "violations": counts,
            "wait_s": self.wait_s,
            "absorb_s": self.absorb_s,
            "expand_s": self.expand_s,
        }
        link.to_coordinator(("final", self.index, stats))

    def parent(self, node: int) -> tuple[int, int, int]:
        """(parent's owner, parent's node, label in the parent owner's numbering); owner -1 for
        the initial state."""
        return self.p_owner[node], self.p_node[node], self.via[node]

    def _serve(self, link: WorkerLink) -> None:
        while link.alive():
            msg = link.get(0.1)
            if msg is None:
                continue
            kind = msg[0]
            if kind == "parent":
                link.to_coordinator(("answer", self.index, self.parent(msg[1])))
            elif kind == "chain":
                link.to_coordinator(("answer", self.index, self.c.commands_of(msg[1])))
            elif kind == "stop":
                self._final(link)
            elif kind == "quit":
                return


class Transport(Protocol):
    """The coordinator's side of a transport: ``start()`` the workers, ``send(w, message)``,
    ``receive(timeout)`` the next worker message or ``None``, ``close()`` (ends every worker
    process; idempotent), ``alive()`` (false when a worker died)."""

    workers: int

    def start(self) -> None: ...

    def send(self, w: int, message: Message) -> None: ...

    def receive(self, timeout: float) -> Message | None: ...

    def alive(self) -> bool: ...

    def close(self) -> None: ...


@dataclass
class PartitionStats:
    """Totals of a partitioned search: per-worker states, messages and bytes sent, and where
    each worker's time went."""

    per_worker_states: list[int] = field(default_factory=list)
    messages: int = 0
    bytes_sent: int = 0
    #: per worker: wall seconds waiting for messages, CPU seconds absorbing batches and
    #: expanding states (serializing included)
    wait_s: list[float] = field(default_factory=list)
    absorb_s: list[float] = field(default_factory=list)
    expand_s: list[float] = field(default_factory=list)


class _Coordinator:
    def __init__(
        self,
        transport: Transport,
        semantics: Semantics,
        limits: Limits,
        keep_going: bool,
        progress: Callable[[Progress], None] | None,
    ) -> None:
        self.t = transport
        self.c = semantics
        self.limits = limits
        self.keep_going = keep_going
        self.progress = progress
        self.n = transport.workers
        self.states = [0] * self.n
        self.transitions = [0] * self.n
        self.rss = [0.0] * self.n
        self.first: dict[str, tuple[int, int, int | None, str]] = {}
        self.out = SearchOutcome()
        self.pstats = PartitionStats()
        self.error: str | None = None
        self.start = time.monotonic()

    def _stop(self, reason: str, limit: bool = True) -> None:
        if self.out.stopped is None:
            self.out.stopped = reason
            self.out.limit_hit = limit

    def handle(self, msg: Message) -> None:
        kind, w = msg[0], msg[1]
        if kind == "progress":
            self.states[w], self.transitions[w], self.rss[w] = msg[2], msg[3], msg[4]
        elif kind == "violation":
            prop = msg[2]
            if prop not in self.first:
                self.first[prop] = (w, msg[3], msg[4], msg[5])
            if not self.keep_going:
                self._stop(f"stopped at the first violation ({prop})", limit=False)
        elif kind == "error":
            if msg[3]:
                self._stop(msg[2])
            else:
                self.error = msg[2]
                self._stop(msg[2])

    def check_limits(self) -> None:
        lim = self.limits
        now = time.monotonic()
        end = lim.end(self.start)
        if end is not None and now >= end:
            self._stop(time_limit(lim))
        if lim.max_states is not None and sum(self.states) >= lim.max_states:
            self._stop(state_limit(lim.max_states))
        if lim.max_memory_mb is not None and sum(self.rss) + current_rss_mb() >= lim.max_memory_mb:
            self._stop(memory_limit(lim.max_memory_mb))

    def search(self) -> None:
        """Run until termination (four-counter waves) or a stop reason."""
        t = self.t
        wave = 0
        previous: list[tuple[bool, int, int]] | None = None
        replies: dict[int, tuple[bool, int, int]] = {}
        probing = False
        last_progress = self.start
        next_probe = self.start
        try:
            while self.out.stopped is None:
                now = time.monotonic()
                if not probing and now >= next_probe:
                    wave += 1
                    replies = {}
                    probing = True
                    for w in range(self.n):
                        t.send(w, ("probe", wave))
                msg = t.receive(0.02)
                while msg is not None:
                    if msg[0] == "status" and msg[2] == wave:
                        replies[msg[1]] = (msg[3], msg[4], msg[5])
                        self.states[msg[1]], self.transitions[msg[1]] = msg[6], msg[7]
                    else:
                        self.handle(msg)
                    msg = t.receive(0.0)
                if probing and len(replies) == self.n:
                    probing = False
                    current = [replies[w] for w in range(self.n)]
                    idle = all(r[0] for r in current)
                    balanced = sum(r[1] for r in current) == sum(r[2] for r in current)
                    if idle and balanced and current == previous:
                        break
                    previous = current if idle and balanced else None
                    # probe again at once when everything looked quiet, else in a while
                    next_probe = time.monotonic() + (0.0 if previous else 0.02)
                self.check_limits()
                if not t.alive():
                    self.error = "a worker process died"
                    self._stop(self.error)
                if self.progress is not None and now - last_progress >= 1.0:
                    last_progress = now
                    self.progress(
                        Progress(sum(self.states), sum(self.transitions), 0, now - self.start)
                    )
        except KeyboardInterrupt:
            self._stop(INTERRUPTED)

    def finish(self, grace_s: float = 10.0) -> None:
        """Stop every worker and collect its final statistics."""
        t = self.t
        for w in range(self.n):
            t.send(w, ("stop",))
        finals: dict[int, dict[str, Any]] = {}
        end = time.monotonic() + grace_s
        while len(finals) < self.n and time.monotonic() < end and t.alive():
            msg = t.receive(0.05)
            if msg is None:
                continue
            if msg[0] == "final":
                finals[msg[1]] = msg[2]
            elif msg[0] != "status":
                self.handle(msg)
        if len(finals) < self.n:
            self._stop("a worker did not answer")
            self.error = self.error or "a worker did not answer"
        counts: dict[str, int] = {}
        for f in finals.values():
            for p, k in f["violations"].items():
                counts[p] = counts.get(p, 0) + k
        self.counts = counts
        self.out.states = sum(f["states"] for f in finals.values())
        self.out.transitions = sum(f["transitions"] for f in finals.values())
        self.out.max_depth = max((f["max_depth"] for f in finals.values()), default=0)
        self.pstats.per_worker_states = [
            finals[w]["states"] if w in finals else 0 for w in range(self.n)
        ]
        for key in ("wait_s", "absorb_s", "expand_s"):
            setattr(self.pstats, key, [float(finals[w][key]) for w in sorted(finals)])
        self.pstats.messages = sum(f["sent"] for f in finals.values())
        self.pstats.bytes_sent = sum(f["bytes_sent"] for f in finals.values())

    def ask(self, w: int, query: Message) -> Any:
        self.t.send(w, query)
        end = time.monotonic() + 30.0
        while time.monotonic() < end:
            msg = self.t.receive(0.1)
            if msg is not None and msg[0] == "answer" and msg[1] == w:
                return msg[2]
            if not self.t.alive():
                break
        raise RuntimeError(f"worker {w} did not answer a path query")

    def path_commands(self, w: int, node: int) -> list[tuple[int, ...]]:
        """The steps (command tuples) from the initial state to ``node`` of worker ``w``."""
        steps: list[tuple[int, ...]] = []
        while True:
            p_owner, p_node, label = self.ask(w, ("parent", node))
            if p_owner < 0:
                break
            steps.append(tuple(self.ask(p_owner, ("chain", label))))
            w, node = p_owner, p_node
        steps.reverse()
        return steps

    def violations(self) -> dict[str, Violation]:
        """Each property's first reported violation as a path of the coordinator's labels."""
        out: dict[str, Violation] = {}
        for prop, (w, node, label, message) in self.first.items():
            steps = self.path_commands(w, node)
            failing = None
            if label is not None and is_step_property(self.c.properties, prop):
                steps.append(tuple(self.ask(w, ("chain", label))))
                failing = prop
            labels, _ = concretize(self.c, steps, failing=failing)
            count = self.counts.get(prop, 1) if self.keep_going else 1
            out[prop] = Violation(prop, labels, message, count)
        return out


def coordinate(
    transport: Transport,
    semantics: Semantics,
    limits: Limits | None = None,
    keep_going: bool = False,
    progress: Callable[[Progress], None] | None = None,
) -> tuple[SearchOutcome, PartitionStats]:
    """Run a partitioned search over ``transport``'s workers and return the outcome (as
    :func:`absmc.kernel.explore.search.search` does: violations as paths of ``semantics``'s labels,
    counts, ``stopped``) and the exchange statistics.

    ``limits``: ``max_states`` is checked against the workers' reports (about five times a
    second, so a run may store a few more), ``timeout`` and ``max_memory_mb`` (the sum of the
    workers' and this process's resident sets) likewise; ``max_depth`` is not supported (the
    search is not level by level): ``ValueError``. Ctrl-C stops the run with ``unknown``
    statistics. Raises ``RuntimeError`` when a worker failed for another reason than a limit.
    Always ends every worker (``transport.close()``).
    """
    lim = limits or Limits()
    if lim.max_depth is not None:
        raise ValueError("a partitioned search has no depth bound")
    co = _Coordinator(transport, semantics, lim, keep_going, progress)
    try:
        transport.start()
        co.search()
        co.finish()
        if co.error is not None:
            raise RuntimeError(f"partitioned search failed: {co.error}")
        co.out.violations = co.violations()
    finally:
        try:
            for w in range(transport.workers):
                transport.send(w, ("quit",))
        except Exception:  # the workers may be gone already; close() ends them
            pass
        transport.close()
    co.out.time_s = time.monotonic() - co.start
    return co.out, co.pstats
