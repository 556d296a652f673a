"""αSEARCH: concrete search with abstract matching (paper 000, Fig. 2), on the kernel's search.

Concrete commands are executed; only ``α(s)`` is stored (a keyed store). For each explored
state and *each* command the precision checks of :mod:`absmc.engines.under.checks` collect new
predicates. Every concrete state generated is a real reachable state, so any violation found
is a real error (its path is replayed before it is reported).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from absmc.codegen.python import CompiledSystem
from absmc.engines.under.abstraction import Abstraction, AbstractState
from absmc.engines.under.checks import PrecisionChecks
from absmc.ir.expr import Expr
from absmc.ir.steps import State, Successors
from absmc.ir.system import STATE_PROPERTY_KINDS
from absmc.kernel.explore.search import SearchHooks, Violation, search
from absmc.kernel.explore.store import KeyedStore
from absmc.kernel.run.options import Limits, Order, Progress

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


class _PrecisionHooks(SearchHooks):
    """αSEARCH's per-state work as hooks of the kernel's search (Fig. 2, lines 3-9): the
    labelling checks when a state is expanded, then for *each* command in order the guard
    checks (disabled commands) or the guard and exactness checks (enabled ones)."""

    def __init__(
        self,
        compiled: CompiledSystem,
        abstraction: Abstraction,
        checks: PrecisionChecks | None,
        run: SearchRun,
        track_ranges: bool,
    ) -> None:
        self.system = compiled.system
        self.commands = compiled.system.commands
        self.key = abstraction.key
        self.checks = checks
        self.run = run
        self.track_ranges = track_ranges
        self.state_props = [p for p in compiled.properties if p.kind in STATE_PROPERTY_KINDS]
        self.transitions: set[tuple[AbstractState, int, AbstractState]] = set()
        self.data_idx = [self.system.index_of[v.name] for v in self.system.data_vars]
        self.ranges: dict[AbstractState, list[list[int]]] = {}
        # per node being expanded: its state, abstract state and the next command to check
        self.current: dict[int, tuple[State, AbstractState, int]] = {}

    def refine(self, atoms: tuple[Expr, ...], ci: int | None, a: AbstractState | None) -> None:
        for atom in atoms:
            self.run.refinements.append(Refinement(atom, ci, a))

    def note_range(self, a: AbstractState, s: State) -> None:
        r = self.ranges.get(a)
        if r is None:
            self.ranges[a] = [[s[i], s[i]] for i in self.data_idx]
            return
        for slot, i in zip(r, self.data_idx, strict=True):
            x = s[i]
            if x < slot[0]:
                slot[0] = x
            elif x > slot[1]:
                slot[1] = x

    def expanded(self, node: int, state: State, steps: Successors) -> None:
        a = self.key(state)
        if self.track_ranges and node == 0:
            self.note_range(a, state)
        if self.checks is not None:
            for prop in self.state_props:
                self.refine(self.checks.label(a, prop), None, None)
        self.current[node] = (state, a, 0)

    def _disabled_until(self, node: int, stop: int) -> tuple[State, AbstractState]:
        """Guard checks of the disabled commands from the node's cursor up to ``stop``."""
        s, a, nxt = self.current[node]
        if self.checks is not None:
            for cmd in self.commands[nxt:stop]:
                self.refine(self.checks.disabled(a, cmd), cmd.index, a)
        self.current[node] = (s, a, max(nxt, stop + 1))
        return s, a

    def transition(self, node: int, label: int, target: State) -> None:
        s, a = self._disabled_until(node, label)
        self.run.concrete_states += 1
        a2 = self.key(target)
        checks = self.checks
        if checks is not None and label < len(self.commands):
            cmd = self.commands[label]
            self.refine(checks.enabled(a, cmd), label, a)
            found = checks.exactness(a, cmd, a2)
            if found:
                sources = self.run.inexact.setdefault(label, [])
                if len(sources) < _SOURCES_KEPT and s not in sources:
                    sources.append(s)
            self.refine(found, label, a)
        self.transitions.add((a, label, a2))
        if self.track_ranges:
            self.note_range(a2, target)

    def finished(self, node: int, state: State) -> None:
        self._disabled_until(node, len(self.commands))
        del self.current[node]


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
    progress: Callable[[Progress], None] | None = None,
) -> SearchRun:
    """One αSEARCH(M, Φ) (Fig. 2) over ``compiled`` with abstract matching by ``abstraction``:
    the kernel's search with a :class:`~absmc.kernel.explore.store.KeyedStore` on
    ``abstraction.key``, every generated concrete state checked against the properties, and the
    precision checks as search hooks.

    ``checks=None`` skips the precision checks (the range store refines from value ranges
    instead: ``track_ranges`` records, per abstract state, each data variable's minimum and
    maximum over the concrete states matched to it — Kudra & Mercer's scheme). ``order`` is
    breadth-first or depth-first (recursive order: a new successor is explored before the next
    command of its parent). Stops at the first violation unless ``keep_going``;
    ``limits.max_states`` bounds stored abstract states, ``deadline`` is a ``time.monotonic()``
    instant; ``progress`` is called about once a second. Never raises for limits: ``stopped``
    says why the search is incomplete.
    """
    run = SearchRun()
    hooks = _PrecisionHooks(compiled, abstraction, checks, run, track_ranges)
    outcome = search(
        compiled,
        KeyedStore(abstraction.key),
        order=order,
        limits=limits or Limits(),
        keep_going=keep_going,
        check_deadlock=check_deadlock,
        progress=progress,
        hooks=hooks,
        check_every_state=True,
        deadline=deadline,
        clock_every=1,
    )
    if track_ranges:
        names = [v.name for v in compiled.system.data_vars]
        for a, r in hooks.ranges.items():
            for name, (lo, hi) in zip(names, r, strict=True):
                if lo != hi:
                    run.merged.append((a, name, lo))
    run.violations = outcome.violations
    run.stopped = outcome.stopped
    run.abstract_states = outcome.states
    run.abstract_transitions = len(hooks.transitions)
    run.max_depth = outcome.max_depth
    run.time_s = outcome.time_s
    return run
