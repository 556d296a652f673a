"""Dependency information per command, and SPIN's *safe* locations for partial-order reduction.

The model interface's dependency information (issue 23, after LTSmin's PINS dependency matrix):
for every command (transition group) of a :class:`~absmc.ir.system.System` its process, its
program-counter location (the ``pc == k`` conjunct of its guard), its read set (guard, update
right-hand sides, ``asserts`` and ``errors`` conditions) and its write set (the assigned
variables). Arrays and channels need nothing special: the front ends encode them as ordinary
state variables (an array as one variable per element, read by ``select``; a Promela channel as
``c#len`` and packed ``c#data`` words), so a read or write of either is a read or write of those
variables.

From it, :func:`safe_locations` decides, per process and location, whether the location is
*safe* in the sense of SPIN's partial-order reduction (Holzmann & Peled, "An improvement in
formal verification", FORTE 1994, §3; Clarke, Grumberg, Peled, *Model Checking*, ch. 10,
conditions C0–C2): every command of the process at that location

* reads and writes only variables no command of another process can read or write (write) while
  the process is at that location — another process's command, or one of its model-error
  conditions, whose guard has a conjunct ``pc_P == k`` with ``k`` not this location is disabled
  there and does not count (that is how process creation and SPIN's death order, which read and
  write a process's ``pc`` and locals only while it is not running, leave its locations safe);
* is not a ``timeout`` command and starts no exclusive (atomic) chain, and no command of another
  process hands exclusive control to this process;
* writes no variable a *visible* expression reads (the checked state properties: invariants,
  unreachable conditions).

So all commands of a safe location, enabled or not, are independent of every command another
process can execute while the process stays there, and none of them can be enabled or disabled
by another process: the enabled commands of that process form an ample set (C0, C1) that is
invisible (C2); the search adds the cycle proviso (C3, :mod:`absmc.kernel.por`). Soundness over
reduction: anything not understood makes a location unsafe.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from absmc.ir.expr import Const, Expr, Op, Var, conjuncts
from absmc.ir.system import STATE_PROPERTY_KINDS, Command, Property, System

__all__ = ["CommandDeps", "Event", "command_dependencies", "reads_of", "safe_locations"]


def reads_of(exprs: Iterable[Expr]) -> frozenset[str]:
    """The names of the variables ``exprs`` read (a walk over the expression DAG, each shared
    node once)."""
    out: set[str] = set()
    seen: set[int] = set()
    stack = list(exprs)
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, Var):
            out.add(e.name)
        elif isinstance(e, Op):
            stack.extend(e.args)
    return frozenset(out)


def pc_tests(
    e: Expr, pcs: frozenset[str]
) -> tuple[dict[str, tuple[tuple[str, int], ...]], list[Expr]]:
    """The atoms of ``e`` (under ``&& || ! =>``) that compare a program counter of ``pcs`` with
    a constant (``pc == k``, ``pc != k``, either way round), as ``{pc name: ((op, k), ...)}``,
    and the other atoms."""
    tests: dict[str, list[tuple[str, int]]] = {}
    rest: list[Expr] = []
    stack = [e]
    seen: set[int] = set()
    while stack:
        c = stack.pop()
        if id(c) in seen:
            continue
        seen.add(id(c))
        if isinstance(c, Op) and c.op in ("&&", "||", "!", "=>"):
            stack.extend(c.args)
            continue
        if isinstance(c, Op) and c.op in ("==", "!=") and len(c.args) == 2:
            a, b = c.args
            if isinstance(b, Var) and isinstance(a, Const):
                a, b = b, a
            if isinstance(a, Var) and isinstance(b, Const) and a.name in pcs:
                tests.setdefault(a.name, []).append((str(c.op), int(b.value)))
                continue
        rest.append(c)
    return {k: tuple(v) for k, v in tests.items()}, rest


def pc_conjuncts(e: Expr, pcs: frozenset[str]) -> dict[str, int]:
    """The ``pc == k`` (or ``k == pc``) top-level conjuncts of ``e`` for the program counters
    ``pcs``: ``{pc name: k}`` (a pc constrained twice to different values keeps the first)."""
    out: dict[str, int] = {}
    for c in conjuncts(e):
        if isinstance(c, Op) and c.op == "==" and len(c.args) == 2:
            a, b = c.args
            if isinstance(b, Var) and isinstance(a, Const):
                a, b = b, a
            if isinstance(a, Var) and isinstance(b, Const) and a.name in pcs:
                out.setdefault(a.name, int(b.value))
    return out


@dataclass(frozen=True, slots=True)
class Event:
    """One way a command acts: executing it (``reads``: guard, right-hand sides, assertions;
    ``writes``: assigned variables) or failing one of its model-error conditions (``reads``: the
    condition; no writes). ``pcs``: the program counters the event's condition pins to one
    value (``{pc name: k}``): elsewhere it cannot happen. ``tests``: the program counters the
    condition reads only in atoms ``pc == k`` / ``pc != k`` under ``&& || ! =>`` (``{pc name:
    ((op, k), ...)}``; such a pc is not in ``reads``): a move of that process between two
    locations that agree on every test does not change the event."""

    reads: frozenset[str]
    writes: frozenset[str]
    pcs: Mapping[str, int]
    tests: Mapping[str, tuple[tuple[str, int], ...]]


@dataclass(frozen=True, slots=True)
class CommandDeps:
    """Dependency information of one command: ``index`` into ``System.commands``, its
    ``process``, its ``location`` (the value of its process's pc in its guard; ``None`` when
    the process has no pc or the guard does not pin it: then every location of the process),
    ``reads``/``writes`` (variable names, over all its events) and its ``events``."""

    index: int
    process: str
    location: int | None
    reads: frozenset[str]
    writes: frozenset[str]
    events: tuple[Event, ...]


def command_dependencies(system: System) -> tuple[CommandDeps, ...]:
    """The dependency information of every command of ``system``, in command order."""
    pc_of = {p.name: p.pc for p in system.processes}
    pcs = frozenset(pc for pc in pc_of.values() if pc is not None)
    return tuple(_deps(c, pc_of[c.process], pcs) for c in system.commands)


def _event(cond: Expr, more: list[Expr], writes: frozenset[str], pcs: frozenset[str]) -> Event:
    tests, rest = pc_tests(cond, pcs)
    reads = reads_of([*rest, *more])
    only = {k: v for k, v in tests.items() if k not in reads}
    return Event(reads | (tests.keys() - only.keys()), writes, pc_conjuncts(cond, pcs), only)


def _deps(c: Command, pc: str | None, pcs: frozenset[str]) -> CommandDeps:
    more = [*(e for _, e in c.updates), *(e for _, e in c.asserts)]
    main = _event(c.guard, more, c.assigned, pcs)
    events = [main]
    for cond, _ in c.errors:
        events.append(_event(cond, [], frozenset(), pcs))
    location = main.pcs.get(pc) if pc is not None else None
    reads = frozenset().union(*(e.reads | e.tests.keys() for e in events))
    return CommandDeps(c.index, c.process, location, reads, c.assigned, tuple(events))


def visible_variables(properties: Iterable[Property]) -> frozenset[str]:
    """The variables the state properties among ``properties`` read (the visibility condition
    concerns them only: assertions and model errors are failures of commands, seen in every
    expanded state whatever the ample set)."""
    return reads_of(p.expr for p in properties if p.kind in STATE_PROPERTY_KINDS)


def safe_locations(
    system: System, visible: frozenset[str] = frozenset()
) -> dict[str, frozenset[int | None]]:
    """Per process name, its safe locations (see the module docstring): pc values, or ``None``
    for a process without a pc whose commands are all safe. ``visible``: the variables the
    checked state properties read (:func:`visible_variables`). A process with no safe location
    is left out."""
    deps = command_dependencies(system)
    pc_of = {p.name: p.pc for p in system.processes}
    handed = {c.exclusive for c in system.commands if c.exclusive not in (None, c.process)}
    # per variable, the events that write it and the events that read it, with their process
    writers: dict[str, list[tuple[str, Event]]] = {}
    readers: dict[str, list[tuple[str, Event]]] = {}
    testers: dict[str, list[tuple[str, Event]]] = {}
    for d in deps:
        for ev in d.events:
            for v in ev.writes:
                writers.setdefault(v, []).append((d.process, ev))
            for v in ev.reads:
                readers.setdefault(v, []).append((d.process, ev))
            for v in ev.tests:
                testers.setdefault(v, []).append((d.process, ev))
    out: dict[str, frozenset[int | None]] = {}
    for proc in system.processes:
        if proc.name in handed:
            continue
        mine = [d for d in deps if d.process == proc.name]
        pc = pc_of[proc.name]
        if pc is None:
            locations: list[int | None] = [None]
        else:
            locations = [*sorted({d.location for d in mine if d.location is not None})]
            if not locations:
                continue
        safe: set[int | None] = set()
        for loc in locations:
            here = [d for d in mine if d.location is None or d.location == loc]
            if _safe(system, here, proc.name, pc, loc, visible, (writers, readers, testers)):
                safe.add(loc)
        if safe:
            out[proc.name] = frozenset(safe)
    return out


def _safe(
    system: System,
    here: list[CommandDeps],
    process: str,
    pc: str | None,
    loc: int | None,
    visible: frozenset[str],
    index: tuple[Mapping[str, list[tuple[str, Event]]], ...],
) -> bool:
    writers, readers, testers = index
    targets: set[int] | None = set()  # the locations the commands lead to (None: unknown)
    for d in here:
        c = system.commands[d.index]
        if "timeout" in c.flags or c.exclusive is not None:
            return False
        to = c.update_map().get(pc) if pc is not None else None
        if to is not None and targets is not None:
            if isinstance(to, Const):
                targets.add(int(to.value))
            else:
                targets = None
    reads = frozenset().union(*(d.reads for d in here))
    writes = frozenset().union(*(d.writes for d in here))
    if writes & visible:
        return False

    def possible(ev: Event) -> bool:
        # an event of another process that cannot happen while this process is at ``loc``
        return pc is None or loc is None or ev.pcs.get(pc, loc) == loc

    for v in reads | writes:
        for who, ev in writers.get(v, ()):
            if who != process and possible(ev):
                return False
    for v in writes:
        for who, ev in readers.get(v, ()):
            if who != process and possible(ev):
                return False
        for who, ev in testers.get(v, ()):
            if who == process or not possible(ev):
                continue
            # a test of this process's pc that no move from loc changes does not count
            if v != pc or targets is None:
                return False
            if any(k == loc or k in targets for _, k in ev.tests[v]):
                return False
    return True
