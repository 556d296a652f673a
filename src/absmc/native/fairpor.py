"""Safe locations for the LTL product search under weak fairness (SPIN's ``-f``): the safe
locations of :func:`absmc.ir.dependency.safe_conditions` whose steps cannot change whether
another process has an enabled command (docs/reductions.md, "Weak fairness").

The weak-fairness counter (:mod:`absmc.kernel.ltl.fairness`) reads, per state, which processes
are blocked. A reduced search moves an ample step ``a`` of process ``T`` ahead of other
processes' steps; the proof that the reduced product keeps a weakly fair accepting cycle
(docs/reductions.md) needs that ``a`` leaves every other process's blocked status as it was, in
every state where ``a`` is enabled. The safe-location analysis allows more than that: a command
of another process whose guard pins ``T``'s program counter to the location ``a`` leads to, a
send to ``T``'s ``xr`` channel that ``a``'s receive makes room for, a receive from ``T``'s ``xs``
channel that ``a``'s send fills, another process's ``timeout``. Those locations are dropped here
(conservatively: by the variables read, not by their values).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from absmc.ir.dependency import CommandDeps, Event, command_dependencies
from absmc.ir.expr import Expr, as_const
from absmc.ir.system import Command, System

__all__ = ["SafeConditions", "fair_safe_conditions"]

#: per process name, its safe locations, each with its condition
SafeConditions = Mapping[str, Mapping[int | None, Expr]]


def fair_safe_conditions(
    system: System, conds: SafeConditions
) -> dict[str, dict[int | None, Expr]]:
    """The entries of ``conds`` (per process name, safe location -> condition, as
    :func:`~absmc.ir.dependency.safe_conditions` returns them) at which no step of the process
    can enable or disable a command of another process: the commands of the location (with an
    ``atomic`` chain, every command of the process) write no variable that an event of another
    process's command reads (its guard, right-hand sides, model-error conditions), and move the
    process's program counter only between values on which every ``pc == k`` / ``pc != k`` test
    of another process agrees; a process is dropped altogether when another process has a
    ``timeout`` command (it is enabled by every other process becoming blocked). A process left
    with no location is left out."""
    deps = command_dependencies(system)
    cmds = system.commands
    pc_of = {p.name: p.pc for p in system.processes}
    # per variable, the events of each process that read or test it
    readers: dict[str, list[tuple[str, Event]]] = {}
    for d in deps:
        for ev in d.events:
            for v in ev.reads | ev.tests.keys():
                readers.setdefault(v, []).append((d.process, ev))
    timeouts = {c.process for c in cmds if "timeout" in c.flags}
    out: dict[str, dict[int | None, Expr]] = {}
    for name, locs in conds.items():
        if timeouts - {name}:
            continue
        pc = pc_of[name]
        mine = [d for d in deps if d.process == name]
        kept = {
            loc: cond
            for loc, cond in locs.items()
            if _keeps_others(cmds, mine, name, pc, loc, readers)
        }
        if kept:
            out[name] = kept
    return out


def _keeps_others(
    commands: Sequence[Command],
    mine: list[CommandDeps],
    name: str,
    pc: str | None,
    loc: int | None,
    readers: Mapping[str, list[tuple[str, Event]]],
) -> bool:
    """Whether the steps of process ``name`` at ``loc`` leave every other process's commands
    enabled or disabled as they were (see :func:`fair_safe_conditions`)."""
    here = [d for d in mine if d.location is None or d.location == loc]
    chain = any(commands[d.index].exclusive is not None for d in here)
    group = mine if chain else here
    writes = frozenset().union(*(d.writes for d in group))
    # the pc values a step from here can leave the process at (None: not known statically)
    targets: set[int] | None = set() if loc is None else {loc}
    for d in group:
        for v, e in commands[d.index].updates:
            if v != pc or targets is None:
                continue
            k = as_const(e)
            if k is None or chain:
                targets = None
            else:
                targets.add(k)
    for v in writes:
        for who, ev in readers.get(v, ()):
            if who == name:
                continue
            if v != pc or v in ev.reads or targets is None:
                return False
            if any(k in targets for _, k in ev.tests[v]):
                return False
    return True
