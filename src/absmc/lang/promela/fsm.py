"""SPIN's control-flow automaton of a proctype, built exactly as SPIN 6.5.2 builds it.

SPIN counts a process's *program counter* as part of every stored state, so two models that
behave alike but place their processes at different control points have different state counts.
To reproduce SPIN's numbers this module follows SPIN's own construction step by step:

* ``flow.c``: every statement becomes an *element* (``if``/``do`` get a structural head and a
  ``.`` target element, a ``do`` a ``break`` target, ``atomic``/``d_step``/``{ }`` a head whose
  body is a nested sequence; ``goto``/``break`` are elements that jump; the body ends with the
  ``-end-`` element), numbered in parse order (``seqno``); ``make_atomic`` marks the elements of
  atomic sequences (``ATOM``, the last one ``L_ATOM``); ``prune_opts`` drops redundant skips;
* ``pangen5.c`` (statement merging, on in SPIN's default and ``-o1``): chains of local,
  non-blocking statements (assignments, asserts, prints, jumps) are merged into the transition
  of the statement before them (``merge``, ``merge_single``, ``merge_start``), so the states
  between them are never stored;
* ``pangen1.c``/``pangen2.c`` (``huntele``, ``put_seq``, ``put_el``, ``case_cache``): the
  target of every transition, skipping jumps and ``.`` elements but stopping where atomicity
  would be left; the atomic flag of each transition (the last merged step wins);
* ``pan.t`` (``retrans``): heads of ``if``/``do``/``atomic``/``{ }`` get, as their own
  transitions, copies of the first transition of each option (recursively for a choice that
  starts with a choice).

The result, per proctype, is a :class:`ProcFSM`: states (element seqnos) with their transitions;
each transition lists the statements it executes (the first one decides whether it is
executable), its target, and whether the process keeps exclusive control afterwards (``ATOM``).
``pan -d`` prints the same tables; the tests compare them.

The merging and table passes (``pangen5.c``, ``pangen2.c``, ``pan.t``) live in
:mod:`absmc.lang.promela.fsm_merge`; this module has the elements, the ``flow.c`` builder,
``huntele``/``huntstart`` and the entry point :func:`build_fsm`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from absmc.ir.span import ModelError, SourceSpan
from absmc.lang.promela.ast import Node, ProcDecl

ATOM = 2
L_ATOM = 4
D_ATOM = 32
CHECK2 = 128

_STRUCT = ("if", "do", "atomic", "d_step", "non_atomic", "unless")


class Seq:
    """A sequence of elements (``Sequence`` in SPIN)."""

    __slots__ = ("extent", "frst", "last")

    def __init__(self) -> None:
        self.frst: El | None = None
        self.last: El | None = None
        self.extent: El | None = None


class El:
    """One element (``Element`` in SPIN): a statement or a structural node."""

    __slots__ = (
        "body",
        "esc",
        "inline",
        "kind",
        "labels",
        "merge",
        "merge_in",
        "merge_mark",
        "merge_single",
        "merge_start",
        "n",
        "nxt",
        "seqno",
        "status",
        "sub",
    )

    def __init__(self, kind: str, n: Node | None, seqno: int) -> None:
        self.kind = kind
        self.n = n
        self.seqno = seqno
        self.nxt: El | None = None
        self.sub: list[Seq] = []
        self.esc: list[Seq] = []
        self.body: Seq | None = None
        self.status = 0
        self.merge = 0
        self.merge_start = 0
        self.merge_single = 0
        self.merge_in = 0
        self.merge_mark = 0
        self.labels: list[str] = []
        self.inline = 0

    @property
    def label(self) -> str | None:
        """The goto target label of a ``goto`` element."""
        return self.n.name if self.n is not None else None

    def __repr__(self) -> str:
        return f"El({self.seqno} {self.kind})"


@dataclass
class Trans:
    """A transition of a process: executes ``steps`` (elements; the first decides), goes to
    ``target`` (0: the process ends), and keeps exclusive control when ``atomic``. ``d_step``
    marks an indivisible sequence, ``is_else`` the ``else`` transition."""

    source: int
    target: int
    steps: list[El]
    atom: int
    tid: int
    escape: int = 0  # the escape (unless) this transition starts: its start state, else 0

    @property
    def first(self) -> El:
        return self.steps[0]

    @property
    def atomic(self) -> bool:
        return bool(self.atom & ATOM)

    @property
    def is_else(self) -> bool:
        return self.first.kind == "else"

    @property
    def is_end(self) -> bool:
        return self.first.kind == "@"

    @property
    def d_step(self) -> bool:
        return self.first.kind == "d_step"


@dataclass
class ProcFSM:
    """The transition table of one proctype (states are element seqnos; 0 is 'ended')."""

    name: str
    start: int
    end: int
    trans: dict[int, list[Trans]] = field(default_factory=dict)
    end_labels: set[int] = field(default_factory=set)
    progress_labels: set[int] = field(default_factory=set)
    accept_labels: set[int] = field(default_factory=set)
    labels: dict[str, int] = field(default_factory=dict)
    elements: list[El] = field(default_factory=list)
    builder: Any = None
    graph: dict[int, list[Any]] = field(default_factory=dict)  # pangen5.c's (ana_seq)

    @property
    def last_location(self) -> int:
        """The highest location number (a slot holding several proctypes gives each
        ``last_location + 1`` program-counter values)."""
        return max(self.trans.keys() | {self.end, self.start})

    def reachable(self) -> list[int]:
        """States reachable from the start state, in DFS order."""
        seen: list[int] = []
        stack = [self.start]
        mark = set()
        while stack:
            s = stack.pop()
            if s in mark or s == 0:
                continue
            mark.add(s)
            seen.append(s)
            for t in reversed(self.trans.get(s, [])):
                stack.append(t.target)
        return seen

    def stopstates(self) -> set[int]:
        """States that are valid end states (end labels and the final state)."""
        return {*self.end_labels, self.end}


class FSMBuilder:
    """Builds the elements of one proctype body following SPIN's parser actions."""

    def __init__(self, proc: ProcDecl, inlines: dict[str, Any], merge: bool = True) -> None:
        self.proc = proc
        self.inlines = inlines
        self.merge_on = merge
        self.elcnt = 1
        self.all: list[El] = []
        self.seqs: list[Seq] = []
        self.breaks: list[str] = []
        self.break_id = 0
        self.labels: list[tuple[str, El, int]] = []  # (name, element, inline instance)
        self.label_spans: dict[str, SourceSpan | None] = {}  # where each label is written
        self.init_ok = True
        self.inline_stack: list[int] = [0]
        self.inline_count = 0
        self.xu: dict[str, int] = {}
        self.xu_of: Any = lambda name: 0
        self.array_size: Any = lambda name: None
        self.u_sync = False

    # -- errors ---------------------------------------------------------------------------
    def err(self, msg: str, n: Node | None) -> ModelError:
        span = n.span if n is not None else self.proc.span
        return ModelError(
            msg, span or SourceSpan(self.proc.span.file if self.proc.span else "", 1, 1)
        )

    # -- sequences -------------------------------------------------------------------------
    def new_el(self, kind: str, n: Node | None) -> El:
        e = El(kind, n, self.elcnt)
        self.elcnt += 1
        e.inline = self.inline_stack[-1]
        self.all.append(e)
        return e

    def open_seq(self, top: bool = False) -> None:
        self.seqs.append(Seq())
        self.init_ok = top

    def close_seq(self, where: Node | None) -> Seq:
        s = self.seqs.pop()
        if s.last is None:
            raise self.err("a sequence must have at least one statement", where)
        s.extent = s.last
        return s

    @property
    def cur(self) -> Seq:
        return self.seqs[-1]

    def add_el(self, e: El, s: Seq) -> None:
        if e.kind == "goto" and any(_special(lb) for lb in e.labels):
            y = self.mk_skip(e.n)
            y.labels, e.labels = e.labels, []
            self._relabel(e, y)
            self.add_el(y, s)
        if s.frst is None:
            s.frst = e
        else:
            assert s.last is not None
            s.last.nxt = e
        s.last = e

    def _relabel(self, old: El, new: El) -> None:
        self.labels = [(nm, new if el is old else el, ii) for nm, el, ii in self.labels]

    def mk_skip(self, where: Node | None) -> El:
        n = Node("c", [Node("const", val=1)], span=where.span if where else None, text="(1)")
        return self.new_el("c", n)

    def set_lab(self, name: str, e: El) -> None:
        inst = self.inline_stack[-1]
        for nm, _el, ii in self.labels:
            if nm == name and ii == inst and not name.startswith(":"):
                raise self.err(f"label '{name}' is declared twice", e.n)
        self.labels.append((name, e, inst))
        e.labels.append(name)

    def get_lab(self, name: str, inst: int, where: Node | None) -> El:
        best = None
        for nm, el, ii in self.labels:
            if nm == name:
                if ii == inst:
                    return el
                if best is None:
                    best = el
        if best is None:
            raise self.err(f"undefined label '{name}'", where)
        return best

    # -- statements ------------------------------------------------------------------------
    def build(self) -> Seq:
        self.open_seq(True)
        for st in self.proc.body:
            self.step(st)
        stop = self.new_el("@", Node("@", span=self.proc.span, text="-end-"))
        self.add_el(stop, self.cur)
        s = self.seqs.pop()
        s.extent = s.last
        self.loose_ends()
        return s

    def step(self, st: Node) -> None:
        k = st.kind
        if k == "decl":
            for d in st.args:
                if not self.init_ok:
                    self.decl_assign(d, st)
            return
        if k == "xu":
            for v in st.args:
                assert v.name is not None
                self.xu[v.name] = self.xu.get(v.name, 0) | (1 if st.name == "xr" else 2)
            return
        if k == "pred":
            return
        n = self.stmnt(st)
        if n is not None:
            self.add_seq(n)

    def decl_assign(self, d: Any, where: Node) -> None:
        """A declaration after the first statement becomes an assignment (SPIN's ivar)."""
        from absmc.lang.promela.ast import ChanInit

        if isinstance(d.init, ChanInit):
            raise self.err(f"channel '{d.name}' must be declared before the first statement", where)
        lhs = Node(
            "var", [Node("const", val=0) if d.size else None, None], name=d.name, span=d.span
        )
        rhs = d.init if isinstance(d.init, Node) else Node("const", val=0)
        if isinstance(d.init, list):
            rhs = d.init[0] if d.init else Node("const", val=0)
        n = Node("asgn", [lhs, rhs], span=d.span, text=f"{d.name} = ...")
        self.add_seq(n)
        self.init_ok = False

    def stmnt(self, st: Node) -> Node | None:
        """Parse-time processing of one statement (children first); returns the statement
        node to add to the current sequence."""
        self.init_ok = False
        k = st.kind
        if k in ("if", "do"):
            if k == "do":
                self.pushbreak()
            assert st.options is not None
            seqs = []
            for opt in st.options:
                self.open_seq()
                for s2 in opt:
                    self.step(s2)
                seqs.append(self.close_seq(st))
            self.prune_opts(seqs)
            n = Node(k, span=st.span, text=k.upper())
            n.args = list(seqs)
            self.init_ok = False
            return n
        if k in ("atomic", "d_step", "block"):
            assert st.options is not None
            self.open_seq()
            for s2 in st.options[0]:
                self.step(s2)
            body = self.close_seq(st)
            kind = "non_atomic" if k == "block" else k
            n = Node(kind, span=st.span, text=k)
            n.args = [body]
            if k != "block":
                self.make_atomic(body, D_ATOM if k == "d_step" else 0)
            self.init_ok = False
            return n
        if k == "label":
            inner = st.args[0]
            innode = (
                self.stmnt(inner)
                if inner is not None
                else Node("c", [Node("const", val=1)], span=st.span, text="(1)")
            )
            n = Node(":", [innode], name=st.name, span=st.span)
            return n
        if k == "break":
            if not self.breaks:
                raise self.err("'break' outside a do loop", st)
            return Node("goto", name=self.breaks[-1], span=st.span, text="break", val=1)
        if k == "unless":
            # flow.c: do_unless (a `{ }` block on either side is used as the sequence itself)
            main = self.stmnt(st.args[0])
            esc = self.stmnt(st.args[1])
            assert main is not None and esc is not None
            if esc.kind == "non_atomic":
                seq2 = esc.args[0]
            else:
                self.open_seq()
                self.add_seq(esc)
                seq2 = self.close_seq(st)
            if main.kind == "non_atomic":
                s1 = main.args[0]
            else:
                self.open_seq()
                self.add_seq(main)
                s1 = self.close_seq(st)
            un = Node("unless", span=st.span, text="unless")
            un.args = [s1, seq2]
            self.init_ok = False
            return un
        if k == "inline_call":
            return self.inline_call(st)
        if k == "for":
            return self.for_range(st)
        if k == "select":
            return self.select(st)
        if k == "for_in":
            return self.for_in(st)
        return st

    def inline_call(self, st: Node) -> Node:
        decl = self.inlines.get(st.name or "")
        if decl is None:
            raise self.err(f"undefined inline or proctype '{st.name}'", st)
        if len(decl.params) != len(st.args):
            raise self.err(
                f"inline '{st.name}' takes {len(decl.params)} argument(s), got {len(st.args)}", st
            )
        if st.name in _INLINE_GUARD:
            raise self.err(f"recursive inline '{st.name}'", st)
        mapping = dict(zip(decl.params, st.args, strict=True))
        body = [_subst(s, mapping) for s in decl.body]
        self.inline_count += 1
        self.inline_stack.append(self.inline_count)
        _INLINE_GUARD.add(st.name or "")
        try:
            return self.stmnt(Node("block", span=st.span, options=[body])) or st
        finally:
            _INLINE_GUARD.discard(st.name or "")
            self.inline_stack.pop()

    def for_range(self, st: Node) -> Node:
        v, lo, hi = st.args
        self.pushbreak()
        self.add_seq(Node("asgn", [v, lo], span=st.span))
        self.open_seq()
        self.add_seq(Node("c", [Node("<=", [v, hi], span=st.span)], span=st.span))
        assert st.options is not None
        for s2 in st.options[0]:
            self.step(s2)
        return self.for_body(v, st, True)

    def for_in(self, st: Node) -> Node:
        """``for (i in a)`` over an array: ``i`` runs over ``0 .. len(a) - 1`` (flow.c)."""
        v, arr = st.args
        size = self.array_size(arr.name or "")
        if size is None:
            raise self.err(
                f"'for ({v.name} in {arr.name})' needs an array (channels are not supported)", st
            )
        st2 = Node("for", [v, Node("const", val=0), Node("const", val=size - 1)], span=st.span)
        st2.options = st.options
        return self.for_range(st2)

    def select(self, st: Node) -> Node:
        v, lo, hi = st.args
        from absmc.lang.promela.parser import const_value

        clo, chi = const_value(lo), const_value(hi)
        if clo is not None and chi is not None:
            # SPIN 6.5.2: a constant range becomes one `if` option per value
            opts = [
                [Node("asgn", [v, Node("const", val=k)], span=st.span)] for k in range(clo, chi + 1)
            ]
            if not opts:
                raise self.err("empty range in select", st)
            return self.stmnt(Node("if", span=st.span, options=opts)) or st
        self.add_seq(Node("asgn", [v, lo], span=st.span))
        self.open_seq()
        self.add_seq(Node("c", [Node("<", [v, hi], span=st.span)], span=st.span))
        self.pushbreak()
        return self.for_body(v, st, False)

    def for_body(self, v: Node, st: Node, with_else: bool) -> Node:
        one = Node("const", val=1)
        self.add_seq(Node("asgn", [v, Node("+", [v, one])], span=st.span))
        t1 = self.close_seq(st)
        self.open_seq()
        if with_else:
            self.add_seq(Node("else", span=st.span))
        self.add_seq(Node("goto", name=self.breaks[-1], span=st.span, text="break", val=1))
        t2 = self.close_seq(st)
        n = Node("do", span=st.span, text="DO")
        n.args = [t2, t1]
        return n

    def pushbreak(self) -> None:
        self.breaks.append(f":b{self.break_id}")
        self.break_id += 1

    def prune_opts(self, seqs: list[Seq]) -> None:
        for s in seqs:
            cnt = 0
            le: El | None = None
            e = s.frst
            while e is not None:
                if _is_skip(e) and not e.labels:
                    cnt += 1
                    inner = e is not s.frst and e is not s.last and e is not s.extent
                    if cnt > 1 and e.kind not in ("print", "printm") and inner:
                        assert le is not None
                        le.nxt = e.nxt
                        e = le
                else:
                    cnt = 0
                le = e
                e = e.nxt

    # -- add_seq / new_el / if_seq ---------------------------------------------------------
    def add_seq(self, n: Node) -> None:
        inner = n
        while inner.kind == ":":
            inner = inner.args[0]
        e = self.colons(n)
        if inner.kind not in ("if", "do", "unless"):
            self.add_el(e, self.cur)

    def colons(self, n: Node) -> El:
        if n.kind == ":":
            e = self.colons(n.args[0])
            assert n.name is not None
            self.set_lab(n.name, e)
            self.label_spans.setdefault(n.name, n.span)
            return e
        return self.make_el(n)

    def make_el(self, n: Node) -> El:
        k = n.kind
        if k in ("if", "do"):
            return self.if_seq(n)
        if k == "unless":
            return self.unless_seq(n)
        e = self.new_el(k, n)
        if k in ("atomic", "d_step", "non_atomic"):
            e.body = n.args[0]
        return e

    def if_seq(self, n: Node) -> El:
        tok = n.kind
        opts: list[Seq] = list(n.args)
        e = self.new_el(tok, None)
        t = self.new_el(".", Node(".", span=n.span, text=".(goto)"))
        # move an `else` option to the end
        els = [s for s in opts if s.frst is not None and s.frst.kind == "else"]
        if len(els) > 1:
            raise self.err("duplicate 'else'", n)
        if els and opts[-1] is not els[0]:
            opts.remove(els[0])
            opts.append(els[0])
        e.n = Node(tok, span=n.span, text=tok.upper())
        e.sub = opts
        for z in opts:
            self.add_el(t, z)
        if tok == "do":
            self.add_el(t, self.cur)
            t = self.new_el("break_tgt", Node("break_tgt", span=n.span, text="break"))
            self.set_lab(self.breaks[-1], t)
            self.breaks.pop()
        self.add_el(e, self.cur)
        self.add_el(t, self.cur)
        return e

    def unless_seq(self, n: Node) -> El:
        s: list[Seq] = list(n.args)
        e = self.new_el("unless", Node("unless", span=n.span, text="unless"))
        t = self.new_el(".", Node(".", span=n.span, text=".(goto)"))
        e.sub = s
        for z in s:
            self.add_el(t, z)
        self.attach_escape(s[0], s[1])
        self.add_el(e, self.cur)
        self.add_el(t, self.cur)
        return e

    def escape_el(self, f: El, e: Seq) -> None:
        if e in f.esc:
            return
        for z in f.esc:
            self.attach_escape(z, e)
        f.esc.insert(0, e)
        if f.kind == "unless":
            self.attach_escape(f.sub[0], e)
        elif f.kind in ("if", "do"):
            for z in f.sub:
                self.attach_escape(z, e)
        elif f.kind == "d_step":
            assert f.body is not None and f.body.frst is not None
            self.escape_el(f.body.frst, e)
        elif f.kind in ("atomic", "non_atomic"):
            assert f.body is not None
            self.attach_escape(f.body, e)

    def attach_escape(self, n: Seq, e: Seq) -> None:
        f = n.frst
        while f is not None:
            self.escape_el(f, e)
            if f is n.extent:
                break
            f = f.nxt

    # -- atomic marking (flow.c) -----------------------------------------------------------
    def make_atomic(self, s: Seq, added: int) -> None:
        self.walk_atomic(s.frst, s.last, added)
        f = s.last
        assert f is not None
        if f.kind in ("non_atomic", "atomic"):
            assert f.body is not None
            self.make_atomic(f.body, added)
        elif f.kind == "unless":
            self.make_atomic(f.sub[0], added)
        else:
            f.status &= ~ATOM
            f.status |= L_ATOM

    def walk_atomic(self, a: El | None, b: El | None, added: int) -> None:
        f = a
        while f is not None:
            f.status |= ATOM | added
            if f.kind == "atomic" or (f.kind == "d_step" and added):
                f.kind = "non_atomic"
                if f.n is not None:
                    f.n = Node("non_atomic", f.n.args, span=f.n.span, text=f.n.text)
            if f.kind == "non_atomic":
                assert f.body is not None
                self.walk_atomic(f.body.frst, f.body.last, added)
            for h in f.sub:
                self.walk_atomic(h.frst, h.last, added)
            if f is b:
                break
            f = f.nxt

    def loose_ends(self) -> None:
        for e in self.all:
            if e.kind in ("atomic", "non_atomic", "d_step") and e.nxt is not None:
                assert e.body is not None and e.body.last is not None
                f: El | None = e.nxt
                while f is not None and f.kind == ".":
                    f = f.nxt
                if e.body.last.nxt is None:
                    e.body.last.nxt = f


_INLINE_GUARD: set[str] = set()


def _special(label: str) -> bool:
    return label.startswith(("accept", "end", "progress"))


def _is_skip(e: El) -> bool:
    if e.kind in ("print", "printm"):
        return True
    return (
        e.kind == "c" and e.n is not None and e.n.args[0].kind == "const" and e.n.args[0].val == 1
    )


def _subst(n: Any, mapping: dict[str, Node]) -> Any:
    """Inline parameter substitution (SPIN substitutes the argument text for the name)."""
    if isinstance(n, list):
        return [_subst(x, mapping) for x in n]
    if not isinstance(n, Node):
        return n
    if n.kind == "var" and n.name in mapping and n.args[0] is None and n.args[1] is None:
        return mapping[n.name]
    if n.kind == "var" and n.name in mapping:
        base = mapping[n.name]
        if base.kind == "var" and base.args[0] is None and base.args[1] is None:
            return Node(
                "var",
                [_subst(n.args[0], mapping), _subst(n.args[1], mapping)],
                name=base.name,
                span=n.span,
            )
    out = Node(n.kind, [_subst(a, mapping) for a in n.args], n.name, n.val, n.span, text=n.text)
    if n.options is not None:
        out.options = [[_subst(s, mapping) for s in opt] for opt in n.options]
    return out


# -- huntele / huntstart (pangen1.c) -------------------------------------------------------
class Table:
    """Label lookup and element helpers shared by the analysis passes."""

    def __init__(self, b: FSMBuilder) -> None:
        self.b = b

    def lab(self, e: El) -> El:
        assert e.n is not None and e.n.name is not None
        return self.b.get_lab(e.n.name, e.inline, e.n)


def huntstart(f: El) -> El:
    e = f
    for _ in range(200):
        if e.kind == "." and e.nxt is not None:
            e = e.nxt
        elif e.kind == "unless":
            assert e.sub[0].frst is not None
            e = e.sub[0].frst
        else:
            return e
    raise ModelError("confusing control structure", e.n.span if e.n else None)


def huntele(tab: Table, f: El | None, o: int, stopat: int) -> El:
    e = f
    assert e is not None
    for _ in range(500):
        if e.seqno == stopat:
            return e
        if e.kind == "goto":
            g = tab.lab(e)
            if g is e:
                raise ModelError("infinite goto loop", e.n.span if e.n else None)
        elif e.kind in (".", "break_tgt"):
            if e.nxt is None:
                return e
            g = e.nxt
        elif e.kind == "unless":
            g = huntele(tab, e.sub[0].frst, o, stopat)
        else:
            return e
        if (o & ATOM) and not (g.status & ATOM):
            return e
        e = g
    raise ModelError("confusing control structure (a cycle of jumps)", e.n.span if e.n else None)


def build_fsm(
    proc: ProcDecl,
    inlines: dict[str, Any],
    is_global: Any,
    xu_of: Any,
    u_sync: bool,
    merge: bool = True,
    array_size: Any = None,
) -> ProcFSM:
    """The SPIN transition table of ``proc``.

    ``is_global(name)`` tells whether a variable name (as written in this proctype) refers to a
    global; ``xu_of(name)`` gives the xr/xs flags of a channel name (1 xr, 2 xs: SPIN's ``xu``);
    ``u_sync`` is true when the model has rendezvous channels (no merging after sends).
    Raises ``ModelError`` for structural errors (undefined labels, misplaced break, ...).
    """
    # the merging pass builds on this module's elements; imported here to keep one direction
    from absmc.lang.promela.fsm_merge import Analyzer

    b = FSMBuilder(proc, inlines, merge)
    b.xu_of = xu_of
    b.u_sync = u_sync
    if array_size is not None:
        b.array_size = array_size
    top = b.build()
    an = Analyzer(b, top, is_global, merge)
    an.ana_seq(top)
    assert top.frst is not None
    if merge:
        an.merger()
        huntele(an.tab, top.frst, top.frst.status, -1).merge_in = 1
    table = an.transitions()
    start = huntele(an.tab, top.frst, top.frst.status, -1).seqno
    assert top.last is not None
    fsm = ProcFSM(proc.name, start, top.last.seqno, table, elements=b.all, builder=b, graph=an.fsm)
    for name, el, _ in b.labels:
        if name.startswith(":"):
            continue
        fsm.labels.setdefault(name, el.seqno)
        if name.startswith("end"):
            fsm.end_labels.add(el.seqno)
        elif name.startswith("progress"):
            fsm.progress_labels.add(el.seqno)
        elif name.startswith("accept"):
            fsm.accept_labels.add(el.seqno)
    _propagate_stops(fsm, table)
    return fsm


def _propagate_stops(fsm: ProcFSM, table: dict[int, list[Trans]]) -> None:
    # pan.t retrans: a lone `.(goto)` out of an end state makes its target an end state
    for i, ts in table.items():
        if len(ts) == 1 and ts[0].first.kind == "." and i in fsm.end_labels:
            fsm.end_labels.add(ts[0].target)


def dump(fsm: ProcFSM) -> str:
    """The reachable transitions in the style of ``pan -d`` (for comparison with SPIN)."""
    lines = [f"proctype {fsm.name}"]
    for s in _tag_order(fsm):
        for t in fsm.trans.get(s, []):
            kind = "A" if t.atom & ATOM else ("D" if t.atom & D_ATOM else "-")
            lines.append(f"\tstate {s:3d} -> state {t.target:3d} [{kind}] {_text(t.first)}")
    return "\n".join(lines)


def _tag_order(fsm: ProcFSM) -> list[int]:
    out: list[int] = []
    seen: set[int] = set()

    def tag(s: int) -> None:
        if s in seen or s == 0 or s not in fsm.trans:
            return
        seen.add(s)
        out.append(s)
        for t in fsm.trans[s]:
            tag(t.target)

    tag(fsm.start)
    return out


def _text(e: El) -> str:
    if e.n is not None and e.n.text:
        return e.n.text
    return e.kind
