"""How many processes a Promela model can create, and whether its channel ids flow only down the
creation tree (for :attr:`absmc.ir.system.System.max_created` and ``pids_unobserved``;
docs/reductions.md, "A death and a run racing for a slot")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from absmc.lang.promela.assigned import nodes
from absmc.lang.promela.ast import ChanInit, Model, Node, VarDecl
from absmc.lang.promela.fsm import El, Trans
from absmc.lang.promela.lower_base import ProcType, _count_runs, _run_of

__all__ = ["channels_flow_down", "creation_bound", "creation_counts", "swappable_types"]

#: statements and expressions whose first argument is a channel operand
_CHANNEL_OPS = frozenset({"s", "r", "len", "full", "nfull", "empty", "nempty", "poll"})


def _chan_names(decls: list[VarDecl]) -> set[str]:
    return {d.name for d in decls if d.type == "chan"}


def channels_flow_down(model: Model, ptypes: Mapping[str, ProcType]) -> bool:
    """Does every channel-typed variable occur only as the channel of a send, receive or poll,
    or as an argument of ``run`` (no assignment, no receive into it, no message, comparison,
    index or ``printf`` of it), with no ``inline`` and no channel field in a ``typedef``? Then
    a process holds only global channels, its own and those its creator passed it, which
    belong to its ancestors: processes older than it, alive while it is (a process dies only
    when it is the youngest), so no process ever holds the channel of a dead process."""
    if model.inlines or any(f.type == "chan" for t in model.typedefs.values() for f in t.fields):
        return False  # inline parameters and structure fields are not followed
    gl = _chan_names(model.globals)
    for d in model.globals:
        if d.type == "chan" and d.init is not None and not isinstance(d.init, ChanInit):
            return False
    for pt in ptypes.values():
        mine = [*pt.decl.params, *pt.locals]
        chans = _chan_names(mine) | (gl - {d.name for d in mine})
        for d in pt.locals:
            if d.type == "chan" and d.init is not None and not isinstance(d.init, ChanInit):
                return False
        extra = [pt.decl.provided] if pt.decl.provided is not None else []
        if _misused([*pt.decl.body, *extra], chans, False):
            return False
    return True


def _misused(x: Any, chans: set[str], operand: bool) -> bool:
    """Does a channel variable of ``chans`` occur in ``x`` other than as a channel operand
    (``operand``: ``x`` is in such a position)?"""
    if isinstance(x, list):
        return any(_misused(y, chans, False) for y in x)
    if isinstance(x, VarDecl):
        return isinstance(x.init, Node) and _misused(x.init, chans, False)
    if not isinstance(x, Node):
        return False
    if x.kind == "var" and x.name in chans:
        return not operand or any(a is not None for a in x.args)
    args = list(x.args)
    for i, a in enumerate(args):
        ok = (i == 0 and x.kind in _CHANNEL_OPS) or x.kind == "run"
        if _misused(a, chans, ok):
            return True
    return any(_misused(o, chans, False) for o in x.options or [])


def creation_bound(model: Model, ptypes: Mapping[str, ProcType], fuel: bool = False) -> int | None:
    """The most processes one execution can create in all, active ones included: each ``run``
    statement that lies on no cycle of its proctype's automaton runs at most once per process
    of that proctype, so the count of proctype ``T`` is its active count plus, per ``run T`` in
    a proctype ``C``, the count of ``C``. With ``fuel`` (the channels flow down,
    :func:`channels_flow_down`), a ``run`` that every path of ``C`` reaches only through a
    consuming receive from a global channel ``c`` (one no ``run`` passes, no proctype declares a
    variable of that name, so every send to it names it) runs at most as often as messages
    are sent to ``c`` in all: each receive takes one, and each process runs it at most once (SPIN's
    calculator.pml: ``calc`` creates ``calc`` only after it reads one of ``init``'s 9 tokens).
    ``None`` when a ``run`` lies on a cycle, a proctype creates itself (directly or not) other
    than through such a ``run``, or a ``run`` of the source is not found as a statement of the
    automaton's transitions (inside a ``d_step``, say)."""
    runs: dict[str, list[tuple[str, Trans, int]]] = {}
    succ: dict[str, dict[int, set[int]]] = {}
    for name, pt in ptypes.items():
        g: dict[int, set[int]] = {}
        for src, trs in pt.fsm.trans.items():
            g.setdefault(src, set()).update(tr.target for tr in trs)
        succ[name] = g
        found: list[tuple[str, Trans, int]] = []
        for trs in pt.fsm.trans.values():
            for tr in trs:
                for i, el in enumerate(tr.steps):
                    rn = _run_of(el)
                    if rn is None:
                        continue
                    if _reaches(g, tr.target, tr.source):
                        return None
                    found.append((str(rn.name), tr, i))
        if len(found) != _count_runs(pt.decl.body):
            return None
        runs[name] = found
    plain = _instances(ptypes, {c: [(t, None) for t, _, _ in r] for c, r in runs.items()})
    if not fuel:
        return sum(plain.values()) if len(plain) == len(ptypes) else None
    messages = _messages(model, ptypes, succ, plain)
    edges: dict[str, list[tuple[str, int | None]]] = {}
    for creator, made in runs.items():
        pt = ptypes[creator]
        out: list[tuple[str, int | None]] = []
        for target, tr, i in made:
            best = min(
                (n for c, n in messages.items() if _fuelled(pt, tr, i, c)),
                default=None,
            )
            out.append((target, best))
        edges[creator] = out
    counts = _instances(ptypes, edges)
    return sum(counts.values()) if len(counts) == len(ptypes) else None


def _instances(
    ptypes: Mapping[str, ProcType], edges: Mapping[str, list[tuple[str, int | None]]]
) -> dict[str, int]:
    """Per proctype, at most how many processes of it one execution creates: ``edges`` per
    creator, the proctypes its ``run``s create, each with a bound of its own (``None``: one
    per creator process). A proctype without a bound (on a cycle of unbounded edges, or
    created by one that is) is left out."""
    count: dict[str, int] = {}

    def instances(name: str, path: tuple[str, ...]) -> int | None:
        if name in path:
            return None
        if name not in count:
            n = ptypes[name].decl.active if name in ptypes else 0
            for creator, made in edges.items():
                for target, own in made:
                    if target != name:
                        continue
                    k = own if own is not None else instances(creator, (*path, name))
                    if k is None:
                        return None
                    n += k
            count[name] = n
        return count[name]

    for name in ptypes:
        instances(name, ())
    return count


def _named(n: Node, chan: str) -> bool:
    """Is the channel operand of the send or receive ``n`` the plain variable ``chan``?"""
    ch = n.args[0] if n.args else None
    return (
        isinstance(ch, Node)
        and ch.kind == "var"
        and ch.name == chan
        and not any(a is not None for a in ch.args)
    )


def _channel_of(el: El) -> str | None:
    n = el.n
    if n is None or el.kind not in ("s", "r") or not n.args:
        return None
    ch = n.args[0]
    if isinstance(ch, Node) and ch.kind == "var" and not any(a is not None for a in ch.args):
        return str(ch.name)
    return None


def _messages(
    model: Model,
    ptypes: Mapping[str, ProcType],
    succ: Mapping[str, dict[int, set[int]]],
    plain: Mapping[str, int],
) -> dict[str, int]:
    """Per global channel whose every send names it (see :func:`creation_bound`), at most how
    many messages one execution sends to it: each send on no cycle, once per process of a
    proctype with a bound (``plain``). Channels without such a bound are left out."""
    passed = {
        str(a.name)
        for n in nodes([pt.decl.body for pt in ptypes.values()])
        if n.kind == "run"
        for a in n.args
        if isinstance(a, Node) and a.kind == "var"
    }
    declared = {d.name for pt in ptypes.values() for d in [*pt.decl.params, *pt.locals]}
    out: dict[str, int] = {}
    for d in model.globals:
        if d.type != "chan" or not isinstance(d.init, ChanInit) or d.size:
            continue
        if d.name in passed or d.name in declared:
            continue
        written = sum(
            1
            for n in nodes([pt.decl.body for pt in ptypes.values()])
            if n.kind == "s" and _named(n, d.name)
        )
        total: int | None = 0
        for name, pt in ptypes.items():
            for trs in pt.fsm.trans.values():
                for tr in trs:
                    sends = sum(
                        1 for el in tr.steps if el.kind == "s" and _channel_of(el) == d.name
                    )
                    written -= sends
                    if not sends or total is None:
                        continue
                    if name not in plain or _reaches(succ[name], tr.target, tr.source):
                        total = None
                    else:
                        total += sends * plain[name]
        # every send of the source found as a statement of a transition (none in a d_step)
        if total is not None and written == 0:
            out[d.name] = total
    return out


def _fuelled(pt: ProcType, run_tr: Trans, at: int, chan: str) -> bool:
    """Does every path of ``pt``'s automaton to the ``run`` (step ``at`` of ``run_tr``) pass a
    consuming receive from ``chan``?"""

    def takes(el: El) -> bool:
        return el.kind == "r" and _channel_of(el) == chan and not (el.n.val & 2)  # type: ignore[union-attr]

    if any(takes(el) for el in run_tr.steps[:at]):
        return True
    fsm = pt.fsm
    seen = {fsm.start}
    todo = [fsm.start]
    while todo:
        pc = todo.pop()
        if pc == run_tr.source:
            return False
        for tr in fsm.trans.get(pc, []):
            if any(takes(el) for el in tr.steps):
                continue
            if tr.target not in seen:
                seen.add(tr.target)
                todo.append(tr.target)
    return True


def _reaches(succ: dict[int, set[int]], start: int, goal: int) -> bool:
    """Does the automaton (``succ``: location -> successors) lead from ``start`` to ``goal``?"""
    seen = {start}
    todo = [start]
    while todo:
        pc = todo.pop()
        if pc == goal:
            return True
        for nxt in succ.get(pc, ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False


#: expressions that name a process by its pid (or read its state through it)
_SLOT_OBSERVERS = frozenset(
    {"remote_var", "remote_label", "enabled", "pc_value", "get_priority", "set_priority"}
)


def swappable_types(model: Model, ptypes: Mapping[str, ProcType]) -> frozenset[str]:
    """The proctypes whose processes may trade slots (:attr:`absmc.ir.system.System.swappable`;
    docs/reductions.md, "Two runs racing for a slot"): processes that can never end (no path
    of the proctype's automaton from its start reaches its end, so they never die and hold no
    place in SPIN's death order), read no ``_pid``, declare no channel (no local channel id,
    which depends on the slot) and no ``xr``/``xs`` claim, in a model where no statement names a
    process by its pid (no remote reference, remote label, ``enabled``, ``pc_value``,
    ``get_priority``, ``set_priority``; no ``_pid`` in an ``inline``) and the value of ``run``
    (``x = run P()``) is stored only in plain variables that no statement reads
    (:func:`_pids_unread`). Empty when the model's statements name processes."""
    bodies: list[Any] = [pt.decl.body for pt in ptypes.values()]
    bodies += [i.body for i in model.inlines.values()]
    if any(n.kind in _SLOT_OBSERVERS for n in nodes(bodies)):
        return frozenset()
    inlined = nodes([i.body for i in model.inlines.values()])
    if any(n.kind == "var" and n.name == "_pid" for n in inlined):
        return frozenset()
    if not _pids_unread(model, ptypes):
        return frozenset()
    out: set[str] = set()
    for name, pt in ptypes.items():
        if _can_end(pt) or any(
            isinstance(d.init, ChanInit)
            or (
                d.type in model.typedefs
                and any(f.type == "chan" for f in model.typedefs[d.type].fields)
            )
            for d in pt.locals
        ):
            continue
        own: list[Any] = [pt.decl.body, *(d.init for d in pt.locals if isinstance(d.init, Node))]
        if pt.decl.provided is not None:
            own.append(pt.decl.provided)
        if any(
            (n.kind == "var" and n.name == "_pid") or n.kind in ("xr", "xs", "xu")
            for n in nodes(own)
        ):
            continue
        out.add(name)
    return frozenset(out)


def _pids_unread(model: Model, ptypes: Mapping[str, ProcType]) -> bool:
    """Is every ``x = run P()`` a store into a plain variable ``x`` (no index, no field) whose
    name occurs nowhere else in the processes' statements, local initialisers, ``provided``
    clauses and ``inline`` bodies (so nothing reads the pid it holds)?"""
    every: list[Any] = [i.body for i in model.inlines.values()]
    for pt in ptypes.values():
        every.append(pt.decl.body)
        every.extend(d.init for d in [*model.globals, *pt.locals] if isinstance(d.init, Node))
        if pt.decl.provided is not None:
            every.append(pt.decl.provided)
    stores: set[int] = set()
    names: set[str] = set()
    for n in nodes(every):
        if n.kind == "asgn" and isinstance(n.args[1], Node) and n.args[1].kind == "run":
            x = n.args[0]
            if not (
                isinstance(x, Node) and x.kind == "var" and not any(a is not None for a in x.args)
            ):
                return False
            stores.add(id(x))
            names.add(str(x.name))
    return not any(
        n.kind == "var" and n.name in names and id(n) not in stores for n in nodes(every)
    )


def _can_end(pt: ProcType) -> bool:
    """Is the end of ``pt``'s automaton reachable from its start (a transition to the end
    location, or one that ends the process)?"""
    fsm = pt.fsm
    return any(
        pc == fsm.end or any(tr.is_end or tr.target in (fsm.end, 0) for tr in fsm.trans.get(pc, []))
        for pc in fsm.reachable()
    )


def creation_counts(ptypes: Mapping[str, ProcType]) -> dict[str, int]:
    """Per proctype, at most how many of its processes one execution creates (its active
    ones included), as :func:`creation_bound` counts without fuel; a proctype without a bound
    (a ``run`` on a cycle, a proctype that creates itself, a ``run`` not found as a statement)
    is left out."""
    runs: dict[str, list[tuple[str, int | None]]] = {}
    for name, pt in ptypes.items():
        g: dict[int, set[int]] = {}
        for src, trs in pt.fsm.trans.items():
            g.setdefault(src, set()).update(tr.target for tr in trs)
        found: list[tuple[str, int | None]] = []
        ok = True
        live = set(pt.fsm.reachable())
        for src, trs in pt.fsm.trans.items():
            if src not in live:
                continue  # a transition statement merging left behind
            for tr in trs:
                for el in tr.steps:
                    rn = _run_of(el)
                    if rn is None:
                        continue
                    if _reaches(g, tr.target, tr.source):
                        ok = False
                    found.append((str(rn.name), None))
        if not ok or len(found) != _count_runs(pt.decl.body):
            # every proctype this one may create is unbounded
            found = [(str(n.name), -1) for n in nodes(pt.decl.body) if n.kind == "run"]
        runs[name] = found
    bounded = {c: [(t, k) for t, k in made if k != -1] for c, made in runs.items()}
    unbounded = {t for made in runs.values() for t, k in made if k == -1}
    todo = list(unbounded)
    while todo:  # what an unbounded proctype creates is unbounded too
        for t, _k in runs.get(todo.pop(), []):
            if t not in unbounded:
                unbounded.add(t)
                todo.append(t)
    counts = _instances(ptypes, bounded)
    return {t: n for t, n in counts.items() if t not in unbounded}
