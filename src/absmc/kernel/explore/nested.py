"""Acceptance cycles by a nested depth-first search, as an extension of the one search.

The outer search is :func:`absmc.kernel.explore.search.search` (DFS) over a product
(:class:`~absmc.kernel.ltl.product.ProductSemantics`); :class:`NestedDfs` is its
:class:`~absmc.kernel.explore.search.SearchHooks`. When an accepting product state leaves the outer
stack (post-order, :meth:`SearchHooks.finished`), a second DFS starts from it (Courcoubetis,
Vardi, Wolper, Yannakakis, "Memory-efficient algorithms for the verification of temporal
properties", 1992) with SPIN's improvement (Holzmann, Peled, Yannakakis, "On nested depth first
search", 1996): the second search stops as soon as it reaches *any* state on the outer stack,
which reaches the seed, so the cycle through the seed is closed; and, as SPIN's first search, a
step of the outer search back to a state on its stack closes a cycle at once when its source or
target is accepting (:meth:`NestedDfs.transition`, with ``early``). The second searches share one
store of their own (a state visited by one is never searched again: linear time); with a
bitstate outer store it is a second bit array (SPIN keeps two bits per state).

A violation is a *lasso*: the labels from the initial state to the seed (the outer stack), then
the second search's labels to the stack state closing the cycle; ``cycle_start`` is the depth
of that stack state (the index, in the path's states, where the cycle starts). The first
lasso stops the search even when it keeps going past other violations (SPIN's ``-a``: the
search for one claim ends at its first acceptance cycle).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from absmc.ir.steps import Expansion, State
from absmc.kernel.explore.search import CLOCK_EVERY, Search, SearchHooks
from absmc.kernel.explore.store import Store


@dataclass
class Lasso:
    """A path (product labels) whose final state equals the state at index ``cycle_start``."""

    path: list[int]
    cycle_start: int


@dataclass
class NestedDfs(SearchHooks):
    """The nested search as hooks of the outer DFS (see the module docstring).

    ``successors`` and ``accepting`` describe the product; ``prop`` and ``message`` are what a
    found cycle is recorded as (:meth:`Search.record`); ``store`` is the second searches'
    store. ``lasso`` holds the first cycle found; ``states`` counts the states the second
    searches stored. ``early``: also close cycles in the outer search (:meth:`transition`)."""

    successors: Callable[[State], Expansion]
    accepting: Callable[[State], bool]
    prop: str
    message: str
    store: Store
    lasso: Lasso | None = None
    states: int = 0
    early: bool = False
    on_stack: dict[State, int] = field(default_factory=dict)
    search: Search | None = None

    def attach(self, search: Search) -> None:
        self.search = search

    def expanded(self, node: int, state: State, steps: list[tuple[int, State]]) -> None:
        self.on_stack[state] = node

    def transition(self, node: int, label: int, target: State) -> None:
        """A step of the outer search that closes a cycle through its own stack: when the
        cycle passes an accepting state (the step's source or target), it is a lasso at once
        (SPIN's early detection in the first search: Schwoon and Esparza, "A note on on-the-fly
        verification algorithms", TACAS 2005; Gastin, Moro, Zeitoun 2004)."""
        if not self.early:
            return
        j = self.on_stack.get(target)
        if j is None or self.lasso is not None:
            return
        search = self.search
        assert search is not None
        if self.accepting(target) or self.accepting(search.stack_states[node]):
            self.lasso = Lasso([*search.path_to(node), label], j)
            search.record(self.prop, self.lasso_path, self.message, stop=True)

    def finished(self, node: int, state: State) -> None:
        if self.accepting(state):
            self.cycle_from(node, state)
        self.on_stack.pop(state, None)

    def lasso_path(self) -> list[int]:
        """The first lasso's labels (for :meth:`Search.record`)."""
        return list(self.lasso.path) if self.lasso is not None else []

    def cycle_from(self, node: int, seed: State) -> None:
        """The second search from ``seed`` (at outer stack depth ``node``)."""
        search = self.search
        assert search is not None
        successors, on_stack, insert = self.successors, self.on_stack, self.store.insert
        labels: list[int] = []
        stack = [iter(successors(seed)[0])]
        count = 0
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                stack.pop()
                if labels:
                    labels.pop()
                continue
            label, t = nxt
            j = on_stack.get(t)
            if j is not None:
                if self.lasso is None:
                    self.lasso = Lasso([*search.path_to(node), *labels, label], j)
                search.record(self.prop, self.lasso_path, self.message, stop=True)
                return
            if not insert(t):
                continue
            self.states += 1
            count += 1
            if not count % CLOCK_EVERY:
                search.tick(len(search.stack_states) + len(labels))
            labels.append(label)
            stack.append(iter(successors(t)[0]))
