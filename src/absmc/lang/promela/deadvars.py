"""SPIN's dead-variable reset (the data-flow optimisation that ``spin -o1`` turns off).

SPIN 6.5.2 (``pangen5.c``: ``ana_stmnt``, ``ana_var``, ``FSM_ANA``, ``FSM_DFS``, ``good_dead``;
``pangen2.c``: ``doforward``) analyses each proctype's element graph (the graph statement
merging uses: one edge per element, from its state to the next element's, ``unless`` escapes
as edges without a statement) and, after an element executes, sets to 0 every local variable
that is *dead* after it: on no path from the element's target is it read before it is written.
Two states that differ only in a dead variable then become one. This module computes, per
element, the variables to reset; the lowering (:mod:`.lower_cmds`) applies the resets after the
element's statement, so both back ends get them with the IR.

The rule, exactly as SPIN's:

* *uses* of an element (``ana_stmnt``): the reads and writes of unindexed variables in its
  statement; an indexed reference ``a[i]`` uses only what ``i`` reads (the array itself is never
  a use), a structure field only its index; a receive writes its plain variable arguments and
  reads ``eval`` arguments; a poll ``c?[x]`` uses only ``eval`` arguments; ``else``, ``goto``,
  ``.``, the ends and the heads of ``if``/``do``/``atomic``/``d_step`` use nothing;
* a candidate is a local variable or parameter of the proctype (not a channel, not a
  structure; absmc also leaves out arrays, see below);
* a use of ``v`` on the edge of element ``e`` makes ``v`` dead after ``e`` when a depth-first
  search from the edge's target finds no element that reads ``v`` before one that writes it
  (``FSM_DFS``: the element's reads are looked at before its writes; the process end is dead);
* a dead *write* resets ``v`` unless the statement is ``v = 0``; a dead *read* resets ``v`` only
  after an expression statement or a receive (``good_dead``: SPIN keeps ``y = v``,
  ``assert(v)``, ``printf(v)`` and sends without a reset);
* SPIN emits no resets inside a ``d_step`` (``dstep.c`` generates its body without them), and
  switches the whole analysis off when the model refers to a remote variable ``P[i]:v``
  (``rem_var``).

Where absmc departs from SPIN, in the safe direction (a reset SPIN makes that can change
behaviour): a bare array name (``a`` for ``a[0]``) is a use in SPIN, which may then reset
``a[0]`` although ``a[i]`` reads it later; absmc never resets arrays. A variable read in a
proctype's ``provided`` clause (not an element, so SPIN's analysis does not see it) is never
reset.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from absmc.lang.promela.ast import Node

#: the name under which statistics and results list this reduction
DEAD_VARIABLE_RESET = "dead-variable-reset"


class _Element(Protocol):
    kind: str
    n: Node | None


class _Edge(Protocol):
    to: int
    step: Any


Uses = tuple[frozenset[str], frozenset[str]]


def element_uses(kind: str, n: Node | None) -> Uses:
    """The (reads, writes) of an element (``kind``, statement ``n``): names of unindexed
    variables, as SPIN's ``ana_stmnt`` records them."""
    reads: set[str] = set()
    writes: set[str] = set()
    if n is None or kind in ("else", "goto", ".", "break_tgt", "@"):
        return frozenset(), frozenset()
    if kind in ("if", "do", "atomic", "d_step", "non_atomic", "unless"):
        return frozenset(), frozenset()
    if kind == "asgn":
        lhs, rhs = n.args
        _lval(lhs, reads, writes)
        _reads(rhs, reads)
    elif kind == "r":
        _reads(n.args[0], reads)
        for a in n.args[1:]:
            if not isinstance(a, Node) or a.kind == "const":
                continue
            if a.kind == "eval":
                _reads(a.args[0], reads)
            else:
                _lval(a, reads, writes)
    else:  # c, s, assert, print, printm: every variable in the statement is read
        for a in n.args:
            _reads(a, reads)
    return frozenset(reads), frozenset(writes)


def _lval(n: Node, reads: set[str], writes: set[str]) -> None:
    """A variable written (``ana_var`` with ``LVAL``): the name when unindexed, else what
    the index reads; a structure field adds only what its own index reads."""
    if n.kind != "var":
        _reads(n, reads)
        return
    _var(n, writes, reads)


def _var(n: Node, names: set[str], reads: set[str]) -> None:
    """A variable reference: its name goes to ``names`` when unindexed (an indexed one is an
    array, never reset), else what the index reads to ``reads``; then its field's index."""
    idx, sub = n.args
    if idx is None:
        if n.name is not None:
            names.add(n.name)
    else:
        _reads(idx, reads)
    if isinstance(sub, Node):
        _field(sub, reads)


def _field(n: Node, reads: set[str]) -> None:
    """A structure field: its name is not a variable of the proctype; its index is read."""
    idx, sub = n.args
    if isinstance(idx, Node):
        _reads(idx, reads)
    if isinstance(sub, Node):
        _field(sub, reads)


def _reads(n: Any, reads: set[str]) -> None:
    """Every variable an expression reads (``ana_stmnt`` with ``RVAL``)."""
    if not isinstance(n, Node):
        return
    k = n.kind
    if k == "var":
        _var(n, reads, reads)
        return
    if k == "poll":  # SPIN's 'R': the channel, and eval() arguments only
        _reads(n.args[0], reads)
        for a in n.args[1:]:
            if isinstance(a, Node) and a.kind == "eval":
                _reads(a.args[0], reads)
        return
    for a in n.args:
        _reads(a, reads)


def _dead_from(
    start: int, var: str, graph: Mapping[int, Sequence[_Edge]], uses: dict[int, Uses]
) -> bool:
    """SPIN's ``FSM_DFS``: no path from state ``start`` reads ``var`` before writing it.
    Edges are tried in the graph's order; the first edge of a state that uses ``var``
    decides for that state (a read: live; a write: this state's search ends)."""
    if start == 0:
        return True
    seen = {start}
    stack = [iter(graph.get(start, ()))]
    while stack:
        t = next(stack[-1], None)
        if t is None:
            stack.pop()
            continue
        if t.step is not None:
            r, w = uses[id(t.step)]
            if var in r:
                return False
            if var in w:
                stack.pop()
                continue
        if t.to == 0 or t.to in seen:
            continue
        seen.add(t.to)
        stack.append(iter(graph.get(t.to, ())))
    return True


def _good_dead(step: _Element, special: int) -> bool:
    """SPIN's ``good_dead`` (and ``doforward``'s skip of ``v = 0``): whether a dead use
    (``special`` 1: read, 2: write) gives a reset."""
    n = step.n
    if special == 2:
        if step.kind == "asgn" and n is not None:
            rhs = n.args[1]
            return not (isinstance(rhs, Node) and rhs.kind == "const" and rhs.val == 0)
        return True
    return step.kind in ("c", "r")


def dead_resets(
    graph: Mapping[int, Sequence[_Edge]], candidates: Iterable[str]
) -> dict[int, tuple[str, ...]]:
    """The resets of one proctype: ``id(element)`` -> the candidate variables (names as
    declared in the proctype, in name order) to set to 0 after the element executes.

    ``graph`` is SPIN's element graph (:attr:`absmc.lang.promela.fsm.ProcFSM.graph`: state
    -> edges with ``to`` and ``step``, the element or ``None`` for an escape, in SPIN's
    order); ``candidates`` are the variables that may be reset. Elements inside a ``d_step``
    are included; the caller applies only the resets of the steps it executes one by one."""
    cand = set(candidates)
    if not cand:
        return {}
    uses: dict[int, Uses] = {}
    for edges in graph.values():
        for t in edges:
            if t.step is not None and id(t.step) not in uses:
                uses[id(t.step)] = element_uses(t.step.kind, t.step.n)
    out: dict[int, tuple[str, ...]] = {}
    for edges in graph.values():
        for t in edges:
            if t.step is None:
                continue
            r, w = uses[id(t.step)]
            dead: set[str] = set()
            for special, names in ((1, r), (2, w)):
                for v in names & cand:
                    if _dead_from(t.to, v, graph, uses) and _good_dead(t.step, special):
                        dead.add(v)
            if dead:
                out[id(t.step)] = tuple(sorted(dead))
    return out


def provided_reads(n: Node | None) -> set[str]:
    """The variables a ``provided`` clause reads (never reset: SPIN's analysis does not see
    the clause)."""
    out: set[str] = set()
    _reads(n, out)
    return out


def candidates(decls: Iterable[Any], typedefs: Iterable[str], provided: Node | None) -> set[str]:
    """The variables of a proctype that may be reset: its parameters and locals (``decls``:
    ``VarDecl``) that are scalars of a basic type (no channel, no structure of a type in
    ``typedefs``, no array) and that its ``provided`` clause does not read."""
    structs = set(typedefs)
    out = {
        d.name
        for d in decls
        if d.size is None
        and d.type != "chan"
        and d.type not in structs
        and (d.init is None or isinstance(d.init, Node))
    }
    return out - provided_reads(provided)
