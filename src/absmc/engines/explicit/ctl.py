"""Explicit CTL model checking by labelling the reachable graph (Clarke, Emerson, Sistla 1986).

The reachable states are enumerated from the initial state (the registry runs the method once
per initial state of an ``init:`` constraint); a state without successor gets itself as its
only successor (the convention of :mod:`absmc.ir.ctl`). Each subformula of the existential
normal form is labelled bottom-up: ``EX`` by predecessors, ``E[f U g]`` by a backward search
from ``g`` through ``f``, ``EG f`` by repeatedly removing the states of ``f`` without a
successor left in the set (predecessor counting, linear). A property holds when the initial
state is labelled with its formula; otherwise the negation's witness
(:func:`absmc.kernel.replay.witness.witness_path`, exact labels as the oracle) is replayed.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from absmc.ir.ctl import And, Atom, CtlProperty, Formula, Not, Or, Temporal, Until, to_enf
from absmc.ir.steps import State
from absmc.kernel.model.irsemantics import IRSemantics
from absmc.kernel.model.semantics import Semantics
from absmc.kernel.replay.trace import replay_witness
from absmc.kernel.replay.witness import NoWitness, atom_holds, witness_path
from absmc.kernel.run.limits import INTERRUPTED, memory_limit, state_limit, time_limit
from absmc.kernel.run.memory import current_rss_mb
from absmc.kernel.run.options import CheckOptions, Progress
from absmc.kernel.run.result import PropertyResult, Stats, Verdict

__all__ = ["Graph", "check_ctl", "explore", "label"]


@dataclass
class Graph:
    """The reachable graph: ``states[i]`` is state ``i`` (0 is the initial state),
    ``succ[i]`` its successor ids (a dead state: itself), ``pred`` the reverse;
    ``complete`` is false when a limit stopped the exploration (``stopped`` says which);
    ``atom_sets``, when given, labels the atoms (the C graph's: :mod:`absmc.native.graph`)."""

    states: Sequence[State]
    index: Mapping[State, int]
    succ: Sequence[Sequence[int]]
    pred: Sequence[Sequence[int]]
    complete: bool = True
    stopped: str | None = None
    atom_sets: Mapping[Formula, set[int]] | None = None


def explore(sem: Semantics, options: CheckOptions) -> Graph:
    """Breadth-first enumeration of the states reachable from ``sem.initial`` (steps that are
    model errors are not transitions). Stops at ``--max-states``, the check's deadline
    (``--timeout``), ``--max-memory`` and Ctrl-C (each a stop reason of
    :mod:`absmc.kernel.run.limits`); ``--progress`` is reported about once a second."""
    start = time.monotonic()
    limits = options.limits
    end = limits.end(start)
    init = sem.initial
    states = [init]
    index = {init: 0}
    succ: list[list[int]] = []
    queue = deque([0])
    stopped = None
    last = start
    try:
        while queue:
            i = queue.popleft()
            steps, _ = sem.successors(states[i])
            out: list[int] = []
            for _, t in steps:
                j = index.get(t)
                if j is None:
                    if limits.max_states is not None and len(states) >= limits.max_states:
                        stopped = state_limit(limits.max_states)
                        break
                    j = index[t] = len(states)
                    states.append(t)
                    queue.append(j)
                if j not in out:
                    out.append(j)
            while len(succ) <= i:
                succ.append([])
            succ[i] = out or [i]
            if stopped is None and not i & 255:
                now = time.monotonic()
                if end is not None and now >= end:
                    stopped = time_limit(limits)
                elif limits.max_memory_mb is not None and current_rss_mb() >= limits.max_memory_mb:
                    stopped = memory_limit(limits.max_memory_mb)
                elif options.progress is not None and now - last >= 1.0:
                    last = now
                    options.progress(Progress(len(states), sum(map(len, succ)), 0, now - start))
            if stopped is not None:
                break
    except KeyboardInterrupt:
        stopped = INTERRUPTED
    while len(succ) < len(states):
        succ.append([])
    pred: list[list[int]] = [[] for _ in states]
    for i, out in enumerate(succ):
        for j in out:
            pred[j].append(i)
    return Graph(states, index, succ, pred, stopped is None, stopped)


def label(sem: IRSemantics, g: Graph, f: Formula, memo: dict[Formula, set[int]]) -> set[int]:
    """The ids of the states satisfying the ENF formula ``f`` (memoized per subformula)."""
    got = memo.get(f)
    if got is not None:
        return got
    n = len(g.states)
    out: set[int]
    if isinstance(f, Atom) and g.atom_sets is not None and f in g.atom_sets:
        out = g.atom_sets[f]
    elif isinstance(f, Atom):
        out = {i for i in range(n) if atom_holds(sem, f.expr, g.states[i])}
    elif isinstance(f, Not):
        inner = label(sem, g, f.arg, memo)
        out = {i for i in range(n) if i not in inner}
    elif isinstance(f, And):
        out = label(sem, g, f.left, memo) & label(sem, g, f.right, memo)
    elif isinstance(f, Or):
        out = label(sem, g, f.left, memo) | label(sem, g, f.right, memo)
    elif isinstance(f, Temporal) and f.op == "EX":
        inner = label(sem, g, f.arg, memo)
        out = {p for j in inner for p in g.pred[j]}
    elif isinstance(f, Until) and f.path == "E":
        left, right = label(sem, g, f.left, memo), label(sem, g, f.right, memo)
        out = set(right)
        queue = deque(right)
        while queue:
            j = queue.popleft()
            for p in g.pred[j]:
                if p not in out and p in left:
                    out.add(p)
                    queue.append(p)
    elif isinstance(f, Temporal) and f.op == "EG":
        inner = label(sem, g, f.arg, memo)
        count = {i: sum(1 for j in g.succ[i] if j in inner) for i in inner}
        out = set(inner)
        queue = deque(i for i, c in count.items() if c == 0)
        while queue:
            j = queue.popleft()
            if j not in out:
                continue
            out.discard(j)
            for p in g.pred[j]:
                if p in out:
                    count[p] -= 1
                    if count[p] == 0:
                        queue.append(p)
    else:
        raise ValueError(f"not an ENF formula: {f!r}")
    memo[f] = out
    return out


def check_ctl(
    sem: IRSemantics,
    props: tuple[CtlProperty, ...],
    options: CheckOptions,
    explore_graph: Callable[[CheckOptions], Graph] | None = None,
    extra: Callable[[], dict[str, Any]] | None = None,
) -> list[PropertyResult]:
    """One result per CTL property: ``holds`` / ``violated`` (with a replayed witness of the
    negation from the initial state) on a completely explored finite graph, ``unknown`` when a
    limit stopped the exploration. ``explore_graph`` builds the graph in place of
    :func:`explore` (the C search's: :meth:`absmc.native.graph.NativeGraph.explore`), ``extra``
    gives the statistics' extra figures after it ran."""
    t0 = time.monotonic()
    g = explore_graph(options) if explore_graph is not None else explore(sem, options)
    more = extra() if extra is not None else {}
    out: list[PropertyResult] = []
    memo: dict[Formula, set[int]] = {}
    for p in props:
        neg = to_enf(Not(p.formula))
        if not g.complete:
            stats = Stats(len(g.states), 0, 0, time.monotonic() - t0, extra=more)
            reason = g.stopped or "exploration incomplete"
            out.append(PropertyResult(p.name, "ctl", "explicit", Verdict.UNKNOWN, reason, stats))
            continue
        bad = label(sem, g, neg, memo)
        edges = sum(len(s) for s in g.succ)
        stats = Stats(len(g.states), edges, 0, time.monotonic() - t0, extra=more)
        if 0 not in bad:
            reason = f"the initial state satisfies the formula ({len(g.states)} reachable states)"
            out.append(PropertyResult(p.name, "ctl", "explicit", Verdict.HOLDS, reason, stats))
            continue

        def holds(f: Formula, s: State) -> bool:
            return g.index[s] in label(sem, g, f, memo)

        try:
            w = witness_path(sem, sem.initial, neg, holds, budget=len(g.states) + 1)
        except NoWitness as err:  # pragma: no cover - exact labels always have a witness
            raise RuntimeError(f"no witness for an exact CTL label: {err.reason}") from err
        trace = replay_witness(sem, w, "witness of the negation")
        reason = f"the initial state satisfies the negation; witness of {len(w.labels)} steps"
        out.append(
            PropertyResult(p.name, "ctl", "explicit", Verdict.VIOLATED, reason, stats, trace)
        )
    return out
