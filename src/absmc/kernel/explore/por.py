"""Partial-order reduction for the explicit search: ample sets from SPIN's safe locations.

In a state, the ample set is the enabled steps of a process whose current location is safe in
that state (:func:`absmc.ir.dependency.safe_conditions`:
conditions C0–C2 of Clarke, Grumberg & Peled, *Model Checking*, ch. 10; SPIN's choice of a safe
process, Holzmann & Peled 1994, with SPIN's conditional safety of ``xr``/``xs`` channels) and
that has at least one enabled step; without one the state is expanded fully.

The processes are tried from the last declared (the youngest, highest pid) down, as pan's
``do_reach`` does. The cycle proviso is pan's (SPIN 6.5.2 ``Src/pangen1.h``, ``-DSAFETY``:
``tau&32`` marks a preselected process, ``tau&64`` a successor "outside the stack"; without one
pan tries the next safe process, ``goto Resume``, then every process): a state stays reduced when
one step of the group taken reaches a state off the DFS stack (DFS: new, or stored and popped;
BFS with the exact store: inserted after the state; other stores and the threads: new). Every
reduced state then has such a successor, popped before it (or inserted after it, or by it), so
every chain of reduced states ends in a fully expanded one (Valmari's condition for safety). The
search applies it (:func:`absmc.kernel.explore.search.search`, ``reduce=``); this module only
gives the groups. Failures (assertions, model errors) and deadlocks are checked on the full
expansion of every expanded state, so what the reduction preserves is what the search checks:
deadlocks (C0, C1), every command execution reachable in the full graph, hence assertion and
model-error violations (C0, C1, C3), and state properties (visibility, C2).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from absmc.ir.dependency import safe_conditions, visible_variables
from absmc.ir.expr import TRUE
from absmc.ir.steps import State, Successors
from absmc.ir.system import Property, System

__all__ = ["POR", "PRIORITY_NOTE", "AmpleSets", "kept_off_by_priorities"]

#: the name of the reduction in ``--json`` statistics (``"reductions"``)
POR = "partial-order"

#: the result's note when the model's process priorities keep the reduction off
PRIORITY_NOTE = (
    "partial-order reduction is off: with the model's process priorities every command depends"
    " on whether a process of a higher priority is enabled (pan, too, compiles such models with"
    " NOREDUCE)"
)


def kept_off_by_priorities(system: System) -> bool:
    """Does the System have commands whose guards depend on process priorities (the
    ``"priority"`` flag, :class:`absmc.ir.system.Command`)? No location of theirs is safe."""
    return any("priority" in c.flags for c in system.commands)


#: at most this many candidate ample sets per state (the C search's POR_GROUPS)
MAX_GROUPS = 120


class AmpleSets:
    """The ample-set choice for ``system`` when ``properties`` are checked (their state
    properties are the visible ones; ``visible``, when given, names the visible variables
    instead, e.g. with an LTL product's guards, :func:`absmc.kernel.ltl.por.product_visible`).
    ``commands_of(label)`` gives a step label's commands (a chain's first command decides its
    process). ``races``: deaths and runs racing for a slot may go in either order (the safety
    search only: :func:`absmc.ir.dependency.safe_conditions`, docs/reductions.md, "A death and
    a run racing for a slot"). ``active``: some location is safe (when not, :meth:`ample`
    never reduces)."""

    def __init__(
        self,
        system: System,
        properties: tuple[Property, ...],
        commands_of: Callable[[int], tuple[int, ...]],
        visible: frozenset[str] | None = None,
        races: bool = False,
    ) -> None:
        from absmc.codegen.python import compile_expr_fn

        if visible is None:
            visible = visible_variables(properties)
        safe = safe_conditions(system, visible, races=races)
        index = system.index_of
        #: (process position, pc position in the state or -1, {safe pc value: None when
        #: unconditionally safe, else the condition as a function of the state})
        self.rows: list[tuple[int, int, dict[int | None, Callable[[State], Any] | None]]] = []
        pos = {p.name: k for k, p in enumerate(system.processes)}
        for p in system.processes:
            if p.name in safe:
                at = index[p.pc] if p.pc is not None else -1
                conds = {
                    k: None if c == TRUE else compile_expr_fn(system, c)
                    for k, c in safe[p.name].items()
                }
                self.rows.append((pos[p.name], at, conds))
        self._n = len(system.commands)
        self._proc_of_cmd = [pos[c.process] for c in system.commands]
        self._commands_of = commands_of
        self._chain_proc: dict[int, int] = {}
        # SPIN tries the processes from the youngest (highest pid) down (pan's do_reach)
        self.rows.reverse()
        self.active = bool(self.rows)

    def process_of(self, label: int) -> int:
        """The position (in ``System.processes``) of the process a step label belongs to."""
        if label < self._n:
            return self._proc_of_cmd[label]
        p = self._chain_proc.get(label)
        if p is None:
            first = self._commands_of(label)[0]
            p = self._chain_proc[label] = self._proc_of_cmd[first]
        return p

    def safe_processes(self, state: State) -> Iterator[int]:
        """The positions (in ``System.processes``) of the processes at a location safe in
        ``state`` (its condition holds there), youngest first (pan's ``do_reach`` order)."""
        for proc, at, locs in self.rows:
            loc = state[at] if at >= 0 else None
            if loc not in locs:
                continue
            cond = locs[loc]
            if cond is not None and not cond(state):
                continue
            yield proc

    def ample(self, state: State, succ: Successors) -> list[Successors] | None:
        """The groups of ``state``'s enabled steps ``succ`` in the order pan tries them: one
        group per process at a safe location (whose condition holds) with an enabled step,
        youngest first, then the other steps (possibly none); ``None`` when the state is to be
        expanded fully (no such process, or one process has every step). The search takes the
        groups in order and stops after the first one that meets the cycle proviso (pan's
        ``Resume``: a preselected process that fails it makes pan try the next safe one)."""
        if len(succ) < 2:
            return None
        groups: list[Successors] = []
        taken: set[int] = set()
        for proc in self.safe_processes(state):
            if len(groups) == MAX_GROUPS:
                break
            mine = [s for s in succ if self.process_of(s[0]) == proc]
            if not mine:
                continue
            if len(mine) == len(succ):
                return None
            groups.append(mine)
            taken.add(proc)
        if not groups:
            return None
        groups.append([s for s in succ if self.process_of(s[0]) not in taken])
        return groups
