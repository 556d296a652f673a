"""SPIN's statement merging (``pangen5.c``) and transition table (``pangen2.c``, ``pan.t``).

Part of :mod:`absmc.lang.promela.fsm` (which documents the whole construction):
:class:`Analyzer` marks which statements touch shared state (``has_global``), merges chains of
local, non-blocking statements into the transition before them (``merger``), and builds each
state's transitions, including ``retrans``'s copies of the first transitions of an option at the
head of ``if``/``do``/``atomic`` (``transitions``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from absmc.ir.span import ModelError
from absmc.lang.promela.ast import Node
from absmc.lang.promela.fsm import (
    ATOM,
    CHECK2,
    D_ATOM,
    L_ATOM,
    El,
    FSMBuilder,
    Seq,
    Table,
    Trans,
    huntele,
    huntstart,
)


# -- statement merging (pangen5.c) ---------------------------------------------------------
@dataclass
class _FT:
    to: int
    step: El | None


def has_global(n: Node | None, b: FSMBuilder, gl: Any) -> bool:
    """Does ``n`` touch shared state (SPIN's ``has_global``)? ``gl`` answers for names."""
    if n is None:
        return False
    k = n.kind
    if k in ("atomic", "d_step", "non_atomic"):
        return scan_seq(n.args[0], b, gl)
    if k in (".", "break_tgt", "goto", "const", "@"):
        return False
    if k == "else":
        return bool(n.val)
    if k in ("s", "r"):
        ch = n.args[0]
        flag = 2 if k == "s" else 1
        if any(_glob_arg(a, b, gl) for a in n.args[1:]):
            return True
        return (_xu(b, ch) & (flag | 4)) != flag
    if k == "poll":
        return True
    if k in ("nempty", "full"):
        return (_xu(b, n.args[0]) & (1 | 4)) != 1
    if k in ("nfull", "empty"):
        return (_xu(b, n.args[0]) & (2 | 4)) != 2
    if k == "len":
        return (_xu(b, n.args[0]) & 7) != 3
    if k == "var":
        if n.name in ("_pid", "_", "_priority"):
            return False
        if gl(n.name):
            return True
        return has_global(n.args[0], b, gl) or has_global(n.args[1], b, gl)
    if k == "run":
        return True
    if k in (
        "enabled",
        "pc_value",
        "np_",
        "timeout",
        "remote_label",
        "remote_var",
        "get_priority",
        "set_priority",
    ):
        return True
    return any(has_global(a, b, gl) for a in n.args if isinstance(a, Node))


def _xu(b: FSMBuilder, ch: Node) -> int:
    return int(b.xu_of(ch.name or ""))


def _glob_arg(a: Node, b: FSMBuilder, gl: Any) -> bool:
    if a.kind == "const":
        return False
    if a.kind == "eval":
        return has_global(a.args[0], b, gl)
    return has_global(a, b, gl)


def scan_seq(s: Seq, b: FSMBuilder, gl: Any) -> bool:
    f = s.frst
    while f is not None:
        if (f.status & CHECK2) or has_global(f.n, b, gl):
            return True
        if f.kind == "goto" and not (f.status & D_ATOM):
            g = _target(b, f)
            if g is not None and not _seq_has_el(s, g, set()):
                return True
        for h in f.sub:
            if scan_seq(h, b, gl):
                return True
        if f is s.last:
            break
        f = f.nxt
    return False


def _target(b: FSMBuilder, e: El) -> El | None:
    tab = Table(b)
    for _ in range(33):
        if e.kind == "goto":
            e = tab.lab(e)
        elif e.kind == "break_tgt" and e.nxt is not None:
            e = huntele(tab, e.nxt, e.status, -1)
        else:
            return e
    raise ModelError("cycle of goto jumps", e.n.span if e.n else None)


def _seq_has_el(s: Seq, g: El, seen: set[int]) -> bool:
    f = s.frst
    while f is not None:
        if f is g:
            return True
        if id(f) in seen:
            f = f.nxt
            continue
        seen.add(id(f))
        for h in f.sub:
            if _seq_has_el(h, g, seen):
                return True
        if f.body is not None and _seq_has_el(f.body, g, seen):
            return True
        f = f.nxt
    return False


class Analyzer:
    """Builds the transition table of one proctype from its elements (merging included)."""

    def __init__(self, b: FSMBuilder, top: Seq, gl: Any, merge: bool = True) -> None:
        self.b = b
        self.tab = Table(b)
        self.top = top
        self.gl = gl
        self.merge = merge
        self.fsm: dict[int, list[_FT]] = {}
        self.indeg: dict[int, int] = {}
        self.done: set[int] = set()
        self.tid = 0

    def glob(self, e: El) -> bool:
        return has_global(e.n, self.b, self.gl)

    # ana_seq: the FSM graph used by the merger
    def edge(self, frm: int, to: int, e: El | None) -> None:
        self.fsm.setdefault(frm, []).insert(0, _FT(to, e))
        self.indeg[to] = self.indeg.get(to, 0) + 1
        self.fsm.setdefault(to, [])

    def ana_seq(self, s: Seq) -> None:
        e = s.frst
        while e is not None:
            if id(e) not in self.done:
                self.done.add(id(e))
                frm = e.seqno
                if e.kind == "unless":
                    self.ana_seq(e.sub[0])
                elif e.sub:
                    for h in e.sub:
                        assert h.frst is not None
                        g = huntstart(h.frst)
                        if not _is_false(g) or g.esc:
                            self.edge(frm, g.seqno, e)
                    for h in e.sub:
                        self.ana_seq(h)
                elif e.kind in ("atomic", "d_step", "non_atomic"):
                    t = e.body
                    assert t is not None and t.frst is not None and t.last is not None
                    g = huntstart(t.frst)
                    t.last.nxt = e.nxt
                    self.edge(frm, g.seqno, e)
                    self.ana_seq(t)
                else:
                    if e.kind == "goto":
                        g = huntele(self.tab, self.tab.lab(e), e.status, -1)
                        to = g.seqno
                    elif e.nxt is not None:
                        to = huntele(self.tab, e.nxt, e.status, -1).seqno
                    else:
                        to = 0
                    self.edge(frm, to, e)
                    if e.esc and e.kind not in ("goto", "."):
                        for h in e.esc:
                            assert h.frst is not None
                            g = huntstart(h.frst)
                            self.edge(frm, g.seqno, None)
                            self.ana_seq(h)
            if e is s.last:
                break
            e = e.nxt

    def eligible(self, v: _FT | None, alts: int) -> bool:
        if v is None or v.step is None:
            return False
        el = v.step
        if (
            alts > 1
            or el.esc
            or (el.status & CHECK2)
            or el.kind
            in (
                "atomic",
                "non_atomic",
                "if",
                "do",
                "unless",
                "d_step",
                "else",
                "@",
                "c",
                "r",
                "s",
                "set_priority",  # SPIN: "to prevent multiple set_p merges"
            )
            or el.labels
        ):
            return False
        return not (not (el.status & (ATOM | L_ATOM)) and self.glob(el))

    def canfill_in(self, v: _FT, alts: int) -> bool:
        el = v.step
        assert el is not None
        if alts > 1 or el.esc or (el.status & CHECK2):
            return False
        return not (not (el.status & (ATOM | L_ATOM)) and self.glob(el))

    def first(self, st: int) -> tuple[_FT | None, int]:
        lst = self.fsm.get(st)
        if not lst:
            return None, 0
        return lst[0], len(lst)

    def build_step(self, v: _FT | None, alts: int, stack: list[int]) -> int:
        if v is None or v.step is None:
            return -1
        el = v.step
        if el.merge:
            return el.merge
        if not self.eligible(v, alts):
            return -1
        if id(v) in stack:
            return -1
        stack.append(id(v))
        nv, nalts = self.first(v.to)
        r = self.build_step(nv, nalts, stack)
        el.merge = v.to if r == -1 else r
        stack.pop()
        return el.merge

    def merger(self) -> None:
        for frm, lst in self.fsm.items():
            for t in lst:
                if t.step is None:
                    continue
                t.step.merge_in = self.indeg.get(frm, 0)
                if t.step.merge:
                    continue
                if t.step.kind in ("c", "r", "s"):
                    continue
                if not self.eligible(t, len(lst)):
                    continue
                g, galts = self.first(t.to)
                if g is None or not self.eligible(g, galts):
                    t.step.merge_single = t.to
                    continue
                self.build_step(t, len(lst), [])
        for _frm, lst in self.fsm.items():
            for t in lst:
                if t.step is None or t.step.merge:
                    continue
                el = t.step
                k = el.kind
                uses_run = k == "c" and _any_run(el.n)
                if (k == "c" and not uses_run) or k == "r" or (k == "s" and not self.b.u_sync):
                    if not self.canfill_in(t, len(lst)):
                        continue
                    g, _ = self.first(t.to)
                    if g is None or g.step is None:
                        continue
                    if g.step.merge:
                        el.merge_start = g.step.merge
                    elif g.step.merge_single:
                        el.merge_start = g.step.merge_single

    # put_seq / put_el / case_cache: the final transitions
    def transitions(self) -> dict[int, list[Trans]]:
        table: dict[int, list[Trans]] = {}
        headers: dict[int, list[int]] = {}
        done: set[int] = set()

        def put_seq(s: Seq) -> None:
            e = s.frst
            while e is not None:
                if id(e) not in done:
                    done.add(id(e))
                    if e.kind == "unless":
                        put_seq(e.sub[0])
                    elif e.sub:
                        headers[e.seqno] = [huntstart(h.frst).seqno for h in e.sub if h.frst]
                        headers[e.seqno] = [
                            huntstart(h.frst).seqno
                            for h in e.sub
                            if h.frst is not None
                            and (not _is_false(huntstart(h.frst)) or huntstart(h.frst).esc)
                        ]
                        for h in e.sub:
                            put_seq(h)
                    elif e.kind in ("atomic", "d_step", "non_atomic"):
                        put_sub(e)
                    else:
                        put_el(e)
                if e is s.last:
                    break
                e = e.nxt

        def put_sub(e: El) -> None:
            s = e.body
            assert s is not None and s.frst is not None and s.last is not None
            self.patch_atomic(s)
            g = huntstart(s.frst)
            s.last.nxt = e.nxt
            if e.kind == "d_step":
                a = huntele(self.tab, e.nxt, e.status, -1).seqno if e.nxt is not None else 0
                inherit = e.status & (ATOM | L_ATOM)
                self.tid += 1
                table.setdefault(e.seqno, []).append(
                    Trans(e.seqno, a, [e], D_ATOM | inherit, self.tid)
                )
                self.put_escp(e, table, put_seq)
            else:
                headers[e.seqno] = [g.seqno]
                put_seq(s)

        def put_el(e: El) -> None:
            if e.kind == "goto":
                g = huntele(self.tab, self.tab.lab(e), e.status, -1)
                a = g.seqno
            elif e.nxt is not None:
                a = huntele(self.tab, e.nxt, e.status, -1).seqno
            else:
                a = 0
            if not (e.merge_start or e.merge) and e.kind in ("else", ".", "goto", "break_tgt"):
                self.tid += 1
                table.setdefault(e.seqno, []).append(
                    Trans(e.seqno, a, [e], e.status & ATOM, self.tid)
                )
                self.put_escp(e, table, put_seq)
                return
            if not (e.merge_start or e.merge) and _is_skip_el(e):
                self.tid += 1
                table.setdefault(e.seqno, []).append(
                    Trans(e.seqno, a, [e], e.status & ATOM, self.tid)
                )
                self.put_escp(e, table, put_seq)
                return
            # case_cache
            if e.merge_mark > 0 or (self.merge and e.merge_in == 0):
                return  # nominally unreachable (part of a merge chain)
            mark = e.status & ATOM
            steps = [e]
            ntarget = e.merge_start or e.merge
            if ntarget:
                f: El | None = e
                while True:
                    assert f is not None
                    if f.kind == "goto":
                        g = self.tab.lab(f)
                        f = g if g.seqno == ntarget else huntele(self.tab, g, f.status, ntarget)
                    else:
                        f = f.nxt
                    if f is None or f.seqno == ntarget:
                        break
                    if not f.merge and not f.merge_single:
                        break
                    steps.append(f)
                    mark = f.status & (ATOM | L_ATOM)
                    if f.merge_in == 1:
                        f.merge_mark += 1
            j = ntarget if ntarget else a
            self.tid += 1
            table.setdefault(e.seqno, []).append(Trans(e.seqno, j, steps, mark, self.tid))
            self.put_escp(e, table, put_seq)

        put_seq(self.top)
        return self.retrans(table, headers)

    def put_escp(self, e: El, table: dict[int, list[Trans]], put_seq: Any) -> None:
        if e.esc and e.kind != ".":
            for x in e.esc:
                put_seq(x)

    def patch_atomic(self, s: Seq) -> None:
        f = s.frst
        while f is not None:
            if f.kind == "goto":
                g = self.tab.lab(f)
                if (f.status & (ATOM | L_ATOM)) and not (g.status & (ATOM | L_ATOM)):
                    f.status &= ~ATOM
                    f.status |= L_ATOM
                if (f.status & L_ATOM) and (g.status & (ATOM | L_ATOM)):
                    f.status &= ~L_ATOM
                    f.status |= ATOM
            else:
                for h in f.sub:
                    self.patch_atomic(h)
            if f is s.extent:
                break
            f = f.nxt

    def retrans(
        self, table: dict[int, list[Trans]], headers: dict[int, list[int]]
    ) -> dict[int, list[Trans]]:
        # step 1: flatten choices whose option starts with another choice
        changed = True
        while changed:
            changed = False
            for i, opts in list(headers.items()):
                if any(o in headers for o in opts):
                    new: list[int] = []
                    for o in opts:
                        if o in headers:
                            new.extend(headers[o])
                            changed = True
                        else:
                            new.append(o)
                    headers[i] = new
        # step 2: a header's transitions are copies of each option's first transition
        out: dict[int, list[Trans]] = {}
        for i, ts in table.items():
            out[i] = list(ts)
        for i, opts in headers.items():
            lst: list[Trans] = []
            for o in opts:
                got = table.get(o)
                if got:
                    ts = got
                    t = ts[0]
                    lst.append(Trans(i, t.target, t.steps, t.atom, t.tid))
            out[i] = lst
        # escapes (unless, pan.t retrans): every transition of a state brings the escapes of
        # its statement, prepended to the state's list (escapes are tried first)
        for i in list(out):
            cur = out[i]
            merged: list[Trans] = list(cur)
            for t0 in cur:
                e = t0.first
                if not e.esc or e.kind in ("goto", "."):
                    continue
                for x in reversed(e.esc):
                    assert x.frst is not None
                    g = huntele(self.tab, x.frst, e.status, -1).seqno
                    for t1 in out.get(g, []):
                        if any(t1.tid == u.tid for u in merged):
                            continue
                        merged.insert(0, Trans(i, t1.target, t1.steps, t1.atom, t1.tid, g))
            out[i] = merged
        return out


def _is_false(g: El) -> bool:
    return (
        g.kind == "c" and g.n is not None and g.n.args[0].kind == "const" and g.n.args[0].val == 0
    )


def _is_skip_el(e: El) -> bool:
    return (
        e.kind == "c" and e.n is not None and e.n.args[0].kind == "const" and e.n.args[0].val == 1
    )


def _any_run(n: Node | None) -> bool:
    if n is None:
        return False
    if n.kind == "run":
        return True
    return any(_any_run(a) for a in n.args if isinstance(a, Node))
