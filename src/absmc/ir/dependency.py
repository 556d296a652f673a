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
* is not a ``timeout`` command nor a ``priority`` one (its guard asks whether processes of a
  higher priority are enabled: Promela's process priorities), starts no exclusive (atomic)
  chain, and no command of another process hands exclusive control to this process;
* writes no variable a *visible* expression reads (the checked state properties: invariants,
  unreachable conditions).

So all commands of a safe location, enabled or not, are independent of every command another
process can execute while the process stays there, and none of them can be enabled or disabled
by another process: the enabled commands of that process form an ample set (C0, C1) that is
invisible (C2); the search adds the cycle proviso (C3, :mod:`absmc.kernel.explore.por`). Soundness
over reduction: anything not understood makes a location unsafe.

:func:`safe_conditions` adds SPIN's *conditionally safe* locations: Promela's exclusive channels
(``xr``/``xs``, :class:`~absmc.ir.system.ChannelClaim`; SPIN's pangen2.c ``has_global`` and
``valTpe``, pangen2.h ``mark_safety``/``retrans``, pan's ``q_cond``), safe in the states where
each channel a command there receives from is non-empty and each it sends to is not full.
With ``races`` (the safety search) and ``System.pids_unobserved``, a death and a ``run`` racing
for a slot count as independent (:meth:`_Context.raced`): the two orders reach states equal up
to renumbering the processes and processes waiting at their end (docs/reductions.md, "A death
and a run racing for a slot").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from itertools import product

from absmc.ir import slot_order
from absmc.ir.derived import on_disk
from absmc.ir.expr import (
    FALSE,
    TRUE,
    Const,
    Expr,
    Op,
    Var,
    as_const,
    conj,
    disj,
    var_const_test,
)
from absmc.ir.steps import GroupDeps
from absmc.ir.system import STATE_PROPERTY_KINDS, ChannelClaim, Command, Property, System

__all__ = [
    "CommandDeps",
    "Event",
    "command_dependencies",
    "group_dependencies",
    "reads_of",
    "safe_conditions",
    "safe_locations",
]


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
        test = var_const_test(c)
        if test is not None and test[1] in pcs:
            tests.setdefault(test[1], []).append((test[0], test[2]))
            continue
        rest.append(c)
    return {k: tuple(v) for k, v in tests.items()}, rest


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
    #: for the model error of an access against an ``xr``/``xs`` claim: (kind, channel id)
    claim: tuple[str, int] | None = None
    #: the model error of a ``run`` that finds no free process slot
    slot: bool = False
    #: the execution of a command that deletes its process (sets its pc to 0)
    death: bool = False


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
    """The dependency information of every command of ``system``, in command order. A read
    that no reachable state can make matter is left out: one under a comparison ``x == k``
    (``ite``, ``&&``) that is false for every value :func:`value_sets` gives ``x`` (a channel
    parameter's branch for a channel no ``run`` passes it)."""
    if _LAST_DEPS and _LAST_DEPS[0][0] is system:
        return _LAST_DEPS[0][1]
    pc_of = {p.name: p.pc for p in system.processes}
    pcs = frozenset(pc for pc in pc_of.values() if pc is not None)
    values = {k: v for k, v in value_sets(system).items() if k not in pcs}
    prune = _Pruner(values)
    out = tuple(_deps(c, pc_of[c.process], pcs, prune) for c in system.commands)
    _LAST_DEPS[:] = [(system, out)]
    return out


#: the last System :func:`command_dependencies` analysed and its result (a run asks for the
#: same System's more than once: the safety search's safe locations, then those under weak
#: fairness, ~0.4 s each on SPIN's mobile1 with its 3,090 commands)
_LAST_DEPS: list[tuple[System, tuple[CommandDeps, ...]]] = []


#: the most values :func:`value_sets` keeps for one variable
MAX_VALUES = 64


def value_sets(system: System) -> dict[str, frozenset[int]]:
    """A flow-insensitive over-approximation of the values of the variables that only ever get
    constants or copies of such variables: ``{name: {initial value, every constant a command
    assigns it, every value of a variable a command copies into it}}`` for each variable that
    no command assigns anything else and no initial constraint mentions (at most
    :data:`MAX_VALUES` values; others are left out). A channel parameter bound by ``run`` to a
    global channel variable that nothing assigns gets that channel's id."""
    vals: dict[str, set[int]] = {v.name: {v.init} for v in system.variables}
    if system.init_constraint is not None:
        for n in reads_of([system.init_constraint]):
            vals.pop(n, None)
    copies: dict[str, set[str]] = {}  # variable -> the variables assigned to it
    for c in system.commands:
        for n, e in c.updates:
            got = vals.get(n)
            if got is None:
                continue
            k = as_const(e)
            if isinstance(e, Var):
                copies.setdefault(n, set()).add(e.name)
            elif k is None or len(got) >= MAX_VALUES:
                del vals[n]
            else:
                got.add(k)
    # a copy x := y gives x every value of y (a least fixpoint; x is left out with y)
    grew = True
    while grew:
        grew = False
        for n, srcs in copies.items():
            got = vals.get(n)
            if got is None:
                continue
            for y in srcs:
                more = vals.get(y)
                if more is None or len(got | more) > MAX_VALUES:
                    del vals[n]
                    grew = True
                    break
                if not more <= got:
                    got |= more
                    grew = True
    return {k: frozenset(v) for k, v in vals.items()}


def _pruned(e: Expr, values: Mapping[str, frozenset[int]]) -> Expr:
    """``e`` with every ``x == k`` (``x != k``) that :func:`value_sets` makes false (true)
    replaced by that constant, and the ``ite``, ``&&`` and ``||`` that then decide taken."""
    return _Pruner(values)(e)


class _Pruner:
    """:func:`_pruned` for ``values``, its memo shared by every expression it is called on
    (the commands of one System share subexpressions: SPIN's mobile1 has 3,090 commands whose
    11,646 conditions a memo per condition walked in 0.5 s). The memo is keyed by ``id``: the
    expressions it is called on must outlive it (those of one System do)."""

    def __init__(self, values: Mapping[str, frozenset[int]]) -> None:
        self.values = values
        self.memo: dict[int, Expr] = {}
        self.keep: list[Expr] = []  # the memo's keys stay alive as long as it

    def __call__(self, e: Expr) -> Expr:
        values = self.values
        if not values:
            return e
        memo = self.memo
        keep = self.keep

        def fixed(x: Expr) -> bool | None:
            if isinstance(x, Op) and x.op in ("==", "!=") and len(x.args) == 2:
                a, b = x.args
                if isinstance(a, Const):
                    a, b = b, a
                if (
                    isinstance(a, Var)
                    and isinstance(b, Const)
                    and a.name in values
                    and b.value not in values[a.name]
                ):
                    return x.op == "!="
            return None

        def go(x: Expr) -> Expr:
            if not isinstance(x, Op):
                return x
            hit = memo.get(id(x))
            if hit is not None:
                return hit
            f = fixed(x)
            res: Expr
            if f is not None:
                res = TRUE if f else FALSE
            else:
                args = tuple(go(a) for a in x.args)
                if x.op == "ite" and isinstance(args[0], Const) and args[0].is_bool:
                    res = args[1] if args[0].value else args[2]
                elif x.op == "&&" and any(isinstance(a, Const) and a == FALSE for a in args):
                    res = FALSE
                elif x.op == "||" and any(isinstance(a, Const) and a == TRUE for a in args):
                    res = TRUE
                elif all(a is b for a, b in zip(args, x.args, strict=True)):
                    res = x
                else:
                    res = Op(x.op, args, x.span)
            memo[id(x)] = res
            keep.append(x)
            return res

        return go(e)


def group_dependencies(system: System) -> tuple[GroupDeps, ...]:
    """The model interface's dependency information (:class:`~absmc.ir.steps.GroupDeps`) of
    every command of ``system``, in command order: :func:`command_dependencies` without the
    events, plus the variables each command shares with another process's commands."""
    deps = command_dependencies(system)
    users: dict[str, set[str]] = {}
    for d in deps:
        for v in d.reads | d.writes:
            users.setdefault(v, set()).add(d.process)
    return tuple(
        GroupDeps(
            d.index,
            d.process,
            d.location,
            d.reads,
            d.writes,
            frozenset(v for v in d.reads | d.writes if users[v] - {d.process}),
        )
        for d in deps
    )


def _event(
    cond: Expr,
    more: list[Expr],
    writes: frozenset[str],
    pcs: frozenset[str],
    prune: _Pruner,
) -> Event:
    tests, rest = pc_tests(prune(cond), pcs)
    reads = reads_of([*rest, *(prune(e) for e in more)])
    only = {k: v for k, v in tests.items() if k not in reads}
    return Event(
        reads | (tests.keys() - only.keys()), writes, slot_order.pc_conjuncts(cond, pcs), only
    )


def _deps(c: Command, pc: str | None, pcs: frozenset[str], prune: _Pruner) -> CommandDeps:
    more = [*(e for _, e in c.updates), *(e for _, e in c.asserts)]
    main = _event(c.guard, more, c.assigned, pcs, prune)
    if pc is not None and _is_zero(c.update_map().get(pc)):
        main = replace(main, death=True)
    events = [main]
    for cond, msg in c.errors:
        ev = _event(cond, [], frozenset(), pcs, prune)
        m = _CLAIM.match(msg)
        if m is not None:
            ev = replace(ev, claim=(m.group(1), int(m.group(2))))
        if msg.startswith("no free process slot for 'run "):
            ev = replace(ev, slot=True)
        events.append(ev)
    location = main.pcs.get(pc) if pc is not None else None
    reads = frozenset().union(*(e.reads | e.tests.keys() for e in events))
    return CommandDeps(c.index, c.process, location, reads, c.assigned, tuple(events))


#: the model error of an access against an ``xr``/``xs`` claim (``claim_message`` in the
#: Promela front end): kind and channel id
_CLAIM = re.compile(r"(xr|xs) assertion violated: access to channel .* \((\d+)\);")


def visible_variables(properties: Iterable[Property]) -> frozenset[str]:
    """The variables the state properties among ``properties`` read (the visibility condition
    concerns them only: assertions and model errors are failures of commands, seen in every
    expanded state whatever the ample set)."""
    return reads_of(p.expr for p in properties if p.kind in STATE_PROPERTY_KINDS)


def forward_commands(system: System) -> tuple[bool, ...]:
    """Per command of ``system`` (command order), whether it is *forward*: it sets its own
    process's pc, and each pc it sets (a rendezvous sets its partner's too, a ``run`` the new
    process's) its guard pins to a location ``k`` (a conjunct ``pc == k``) and it sets to a
    constant of a higher *rank* than ``k``. A pc's ranks order its locations by reverse
    postorder of a depth-first search of its location graph (every command's step from a pinned
    location to a constant one) from its initial value: a step is of lower or equal rank only
    where it closes a cycle of that graph (a back edge: the last step of a loop's body, back to
    its head). Every cycle of the state graph has a step with a command that is not forward:
    along a cycle each pc comes back to its value, and forward commands raise the ranks of the
    pcs they set and change no other pc. So ample sets of forward commands only meet the cycle
    proviso (C3: every cycle has a fully expanded state) whatever the search order: the static
    proviso of Kurshan, Levin, Minea, Peled & Yenigün, "Static partial order reduction", TACAS
    1998 (used by the multi-core LTL search, whose threads need one reduced graph:
    docs/reductions.md, "CNDFS")."""
    pcs = {p.name: p.pc for p in system.processes}
    all_pcs = frozenset(pc for pc in pcs.values() if pc is not None)
    steps: list[tuple[str, dict[str, int], dict[str, int | None]]] = []
    graph: dict[str, dict[int, set[int]]] = {pc: {} for pc in all_pcs}
    for c in system.commands:
        pins = var_conjuncts(c.guard, all_pcs)
        moved = {n: as_const(e) for n, e in c.updates if n in all_pcs}
        for n, k in moved.items():
            if k is not None and n in pins:
                graph[n].setdefault(pins[n], set()).add(k)
                graph[n].setdefault(k, set())
        steps.append((c.process, pins, moved))
    init = {v.name: v.init for v in system.variables if v.name in all_pcs}
    rank = {pc: _reverse_postorder(g, init.get(pc)) for pc, g in graph.items()}
    return tuple(
        pcs[proc] in moved
        and all(
            k is not None and n in pins and rank[n][k] > rank[n][pins[n]] for n, k in moved.items()
        )
        for proc, pins, moved in steps
    )


def _reverse_postorder(graph: Mapping[int, Iterable[int]], root: int | None) -> dict[int, int]:
    """Each node of ``graph`` (node -> successors) numbered by reverse postorder of a
    depth-first search from ``root``, then from the other nodes not reached yet, in order
    (successors in order): an edge goes to a lower or equal number only where it closes a
    cycle."""
    post: list[int] = []
    seen: set[int] = set()
    roots: list[int] = sorted(graph)
    if root is not None and root in graph:
        roots.insert(0, root)
    for r in roots:
        if r in seen:
            continue
        seen.add(r)
        stack = [(r, iter(sorted(graph[r])))]
        while stack:
            node, it = stack[-1]
            nxt = next((x for x in it if x not in seen), None)
            if nxt is None:
                post.append(node)
                stack.pop()
                continue
            seen.add(nxt)
            stack.append((nxt, iter(sorted(graph[nxt]))))
    return {node: len(post) - i for i, node in enumerate(post)}


_Index = tuple[Mapping[str, list[tuple[str, Event, int]]], ...]

#: the most value combinations of a process's ``xr``/``xs`` channel variables examined per location
MAX_CLAIM_COMBINATIONS = 512

#: the most program-counter values a condition of :meth:`_Context.never` excludes
MAX_BEFORE = 64

#: SPIN's limit on the number of processes (the Promela front end's ``MAX_PROCESSES``)
MAX_PROCESSES = 255


def safe_locations(
    system: System, visible: frozenset[str] = frozenset()
) -> dict[str, frozenset[int | None]]:
    """Per process name, its unconditionally safe locations (see the module docstring): pc
    values, or ``None`` for a process without a pc whose commands are all safe. ``visible``: the
    variables the checked state properties read (:func:`visible_variables`). A process with no
    such location is left out. :func:`safe_conditions` adds the conditionally safe ones."""
    out: dict[str, frozenset[int | None]] = {}
    for name, conds in safe_conditions(system, visible).items():
        locs = frozenset(k for k, c in conds.items() if c == TRUE)
        if locs:
            out[name] = locs
    return out


@on_disk("safe_conditions")  # kept for a System from the model cache (ir/derived.py)
def safe_conditions(
    system: System, visible: frozenset[str] = frozenset(), races: bool = False
) -> dict[str, dict[int | None, Expr]]:
    """Per process name, its safe locations, each with the condition on the state under which
    it is safe: ``TRUE`` for a safe location (see the module docstring), else SPIN's
    *conditional safety* of exclusive channels (pangen2.c ``has_global``/``valTpe``, pan's
    ``q_cond``): at a location whose commands are safe but for receives from the channel the
    process claims with ``xr`` and sends to the one it claims with ``xs``
    (:class:`~absmc.ir.system.ChannelClaim`), the location is safe in the states where each such
    channel is non-empty (a receive) or not full (a send) and the claim variables hold the
    channels those commands use. Another process may meanwhile only send to an ``xr`` channel
    (appending behind a non-empty queue commutes with taking its head) and only receive from
    an ``xs`` channel (taking the head of a non-empty queue commutes with appending to a non-full
    one); its other receives (``xr``) and sends (``xs``) there, and its polls (``len``, ``full``,
    ``empty``; ``nempty`` of an ``xr``, ``nfull`` of an ``xs`` channel: pan's ``q_R_check``/
    ``q_S_check`` in a poll), are model errors (the front end's claim checks), which the reduced
    search reaches as the full one does. Polls, sorted sends
    into an ``xr`` channel and random receives by the claiming process keep the location
    unsafe. ``races``: a death and a ``run`` racing for a slot may go in either order where
    ``System.pids_unobserved`` (:meth:`_Context.raced`; the safety search only). A process
    with no safe location is left out."""
    deps = command_dependencies(system)
    pc_of = {p.name: p.pc for p in system.processes}
    handed = {c.exclusive for c in system.commands if c.exclusive not in (None, c.process)}
    # per variable, the events that write it and the events that read it, with their process
    writers: dict[str, list[tuple[str, Event, int]]] = {}
    readers: dict[str, list[tuple[str, Event, int]]] = {}
    testers: dict[str, list[tuple[str, Event, int]]] = {}
    for d in deps:
        for ev in d.events:
            for v in ev.writes:
                writers.setdefault(v, []).append((d.process, ev, d.index))
            for v in ev.reads:
                readers.setdefault(v, []).append((d.process, ev, d.index))
            for v in ev.tests:
                testers.setdefault(v, []).append((d.process, ev, d.index))
    ctx = _Context(system, deps, visible, (writers, readers, testers))
    ctx.races = races and system.pids_unobserved
    ctx.races_swaps = races
    out: dict[str, dict[int | None, Expr]] = {}
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
        claims = [c for c in system.claims if c.process == proc.name]
        conds: dict[int | None, Expr] = {}
        for loc in locations:
            here = [d for d in mine if d.location is None or d.location == loc]
            ok, need = ctx.safe(here, proc.name, pc, loc, {})
            if ok:
                conds[loc] = conj(need)
            elif claims:
                c = ctx.conditional(here, proc.name, pc, loc, claims)
                if c != FALSE:
                    conds[loc] = c
        if conds:
            out[proc.name] = conds
    return out


def _is_zero(e: Expr | None) -> bool:
    return isinstance(e, Const) and e.value == 0


def var_conjuncts(e: Expr, names: Iterable[str]) -> dict[str, int]:
    """The ``x == k`` (or ``k == x``) top-level conjuncts of ``e`` for the variables ``names``:
    ``{name: k}`` (the first when there are several)."""
    return slot_order.pc_conjuncts(e, frozenset(names))


class _Context:
    """What the safety check of one location needs: the system, its dependency information,
    the visible variables and the per-variable event index."""

    def __init__(
        self,
        system: System,
        deps: tuple[CommandDeps, ...],
        visible: frozenset[str],
        index: _Index,
    ) -> None:
        self.system = system
        self.deps = deps
        self.visible = visible
        self.index = index
        self.chans = {c.cid: c for c in system.channels}
        self.chan_of_var = {v: c.cid for c in system.channels for v in c.variables}
        self.pc_of = {p.name: p.pc for p in system.processes}
        self._values: dict[str, frozenset[int]] | None = None
        self.pcs = frozenset(p.pc for p in system.processes if p.pc is not None)
        self._before: dict[tuple[str, int], frozenset[int] | None] = {}
        self._pc_edges: dict[str, list[tuple[int | None, int]] | None] = {}
        self._never: dict[tuple[str, int], Expr | None] = {}
        self.races = False
        self.pid = {p.name: k for k, p in enumerate(system.processes)}
        self._explained: dict[tuple[int, int, frozenset[str]], bool] = {}
        self._prefix: bool | None = None
        #: (parts, its per-variable index): :meth:`touching`, for the parts last asked about
        self._touching: (
            tuple[list[tuple[Event, list[Event]]], dict[str, list[tuple[Event, list[Event]]]]]
            | None
        ) = None
        self.races_swaps = False
        self.event_command = {id(ev): d.index for d in deps for ev in d.events}
        self.tested = frozenset(v for d in deps for ev in d.events for v in ev.tests)
        self.slot_of = {p.pc: k for k, p in enumerate(system.processes) if p.pc is not None}

    def values(self) -> dict[str, frozenset[int]]:
        """:func:`value_sets` of the system (computed once, when a claim asks)."""
        if self._values is None:
            self._values = value_sets(self.system)
        return self._values

    def before(self, pc: str, k: int) -> frozenset[int] | None:
        """The values of the program counter ``pc`` from which it can come to ``k`` (``k``
        among them) by any command of any process (a command that sets ``pc`` to a constant
        from the value its guard pins, or from any value when the guard does not pin it);
        ``None`` when that is every value or cannot be told (an update that is no constant).
        A slot filled at most once (``System.once``) comes from 0 (free) only before it was
        filled, and is not filled again after its process ended: 0 is among the values,
        and no move to or from 0 counts."""
        key = (pc, k)
        if key in self._before:
            return self._before[key]
        edges = self._edges(pc)
        if edges is None:
            self._before[key] = None
            return None
        out = slot_order.closure(edges, k, pc in self.system.once)
        if out is None:
            self._before[key] = None
            return None
        res = frozenset(out) if len(out) <= MAX_BEFORE else None
        self._before[key] = res
        return res

    def _edges(self, pc: str) -> list[tuple[int | None, int]] | None:
        """The moves of ``pc`` by the commands, (from, to) with from ``None`` for any value;
        ``None`` when a command sets it to something other than a constant. Computed once per
        ``pc`` (:meth:`before` asks for many targets)."""
        if pc in self._pc_edges:
            return self._pc_edges[pc]
        edges = slot_order.pc_edges(self.system, pc)
        self._pc_edges[pc] = edges
        return edges

    def never(self, who: str, ev: Event) -> Expr | None:
        """A condition on the state under which the event ``ev`` of process ``who`` can never
        happen again: its guard pins ``who``'s pc to a value ``k`` and the pc is at none of
        the values from which it can come to ``k`` (:meth:`before`); ``None`` when there is no
        such condition. (pan's conditional safety of a process's deletion, ``ALPHA_F`` in
        ``q_cond``, asks that the deletion can enable no ``run``; this is the same argument for
        any event of another process that control flow has left behind.)"""
        pc = self.pc_of.get(who)
        if pc is None or pc not in ev.pcs:
            return None
        key = (pc, ev.pcs[pc])
        if key not in self._never:
            vals = self.before(*key)
            x = Var(pc, self.system.var(pc).sort)
            self._never[key] = (
                None if vals is None else conj([Op("!=", (x, Const(v))) for v in sorted(vals)])
            )
        return self._never[key]

    def raced(
        self, process: str, pc: str | None, deleting: bool
    ) -> Callable[[str, Event, str], bool] | None:
        """A death and a run racing for a slot: :func:`absmc.ir.slot_order.raced`."""
        if not self.races:
            return None
        return slot_order.raced(self.system, self.pid, process, pc, deleting)

    def swapped(
        self, chain: list[CommandDeps], process: str
    ) -> Callable[[str, Event, str], bool] | None:
        """Two creators' runs racing for a slot: :func:`absmc.ir.slot_order.swapped`."""
        if not self.races_swaps or not self.prefix():
            return None
        return slot_order.swapped(self, chain, process)

    def explained(self, i: int, cid: int, kinds: frozenset[str]) -> bool:
        """Does command ``i`` touch channel ``cid`` only by operations of ``kinds``, and every
        channel variable it touches only through a channel operation it names? (Computed once
        per question: :meth:`safe` asks it for every event on a claimed channel, ~30,000 times
        on SPIN's leader example.)"""
        key = (i, cid, kinds)
        got = self._explained.get(key)
        if got is None:
            got = self._explained[key] = self._explain(i, cid, kinds)
        return got

    def _explain(self, i: int, cid: int, kinds: frozenset[str]) -> bool:
        ops = self.system.commands[i].chan_ops
        mine = {k for k, c in ops if c == cid}
        if not mine or not mine <= kinds or any(k == "?" for k, _ in ops):
            return False
        named = {c for _, c in ops}
        d = self.deps[i]
        return all(
            self.chan_of_var[v] in named for v in d.reads | d.writes if v in self.chan_of_var
        )

    def conditional(
        self,
        here: list[CommandDeps],
        process: str,
        pc: str | None,
        loc: int | None,
        claims: list[ChannelClaim],
    ) -> Expr:
        """The condition under which ``loc`` is safe thanks to the process's ``claims`` (a
        disjunction over the values of its claim variables; ``FALSE``: never)."""
        by_var: dict[str, set[str]] = {}
        fixed: dict[int, set[str]] = {}
        for cl in claims:
            if isinstance(cl.channel, Var):
                by_var.setdefault(cl.channel.name, set()).add(cl.kind)
            elif isinstance(cl.channel, Const):
                fixed.setdefault(int(cl.channel.value), set()).add(cl.kind)
        # the claim variables the step reads (the commands here and those a chain can go on
        # with): only their values decide which channels the step uses
        every = self.chain(here, process, pc)
        if every is None:
            return FALSE
        used = frozenset().union(*(d.reads for d in every))
        names = sorted(w for w in by_var if w in used)
        pin_of = {d.index: var_conjuncts(self.system.commands[d.index].guard, names) for d in every}
        pins = {d.index: pin_of[d.index] for d in here}
        # the values the commands here pin a claim variable to, and every value it can hold
        # (a poll or a chain that does not pin it is specialised for each)
        known = self.values()
        values = {
            w: sorted({p[w] for p in pins.values() if w in p} | known.get(w, frozenset()))
            for w in names
        }
        # None: any other value (none when the value set is known: it holds every value)
        choices = [[*values[w], *([] if w in known else [None])] for w in names]
        count = 1
        for ch in choices:
            count *= len(ch)
        if count > MAX_CLAIM_COMBINATIONS:
            return FALSE
        out: list[Expr] = []
        for combo in product(*choices):
            a = dict(zip(names, combo, strict=True))
            sub = [
                d
                for d in here
                if all(w not in pins[d.index] or pins[d.index][w] == a[w] for w in names)
            ]
            if not sub:
                continue
            relax = {k: set(v) for k, v in fixed.items()}
            for w, k in a.items():
                if k is not None:
                    relax.setdefault(k, set()).update(by_var[w])

            def keep(d: CommandDeps, a: dict[str, int | None] = a) -> bool:
                # a command the chain goes on with whose guard pins a claim variable to
                # another value than this combination's cannot run in these states
                got = pin_of[d.index]
                return all(
                    w not in got
                    or (got[w] == a[w] if a[w] is not None else got[w] not in values[w])
                    for w in names
                )

            ok, need = self.safe(sub, process, pc, loc, relax, frozenset(names), keep)
            if not ok:
                continue
            assume: list[Expr] = []
            for w in names:
                x = Var(w, self.system.var(w).sort)
                k = a[w]
                if k is not None:
                    assume.append(Op("==", (x, Const(k))))
                else:
                    assume.extend(Op("!=", (x, Const(v))) for v in values[w])
            out.append(conj([*assume, *need]))
        return disj(out)

    def chain(
        self,
        here: list[CommandDeps],
        process: str,
        pc: str | None,
        keep: Callable[[CommandDeps], bool] | None = None,
    ) -> list[CommandDeps] | None:
        """``here`` with every command an exclusive (atomic) chain started by one of them can
        go on with: the commands at each location a command keeping the process's exclusive
        control leads to, transitively (a chain is one step of the search, so it commutes with
        another process's command when all of its commands do: SPIN's ``has_global`` of an
        ``atomic`` sequence, pangen2.c ``scan_seq``). ``None`` when a chain hands control to
        another process or leads to a location not known statically. ``keep``: which of the
        commands at those locations can run in the states considered (default: all)."""
        out = list(here)
        seen = {d.index for d in here}
        done: set[int] = set()
        todo = list(here)
        while todo:
            d = todo.pop()
            c = self.system.commands[d.index]
            if c.exclusive is None:
                continue
            if c.exclusive != process or pc is None:
                return None
            to = c.update_map().get(pc)
            if not isinstance(to, Const):
                return None
            k = int(to.value)
            if k in done:
                continue
            done.add(k)
            for e in self.deps:
                if (
                    e.process == process
                    and e.location in (k, None)
                    and e.index not in seen
                    and (keep is None or keep(e))
                ):
                    seen.add(e.index)
                    out.append(e)
                    todo.append(e)
        return out

    def most_ops(
        self,
        start: list[CommandDeps],
        chain: list[CommandDeps],
        process: str,
        pc: str | None,
        cid: int,
        kinds: frozenset[str],
    ) -> int | None:
        """How much one step from ``start`` (one of its commands, and the commands of ``chain``
        an exclusive chain goes on with) needs of channel ``cid``: ``kinds`` is ``{"s", "n"}``
        (free slots: each send and ``nfull`` needs one more than the sends before it) or
        ``{"r", "e"}`` (messages: each receive and ``nempty`` one more than the receives
        before it); the most over every way the step can go. ``None`` when a chain can repeat
        such an operation without bound (a cycle). A step that finds what it needs at its
        start does not block on the channel half-way."""
        cmds = self.system.commands
        move = "s" if "s" in kinds else "r"

        def own(d: CommandDeps) -> tuple[int, int]:
            # (what the command itself needs, how many it consumes): a poll and a move in
            # one command count as two (the command's expressions are read in one state)
            ops = [k for k, c in cmds[d.index].chan_ops if c == cid and k in kinds]
            moves = sum(1 for k in ops if k == move)
            return (len(ops) if moves else min(len(ops), 1)), moves

        def target(d: CommandDeps) -> int | None:
            c = cmds[d.index]
            if c.exclusive != process or pc is None:
                return None
            to = c.update_map().get(pc)
            return int(to.value) if isinstance(to, Const) else None

        at: dict[int, list[CommandDeps]] = {}
        for d in chain:
            if d.location is not None:
                at.setdefault(d.location, []).append(d)
        best = dict.fromkeys(at, 0)

        def value(d: CommandDeps) -> int:
            needs, moves = own(d)
            t = target(d)
            after = best.get(t, 0) if t is not None else 0
            return max(needs, moves + after) if after else needs

        # longest paths by relaxation; still growing after |locations| rounds: a cycle
        for _ in range(len(at) + 1):
            grew = False
            for k, ds in at.items():
                v = max(value(d) for d in ds)
                if v > best[k]:
                    best[k] = v
                    grew = True
            if not grew:
                return max((value(d) for d in start), default=0)
        return None

    def parts(
        self, here: list[CommandDeps], process: str, pc: str | None
    ) -> list[tuple[Event, list[Event]]]:
        """The steps the commands ``here`` (one location's) can take, each as the event whose
        condition enables it and the events it consists of: a command's execution with the
        commands its exclusive chain can go on with (:meth:`chain`; one step of the search,
        enabled by the command's guard), and each of its model errors alone."""
        out: list[tuple[Event, list[Event]]] = []
        for d in here:
            chain = self.chain([d], process, pc, self.after_taken(d)) or [d]
            main = d.events[0]
            rest = [ev for e in chain if e.index != d.index for ev in e.events]
            out.append((main, [main, *rest]))
            out.extend((ev, [ev]) for ev in d.events[1:])
        return out

    def apart(
        self, parts: list[tuple[Event, list[Event]]], who: str, ev: Event, i: int, v: str
    ) -> bool:
        """Is the event ``ev`` (of command ``i`` of process ``who``), which touches ``v``,
        independent of every step of ``parts`` (:meth:`parts`) that touches ``v``, and unable
        to enable one? Either the step's enabling condition pins a program counter to a value
        ``a`` that ``ev``'s condition pins to another, and ``ev`` does not move it to ``a``
        (the two are never enabled together and ``ev`` enables no such step: a ``run`` into a
        free slot and the commands of a process in that slot, a rendezvous with a receiver at
        one location and the receiver's commands elsewhere; docs/reductions.md), or ``v`` is
        a program counter the step only tests (:meth:`preserves`)."""
        cmd = self.system.commands[i].update_map()

        def after(x: str) -> int | None:
            # the value ev leaves the pinned program counter x at (None: not a constant)
            if x not in ev.writes:
                return ev.pcs[x]
            to = cmd.get(x)
            return int(to.value) if isinstance(to, Const) else None

        for pin, touched in self.touching(parts).get(v, ()):
            if any(
                a != ev.pcs[x] and after(x) not in (a, None)
                for x, a in pin.pcs.items()
                if x in ev.pcs
            ):
                continue
            if self.ordered_apart(pin, ev, cmd):
                continue
            if not all(self.preserves(ev, i, v, e) for e in touched):
                return False
        return True

    def touching(
        self, parts: list[tuple[Event, list[Event]]]
    ) -> dict[str, list[tuple[Event, list[Event]]]]:
        """Per variable, the steps of ``parts`` with the events of each that touch it (read,
        write or test; built once per ``parts``: :meth:`apart` asks per event and variable)."""
        if self._touching is None or self._touching[0] is not parts:
            index: dict[str, list[tuple[Event, list[Event]]]] = {}
            for pin, evs in parts:
                for v in sorted(set().union(*(e.reads | e.writes | e.tests.keys() for e in evs))):
                    index.setdefault(v, []).append(
                        (pin, [e for e in evs if v in e.reads or v in e.writes or v in e.tests])
                    )
            self._touching = (parts, index)
        return self._touching[1]

    def prefix(self) -> bool:
        """:func:`absmc.ir.slot_order.slots_prefix` of the system (computed once)."""
        if self._prefix is None:
            self._prefix = slot_order.slots_prefix(self.system)
        return self._prefix

    def after_taken(self, d: CommandDeps) -> Callable[[CommandDeps], bool] | None:
        """:func:`absmc.ir.slot_order.after_taken` of command ``d`` (``None`` unless the
        taken slots are a prefix)."""
        if not self.prefix():
            return None
        return slot_order.after_taken(self.system.commands[d.index], self.slot_of)

    def ordered_apart(self, pin: Event, ev: Event, cmd: Mapping[str, Expr]) -> bool:
        """:func:`absmc.ir.slot_order.ordered_apart` where the taken slots are a prefix."""
        return self.prefix() and slot_order.ordered_apart(self.slot_of, pin.pcs, ev.pcs, cmd)

    def preserves(self, ev: Event, i: int, v: str, e: Event) -> bool:
        """Does ``ev`` (of command ``i``) keep every ``pc == k``/``pc != k`` test of ``e`` on
        the program counter ``v`` (which ``e`` neither reads otherwise nor writes)?"""
        if v not in self.pcs or v in e.reads or v in e.writes:
            return False
        if v not in ev.writes:
            return True  # ev reads v only; e reads it only
        b = ev.pcs.get(v)
        new = self.system.commands[i].update_map().get(v)
        if b is None or not isinstance(new, Const):
            return False
        to = int(new.value)
        return all((b == k) == (to == k) for _, k in e.tests.get(v, ()))

    def safe(
        self,
        here: list[CommandDeps],
        process: str,
        pc: str | None,
        loc: int | None,
        relax: Mapping[int, set[str]],
        fixed: frozenset[str] = frozenset(),
        keep: Callable[[CommandDeps], bool] | None = None,
    ) -> tuple[bool, list[Expr]]:
        """Are the commands ``here`` of ``process`` at ``loc`` safe, given the channels it
        claims (``relax``: channel id -> ``{"xr", "xs"}``), and under which conditions on those
        channels? ``fixed``: variables (the claim variables) nothing may write meanwhile;
        ``keep``: as for :meth:`chain`."""
        system = self.system
        writers, readers, testers = self.index
        chain = self.chain(here, process, pc, keep)
        if chain is None:
            return False, []
        parts = self.parts(here, process, pc)
        start, here = here, chain
        targets: set[int] | None = set()  # the locations the commands lead to (None: unknown)
        for d in here:
            c = system.commands[d.index]
            if "timeout" in c.flags or "priority" in c.flags:
                return False, []
            to = c.update_map().get(pc) if pc is not None else None
            if to is not None and targets is not None:
                if isinstance(to, Const):
                    targets.add(int(to.value))
                else:
                    targets = None
        writes = frozenset().union(*(d.writes for d in here))
        if writes & self.visible or writes & fixed:
            return False, []
        need: list[Expr] = []
        others: dict[int, frozenset[str]] = {}  # relaxed channel -> what others may do there
        for cid, kinds in sorted(relax.items()):
            ch = self.chans.get(cid)
            if ch is None:
                continue
            own_ok = frozenset(
                ({"r", "e"} if "xr" in kinds else set()) | ({"s", "n"} if "xs" in kinds else set())
            )
            touching = [d for d in here if (d.reads | d.writes) & ch.variables]
            if not touching or not all(self.explained(d.index, cid, own_ok) for d in touching):
                continue
            # the most receives (and nempty polls) and sends (and nfull polls) of the channel
            # one step can do: an atomic chain must not block on it half-way (a partial
            # chain would not commute with another process's send or receive)
            takes = self.most_ops(start, here, process, pc, cid, frozenset({"r", "e"}))
            puts = self.most_ops(start, here, process, pc, cid, frozenset({"s", "n"}))
            if takes is None or puts is None or puts > ch.capacity:
                continue
            length = Var(ch.length, system.var(ch.length).sort)
            if takes:
                need.append(Op(">", (length, Const(takes - 1))))
            if puts:
                need.append(Op("<", (length, Const(ch.capacity - puts + 1))))
            # another process's polls the front end checks against a claim held here are
            # model errors (its claim errors), as its receives (xr) and sends (xs) are
            allowed: set[str] = set()
            if "xr" in kinds:
                allowed |= {"s", "r", "R", "l", "e", "n"}
            if "xs" in kinds:
                allowed |= {"r", "R", "s", "S", "l", "n", "e"}
            others[cid] = frozenset(allowed)
        # the process's own claim errors on a channel it claims alike: another claimant of it
        # can only have started with a claim error of its own (pan's setq_claim), which the
        # reduced search meets as the full one does
        reads = fixed.union(
            *(
                ev.reads | ev.tests.keys()
                for d in here
                for ev in d.events
                if ev.claim is None
                or ev.claim[1] not in others
                or ev.claim[0] not in relax[ev.claim[1]]
            )
        )

        alone = slot_order.alone(system, pc, loc)

        def possible(ev: Event) -> bool:
            # an event of another process that cannot happen while this process is at ``loc``
            # (nor while it is a process of a proctype created at most once, which the
            # event's process is too)
            if pc is None or loc is None:
                return True
            return ev.pcs.get(pc, loc) == loc and not any(
                lo <= ev.pcs.get(x, -1) <= hi for x, lo, hi in alone
            )

        def excused(v: str, i: int) -> bool:
            cid = self.chan_of_var.get(v)
            return cid in others and self.explained(i, cid, others[cid])

        # at a location whose commands all delete the process (set its pc to 0, the free
        # slot): events of other processes that conflict unless control flow has left them
        # behind; the location is safe in the states where none of them can happen again
        # (pan's conditional safety of process deletion, ALPHA_F)
        deleting = (
            pc is not None
            and bool(here)
            and all(_is_zero(system.commands[d.index].update_map().get(pc)) for d in here)
        )
        behind: dict[int, Expr] = {}

        # a deletion racing with a run for the slot: see :meth:`raced`
        raced = self.raced(process, pc, deleting)
        # two creators' runs racing for a slot: see :meth:`swapped`
        swapped = self.swapped(here, process)
        if swapped is not None:
            raced = swapped if raced is None else slot_order.either(raced, swapped)

        def left_behind(who: str, ev: Event) -> bool:
            if not deleting and swapped is None:
                return False
            if id(ev) in behind:
                return True
            c = self.never(who, ev)
            if c is None:
                return False
            behind[id(ev)] = c
            return True

        for v in reads | writes:
            for who, ev, i in writers.get(v, ()):
                if (
                    who != process
                    and possible(ev)
                    and not excused(v, i)
                    and not self.apart(parts, who, ev, i, v)
                    and not (raced is not None and raced(who, ev, v))
                    and not left_behind(who, ev)
                ):
                    return False, []
        for v in writes:
            for who, ev, i in readers.get(v, ()):
                if (
                    who != process
                    and possible(ev)
                    and not excused(v, i)
                    and not self.apart(parts, who, ev, i, v)
                    and not (raced is not None and raced(who, ev, v))
                    and not left_behind(who, ev)
                ):
                    return False, []
            for who, ev, i in testers.get(v, ()):
                if who == process or not possible(ev):
                    continue
                # a test of this process's pc that no move from loc changes does not count
                if (
                    v == pc
                    and targets is not None
                    and not any(k == loc or k in targets for _, k in ev.tests[v])
                ):
                    continue
                if raced is not None and raced(who, ev, v):
                    continue
                if not self.apart(parts, who, ev, i, v) and not left_behind(who, ev):
                    return False, []
        return True, [*need, *dict.fromkeys(behind.values())]
