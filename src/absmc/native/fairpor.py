"""Safe locations for the LTL product search under weak fairness (SPIN's ``-f``): the safe
locations of :func:`absmc.ir.dependency.safe_conditions` whose steps cannot change whether
another process has an enabled command (docs/reductions.md, "Weak fairness"), and those whose
steps change it only through a channel that one other process alone uses.

The weak-fairness counter (:mod:`absmc.kernel.ltl.fairness`) reads, per state, which processes
are blocked. A reduced search moves an ample step ``a`` of process ``T`` ahead of other
processes' steps; the proof that the reduced product keeps a weakly fair accepting cycle
(docs/reductions.md) needs that ``a`` leaves every other process's blocked status as it was, in
every state where ``a`` is enabled. The safe-location analysis allows more than that: a command
of another process whose guard pins ``T``'s program counter to the location ``a`` leads to, a
send to ``T``'s ``xr`` channel that ``a``'s receive makes room for, a receive from ``T``'s ``xs``
channel that ``a``'s send fills, another process's ``timeout``. Those locations are dropped here
(conservatively: by the variables read, not by their values), except for *point-to-point
channels*: a step that receives from (sends to) a channel ``c`` is kept in the states where,
from then on, ``T`` only ever takes messages out of ``c`` (only puts them in) and at most one
other process ``P`` can use ``c`` at all. When ``P`` stops moving, ``c`` then changes only
finitely often more (at most its capacity), so the steps that could unblock ``P`` are finitely
many (docs/reductions.md, "Point-to-point channels"). Such a condition is a state predicate
that no step can make false again: on SPIN's leader.pml every node's commands statically touch
every channel of the ring, and only the values of its channel parameters (which nothing assigns
once ``init`` can no longer ``run``) make the ring point to point. The reduction is Peled's
ample sets (Peled 1996; Clarke, Grumberg & Peled, *Model Checking*, §10.5) with SPIN's
conditional safety (Holzmann & Peled 1994, §4); the weak-fairness argument is absmc's own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from absmc.ir.dependency import (
    CommandDeps,
    Event,
    _Context,
    _pruned,
    command_dependencies,
    reads_of,
    var_conjuncts,
)
from absmc.ir.expr import (
    FALSE,
    TRUE,
    Const,
    Expr,
    Op,
    Var,
    as_const,
    conj,
    conjuncts,
    disj,
    subexpressions,
)
from absmc.ir.system import Command, System

__all__ = ["SafeConditions", "fair_safe_conditions"]

#: per process name, its safe locations, each with its condition
SafeConditions = Mapping[str, Mapping[int | None, Expr]]

#: the most other processes that may use one channel for :meth:`_PointToPoint.stable`
MAX_USERS = 16

#: the channel operations (``Command.chan_ops`` kinds) of a command that takes messages out of
#: a channel (``"r"``, ``"R"``; the polls read it only) or puts them in (``"s"``, ``"S"``)
_TAKES = frozenset({"r", "R", "l", "e", "n"})
_PUTS = frozenset({"s", "S", "l", "e", "n"})


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
    ``timeout`` command (it is enabled by every other process becoming blocked). The one
    exception, with a stronger condition: a command that receives from (sends to) a buffered
    channel another process reads may stay when, in the state and every state after it, the
    process only receives from (sends to) that channel and at most one other process uses it
    (:class:`_PointToPoint`; the condition is conjoined to the location's). A process left
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
    p2p = _PointToPoint(system, deps)
    out: dict[str, dict[int | None, Expr]] = {}
    for name, locs in conds.items():
        if timeouts - {name}:
            continue
        pc = pc_of[name]
        mine = [d for d in deps if d.process == name]
        kept: dict[int | None, Expr] = {}
        for loc, cond in locs.items():
            extra = _keeps_others(cmds, mine, name, pc, loc, readers, p2p)
            if extra != FALSE:
                kept[loc] = conj([cond, extra])
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
    p2p: _PointToPoint,
) -> Expr:
    """The condition under which the steps of process ``name`` at ``loc`` leave every other
    process's commands enabled or disabled as they were, or change it only through
    point-to-point channels (see :func:`fair_safe_conditions`): ``TRUE`` (always), ``FALSE``
    (never)."""
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
    fed: set[int] = set()  # the channels whose variables another process reads
    for v in writes:
        for who, ev in readers.get(v, ()):
            if who == name:
                continue
            cid = p2p.chan_of_var.get(v)
            if cid is not None:
                fed.add(cid)
                continue
            if v != pc or v in ev.reads or targets is None:
                return FALSE
            if any(k in targets for _, k in ev.tests[v]):
                return FALSE
    if not fed:
        return TRUE
    # the conditions that keep each channel point to point in every later state (init's
    # runs done, ...) are required as a whole: a stronger condition, and a much shorter one
    guards: list[Expr] = []
    need: list[Expr] = []
    for d in group:
        chans = sorted(c for c in fed if d.writes & p2p.chans[c].variables)
        if not chans or p2p.impossible(d.index):
            continue
        stable = [p2p.stable(cid, name, p2p.direction(d.index, cid)) for cid in chans]
        # the command's guard pins variables (a channel parameter): in the states where a
        # pin fails it does not run, and needs nothing (a chain's later commands run in later
        # states: they get no such escape)
        escape = [] if chain else p2p.unpinned(d.index)
        kept = [x for x in stable if x is not None]
        if len(kept) < len(stable):
            if not escape:
                return FALSE
            need.append(disj(escape))
            continue
        guards.extend(g for g, _ in kept)
        need.append(disj([*escape, conj([n for _, n in kept])]))
    return conj(list(dict.fromkeys(x for e in [*guards, *need] for x in conjuncts(e))))


class _PointToPoint:
    """The conditions of point-to-point channels (docs/reductions.md, "Point-to-point
    channels"): per channel, process and direction, a state predicate under which, in that
    state and every state reachable from it, the process's commands only take messages out of
    the channel (``"takes"``) or only put them in (``"puts"``), and at most one other process
    has a command or model error that reads or writes the channel. An event is ruled out for
    good by a pin ``w == a`` of its condition on a variable ``w`` that is not ``a`` and that no
    command still possible can set to ``a`` (:meth:`stays_off`), or by control flow having left
    its location behind (:meth:`absmc.ir.dependency._Context.never`)."""

    def __init__(self, system: System, deps: tuple[CommandDeps, ...]) -> None:
        self.system = system
        self.deps = deps
        # never() needs the system and its program counters only
        self.ctx = _Context(system, deps, frozenset(), ({}, {}, {}))
        self.chans = {c.cid: c for c in system.channels}
        self.chan_of_var = {v: c.cid for c in system.channels for v in c.variables}
        self.pcs = frozenset(p.pc for p in system.processes if p.pc is not None)
        self.writers: dict[str, list[int]] = {}
        # per channel, the (command, event number) pairs whose event reads or writes it
        self.users: dict[int, list[tuple[int, int]]] = {}
        for d in deps:
            for v in d.writes:
                self.writers.setdefault(v, []).append(d.index)
            for k, ev in enumerate(d.events):
                cids = {
                    self.chan_of_var[v]
                    for v in ev.reads | ev.writes | ev.tests.keys()
                    if v in self.chan_of_var
                }
                for cid in sorted(cids):
                    self.users.setdefault(cid, []).append((d.index, k))
        self._stable: dict[tuple[int, str, str], tuple[Expr, Expr] | None] = {}
        self._off: dict[tuple[str, int], tuple[Expr, Expr] | None] = {}

    def condition(self, i: int, k: int) -> Expr:
        """The condition of event ``k`` of command ``i`` (0: its guard; else a model error's)."""
        c = self.system.commands[i]
        return c.guard if k == 0 else c.errors[k - 1][0]

    def pins(self, e: Expr) -> dict[str, int]:
        """The ``w == a`` conjuncts of ``e`` on variables that are no program counter and no
        channel variable."""
        names = [
            v for v in sorted(reads_of([e])) if v not in self.pcs and v not in self.chan_of_var
        ]
        return var_conjuncts(e, names)

    def unpinned(self, i: int) -> list[Expr]:
        """``w != a`` for each pin of command ``i``'s guard (:meth:`pins`): the states where
        the command cannot run."""
        out: list[Expr] = []
        for w, a in self.pins(self.system.commands[i].guard).items():
            out.append(Op("!=", (Var(w, self.system.var(w).sort), Const(a))))
        return out

    def impossible(self, i: int) -> bool:
        """Whether command ``i``'s guard pins a variable to a value outside its value set
        (:func:`~absmc.ir.dependency.value_sets`: a channel parameter's command for a channel
        no ``run`` passes it), so that it never runs."""
        values = self.ctx.values()
        pins = self.pins(self.system.commands[i].guard)
        return any(w in values and a not in values[w] for w, a in pins.items())

    def direction(self, i: int, cid: int) -> str | None:
        """Whether command ``i``, which writes channel ``cid``, only takes messages out of it
        (``"takes"``) or only puts them in (``"puts"``); ``None``: neither, or a variable of
        the channel it writes other than through a channel operation it names."""
        ctx = self.ctx
        if ctx.explained(i, cid, _TAKES):
            return "takes"
        if ctx.explained(i, cid, _PUTS):
            return "puts"
        return None

    def stays_off(self, w: str, a: int) -> tuple[Expr, Expr] | None:
        """Conditions under which ``w != a`` holds in the state and every state reachable from
        it: ``(guard, now)``, ``now`` being ``w != a`` and ``guard`` that each command that
        writes ``w`` writes a constant other than ``a`` or can never run again
        (:meth:`~absmc.ir.dependency._Context.never`; such a guard, once true, stays true);
        both ``TRUE`` when ``a`` is not among the values of ``w`` at all
        (:func:`~absmc.ir.dependency.value_sets`); ``None`` when there are none."""
        key = (w, a)
        if key in self._off:
            return self._off[key]
        known = self.ctx.values().get(w)
        if known is not None and a not in known:  # no reachable state has w == a
            self._off[key] = (TRUE, TRUE)
            return self._off[key]
        guard: list[Expr] = []
        got: tuple[Expr, Expr] | None = None
        for i in self.writers.get(w, ()):
            to = self.system.commands[i].update_map().get(w)
            k = None if to is None else as_const(to)
            if k is not None and k != a:
                continue
            d = self.deps[i]
            gone = self.ctx.never(d.process, d.events[0])
            if gone is None:
                break
            guard.append(gone)
        else:
            ne = Op("!=", (Var(w, self.system.var(w).sort), Const(a)))
            got = (conj(list(dict.fromkeys(guard))), ne)
        self._off[key] = got
        return got

    def excluded(self, i: int, k: int, cid: int) -> tuple[Expr, Expr] | None:
        """Conditions ``(guard, now)`` under which event ``k`` of command ``i`` cannot touch
        channel ``cid`` in the state or any state reachable from it: a pin of its condition
        that stays off (:meth:`stays_off`: the event cannot happen); a variable ``w`` whose
        ``w == cid`` tests alone make the event read the channel (a poll of a channel
        parameter, ``len(inp)``), staying off ``cid``; else control flow having left the event
        behind (``guard`` ``TRUE``); ``None``: none known."""
        for w, a in self.pins(self.condition(i, k)).items():
            got = self.stays_off(w, a)
            if got is not None:
                return got
        for w in self.selectors(i, k, cid):
            got = self.stays_off(w, cid)
            if got is not None:
                return got
        d = self.deps[i]
        gone = self.ctx.never(d.process, d.events[k])
        return None if gone is None else (TRUE, gone)

    def selectors(self, i: int, k: int, cid: int) -> list[str]:
        """The variables ``w`` (with a value set; no program counter, no channel variable)
        compared with ``cid`` in event ``k`` of command ``i`` such that the event reads no
        variable of the channel when ``w`` is not ``cid`` (its expressions pruned as
        :func:`~absmc.ir.dependency.command_dependencies` prunes them, with ``cid`` taken out
        of ``w``'s values) and, for the command's execution, writes none."""
        c = self.system.commands[i]
        ch = self.chans[cid].variables
        if k == 0 and c.assigned & ch:
            return []
        exprs = [self.condition(i, k)]
        if k == 0:
            exprs += [e for _, e in c.updates] + [e for _, e in c.asserts]
        values = self.ctx.values()
        out: list[str] = []
        for x in (y for e in exprs for y in subexpressions(e)):
            if not (isinstance(x, Op) and x.op == "==" and len(x.args) == 2):
                continue
            w, a = x.args
            if isinstance(w, Const):
                w, a = a, w
            if not (isinstance(w, Var) and isinstance(a, Const) and a.value == cid):
                continue
            name = w.name
            if name in out or name in self.pcs or name in self.chan_of_var:
                continue
            if cid not in values.get(name, ()):
                continue
            rest = {**values, name: values[name] - {cid}}
            if not reads_of(_pruned(e, rest) for e in exprs) & ch:
                out.append(name)
        return out

    def stable(self, cid: int, process: str, way: str | None) -> tuple[Expr, Expr] | None:
        """Conditions ``(guard, now)`` under which, in the state and every state reachable
        from it, ``process``'s commands write channel ``cid`` only one ``way`` (``"takes"`` or
        ``"puts"``, :meth:`direction`) and at most one other process's events use it;
        ``None`` when there are none (no ``way``, a rendezvous channel, too many users, two
        users that cannot be ruled out)."""
        if way is None:
            return None
        key = (cid, process, way)
        if key not in self._stable:
            self._stable[key] = self._compute(cid, process, way)
        return self._stable[key]

    def _compute(self, cid: int, process: str, way: str) -> tuple[Expr, Expr] | None:
        ch = self.chans.get(cid)
        if ch is None or ch.capacity <= 0:
            return None
        guards: list[Expr] = []
        own: list[Expr] = []
        events: dict[str, list[Expr] | None] = {}
        for i, k in self.users.get(cid, ()):
            d = self.deps[i]
            mine = d.process == process
            # its own reads do not change the channel; its writes the other way must be
            # ruled out (they could go on for ever after the other user stops)
            if mine and (k != 0 or not (d.writes & ch.variables) or self.direction(i, cid) == way):
                continue
            got = self.excluded(i, k, cid)
            if mine:
                if got is None:
                    return None
                guards.append(got[0])
                own.append(got[1])
                continue
            es = events.setdefault(d.process, [])
            if got is None or es is None:
                events[d.process] = None
                continue
            guards.append(got[0])
            es.append(got[1])
        left = [q for q, es in events.items() if es is None]
        if len(left) > 1 or len(events) > MAX_USERS:
            return None
        # per other process, the condition under which it never uses the channel again
        gone = {q: conj(list(dict.fromkeys(es))) for q, es in events.items() if es is not None}
        gone = {q: e for q, e in gone.items() if e != TRUE}  # those that never use it
        if left:
            others = conj(list(gone.values()))  # the one left may use it, no one else
        elif len(gone) <= 1:
            others = TRUE
        else:
            # at most one of them may still use it: a sum of 0/1 terms at most 1
            terms = [Op("ite", (e, Const(0), Const(1))) for _, e in sorted(gone.items())]
            total = terms[0]
            for t in terms[1:]:
                total = Op("+", (total, t))
            others = Op("<=", (total, Const(1)))
        guard = conj(list(dict.fromkeys(x for e in guards for x in conjuncts(e))))
        return guard, conj([*dict.fromkeys(own), others])
