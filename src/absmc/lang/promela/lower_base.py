"""Promela lowering, what its parts share: channels, proctypes, process slots and symbolic
execution paths, the lowering's state (:class:`LowererBase`) and helper functions (the parts
are ``lower_decls``, ``lower_exprs``, ``lower_stmts``, ``lower_procs``, ``lower_cmds``;
:class:`absmc.lang.promela.lower.Lowerer` joins them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from absmc.ir.arrays import select_chain, write_layer
from absmc.ir.expr import FALSE, Const, Expr, Op, Var
from absmc.ir.span import ModelError, SourceSpan
from absmc.ir.system import ChannelClaim, Command, Print, Property, Variable
from absmc.lang.promela.assigned import nodes
from absmc.lang.promela.ast import Model, Node, ProcDecl, VarDecl
from absmc.lang.promela.fsm import El, ProcFSM, Trans
from absmc.lang.promela.simplify import conj, mk, neg
from absmc.lang.promela.types import (
    Layout,
)

MAX_PATHS = 4096
MAX_DSTEP_STEPS = 100_000
#: SPIN's limit on the number of processes (``MAXPROC`` is 255: "max nr of processes is 255").
MAX_PROCESSES = 255
#: The most scalar variables a state may have. SPIN's default state vector holds 1,024 bytes
#: (``-DVECTORSZ`` raises it); an absmc state is a tuple of Python ints, and a model declaring
#: more than 100,000 of them (``byte a[99999999999]`` from a typo) could not be searched anyway:
#: the limit turns an endless, memory-hungry load into a located error.
MAX_STATE_VARIABLES = 100_000


@dataclass
class Chan:
    """A channel instance: its id, capacity, field types and IR variable names."""

    cid: int
    name: str
    cap: int
    fields: list[str]
    len_var: str
    slots: list[list[str]]  # slots[k][f]: variable of field f in slot k (unpacked channels)
    field_ranges: list[tuple[int, int]]
    #: packed channels keep all messages in one variable: message k, field j at bit
    #: ``k * width + offsets[j]`` as ``value - lo`` (a bijection; SPIN's counts are unchanged)
    data_var: str = ""
    offsets: list[int] = field(default_factory=list)
    bits: list[int] = field(default_factory=list)
    width: int = 0

    @property
    def packed(self) -> bool:
        return bool(self.data_var)


@dataclass
class ProcType:
    """A proctype with its automaton and the data the lowering needs."""

    decl: ProcDecl
    fsm: ProcFSM
    locals: list[VarDecl]
    index: int
    #: SPIN's dead-variable resets: ``id(element)`` -> locals set to 0 after it (:mod:`.deadvars`)
    dead: dict[int, tuple[str, ...]] = field(default_factory=dict)


@dataclass
class Slot:
    """A process slot (pid) and the proctypes it can hold."""

    pid: int
    types: list[ProcType]
    name: str
    pc: str
    offsets: dict[str, int] = field(default_factory=dict)
    chans: dict[str, Chan] = field(default_factory=dict)  # local channel leaf -> instance
    layouts: dict[str, dict[str, Layout]] = field(default_factory=dict)  # type -> local -> layout


@dataclass
class Path:
    """One path of symbolic execution through a transition."""

    env: dict[str, Expr]
    conds: list[Expr]
    asserts: list[tuple[str, Expr]] = field(default_factory=list)
    errors: list[tuple[Expr, str]] = field(default_factory=list)
    error: str | None = None
    msg: list[Expr] | None = None  # rendezvous message (sender side)
    chan: int | None = None  # rendezvous channel id (< 0: a group, Lowerer.groups)
    prints: list[Print] = field(default_factory=list)
    chan_ref: Expr | None = None  # the channel expression of a send to a group
    #: the channel operations on the path (``Command.chan_ops``): (kind, channel id)
    ops: list[tuple[str, int]] = field(default_factory=list)

    def copy(self) -> Path:
        return Path(
            dict(self.env),
            list(self.conds),
            list(self.asserts),
            list(self.errors),
            self.error,
            self.msg,
            self.chan,
            list(self.prints),
            self.chan_ref,
            list(self.ops),
        )

    def val(self, name: str, sort: Any) -> Expr:
        return self.env.get(name) or Var(name, sort)


class _Ctx:
    """The process context an expression is evaluated in."""

    def __init__(self, slot: Slot | None, pt: ProcType | None) -> None:
        self.slot = slot
        self.pt = pt


class LowererBase:
    """The lowering's state (set up from the model) and what every part uses."""

    #: proctypes by name (set by ``Processes.proc_types``)
    ptypes: dict[str, ProcType]
    #: process slots by pid (set by ``Processes.allocate_slots``)
    slots: list[Slot]
    #: process automata builders by proctype (set by ``Processes.proc_types``)
    builders: dict[str, Any]

    def __init__(self, model: Model, name: str) -> None:
        self.m = model
        self.name = name
        self.file = model.file
        self.mtypes: dict[str, int] = {}
        k = 1
        for _sub, names in model.mtypes.items():
            for n in names:
                if n not in self.mtypes:
                    self.mtypes[n] = k
                    k += 1
        self.vars: list[Variable] = []
        self.var_sorts: dict[str, Any] = {}
        self.globals: dict[str, Layout] = {}
        self.init_decl: dict[str, VarDecl] = {}
        self.leaf_count = 0  # scalar variables laid out so far (bounded by MAX_STATE_VARIABLES)
        self.hidden: set[str] = set()
        self.initial: dict[str, int] = {}
        self.chans: list[Chan] = []
        self.chan_of_var: dict[str, list[int]] = {}  # global chan leaf -> channel id (constant)
        #: (channel expression, channels declared so far) -> the channels it may denote with
        #: their conditions, and its "uninitialised" condition (lower_exprs chan_refs)
        self.chan_memo: dict[tuple[Expr, int], tuple[list[tuple[Expr, Chan]], Expr]] = {}
        self.props: list[Property] = []
        self.prop_names: dict[tuple[str, int, int], str] = {}
        self.commands: list[Command] = []
        self.seen_errors: set[tuple[Expr, str]] = set()
        self.timeout_used = False
        #: expressions read outside the processes (ltl atoms): their globals stay in the state
        self.ltl_reads: list[Node] = []
        #: names standing for remote variable references in ltl atoms: (proctype, pid, var)
        self.remote_vars: dict[str, tuple[str, int | None, str]] = {}
        #: an expression or statement observes pids or the number of processes (``_pid``,
        #: ``_nr_pr``, a remote label, the value of ``run``): ``System.pids_unobserved`` is off
        self.pids_observed = False
        #: apply SPIN's dead-variable reset (:mod:`.deadvars`); SPIN turns it off when the
        #: model refers to a remote variable
        self.dead_variables = False
        self.enabled_refs: dict[str, tuple[int, Node]] = {}
        #: the model's statements read a remote variable ``P[e]:v``
        self.remote_refs = any(
            n.kind == "remote_var"
            for n in nodes(
                [pd.body for pd in [*model.procs, *model.nevers]]
                + [i.body for i in model.inlines.values()]
            )
        )
        #: process slots added after those the dry run allocates (``dynamic_slot_types``),
        #: each open to every proctype a ``run`` names: a check that ran out of slots is
        #: repeated with more (:func:`absmc.engines.registry.run_growing`)
        self.extra_slots = 0
        self._receivers: dict[int, list[tuple[Slot, ProcType, int, Trans]]] | None = None
        #: rendezvous channel groups (id < 0 -> channel ids): a send whose channel variable
        #: may denote several rendezvous channels with the same fields meets each receiver
        #: once, with the condition that both denote the same channel
        self.groups: dict[int, tuple[int, ...]] = {}
        self._receiver_rank: dict[int, int] = {}
        self._partner_guards: dict[bool, tuple[dict[tuple[int, int, int], list[Expr]], bool]] = {}
        #: xr/xs declarations per proctype (name -> 1 xr | 2 xs), and the claims they make
        self.xu_decls: dict[str, dict[str, int]] = {}
        self.claims: list[ChannelClaim] = []
        self.claims_of: dict[tuple[str, str], list[ChannelClaim]] = {}  # (slot, proctype)
        #: channel operations read by ``executable`` (an ``else``/``unless`` guard)
        self.exec_ops: list[tuple[str, int]] = []

    # -- errors -------------------------------------------------------------------------
    def err(self, msg: str, n: Node | None = None, span: SourceSpan | None = None) -> ModelError:
        sp = span or (n.span if n is not None else None)
        return ModelError(msg, sp, self.file)

    def ev(self, n: Node, p: Path, ctx: _Ctx, evc: list[Expr]) -> Expr:
        """The value of expression ``n`` (:meth:`Expressions.ev`)."""
        raise NotImplementedError


def select(idx: Expr, elems: list[Expr]) -> Expr:
    """``select(idx, *elems)`` (an array read, :mod:`absmc.ir.arrays`), simplified: equal
    elements are that element, and a read of an array written earlier in the same step
    (elements ``ite(i == k, v, rest_k)``, the form :meth:`Lowerer.assign` gives) is
    ``ite(i == clamp(idx), v, select(idx, rests))`` (read over write; ``clamp`` maps an index
    out of bounds to the last element, as ``select`` does) — so reads after writes inside a
    ``d_step`` stay small instead of multiplying the elements."""
    if all(x == elems[0] for x in elems):
        return elems[0]
    n = len(elems)
    layers = [write_layer(x) for x in elems]
    if all(la is not None for la in layers):
        keys = {(la[0], la[1]) for la in layers if la is not None}
        ks = [la[2] for la in layers if la is not None]
        if len(keys) == 1 and ks == list(range(n)):
            i_w, v_w = next(iter(keys))
            rests = [la[3] for la in layers if la is not None]
            inb = mk("&&", mk("<=", Const(0), idx), mk("<", idx, Const(n)))
            clamp = mk("ite", inb, idx, Const(n - 1))
            return mk("ite", mk("==", i_w, clamp), v_w, select(idx, rests))
    return Op("select", (idx, *elems))


def _unwrap(e: Expr, sort: Any) -> Expr:
    """Drop an explicit C truncation to the target's own range: the IR sort wraps anyway."""
    size = sort.hi - sort.lo + 1
    if sort.lo == 0 and isinstance(e, Op) and e.op == "&" and e.args[1] == Const(size - 1):
        return e.args[0]
    if (
        sort.lo < 0
        and isinstance(e, Op)
        and e.op == "-"
        and e.args[1] == Const(-sort.lo)
        and isinstance(e.args[0], Op)
        and e.args[0].op == "&"
        and e.args[0].args[1] == Const(size - 1)
        and isinstance(e.args[0].args[0], Op)
        and e.args[0].args[0].op == "+"
        and e.args[0].args[0].args[1] == Const(-sort.lo)
    ):
        return e.args[0].args[0].args[0]
    return e


def _pname(pd: ProcDecl) -> str:
    return "init" if pd.kind == "init" else pd.name


def _line(n: Node | None) -> int:
    return n.span.line if n is not None and n.span is not None else 0


def el_node(e: El | None) -> Node | None:
    return e.n if e is not None else None


def _collect(body: list[Node], decls: list[VarDecl], xu: dict[str, int]) -> None:
    for st in body:
        _collect_one(st, decls, xu)


def _collect_one(st: Node | None, decls: list[VarDecl], xu: dict[str, int]) -> None:
    if st is None:
        return
    if st.kind == "decl":
        decls.extend(st.args)
    elif st.kind == "xu":
        for v in st.args:
            xu[v.name] = xu.get(v.name, 0) | (1 if st.name == "xr" else 2)
    if st.options:
        for opt in st.options:
            _collect(opt, decls, xu)
    for a in st.args:
        if (
            isinstance(a, Node)
            and a.kind
            in (
                "label",
                "unless",
                "if",
                "do",
                "atomic",
                "d_step",
                "block",
            )
        ) or (isinstance(a, Node) and st.kind in ("label", "unless")):
            _collect_one(a, decls, xu)


def _reads(n: Any, out: set[str], rvalue: bool) -> None:
    """Collect the names SPIN counts as read (``trapwonly``): variables in expressions and
    receive arguments, not assignment targets nor printf arguments."""
    if not isinstance(n, Node):
        return
    k = n.kind
    if k == "var":
        if rvalue and n.name:
            out.add(n.name)
        _reads(n.args[0], out, True)
        _reads(n.args[1], out, rvalue)
        return
    if k == "asgn":
        _reads(n.args[0], out, False)
        if n.val == 1:  # x++ / x--: SPIN does not count x as read
            _reads(n.args[1].args[0], out, False)
        else:
            _reads(n.args[1], out, True)
        return
    if k in ("print", "printm"):
        return
    if k in ("r", "poll"):
        _reads(n.args[0], out, False)
        for a in n.args[1:]:
            _reads(a, out, True)
        return
    if k in ("s", "len", "full", "nfull", "empty", "nempty"):
        _reads(n.args[0], out, False)
        for a in n.args[1:]:
            _reads(a, out, True)
        return
    if k in ("atomic", "d_step", "non_atomic", "if", "do", "unless"):
        return  # their statements are elements of their own
    for a in n.args:
        _reads(a, out, True)


def _run_of(el: El) -> Node | None:
    """The ``run`` of a statement ``run P()`` or ``x = run P()``, else None."""
    n = el.n
    if n is None:
        return None
    if el.kind == "c" and n.args[0].kind == "run":
        return n.args[0]  # type: ignore[no-any-return]
    if el.kind == "asgn" and n.args[1].kind == "run":
        return n.args[1]  # type: ignore[no-any-return]
    return None


def _can_terminate(fsm: ProcFSM) -> bool:
    """Whether the process's end is reachable in its automaton."""
    return any(
        pc == fsm.end or any(tr.is_end or tr.target == fsm.end for tr in fsm.trans.get(pc, []))
        for pc in fsm.reachable()
    )


def _runs_in(body: list[Node]) -> bool:
    return _count_runs(body) > 0


def _run_names(x: Any) -> set[str]:
    """The proctype names of the ``run`` expressions in a body (nested ones included)."""
    if isinstance(x, list):
        return set().union(*(_run_names(y) for y in x))
    if not isinstance(x, Node):
        return set()
    out = {str(x.name)} if x.kind == "run" and x.name else set()
    out |= _run_names(list(x.args))
    if x.options:
        out |= _run_names(list(x.options))
    return out


def _count_runs(x: Any) -> int:
    if isinstance(x, list):
        return sum(_count_runs(y) for y in x)
    if not isinstance(x, Node):
        return 0
    n = 1 if x.kind == "run" else 0
    n += sum(_count_runs(a) for a in x.args)
    if x.options:
        n += sum(_count_runs(o) for o in x.options)
    return n


def _zero_divisions(e: Expr) -> list[Expr]:
    """Conditions (over the state before the step) under which evaluating ``e`` divides by
    zero, following the evaluation order of the compiled semantics: ``&&``, ``||``, ``=>`` and
    ``ite`` evaluate their later operands only when needed. Iterative."""
    out: list[Expr] = []
    stack: list[tuple[Expr, list[Expr]]] = [(e, [])]
    while stack:
        x, ctx = stack.pop()
        if not isinstance(x, Op):
            continue
        if x.op == "select":
            stack.append((select_chain(x.args[0], x.args[1:]), ctx))
            continue
        if x.op in ("/", "%") and not (isinstance(x.args[1], Const) and x.args[1].value != 0):
            out.append(conj([*ctx, mk("==", x.args[1], Const(0))]))
        if x.op == "ite":
            c, a, b = x.args
            stack += [(c, ctx), (a, [*ctx, c]), (b, [*ctx, neg(c)])]
        elif x.op in ("&&", "||", "=>"):
            before: list[Expr] = []
            for i, a in enumerate(x.args):
                stack.append((a, [*ctx, *before]))
                first = x.op == "&&" or (x.op == "=>" and i == 0)
                before.append(a if first else neg(a))
        else:
            stack += [(a, ctx) for a in x.args]
    return [c for c in out if c != FALSE]


def _before(a: SourceSpan | None, b: SourceSpan) -> bool:
    """Whether position ``a`` comes before ``b`` in the text (positions in different files:
    yes, an included file is read before the rest of the model)."""
    if a is None or a.file != b.file:
        return True
    return (a.line, a.column) < (b.line, b.column)


def _preds_in(body: list[Node]) -> list[Node]:
    return [st.args[0] for st in body if st.kind == "pred"]


def _stmt_text(tr: Trans) -> str:
    return "; ".join(
        _el_text(e)
        for e in tr.steps
        if e.kind not in (".", "goto", "break_tgt") or len(tr.steps) == 1
    )


def _el_text(e: El) -> str:
    from absmc.lang.promela.text import stmt_text

    return stmt_text(e)


def claim_message(kind: str, chan: str, cid: int, owner: str) -> str:
    """The model error of an access that breaks an ``xr``/``xs`` claim (``cid`` 0: a second
    claim); :func:`absmc.ir.dependency.claim_of_error` reads ``kind`` and ``cid`` back."""
    what = f"access to channel {chan} ({cid})" if cid else "a second claim of a channel"
    return f"{kind} assertion violated: {what}; {owner} claims it (partial-order reduction invalid)"
