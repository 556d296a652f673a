"""What the order of Promela's process slots tells partial-order reduction
(:mod:`absmc.ir.dependency`; docs/reductions.md, "A death and a run racing for a slot" and
"Two runs racing for a slot").

A ``run`` takes the lowest free slot and only the youngest process dies (SPIN's death order),
so the taken slots are always a prefix of ``System.processes`` (:func:`slots_prefix` checks
it on the commands). From it: a condition that finds slot ``j`` free excludes every later slot
taken (:func:`ordered_apart`, :func:`after_taken`); a slot filled at most once is not filled
again (:func:`closure`); two processes of a proctype created at most once are never alive
together (:func:`alone`); and where pids are not observed, a death and a ``run`` (:func:`raced`)
or two creators' ``run`` statements of processes that never end (:func:`swapped`) may go in either
order, the orders reaching states equal up to renumbering the slots.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from absmc.ir.expr import Const, Expr, conjuncts, var_const_test
from absmc.ir.system import Command, System

if TYPE_CHECKING:
    from absmc.ir.dependency import CommandDeps, Event, _Context

__all__ = [
    "after_taken",
    "alone",
    "closure",
    "either",
    "ordered_apart",
    "pc_edges",
    "raced",
    "slots_prefix",
    "starts",
    "swapped",
]

#: SPIN's limit on the number of processes (the Promela front end's ``MAX_PROCESSES``)
MAX_PROCESSES = 255

_Skip = Callable[[str, "Event", str], bool]


def either(a: _Skip, b: _Skip) -> _Skip:
    """The events either rule leaves out."""
    return lambda who, ev, v: a(who, ev, v) or b(who, ev, v)


def pc_conjuncts(e: Expr, pcs: frozenset[str]) -> dict[str, int]:
    """The ``pc == k`` (or ``k == pc``) top-level conjuncts of ``e`` for the program counters
    ``pcs``: ``{pc name: k}`` (a pc constrained twice to different values keeps the first)."""
    out: dict[str, int] = {}
    for c in conjuncts(e):
        test = var_const_test(c)
        if test is not None and test[0] == "==" and test[1] in pcs:
            out.setdefault(test[1], test[2])
    return out


def _facts(guard: Expr, slot: Mapping[str, int]) -> dict[str, list[tuple[str, int]]]:
    """The top-level conjuncts ``pc == k`` / ``pc != k`` of ``guard`` on the slots' pcs."""
    facts: dict[str, list[tuple[str, int]]] = {}
    for a in conjuncts(guard):
        test = var_const_test(a)
        if test is not None and test[1] in slot:
            facts.setdefault(test[1], []).append((test[0], test[2]))
    return facts


def _taken(facts: Mapping[str, list[tuple[str, int]]], name: str) -> bool:
    return any((o == "!=" and k == 0) or (o == "==" and k != 0) for o, k in facts.get(name, ()))


def slots_prefix(system: System) -> bool:
    """Are the taken process slots always a prefix of ``System.processes`` (a process's pc
    is 0 exactly when its slot is free)? Checked, not assumed (an inductive invariant): the
    initial state's non-zero program counters are a prefix, every command that moves a pc
    off 0 (its guard pins it to 0) asks that the previous slot be taken (a conjunct ``pc !=
    0`` or ``pc == k``, ``k != 0``), every command that sets a pc to 0 asks that the next slot
    be free or is the last slot's, and every write of a pc is a constant. Promela's ``run``
    (the lowest free slot) and SPIN's death order (only the youngest process dies) give it."""
    pcs = [p.pc for p in system.processes]
    if not pcs or any(x is None for x in pcs):
        return False
    taken = [system.var(str(x)).init != 0 for x in pcs]
    if any(taken[k] and not taken[k - 1] for k in range(1, len(taken))):
        return False
    slot = {str(x): k for k, x in enumerate(pcs)}
    for c in system.commands:
        facts = _facts(c.guard, slot)
        for n, e in c.updates:
            if n not in slot:
                continue
            if not isinstance(e, Const):
                return False
            k = slot[n]
            if e.value != 0:
                free = ("==", 0) in facts.get(n, ())
                if not _taken(facts, n) and not (
                    free and (k == 0 or _taken(facts, str(pcs[k - 1])))
                ):
                    return False
            elif k + 1 < len(pcs) and ("==", 0) not in facts.get(str(pcs[k + 1]), ()):
                return False
    return True


def after_taken(c: Command, slot_of: Mapping[str, int]) -> Callable[[CommandDeps], bool] | None:
    """Which commands an exclusive chain started by ``c`` can go on with, as far as the slot
    order tells (the taken slots a prefix, :func:`slots_prefix`): after ``c`` the slots its
    guard finds taken (on a pc it leaves alone) and those it fills stay taken for the rest of
    the chain (only a process's own last step frees a slot, its own), so a command whose
    guard pins an earlier or the same slot free cannot follow (``atomic { run A(); run B() }``:
    after the run into slot 7, no run into slot 6). ``None``: every command can."""
    upd = c.update_map()
    facts = _facts(c.guard, slot_of)
    taken = {slot_of[x] for x in facts if x not in upd and _taken(facts, x)}
    taken |= {
        slot_of[n] for n, e in upd.items() if n in slot_of and isinstance(e, Const) and e.value
    }
    if not taken:
        return None
    last = max(taken)

    def keep(e: CommandDeps) -> bool:
        return not any(
            a == 0 and x in slot_of and slot_of[x] <= last for x, a in e.events[0].pcs.items()
        )

    return keep


def ordered_apart(
    slot_of: Mapping[str, int],
    pin: Mapping[str, int],
    ev: Mapping[str, int],
    cmd: Mapping[str, Expr],
) -> bool:
    """Are a step enabled under the program-counter pins ``pin`` and an event with pins
    ``ev`` (of a command with updates ``cmd``) never enabled together by the slot order, with
    the event unable to enable the step? With the taken slots a prefix (:func:`slots_prefix`),
    slot ``j`` free excludes every later slot taken, and slot ``k`` taken every earlier slot
    free; the event must leave the step's pinned pc off the pinned value (not write it, or
    write another constant): a chain's later ``run`` into the next slot and the process
    already there, whose step's first command pins the earlier slot free."""
    for x, a in pin.items():
        if x not in slot_of:
            continue
        to = cmd.get(x)
        if to is not None and not (isinstance(to, Const) and to.value != a):
            continue
        for y, b in ev.items():
            if y not in slot_of:
                continue
            if (a != 0 and b == 0 and slot_of[y] < slot_of[x]) or (
                a == 0 and b != 0 and slot_of[y] > slot_of[x]
            ):
                return True
    return False


def pc_edges(system: System, pc: str) -> list[tuple[int | None, int]] | None:
    """The moves of ``pc`` by the commands, (from, to) with from ``None`` for any value (the
    guard does not pin it); ``None`` when a command sets it to something other than a
    constant."""

    edges: list[tuple[int | None, int]] = []
    for c in system.commands:
        to = next((e for n, e in c.updates if n == pc), None)
        if to is None:
            continue
        if not isinstance(to, Const):
            return None
        edges.append((pc_conjuncts(c.guard, frozenset([pc])).get(pc), int(to.value)))
    return edges


def closure(edges: Iterable[tuple[int | None, int]], k: int, once: bool) -> set[int] | None:
    """The values from which a pc with moves ``edges`` (:func:`pc_edges`) comes to ``k``
    (``k`` among them); ``None``: every value. ``once``: a slot filled at most once per
    execution (``System.once``) comes from 0 (free) only before it was filled and is not
    filled again after its process ended, so 0 is among the values and no move to or from 0
    counts."""
    moves = [(a, b) for a, b in edges if not (once and 0 in (a, b))]
    out = {k, 0} if once else {k}
    grew = True
    while grew:
        grew = False
        for a, b in moves:
            if b in out:
                if a is None:
                    return None
                if a not in out:
                    out.add(a)
                    grew = True
    return out


def alone(system: System, pc: str | None, loc: int | None) -> list[tuple[str, int, int]]:
    """Where the process with program counter ``pc`` at ``loc`` is one of a proctype created
    at most once in all (``System.singles``): the other slots' pc ranges of that proctype,
    where no process can be meanwhile."""
    if pc is None or loc is None:
        return []
    mine = {t for x, t, lo, hi in system.singles if x == pc and lo <= loc <= hi}
    return [(x, lo, hi) for x, t, lo, hi in system.singles if t in mine and x != pc]


def raced(
    system: System, pid: Mapping[str, int], process: str, pc: str | None, deleting: bool
) -> _Skip | None:
    """Where pids are unobserved (``System.pids_unobserved``, the safety search): which events
    of another process, touching ``v``, the location of ``process`` (program counter ``pc``,
    pid ``k``) being checked may leave out, a death and a ``run`` racing for a slot leading to
    states equal up to processes waiting at their end and the pids (docs/reductions.md, "A
    death and a run racing for a slot"). *Run first*, in a System of fewer than SPIN's 255
    slots: another process's deletion. *Death first*, at a location that deletes the process
    (``deleting``, ``k`` >= 1), when at most 255 processes are ever created
    (``System.max_created``): on ``pc`` and the next slot's program counter only, a ``run``
    into slot ``k + 1`` (its condition pins that slot's pc to 0 and tests ``pc`` only as ``pc
    != 0``), a ``run``'s "no free process slot" error, and any event of a process in a later
    slot (there only after such a ``run``). ``None``: neither applies."""
    k = pid.get(process, 0)
    procs = system.processes
    if pc is None or len(procs) >= MAX_PROCESSES:
        return None
    nxt = procs[k + 1].pc if k + 1 < len(procs) else None
    bounded = system.max_created is not None and system.max_created <= MAX_PROCESSES
    first = deleting and k > 0 and bounded
    mine = frozenset(x for x in (pc, nxt) if x is not None) if first else frozenset()

    def skip(who: str, ev: Event, v: str) -> bool:
        if ev.death:
            return True
        if v not in mine:
            return False
        if pid[who] > k or ev.slot:
            return True
        return (
            nxt is not None
            and ev.pcs.get(nxt) == 0
            and ev.tests.get(pc) == (("!=", 0),)
            and pc not in ev.reads | ev.writes
        )

    return skip


def starts(
    c: Command, pins: Mapping[str, int], slot_of: Mapping[str, int], own: str | None
) -> list[tuple[str, int]] | None:
    """The slots command ``c`` (its guard's pc pins ``pins``; ``own``: its process's pc)
    fills, as (pc variable, the value it sets): every slot pc it moves off 0 (the guard pins it
    to 0); ``None`` when it writes another slot's pc otherwise (a value from a pc not pinned
    to 0, or 0)."""
    out: list[tuple[str, int]] = []
    for n, e in c.updates:
        if n == own or n not in slot_of:
            continue
        if pins.get(n) != 0 or not isinstance(e, Const) or e.value == 0:
            return None
        out.append((n, int(e.value)))
    return out


def swapped(ctx: _Context, chain: list[CommandDeps], process: str) -> _Skip | None:
    """Two creators' ``run`` statements of processes that may trade slots, racing for a slot
    (docs/reductions.md, "Two runs racing for a slot"; the safety search, where the taken
    slots are a prefix): when the step ``chain`` of ``process`` (a location's commands and
    what their exclusive chains go on with) starts processes, each of a proctype in
    ``System.swappable`` and no other, which events of another process, touching ``v``, it may
    leave out: a ``run`` that starts only such processes, and a ``run``'s "no free process
    slot" error (absmc's own limit, in a System of fewer than SPIN's 255 slots), on a slot's
    variable (its pc or a local: the Promela front end names them ``SLOT.``) or one that no
    command, pc test or checked state property reads (the value of ``run`` stored). Either
    order reaches the same state up to the slots of the started processes, which never end,
    and the variables nothing reads. ``None``: the rule does not apply."""
    system = ctx.system
    if not system.swappable or len(system.processes) >= MAX_PROCESSES:
        return None
    ok = system.swappable

    def fills(i: int) -> list[tuple[str, int]] | None:
        c = system.commands[i]
        return starts(c, ctx.deps[i].events[0].pcs, ctx.slot_of, ctx.pc_of.get(c.process))

    found = False
    for d in chain:
        got = fills(d.index)
        if got is None or any(x not in ok for x in got):
            return None
        own = ctx.pc_of.get(process)
        to = system.commands[d.index].update_map().get(own) if own is not None else None
        if isinstance(to, Const) and to.value == 0:
            return None  # a step that ends the process: its death is no run
        found = found or bool(got)
    if not found:
        return None
    readers = ctx.index[1]
    owners = tuple(f"{p.name}." for p in system.processes)

    def free(v: str) -> bool:
        if v in ctx.slot_of or v.startswith(owners):
            return True
        return v not in ctx.visible and not readers.get(v) and v not in ctx.tested

    def skip(who: str, ev: Event, v: str) -> bool:
        if who == process or not free(v):
            return False
        if ev.slot:
            return True
        i = ctx.event_command.get(id(ev))
        if i is None or ev is not ctx.deps[i].events[0]:
            return False
        got = fills(i)
        return got is not None and bool(got) and all(x in ok for x in got)

    return skip
