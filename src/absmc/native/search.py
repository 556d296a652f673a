"""The breadth-first search loop in C (``runtime_tail.c``), driven from Python in time slices.

The C loop stores packed state vectors (:class:`~absmc.native.cgen.Layout`) in an
open-addressing table with linear probing that grows by 1.5x at 80% load:

* **exact** store: the states live in an arena indexed by id (BFS order, so a level is an id
  range and no queue is needed); a table entry is ``tag << 32 | (id + 1)`` (8 bytes, the tag is
  32 bits of the state's hash, the position comes from the tag, so growing never rereads the
  states); per state a 32-bit parent id and a 32-bit label (command index or interned chain)
  give the path of the first violation of each property;
* **hash-compact** store (SPIN's ``-DHC``): a table entry is the state's 64-bit hash; only the
  current and the next BFS level are kept in full. A path is found again by an exact search
  bounded by the depth of the violation (BFS found it at its shortest depth, so an exact search
  to that depth meets a violation of the same property; hash-compact only omits states).
* **tree** store (``runtime_tree.c``; Laarman, van de Pol, Weber, SPIN 2011, Sect. 3): exact,
  the packed state's used 32-bit halves folded by a binary tree of pair tables into one root
  pair per state; frontier and paths as for hash-compact; one thread.

The checks are the kernel search's (:func:`absmc.kernel.explore.search.search`) in the same order:
state properties on every new state, failures and deadlocks on every expanded state, the first
violation of each property kept (with ``keep_going``, later ones counted). Between two slices of
about 0.2 s Python checks the clock, the resident memory, ``--progress`` and Ctrl-C
(:func:`absmc.native.driver.drive_slices`, the loop the C product search shares), so limits
behave as in the kernel search.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from absmc.ir.steps import NO_DEADLOCK, NO_MODEL_ERROR, State
from absmc.kernel.explore.search import SearchOutcome, Violation
from absmc.kernel.explore.store import BitStateCoverage
from absmc.kernel.model.semantics import Semantics
from absmc.kernel.run.limits import OUT_OF_MEMORY, depth_limit, memory_limit, state_limit
from absmc.kernel.run.memory import current_rss_mb
from absmc.kernel.run.options import Limits, Progress
from absmc.native.cgen import Layout
from absmc.native.driver import SLICE_S, drive_slices
from absmc.native.semantics import NativeSemantics, failure_message

__all__ = [
    "SLICE_S",
    "NativeOverflow",
    "NativeRun",
    "bitstate_coverage",
    "native_search",
    "relabel",
    "tree_leaves",
]

_RUNNING, _DONE, _VIOLATION, _STATES, _OVERFLOW, _MEMORY, _SLICE, _MEMORY_LIMIT = range(8)

NativeStore = Literal["exact", "hash-compact", "bitstate", "tree"]


class NativeOverflow(Exception):
    """A value left the 64-bit range during the native search (unbounded ``INT`` data): the
    caller searches again with the Python back end."""


@dataclass
class NativeRun:
    """A native search's outcome (paths as command sequences, see :func:`relabel`) and its
    store's figures: ``store_bytes`` allocated, ``state_bytes`` of one packed state."""

    outcome: SearchOutcome
    paths: dict[str, list[tuple[int, ...]]] = field(default_factory=dict)
    #: properties whose first violation is a failing step (a model error, a failed assertion)
    failing: set[str] = field(default_factory=set)
    store_bytes: int = 0
    state_bytes: int = 0
    chains: int = 0
    #: threads that searched (1: the breadth-first loop alone)
    threads: int = 1
    #: CPU seconds of each thread (with more than one)
    thread_cpu_s: list[float] = field(default_factory=list)
    #: the bitstate store's coverage (``None`` for the other stores)
    coverage: BitStateCoverage | None = None
    #: states expanded by an ample set (``None``: partial-order reduction did not run)
    reduced: int | None = None
    #: the tree store's distinct pairs per inner node below the root (pre-order; empty for the
    #: other stores)
    tree_nodes: list[int] = field(default_factory=list)

    @property
    def bytes_per_state(self) -> float:
        """Store bytes per stored state."""
        return self.store_bytes / max(1, self.outcome.states)


def _chain(lib: Any, ffi: Any, handle: Any, ncmd: int, label: int) -> tuple[int, ...]:
    if label < ncmd:
        return (label,)
    cap = 64
    while True:
        buf = ffi.new("int32_t[]", cap)
        n = lib.s_chain(handle, label - ncmd, buf, cap)
        if n >= 0:
            return tuple(ffi.unpack(buf, n))
        cap = -n


def native_search(
    sem: NativeSemantics,
    store: NativeStore = "exact",
    limits: Limits | None = None,
    keep_going: bool = False,
    check_deadlock: bool = True,
    progress: Callable[[Progress], None] | None = None,
    deadline: float | None = None,
    bitstate_bits: int = 27,
    hash_functions: int = 3,
    workers: int = 1,
    parallel_after: int = 0,
    hand_over: Callable[[int], bool] | None = None,
    reduce: bool = False,
) -> NativeRun:
    """Search the state space of ``sem`` breadth-first in C (see the module docstring).

    Returns the outcome as :func:`absmc.kernel.explore.search.search` would (``stopped`` and
    ``limit_hit`` for limits, Ctrl-C and exhausted memory; never an exception for those) with
    each first violation's path as command sequences (exact store only). The ``bitstate``
    store (SPIN's ``-DBITSTATE``) has ``2**bitstate_bits`` bits and ``hash_functions`` hash
    functions (double hashing of the packed state's 64-bit hash) and samples 1 in 64 states
    exactly, as :class:`~absmc.kernel.explore.store.BitStateStore`; its coverage is in the run's
    ``coverage``. With ``workers`` > 1 (exact store, no depth bound) the search goes on in that
    many threads once ``parallel_after`` states are stored (``runtime_par.c``: a shared
    lock-free table; the same states, transitions and verdicts, but depths and paths are those
    of the threads' discovery order, not shortest ones); ``threads`` in the run says how many
    ran. ``hand_over(states stored)``, asked between two slices, ends the search with
    ``stopped`` = :data:`~absmc.kernel.explore.search.HANDED_OVER` when it returns true. ``reduce``:
    partial-order reduction (:mod:`absmc.kernel.explore.por`; ``por_order`` in runtime_tail.c) where
    a location is safe (threads too: the same ample sets and proviso); ``reduced`` in the run counts
    the states expanded by an ample set (``None``: no reduction ran). Raises
    :class:`NativeOverflow` when a value leaves the C types, ``MemoryError`` when the store cannot
    be allocated."""
    limits = limits or Limits()
    lib, ffi = sem.lib, sem._ffi
    ncmd = len(sem.system.commands)
    start = time.monotonic()
    end = limits.end(start)
    if deadline is not None and (end is None or deadline < end):
        end = deadline
    handle = lib.s_new(
        0 if store == "exact" else 1,
        int(keep_going),
        int(check_deadlock),
        int(sem.state_checks),
        -1 if limits.max_states is None else limits.max_states,
        -1 if limits.max_depth is None else limits.max_depth,
    )
    if handle == ffi.NULL:
        raise MemoryError("the native search could not allocate its store")
    handle = ffi.gc(handle, lib.s_free)
    lib.s_set_threads(handle, max(1, workers), max(0, parallel_after))
    reducing = bool(reduce and lib.s_set_reduce(handle, 1))
    if store == "bitstate" and not lib.s_set_bitstate(handle, bitstate_bits, hash_functions):
        raise MemoryError(f"the bitstate store of 2^{bitstate_bits} bits could not be allocated")
    if store == "tree":
        leaves = tree_leaves(sem.layout)
        if not lib.s_set_tree(handle, ffi.new("int32_t[]", leaves or [0]), len(leaves)):
            raise MemoryError("the tree store could not be allocated")
    if limits.max_memory_mb is not None:
        # the store may use what the limit leaves beside the process's present memory
        budget = (limits.max_memory_mb - current_rss_mb()) * 1024 * 1024
        lib.s_set_max_bytes(handle, max(0, int(budget)))
    out = SearchOutcome()
    slots = sem.layout.to_slots(sem.initial)
    init = ffi.new("int64_t[]", slots or [0]) if slots is not None else None
    if init is None or not lib.api_in_range(init):
        raise NativeOverflow("the initial state does not fit its variables")
    status = lib.s_init(handle, init)
    if status == _RUNNING:

        def progress_of(elapsed: float) -> Progress:
            return Progress(
                lib.s_stat(handle, 0), lib.s_stat(handle, 1), lib.s_stat(handle, 7), elapsed
            )

        status, stopped = drive_slices(
            lambda: int(lib.s_run(handle, SLICE_S)),
            _SLICE,
            limits,
            start,
            end,
            progress,
            progress_of,
            None if hand_over is None else lambda: hand_over(int(lib.s_stat(handle, 0))),
        )
        if stopped is not None:
            out.stopped = stopped
            out.limit_hit = True
    if status == _OVERFLOW:
        raise NativeOverflow("a value left the 64-bit range")
    if status == _MEMORY_LIMIT and limits.max_memory_mb is not None:
        out.stopped = memory_limit(limits.max_memory_mb)
        out.limit_hit = True
    elif status == _MEMORY:
        out.stopped = OUT_OF_MEMORY
        out.limit_hit = True
    elif status == _STATES:
        out.stopped = state_limit(limits.max_states)
        out.limit_hit = True
    out.states = int(lib.s_stat(handle, 0))
    out.transitions = int(lib.s_stat(handle, 1))
    out.max_depth = int(lib.s_stat(handle, 2))
    if lib.s_stat(handle, 3) and out.stopped is None:
        out.stopped = depth_limit(limits.max_depth)
        out.limit_hit = True
    run = NativeRun(
        out,
        store_bytes=int(lib.s_stat(handle, 4)),
        state_bytes=8 * int(lib.s_stat(handle, 8)),
        chains=int(lib.s_stat(handle, 5)),
        threads=int(lib.s_stat(handle, 9)),
    )
    if store == "tree":
        run.tree_nodes = list(
            itertools.takewhile(
                lambda n: n >= 0, (int(lib.s_tree_nodes(handle, i)) for i in itertools.count())
            )
        )
    if reducing:
        run.reduced = out.reduced = int(lib.s_stat(handle, 10))
    if run.threads > 1:
        run.thread_cpu_s = [float(lib.s_thread_cpu(handle, i)) for i in range(run.threads)]
    if store == "bitstate":
        counts = ffi.new("int64_t[5]")
        lib.s_bitstate_counts(handle, counts)
        run.coverage = bitstate_coverage(list(counts), bitstate_bits, hash_functions)
    names = [p.name for p in sem.properties] + [NO_MODEL_ERROR, NO_DEADLOCK]
    rec = ffi.new("int64_t[7]")
    first: list[tuple[str, int, int, int]] = []  # property, node, label, depth
    for slot, name in enumerate(names):
        lib.s_violation(handle, slot, rec)
        count, node, label, kind, a, b, depth = (int(x) for x in rec)
        if not count:
            continue
        if kind:
            chain = _chain(lib, ffi, handle, ncmd, label)
            msg, _prop = failure_message(sem.system, sem.properties, chain[-1], kind, a, b)
        elif name == NO_DEADLOCK:
            msg = "deadlock: no command is enabled"
        else:
            p = sem.properties[slot]
            msg = f"{p.kind} '{p.name}' violated"
        out.violations[name] = Violation(name, [], msg, count)
        if label >= 0:
            run.failing.add(name)
        first.append((name, node, label, depth))
    if out.violations and out.stopped is None and not keep_going:
        name = next(iter(out.violations))
        out.stopped = f"stopped at the first violation ({name})"
    if store == "exact":
        for name, node, label, _depth in first:
            buf = ffi.new("uint32_t[]", max(1, out.max_depth + 1))
            n = lib.s_path(handle, node, buf, out.max_depth + 1)
            labels = list(reversed(ffi.unpack(buf, n)))
            if label >= 0:
                labels.append(label)
            run.paths[name] = [_chain(lib, ffi, handle, ncmd, x) for x in labels]
    out.time_s = time.monotonic() - start
    return run


def bitstate_coverage(counts: list[int], log2_bits: int, k: int) -> BitStateCoverage:
    """The coverage of a C bitstate store of ``2**log2_bits`` bits and ``k`` hash functions
    from its five counts (``s_bitstate_counts``, ``l_bitstate_counts``: keys stored, lookups
    that matched, sampled new states, certain false matches among the sampled lookups, bits
    set), as :class:`~absmc.kernel.explore.store.BitStateStore` states it."""
    stored, matched, sampled, observed, ones = (int(x) for x in counts)
    m = 1 << log2_bits
    fill = ones / m
    return BitStateCoverage(
        hash_factor=m / stored if stored else math.inf,
        fill=fill,
        matched=matched,
        sampled=sampled + observed,
        observed_false_matches=observed,
        union_bound=(stored + 1) * fill**k,
    )


def tree_leaves(layout: Layout) -> list[int]:
    """The 32-bit halves of the packed state (``2 * word + 1`` for a word's high half, in
    order) that some field of ``layout`` uses: the tree store's leaves (unused bits would only
    add inner nodes that copy their sibling)."""
    used: set[int] = set()
    for f in layout.fields:
        # a field wider than 64 bits starts at bit 0 of its word and goes on in the next ones
        start = 64 * f.word + (0 if f.width > 64 else f.shift)
        if f.width > 0:
            used.update(range(start // 32, (start + f.width - 1) // 32 + 1))
    return sorted(used)


def relabel(sem: Semantics, chains: list[tuple[int, ...]], failing: bool) -> list[int]:
    """A path given as command sequences, as labels of ``sem`` (found by executing it from the
    initial state; with ``failing`` the last sequence is a failure, not a step). Raises
    ``ValueError`` when a step is not among ``sem``'s."""
    state: State = sem.initial
    labels: list[int] = []
    for k, chain in enumerate(chains):
        steps, fails = sem.successors(state)
        if failing and k == len(chains) - 1:
            found = next((f.label for f in fails if sem.commands_of(f.label) == chain), None)
            if found is None:
                raise ValueError(f"step {k + 1}: no failure of commands {chain}")
            labels.append(found)
            break
        hit = next(((lab, t) for lab, t in steps if sem.commands_of(lab) == chain), None)
        if hit is None:
            raise ValueError(f"step {k + 1}: commands {chain} are not a step")
        labels.append(hit[0])
        state = hit[1]
    return labels


def omission_probability(states: int) -> float:
    """The probability that two of ``states`` distinct states share a 64-bit hash (so that the
    hash-compact store omitted one): ``1 - exp(-n(n-1)/2^65)``."""
    return -math.expm1(-states * (states - 1) / 2.0**65)
