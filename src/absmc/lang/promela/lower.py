"""Lowering of a parsed Promela model to an ``ir.System`` with SPIN's semantics.

* State: every global leaf (see :mod:`.types`), every channel as ``len`` plus one variable per
  message field and slot (vacated slots are zero, as in SPIN), and for every process slot
  (pid) a program counter (0 = no process) and the leaves of its locals. Hidden globals are
  not state. Process slots are pre-allocated: active processes first (declaration order), then
  as many slots as the model's ``run`` statements can fill (found by a dry run of the creating
  process; a ``run`` that finds no slot is a model error).
* Transitions: the SPIN automaton of each proctype (:mod:`.fsm`, statement merging included)
  gives, per program counter, the transitions; each becomes one guarded command per process
  slot that can hold the proctype (several when a ``d_step`` branches: its paths are
  enumerated by symbolic execution; a path that blocks inside is a model error). A rendezvous
  send and a matching receive of another process become one joint command.
* SPIN's ``atomic``: a transition inside an atomic sequence sets ``Command.exclusive``;
  ``timeout`` gives commands with the ``timeout`` flag; ``else`` is the negation of the other
  transitions' executability at the same location; ``assert`` adds an ``assert`` property;
  array indices out of bounds are model errors; valid end states are ``System.valid_end``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from absmc.ir.arrays import select_chain, write_layer
from absmc.ir.evaluate import EvalError, evaluate
from absmc.ir.expr import FALSE, TRUE, Const, Expr, Op, Var
from absmc.ir.sorts import BOOL
from absmc.ir.span import ModelError, SourceSpan
from absmc.ir.system import Command, Print, Process, Property, System, Variable
from absmc.lang.promela.assigned import written_names
from absmc.lang.promela.ast import ChanInit, Model, Node, ProcDecl, VarDecl
from absmc.lang.promela.fsm import D_ATOM, El, ProcFSM, Trans, build_fsm, huntstart
from absmc.lang.promela.simplify import conj, disj, mk, neg
from absmc.lang.promela.types import (
    Layout,
    Leaf,
    bool_of,
    int_of,
    sort_of,
    type_range,
    wrap_expr,
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
        )

    def val(self, name: str, sort: Any) -> Expr:
        return self.env.get(name) or Var(name, sort)


class _Ctx:
    """The process context an expression is evaluated in."""

    def __init__(self, slot: Slot | None, pt: ProcType | None) -> None:
        self.slot = slot
        self.pt = pt


class Lowerer:
    """Turns a :class:`Model` into a :class:`System` (see the module docstring)."""

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
        self.props: list[Property] = []
        self.prop_names: dict[tuple[str, int, int], str] = {}
        self.commands: list[Command] = []
        self.seen_errors: set[tuple[Expr, str]] = set()
        self.timeout_used = False
        #: expressions read outside the processes (ltl atoms): their globals stay in the state
        self.ltl_reads: list[Node] = []
        #: names standing for remote variable references in ltl atoms: (proctype, pid, var)
        self.remote_vars: dict[str, tuple[str, int | None, str]] = {}
        self._receivers: dict[int, list[tuple[Slot, ProcType, int, Trans]]] | None = None
        #: rendezvous channel groups (id < 0 -> channel ids): a send whose channel variable
        #: may denote several rendezvous channels with the same fields meets each receiver
        #: once, with the condition that both denote the same channel
        self.groups: dict[int, tuple[int, ...]] = {}
        self._receiver_rank: dict[int, int] = {}
        self._partner_guards: dict[bool, tuple[dict[tuple[int, int, int], list[Expr]], bool]] = {}

    # -- errors -------------------------------------------------------------------------
    def err(self, msg: str, n: Node | None = None, span: SourceSpan | None = None) -> ModelError:
        sp = span or (n.span if n is not None else None)
        return ModelError(msg, sp, self.file)

    # -- declarations ---------------------------------------------------------------------
    def add_var(self, name: str, lo: int, hi: int, init: int) -> None:
        sort = sort_of(lo, hi)
        self.vars.append(Variable(name, sort, (init - lo) % (hi - lo + 1) + lo))
        self.var_sorts[name] = sort

    def layout(self, prefix: str, d: VarDecl) -> Layout:
        def one(name: str) -> Layout:
            if d.type in self.m.typedefs:
                td = self.m.typedefs[d.type]
                lay = Layout("struct", typ=d.type)
                for f in td.fields:
                    sub = self.layout(name + ".", f)
                    lay.fields[f.name] = sub
                return lay
            if d.type not in (
                "bit",
                "bool",
                "byte",
                "short",
                "int",
                "unsigned",
                "mtype",
                "chan",
                "pid",
            ):
                raise self.err(f"unknown type '{d.type}'", span=d.span)
            lo, hi = type_range(d.type, d.bits)
            self.leaf_count += 1
            if self.leaf_count > MAX_STATE_VARIABLES:
                raise self.err(
                    f"too many variables: '{d.name}' makes the state longer than "
                    f"{MAX_STATE_VARIABLES:,} variables",
                    span=d.span,
                )
            return Layout("scalar", typ=d.type, leaf=Leaf(name, d.type, lo, hi))

        base = prefix + d.name
        if d.size is None:
            return one(base)
        return Layout("array", typ=d.type, elems=[one(f"{base}[{i}]") for i in range(d.size)])

    def global_decls(self) -> None:
        init_env: dict[str, Expr] = {}
        written = written_names(self.m)
        for d in self.m.globals:
            if d.name in self.globals:
                raise self.err(f"variable '{d.name}' is declared twice", span=d.span)
            lay = self.layout("", d)
            self.globals[d.name] = lay
            leaves = lay.leaves()
            if isinstance(d.init, ChanInit):
                if d.type != "chan":
                    raise self.err(f"'{d.name}' is not a chan", span=d.span)
                for lf in leaves:
                    c = self.new_chan(lf.name, d.init)
                    self.chan_of_var[lf.name] = [c.cid]
                    if d.name in written:  # a variable holding the id (SPIN's mobile2)
                        self.initial[lf.name] = c.cid
                        self.add_var(lf.name, lf.lo, lf.hi, c.cid)
                continue
            if d.hidden:
                self.hidden.update(lf.name for lf in leaves)
            values = self.init_values(d, leaves, init_env)
            for lf, v in zip(leaves, values, strict=True):
                init_env[lf.name] = Const(v)
                self.initial[lf.name] = v
                if not d.hidden:
                    self.add_var(lf.name, lf.lo, lf.hi, v)

    def init_values(self, d: VarDecl, leaves: list[Leaf], env: dict[str, Expr]) -> list[int]:
        if d.init is None:
            return [0] * len(leaves)
        if isinstance(d.init, list):
            vals = [self.const_eval(x, env) for x in d.init]
            return (vals + [0] * len(leaves))[: len(leaves)]
        v = self.const_eval(d.init, env)
        return [v] * len(leaves)

    def const_eval(self, n: Node, env: dict[str, Expr]) -> int:
        p = Path(dict(env), [])
        e = self.ev(n, p, _Ctx(None, None), [])
        e = int_of(e)
        if not isinstance(e, Const):
            raise self.err("initial values must be constant", n)
        return e.value

    def new_chan(self, name: str, ci: ChanInit) -> Chan:
        cid = len(self.chans) + 1
        ranges = []
        for f in ci.fields:
            if f in self.m.typedefs:
                raise self.err("structures in channel messages are not supported", span=ci.span)
            if f == "unsigned":
                raise self.err("unsigned cannot be a message field type", span=ci.span)
            ranges.append(type_range(f))
        cap = max(ci.capacity, 1)
        self.leaf_count += cap * max(1, len(ci.fields))
        if self.leaf_count > MAX_STATE_VARIABLES:
            raise self.err(
                f"channel capacity {ci.capacity} makes the state longer than "
                f"{MAX_STATE_VARIABLES:,} variables",
                span=ci.span,
            )
        len_var = f"{name}#len"
        slots = [[f"{name}#{k}.{j}" for j in range(len(ci.fields))] for k in range(cap)]
        c = Chan(cid, name, ci.capacity, list(ci.fields), len_var, slots, ranges)
        self.chans.append(c)
        if ci.capacity >= 2:
            # one variable for all messages: narrower states hash and copy faster
            off = 0
            for lo, hi in ranges:
                c.offsets.append(off)
                c.bits.append(max(1, (hi - lo).bit_length()))
                off += c.bits[-1]
            c.width = off
            c.data_var = f"{name}#data"
            self.add_var(len_var, 0, ci.capacity, 0)
            self.add_var(c.data_var, 0, 2 ** (off * ci.capacity) - 1, 0)
        elif ci.capacity > 0:
            self.add_var(len_var, 0, ci.capacity, 0)
            for k in range(cap):
                for j, (lo, hi) in enumerate(ranges):
                    self.add_var(slots[k][j], lo, hi, 0)
        return c

    def data(self, c: Chan, p: Path) -> Expr:
        return p.val(c.data_var, self.var_sorts[c.data_var])

    def encode(self, c: Chan, vals: list[Expr]) -> Expr:
        """A message as the bits of one slot of a packed channel."""
        out: Expr = Const(0)
        for j, v in enumerate(vals):
            lo = c.field_ranges[j][0]
            part = mk("-", v, Const(lo)) if lo else v
            out = mk("|", out, mk("<<", part, Const(c.offsets[j])) if c.offsets[j] else part)
        return out

    def low_bits(self, e: Expr, n: int) -> Expr:
        return mk("&", e, Const((1 << n) - 1)) if n > 0 else Const(0)

    # -- expressions ----------------------------------------------------------------------
    def lookup(self, name: str, ctx: _Ctx) -> tuple[Layout, bool] | None:
        """The layout a name refers to in ``ctx`` and whether it is local."""
        if ctx.slot is not None and ctx.pt is not None:
            lays = ctx.slot.layouts.get(ctx.pt.decl.name, {})
            if name in lays:
                return lays[name], True
        if name in self.globals:
            return self.globals[name], False
        return None

    def leaf_choices(self, n: Node, p: Path, ctx: _Ctx, evc: list[Expr]) -> list[tuple[Expr, Leaf]]:
        """The leaves a variable reference may denote, each with its condition; an index out
        of bounds is recorded as a model error of the path."""
        assert n.name is not None
        found = self.lookup(n.name, ctx)
        if found is None:
            raise self.err(f"undeclared variable '{n.name}'", n)
        lay, _ = found
        return self._descend(lay, n, p, ctx, evc, TRUE)

    def _descend(
        self, lay: Layout, n: Node, p: Path, ctx: _Ctx, evc: list[Expr], cond: Expr
    ) -> list[tuple[Expr, Leaf]]:
        idx_node, sub = n.args
        choices: list[tuple[Expr, Layout]] = []
        if lay.kind == "array":
            if idx_node is None:  # SPIN 6.5.2 rejects it too (``for (i in a)`` is rewritten)
                raise self.err(f"missing array index for '{n.name}'", n)
            idx = int_of(self.ev(idx_node, p, ctx, evc))
            size = len(lay.elems)
            if isinstance(idx, Const):
                if not 0 <= idx.value < size:
                    p.errors.append(
                        (
                            conj([*p.conds, *evc, cond]),
                            f"array index {idx.value} out of bounds of '{n.name}' (size {size})",
                        )
                    )
                    return []
                choices = [(cond, lay.elems[idx.value])]
            else:
                inb = mk("&&", mk("<=", Const(0), idx), mk("<", idx, Const(size)))
                p.errors.append(
                    (
                        conj([*p.conds, *evc, cond, neg(inb)]),
                        f"array index out of bounds of '{n.name}' (size {size})",
                    )
                )
                choices = [
                    (conj([cond, mk("==", idx, Const(i))]), e) for i, e in enumerate(lay.elems)
                ]
        else:
            if idx_node is not None:
                raise self.err(f"'{n.name}' is not an array", n)
            choices = [(cond, lay)]
        out: list[tuple[Expr, Leaf]] = []
        for c, l2 in choices:
            if sub is not None:
                if l2.kind != "struct" or sub.name not in l2.fields:
                    raise self.err(f"'{n.name}' has no field '{sub.name}'", sub)
                out.extend(self._descend(l2.fields[sub.name], sub, p, ctx, evc, c))
            else:
                if l2.kind == "struct":
                    raise self.err(f"structure '{n.name}' used as a value", n)
                assert l2.leaf is not None
                out.append((c, l2.leaf))
        return out

    def read_ref(self, n: Node, p: Path, ctx: _Ctx, evc: list[Expr]) -> Expr:
        """The value of a variable reference: a computed array index reads with
        ``select(index, elements...)`` (one indexed read, never a case split per element); an
        index out of bounds is a model error of the path (recorded as by
        :meth:`leaf_choices`, in the same order), its value then 0 (constant index) or the
        last element."""
        assert n.name is not None
        found = self.lookup(n.name, ctx)
        if found is None:
            raise self.err(f"undeclared variable '{n.name}'", n)
        out = self._read(found[0], n, p, ctx, evc)
        return Const(0) if out is None else out

    def _read(self, lay: Layout, n: Node, p: Path, ctx: _Ctx, evc: list[Expr]) -> Expr | None:
        idx_node, sub = n.args
        if lay.kind != "array":
            if idx_node is not None:
                raise self.err(f"'{n.name}' is not an array", n)
            return self._read_elem(lay, n, sub, p, ctx, evc)
        if idx_node is None:  # SPIN 6.5.2 rejects it too (``for (i in a)`` is rewritten)
            raise self.err(f"missing array index for '{n.name}'", n)
        idx = int_of(self.ev(idx_node, p, ctx, evc))
        size = len(lay.elems)
        if isinstance(idx, Const):
            if not 0 <= idx.value < size:
                p.errors.append(
                    (
                        conj([*p.conds, *evc]),
                        f"array index {idx.value} out of bounds of '{n.name}' (size {size})",
                    )
                )
                return None
            return self._read_elem(lay.elems[idx.value], n, sub, p, ctx, evc)
        inb = mk("&&", mk("<=", Const(0), idx), mk("<", idx, Const(size)))
        p.errors.append(
            (
                conj([*p.conds, *evc, neg(inb)]),
                f"array index out of bounds of '{n.name}' (size {size})",
            )
        )
        # the elements share one layout: a nested index is evaluated (and its bounds error
        # recorded) once; with this array's index out of bounds the error above comes first
        first = self._read_elem(lay.elems[0], n, sub, p, ctx, evc)
        if first is None:
            return None
        nerr = len(p.errors)
        elems = [first]
        for e in lay.elems[1:]:
            x = self._read_elem(e, n, sub, p, ctx, evc)
            assert x is not None
            elems.append(x)
        del p.errors[nerr:]
        return select(idx, elems)

    def _read_elem(
        self, lay: Layout, n: Node, sub: Node | None, p: Path, ctx: _Ctx, evc: list[Expr]
    ) -> Expr | None:
        if sub is not None:
            if lay.kind != "struct" or sub.name not in lay.fields:
                raise self.err(f"'{n.name}' has no field '{sub.name}'", sub)
            return self._read(lay.fields[sub.name], sub, p, ctx, evc)
        if lay.kind == "struct":
            raise self.err(f"structure '{n.name}' used as a value", n)
        assert lay.leaf is not None
        return self.read_leaf(lay.leaf, p)

    def read_leaf(self, lf: Leaf, p: Path) -> Expr:
        if lf.name in self.chan_of_var and lf.name not in self.var_sorts:
            return Const(self.chan_of_var[lf.name][0])
        if lf.name in self.hidden:
            return p.env.get(lf.name, Const(self.initial.get(lf.name, 0)))
        return p.env.get(lf.name) or Var(lf.name, self.var_sorts[lf.name])

    def ev(self, n: Node, p: Path, ctx: _Ctx, evc: list[Expr]) -> Expr:
        """Lower expression ``n`` (values of path ``p``); ``evc``: conditions under which it is
        evaluated (short-circuit), for error conditions."""
        k = n.kind
        if k == "const":
            return Const(n.val)
        if k == "var":
            name = n.name or ""
            if name in self.mtypes and self.lookup(name, ctx) is None:
                return Const(self.mtypes[name])
            if name == "_pid":
                if ctx.slot is None:
                    raise self.err("_pid outside a process", n)
                return Const(ctx.slot.pid)
            if name == "_nr_pr":
                return self.nr_pr()
            if name in ("_", "_last", "_priority"):
                raise self.err(f"'{name}' is not supported in expressions", n)
            if name in self.remote_vars:
                return self.remote_var(n, p, ctx, evc)
            return self.read_ref(n, p, ctx, evc)
        if k in ("&&", "||"):
            a = bool_of(self.ev(n.args[0], p, ctx, evc))
            guard = a if k == "&&" else neg(a)
            b = bool_of(self.ev(n.args[1], p, ctx, [*evc, guard]))
            return mk(k, a, b)
        if k == "!":
            return neg(bool_of(self.ev(n.args[0], p, ctx, evc)))
        if k in ("==", "!=", "<", "<=", ">", ">="):
            return mk(
                k, int_of(self.ev(n.args[0], p, ctx, evc)), int_of(self.ev(n.args[1], p, ctx, evc))
            )
        if k in ("+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"):
            return mk(
                k, int_of(self.ev(n.args[0], p, ctx, evc)), int_of(self.ev(n.args[1], p, ctx, evc))
            )
        if k == "neg":
            return mk("neg", int_of(self.ev(n.args[0], p, ctx, evc)))
        if k == "~":
            return mk("~", int_of(self.ev(n.args[0], p, ctx, evc)))
        if k == "cond":
            c = bool_of(self.ev(n.args[0], p, ctx, evc))
            a = int_of(self.ev(n.args[1], p, ctx, [*evc, c]))
            b = int_of(self.ev(n.args[2], p, ctx, [*evc, neg(c)]))
            return mk("ite", c, a, b)
        if k == "timeout":
            self.timeout_used = True
            return Const(1, BOOL) if p.env.get("$timeout") == TRUE else Const(0, BOOL)
        if k in ("len", "full", "nfull", "empty", "nempty"):
            chans = self.chan_refs(n.args[0], p, ctx, evc)
            lens: Expr = Const(0)
            for ccond, ch1 in reversed(chans):
                lens = mk("ite", ccond, self.chan_len(ch1, p), lens)
            if k == "len":
                return lens
            cap: Expr = Const(0)
            for ccond, ch1 in reversed(chans):
                cap = mk("ite", ccond, Const(ch1.cap), cap)
            op = {"full": "==", "nfull": "<", "empty": "==", "nempty": ">"}[k]
            rhs = cap if k in ("full", "nfull") else Const(0)
            return mk(op, lens, rhs)
        if k == "poll":
            out_e: Expr = FALSE
            for ccond, ch1 in self.chan_refs(n.args[0], p, ctx, evc):
                if ch1.cap == 0:
                    raise self.err("polling a rendezvous channel is not supported", n)
                positions = range(ch1.cap) if n.val == 1 else range(1)
                alts = []
                for pos in positions:
                    m = self.match(ch1, pos, n.args[1:], p, ctx, evc)
                    alts.append(conj([mk(">", self.chan_len(ch1, p), Const(pos)), m]))
                out_e = mk("||", out_e, conj([ccond, disj(alts)]))
            return out_e
        if k == "run":
            raise self.err("'run' can only be used as a statement here", n)
        if k == "remote_label":
            return self.remote_label(n, p, ctx, evc)
        if k == "np_":
            progress = self.progress_expr()
            return neg(progress) if progress is not None else TRUE
        if k in ("enabled", "pc_value", "get_priority"):
            raise self.err(f"'{k}' is not supported yet", n)
        raise self.err(f"unsupported expression '{k}'", n)

    def remote_label(self, n: Node, p: Path, ctx: _Ctx, evc: list[Expr]) -> Expr:
        """``P[pid]@L`` / ``P@L``: the process with that pid (any process of proctype ``P``
        without an index) is of proctype ``P`` and at label ``L`` (SPIN's remote reference)."""
        pname, label = n.name or "", n.text or ""
        slots = [s for s in self.slots if any(t.decl.name == pname for t in s.types)]
        if not slots:
            raise self.err(f"no process of proctype '{pname}' (remote reference)", n)
        idx = int_of(self.ev(n.args[0], p, ctx, evc)) if n.args and n.args[0] is not None else None
        alts: list[Expr] = []
        for s in slots:
            t = next(t for t in s.types if t.decl.name == pname)
            if label not in t.fsm.labels:
                raise self.err(f"proctype '{pname}' has no label '{label}'", n)
            at = self.pc_is(s, t, t.fsm.labels[label])
            if idx is not None:
                at = conj([mk("==", idx, Const(s.pid)), at])
            alts.append(at)
        return disj(alts)

    def progress_expr(self) -> Expr | None:
        """Some process is at a progress-labelled state (``None``: the model has no progress
        label); the negation of SPIN's ``np_``."""
        alts: list[Expr] = []
        for s in self.slots:
            for t in s.types:
                alts.extend(self.pc_is(s, t, st) for st in sorted(t.fsm.progress_labels))
        return disj(alts) if alts else None

    def remote_var(self, n: Node, p: Path, ctx: _Ctx, evc: list[Expr]) -> Expr:
        """``P[pid]:v`` / ``P:v`` (recorded in :attr:`remote_vars`): the local ``v`` of the
        process with that pid (the only process of proctype ``P`` without a pid)."""
        pname, pid, var = self.remote_vars[n.name or ""]
        slots = [s for s in self.slots if any(t.decl.name == pname for t in s.types)]
        if pid is not None:
            slots = [s for s in slots if s.pid == pid]
        if len(slots) != 1:
            which = f"{pname}[{pid}]" if pid is not None else pname
            many = "no process" if not slots else "several processes"
            raise self.err(f"{many} for the remote reference '{which}:{var}'", n)
        lay = slots[0].layouts.get(pname, {}).get(var)
        if lay is None:
            raise self.err(f"proctype '{pname}' has no local variable '{var}'", n)
        local = Node("var", n.args, name=var, span=n.span)
        ch = self._descend(lay, local, p, ctx, evc, TRUE)
        if not ch:
            return Const(0)
        out = self.read_leaf(ch[-1][1], p)
        for c, lf in reversed(ch[:-1]):
            out = mk("ite", c, self.read_leaf(lf, p), out)
        return out

    def state_expr(self, n: Node) -> Expr:
        """A Promela expression over the global state (remote references allowed), lowered
        after :meth:`lower` (an ``ltl`` formula's atom). Raises ``ModelError``."""
        return bool_of(self.ev(n, Path({}, []), _Ctx(None, None), []))

    def nr_pr(self) -> Expr:
        parts: Expr = Const(0)
        for s in self.slots:
            parts = mk("+", parts, int_of(mk("!=", Var(s.pc, self.var_sorts[s.pc]), Const(0))))
        return parts

    def chan_len(self, c: Chan, p: Path) -> Expr:
        if c.cap == 0:
            return Const(0)
        return p.val(c.len_var, self.var_sorts[c.len_var])

    def chan_refs(self, n: Node, p: Path, ctx: _Ctx, evc: list[Expr]) -> list[tuple[Expr, Chan]]:
        """The channels a channel expression may denote, each with its condition."""
        e = int_of(self.ev(n, p, ctx, evc))
        if isinstance(e, Const):
            if not 1 <= e.value <= len(self.chans):
                p.errors.append((conj([*p.conds, *evc]), "use of an uninitialised channel"))
                return []
            return [(TRUE, self.chans[e.value - 1])]
        out = []
        for c in self.chans:
            cond = mk("==", e, Const(c.cid))
            if cond != FALSE:
                out.append((cond, c))
        valid = conj([mk("<=", Const(1), e), mk("<=", e, Const(len(self.chans)))])
        p.errors.append((conj([*p.conds, *evc, neg(valid)]), "use of an uninitialised channel"))
        return out

    def match(
        self, c: Chan, pos: int, args: list[Node], p: Path, ctx: _Ctx, evc: list[Expr]
    ) -> Expr:
        """Condition: message ``pos`` of ``c`` matches the constants/evals of receive args."""
        parts: list[Expr] = []
        for j, a in enumerate(args):
            if j >= len(c.fields):
                raise self.err("too many fields in receive", a)
            field_val = self.slot_val(c, pos, j, p)
            cv = self.rarg_const(a, p, ctx, evc)
            if cv is not None:
                parts.append(mk("==", field_val, cv))
        return conj(parts)

    def rarg_const(self, a: Node, p: Path, ctx: _Ctx, evc: list[Expr]) -> Expr | None:
        if a.kind == "const":
            return Const(a.val)
        if a.kind == "eval":
            return int_of(self.ev(a.args[0], p, ctx, evc))
        if a.kind == "var" and a.name in self.mtypes and self.lookup(a.name or "", ctx) is None:
            return Const(self.mtypes[a.name or ""])
        if a.kind == "var" and a.name == "_":
            return None
        if a.kind == "var":
            return None
        raise self.err("receive arguments must be variables, constants or eval(...)", a)

    def slot_val(self, c: Chan, pos: int, j: int, p: Path) -> Expr:
        if c.packed:
            shift = pos * c.width + c.offsets[j]
            d = self.data(c, p)
            bits = mk("&", mk(">>", d, Const(shift)) if shift else d, Const((1 << c.bits[j]) - 1))
            lo = c.field_ranges[j][0]
            return mk("+", bits, Const(lo)) if lo else bits
        name = c.slots[pos][j]
        return p.val(name, self.var_sorts[name])

    # -- assignment -----------------------------------------------------------------------
    def assign(self, lhs: Node, value: Expr, p: Path, ctx: _Ctx, evc: list[Expr]) -> None:
        if lhs.kind == "var" and lhs.name == "_":
            return
        if lhs.kind != "var":
            raise self.err("can only assign to a variable", lhs)
        if lhs.name in self.mtypes and self.lookup(lhs.name or "", ctx) is None:
            raise self.err(f"cannot assign to the mtype constant '{lhs.name}'", lhs)
        choices = self.leaf_choices(lhs, p, ctx, evc)
        value = int_of(value)
        for cond, lf in choices:
            if lf.name in self.chan_of_var and lf.name not in self.var_sorts:
                raise self.err(
                    "assigning to a channel declared with an initialiser is not supported", lhs
                )
            new = wrap_expr(value, lf.lo, lf.hi) if not self.fits(value, lf) else value
            if cond != TRUE:
                new = mk("ite", cond, new, self.read_leaf(lf, p))
            p.env[lf.name] = new

    def fits(self, e: Expr, lf: Leaf) -> bool:
        if isinstance(e, Const):
            return lf.lo <= e.value <= lf.hi
        if isinstance(e, Var):
            s = self.var_sorts.get(e.name)
            return s is not None and lf.lo <= s.lo and s.hi <= lf.hi
        return False

    # -- statements (symbolic execution) ----------------------------------------------------
    def block(self, p: Path, cond: Expr, first: bool, why: str) -> list[Path]:
        """Continue ``p`` under ``cond``; if not ``first``, the other case is a model error."""
        out = []
        if cond != FALSE:
            q = p.copy() if cond != TRUE else p
            if cond != TRUE:
                q.conds.append(cond)
            out.append(q)
        if not first and cond != TRUE:
            e = p.copy()
            e.conds.append(neg(cond))
            e.error = why
            out.append(e)
        return out

    def exec_el(self, el: El, p: Path, ctx: _Ctx, first: bool) -> list[Path]:
        n = el.n
        k = el.kind
        if k in ("print", "printm") and n is not None:
            fmt = "%e" if k == "printm" else (n.name or "")
            args = tuple(self.ev(a, p, ctx, []) for a in n.args)
            names = tuple(sorted((v, m) for m, v in self.mtypes.items()))
            p.prints.append(Print(fmt, args, names))
            return [p]
        if k in ("goto", ".", "break_tgt", "print", "printm", "else"):
            return [p]
        assert n is not None
        if k == "c":
            e = n.args[0]
            if e.kind == "run":
                return self.exec_run(e, p, ctx, first)
            cond = bool_of(self.ev(e, p, ctx, []))
            return self.block(p, cond, first, f"blocked inside d_step at line {_line(n)}")
        if k == "asgn":
            lhs, rhs = n.args
            if rhs.kind == "run":  # x = run P(): the new process's pid
                return self.exec_run(rhs, p, ctx, first, lhs)
            v = self.ev(rhs, p, ctx, [])
            self.assign(lhs, v, p, ctx, [])
            return [p]
        if k == "assert":
            cond = bool_of(self.ev(n.args[0], p, ctx, []))
            name = self.assert_prop(n, cond)
            if cond != TRUE:
                p.asserts.append((name, cond))
            return [p]
        if k == "s":
            return self.exec_send(n, p, ctx, first)
        if k == "r":
            return self.exec_recv(n, p, ctx, first)
        if k == "d_step":
            return self.exec_dstep(el, p, ctx)
        if k == "@":
            return [p]
        raise self.err(f"unsupported statement '{k}'", n)

    def assert_prop(self, n: Node, cond: Expr) -> str:
        sp = n.span
        key = (sp.file if sp else "", sp.line if sp else 0, sp.column if sp else 0)
        name = self.prop_names.get(key)
        if name is None:
            base = f"assert@{key[1]}"
            name = base if all(pn.name != base for pn in self.props) else f"{base}:{key[2]}"
            self.prop_names[key] = name
            self.props.append(Property(name, "assert", cond, sp))
        return name

    def refs_for(self, n: Node, nfields: int, p: Path, ctx: _Ctx) -> list[tuple[Expr, Chan]]:
        refs = self.chan_refs(n.args[0], p, ctx, [])
        if len(refs) > 1:
            refs = [(c2, ch) for c2, ch in refs if len(ch.fields) == nfields]
        return refs

    def chan_expr(self, n: Node, p: Path, ctx: _Ctx) -> Expr:
        """The value of the channel expression of send or receive ``n`` on path ``p`` (its
        errors are recorded where ``refs_for`` evaluated it)."""
        return int_of(self.ev(n.args[0], p.copy(), ctx, []))

    def rendezvous_items(
        self, n: Node, refs: list[tuple[Expr, Chan]], p: Path, ctx: _Ctx
    ) -> list[tuple[Expr, Chan, int, Expr | None]]:
        """The channels a send may use, as (condition, channel, id, channel expression): the
        rendezvous channels with the same fields that a channel variable may denote are one
        item with a group id (< 0) and the variable's expression, the others one each."""
        by_sig: dict[tuple[tuple[int, int], ...], list[tuple[Expr, Chan]]] = {}
        for cond, c in refs:
            if c.cap == 0:
                by_sig.setdefault(tuple(c.field_ranges), []).append((cond, c))
        if all(len(members) < 2 for members in by_sig.values()):
            return [(cond, c, c.cid, None) for cond, c in refs]
        e = self.chan_expr(n, p, ctx)
        out: list[tuple[Expr, Chan, int, Expr | None]] = []
        done: set[int] = set()
        for cond, c in refs:
            members = by_sig.get(tuple(c.field_ranges), []) if c.cap == 0 else []
            if len(members) < 2:
                out.append((cond, c, c.cid, None))
                continue
            if c.cid in done:
                continue
            cids = tuple(m.cid for _cond, m in members)
            done.update(cids)
            gid = next((g for g, v in self.groups.items() if v == cids), None)
            if gid is None:
                gid = -1 - len(self.groups)
                self.groups[gid] = cids
            out.append((disj([m_cond for m_cond, _m in members]), c, gid, e))
        return out

    def exec_send(self, n: Node, p: Path, ctx: _Ctx, first: bool) -> list[Path]:
        out: list[Path] = []
        refs = self.refs_for(n, len(n.args) - 1, p, ctx)
        for cond, c, cid, ref in self.rendezvous_items(n, refs, p, ctx):
            q = p.copy()
            if cond != TRUE:
                q.conds.append(cond)
            vals = [int_of(self.ev(a, q, ctx, [])) for a in n.args[1:]]
            if len(vals) != len(c.fields):
                raise self.err(f"send of {len(vals)} field(s) on a channel of {len(c.fields)}", n)
            vals = [
                v if self._fits_range(v, r) else wrap_expr(v, *r)
                for v, r in zip(vals, c.field_ranges, strict=True)
            ]
            if c.cap == 0:
                if p.chan is not None or not first:
                    raise self.err("a rendezvous send must start its step", n)
                q.msg = vals
                q.chan = cid
                q.chan_ref = ref
                out.append(q)
                continue
            ln = self.chan_len(c, q)
            for r in self.block(
                q,
                mk("<", ln, Const(c.cap)),
                first,
                f"channel full inside d_step at line {_line(n)}",
            ):
                if r.error:
                    out.append(r)
                    continue
                if n.val == 1:  # sorted send
                    out.extend(self.sorted_send(c, vals, r))
                    continue
                # one command: slot `len` gets the message (the others keep their values)
                s = r.copy()
                if c.packed:
                    msg = mk("<<", self.encode(c, vals), mk("*", ln, Const(c.width)))
                    s.env[c.data_var] = mk("|", self.data(c, r), msg)
                    s.env[c.len_var] = mk("+", ln, Const(1))
                    out.append(s)
                    continue
                for pos in range(c.cap):
                    at = mk("==", ln, Const(pos))
                    if at == FALSE:
                        continue
                    for j, v in enumerate(vals):
                        name = c.slots[pos][j]
                        s.env[name] = (
                            v if at == TRUE else mk("ite", at, v, self.slot_val(c, pos, j, r))
                        )
                s.env[c.len_var] = mk("+", ln, Const(1))
                out.append(s)
        return out

    def _fits_range(self, v: Expr, r: tuple[int, int]) -> bool:
        if isinstance(v, Const):
            return r[0] <= v.value <= r[1]
        if isinstance(v, Var):
            s = self.var_sorts.get(v.name)
            return s is not None and r[0] <= s.lo and s.hi <= r[1]
        return False

    def sorted_send(self, c: Chan, vals: list[Expr], r: Path) -> list[Path]:
        out = []
        ln = self.chan_len(c, r)
        for length in range(c.cap):
            at = mk("==", ln, Const(length))
            if at == FALSE:
                continue
            for pos in range(length + 1):
                s = r.copy()
                conds = [at]
                # insert before the first message greater than vals (lexicographic)
                for q in range(pos):
                    conds.append(
                        neg(
                            self.lex_less(
                                vals, [self.slot_val(c, q, j, r) for j in range(len(vals))]
                            )
                        )
                    )
                if pos < length:
                    conds.append(
                        self.lex_less(vals, [self.slot_val(c, pos, j, r) for j in range(len(vals))])
                    )
                g = conj(conds)
                if g == FALSE:
                    continue
                if g != TRUE:
                    s.conds.append(g)
                if c.packed:
                    d = self.data(c, r)
                    w = c.width
                    lower = self.low_bits(d, w * pos)
                    upper = mk("<<", mk(">>", d, Const(w * pos)), Const(w * (pos + 1)))
                    new = mk("|", lower, mk("<<", self.encode(c, vals), Const(w * pos)))
                    s.env[c.data_var] = mk("|", new, upper)
                else:
                    for q in range(length, pos, -1):
                        for j in range(len(vals)):
                            s.env[c.slots[q][j]] = self.slot_val(c, q - 1, j, r)
                    for j, v in enumerate(vals):
                        s.env[c.slots[pos][j]] = v
                s.env[c.len_var] = Const(length + 1)
                out.append(s)
        return out

    def lex_less(self, a: list[Expr], b: list[Expr]) -> Expr:
        if not a:
            return FALSE
        return mk(
            "||", mk("<", a[0], b[0]), conj([mk("==", a[0], b[0]), self.lex_less(a[1:], b[1:])])
        )

    def exec_recv(
        self,
        n: Node,
        p: Path,
        ctx: _Ctx,
        first: bool,
        msg: list[Expr] | None = None,
        only: int | None = None,
        send_ref: Expr | None = None,
    ) -> list[Path]:
        out: list[Path] = []
        args = n.args[1:]
        refs = self.refs_for(n, len(args), p, ctx)
        if only is not None and only < 0:  # a send to a group: the same channel on both sides
            assert send_ref is not None
            members = self.groups[only]
            refs = [(cond, c) for cond, c in refs if c.cid in members]
            if len(refs) > 1:
                refs = [(mk("==", self.chan_expr(n, p, ctx), send_ref), refs[0][1])]
            elif refs:
                cond, c = refs[0]
                refs = [(conj([cond, mk("==", send_ref, Const(c.cid))]), c)]
            only = None
        for cond, c in refs:
            if only is not None and c.cid != only:
                continue
            if c.cap == 0 and msg is None:
                continue  # rendezvous receives only happen jointly
            q = p.copy()
            if cond != TRUE:
                q.conds.append(cond)
            if len(args) != len(c.fields):
                raise self.err(
                    f"receive of {len(args)} field(s) on a channel of {len(c.fields)}", n
                )
            if c.cap == 0:
                assert msg is not None
                parts = []
                for j, a in enumerate(args):
                    cv = self.rarg_const(a, q, ctx, [])
                    if cv is not None:
                        parts.append(mk("==", msg[j], cv))
                g = conj(parts)
                if g == FALSE:
                    continue
                if g != TRUE:
                    q.conds.append(g)
                for j, a in enumerate(args):
                    if self.rarg_const(a, q, ctx, []) is None:
                        self.assign(a, msg[j], q, ctx, [])
                out.append(q)
                continue
            rnd = n.val in (1, 3)
            copy = n.val in (2, 3)
            ln = self.chan_len(c, q)
            positions = range(c.cap) if rnd else range(1)
            alts: list[Expr] = []
            for pos in positions:
                m = conj([mk(">", ln, Const(pos)), self.match(c, pos, args, q, ctx, [])])
                here = conj([m, *(neg(a) for a in alts)])
                alts.append(m)
                if here == FALSE:
                    continue
                s = q.copy()
                if here != TRUE:
                    s.conds.append(here)
                vals = [self.slot_val(c, pos, j, q) for j in range(len(args))]
                for j, a in enumerate(args):
                    if self.rarg_const(a, s, ctx, []) is None:
                        self.assign(a, vals[j], s, ctx, [])
                if not copy and c.packed:
                    d = self.data(c, q)
                    w = c.width
                    rest = mk(">>", d, Const(w * (pos + 1)))
                    s.env[c.data_var] = (
                        mk("|", self.low_bits(d, w * pos), mk("<<", rest, Const(w * pos)))
                        if pos
                        else rest
                    )
                    s.env[c.len_var] = mk("-", ln, Const(1))
                elif not copy:
                    for k2 in range(pos, c.cap):
                        for j in range(len(c.fields)):
                            s.env[c.slots[k2][j]] = (
                                self.slot_val(c, k2 + 1, j, q) if k2 + 1 < c.cap else Const(0)
                            )
                    s.env[c.len_var] = mk("-", ln, Const(1))
                out.append(s)
            if not first:
                e = q.copy()
                e.conds.append(neg(disj(alts)))
                e.error = f"receive blocked inside d_step at line {_line(n)}"
                out.append(e)
        return out

    def exec_run(
        self, e: Node, p: Path, ctx: _Ctx, first: bool, pid_to: Node | None = None
    ) -> list[Path]:
        pt = self.ptypes.get(e.name or "")
        if pt is None:
            raise self.err(f"run of an undeclared proctype '{e.name}'", e)
        if len(e.args) != len(pt.decl.params):
            raise self.err(f"proctype '{pt.decl.name}' takes {len(pt.decl.params)} argument(s)", e)
        vals = [int_of(self.ev(a, p, ctx, [])) for a in e.args]
        out: list[Path] = []
        frees: list[Expr] = []
        for s in self.slots:
            if pt not in s.types or s.pid == 0:
                continue
            prev = self.slots[s.pid - 1]
            free = conj(
                [
                    mk("!=", p.val(prev.pc, self.var_sorts[prev.pc]), Const(0)),
                    mk("==", p.val(s.pc, self.var_sorts[s.pc]), Const(0)),
                ]
            )
            frees.append(free)
            if free == FALSE:
                continue
            q = p.copy()
            if free != TRUE:
                q.conds.append(free)
            self.start_process(s, pt, vals, q)
            if pid_to is not None:
                self.assign(pid_to, Const(s.pid), q, ctx, [])
            out.append(q)
        bad = neg(disj(frees))
        if bad != FALSE:
            r = p.copy()
            r.conds.append(bad)
            r.error = (
                f"no free process slot for 'run {pt.decl.name}' (absmc allocated {len(self.slots)})"
            )
            out.append(r)
        return out

    def start_process(
        self, s: Slot, pt: ProcType, args: list[Expr], p: Path, initial: bool = False
    ) -> None:
        p.env[s.pc] = Const(s.offsets[pt.decl.name] + pt.fsm.start)
        ctx = _Ctx(s, pt)
        lays = s.layouts[pt.decl.name]
        for d, v in zip(pt.decl.params, args, strict=True):
            for lf in lays[d.name].leaves():
                p.env[lf.name] = v if self.fits(v, lf) else wrap_expr(v, lf.lo, lf.hi)
        for d in pt.locals:
            leaves = lays[d.name].leaves()
            if isinstance(d.init, ChanInit):
                for lf in leaves:
                    c = s.chans.get(lf.name)
                    p.env[lf.name] = Const(c.cid if c is not None else 0)
                continue
            if d.init is None:
                for lf in leaves:
                    p.env[lf.name] = Const(0)
            elif isinstance(d.init, list):
                vals = [int_of(self.ev(x, p, ctx, [])) for x in d.init] + [Const(0)] * len(leaves)
                for lf, v in zip(leaves, vals, strict=False):
                    p.env[lf.name] = wrap_expr(v, lf.lo, lf.hi) if not self.fits(v, lf) else v
            else:
                nerr = len(p.errors)
                v = int_of(self.ev(d.init, p, ctx, []))
                if initial:
                    errs = [m for c, m in p.errors[nerr:] if c != FALSE]
                    if errs:  # SPIN fails when it starts the process
                        raise self.err(f"the initial value of '{d.name}': {errs[0]}", span=d.span)
                    for lf in leaves:
                        self.init_decl[lf.name] = d
                for lf in leaves:
                    p.env[lf.name] = wrap_expr(v, lf.lo, lf.hi) if not self.fits(v, lf) else v

    def exec_dstep(self, el: El, p: Path, ctx: _Ctx) -> list[Path]:
        assert el.body is not None and el.body.frst is not None
        return self.walk(el.body.frst, p, ctx, True, 0)

    def walk(self, start: El | None, p: Path, ctx: _Ctx, first: bool, steps: int) -> list[Path]:
        """Execute the elements of a d_step from ``start`` until control leaves it."""
        done: list[Path] = []
        work = [(start, p, first, steps)]
        while work:
            e, q, fst, n = work.pop()
            if len(done) + len(work) > MAX_PATHS:
                raise self.err("d_step has too many paths to enumerate", el_node(start))
            if n > MAX_DSTEP_STEPS:
                raise self.err("d_step does not terminate (or is too long)", el_node(start))
            if e is None or not (e.status & D_ATOM) or q.error:
                done.append(q)
                continue
            if e.kind == "goto":
                assert e.n is not None
                work.append((self.labels_of(ctx)(e), q, fst, n + 1))
                continue
            if e.kind in (".", "break_tgt"):
                work.append((e.nxt, q, fst, n + 1))
                continue
            if e.kind in ("if", "do"):
                opts = [huntstart(h.frst) for h in e.sub if h.frst is not None]
                seen_guards: list[Expr] = []
                els = None
                results: list[tuple[El, Path]] = []
                for g in opts:
                    if g.kind == "else":
                        els = g
                        continue
                    probe = q.copy()
                    probe.conds = []
                    subs = [s for s in self.exec_el(g, probe, ctx, True) if not s.error]
                    ex = disj([conj(s.conds) for s in subs])
                    for s in subs:
                        r = s.copy()
                        r.conds = [*q.conds, *(neg(x) for x in seen_guards), *s.conds]
                        if conj(r.conds) != FALSE:
                            results.append((g, r))
                    seen_guards.append(ex)
                none = conj([neg(x) for x in seen_guards])
                for g, r in results:
                    work.append((g.nxt, r, False, n + 1))
                if none != FALSE:
                    r = q.copy()
                    r.conds.append(none)
                    if els is not None:
                        work.append((els.nxt, r, False, n + 1))
                    elif not fst:
                        line = _line(e.n)
                        r.error = (
                            f"no option of an if/do is executable inside d_step at line {line}"
                        )
                        done.append(r)
                continue
            if e.kind in ("non_atomic", "atomic"):
                assert e.body is not None
                work.append((e.body.frst, q, fst, n + 1))
                continue
            for r in self.exec_el(e, q, ctx, fst):
                if r.error:
                    done.append(r)
                else:
                    work.append((e.nxt, r, False, n + 1))
        return done

    def labels_of(self, ctx: _Ctx) -> Callable[[El], El | None]:
        assert ctx.pt is not None
        b = self.builders[ctx.pt.decl.name]

        def go(e: El) -> El | None:
            assert e.n is not None and e.n.name is not None
            lab: El = b.get_lab(e.n.name, e.inline, e.n)
            return lab

        return go

    # -- processes --------------------------------------------------------------------------
    def auto_hide(self) -> None:
        """SPIN leaves globals that are never read (only written, or only printed) out of the
        state vector (``chanaccess`` in SPIN's sym.c); so does absmc."""
        read: set[str] = set()
        for pt in self.ptypes.values():
            for e in pt.fsm.builder.all:
                _reads(e.n, read, False)
            if pt.decl.provided is not None:
                _reads(pt.decl.provided, read, True)
            for d in pt.locals:
                if isinstance(d.init, Node):
                    _reads(d.init, read, True)
        for d in self.m.globals:
            if isinstance(d.init, Node):
                _reads(d.init, read, True)
        for e in [*self.m.preds, *self.ltl_reads]:
            _reads(e, read, True)
        drop: set[str] = set()
        for d in self.m.globals:
            if d.name in read or isinstance(d.init, ChanInit) or d.type in self.m.typedefs:
                continue
            if d.type == "chan":
                continue
            drop.update(lf.name for lf in self.globals[d.name].leaves())
        if drop:
            self.hidden |= drop
            self.vars = [v for v in self.vars if v.name not in drop]

    def proc_types(self) -> None:
        self.ptypes: dict[str, ProcType] = {}
        self.builders: dict[str, Any] = {}
        gl = set(self.globals)
        xu: dict[str, int] = {}
        locs: dict[str, list[VarDecl]] = {}
        for pd in self.m.procs:
            lst = list(pd.params)
            acc: dict[str, int] = {}
            _collect(pd.body, lst, acc)
            locs[pd.name] = lst
            for name, v in acc.items():
                key = (
                    name
                    if name in gl and name not in {d.name for d in lst}
                    else f"{pd.name}.{name}"
                )
                xu[key] = xu.get(key, 0) | v
        u_sync = any(c.cap == 0 for c in self.chans)

        for i, pd in enumerate(self.m.procs):
            loc = {d.name for d in locs[pd.name]}

            def is_global(name: str, loc: set[str] = loc) -> bool:
                return name in gl and name not in loc

            def xu_of(name: str, loc: set[str] = loc, pn: str = pd.name) -> int:
                return xu.get(name if name not in loc else f"{pn}.{name}", 0)

            merge = not pd.provided and not any(p.provided for p in self.m.procs)
            sizes = {d.name: d.size for d in [*self.m.globals, *locs[pd.name]] if d.size}

            def array_size(name: str, sizes: dict[str, Any] = sizes) -> int | None:
                return sizes.get(name)

            fsm = build_fsm(pd, self.m.inlines, is_global, xu_of, u_sync, merge, array_size)
            self.check_label_names(fsm, loc)
            self.builders[pd.name] = fsm.builder
            self.ptypes[pd.name] = ProcType(
                pd, fsm, [d for d in locs[pd.name] if d not in pd.params], i
            )

    def allocate_slots(self) -> None:
        self.slots: list[Slot] = []
        actives: list[ProcType] = []
        for pd in sorted(self.m.procs, key=lambda x: x.order):
            for _ in range(pd.active):
                actives.append(self.ptypes[pd.name])
        types_at: list[list[ProcType]] = [[t] for t in actives]
        types_at += self.dynamic_slot_types(actives)
        for pid, ts in enumerate(types_at):
            single = len(ts) == 1
            name = f"{_pname(ts[0].decl)}({pid})" if single else f"pid{pid}"
            s = Slot(pid, ts, name, f"{name}._p")
            off = 0
            for t in ts:
                s.offsets[t.decl.name] = off
                off += max(t.fsm.trans.keys() | {t.fsm.end, t.fsm.start}) + 1
                lays: dict[str, Layout] = {}
                prefix = f"{name}." if single else f"{name}.{_pname(t.decl)}."
                for d in [*t.decl.params, *t.locals]:
                    if d.name in lays:
                        raise self.err(f"variable '{d.name}' is declared twice", span=d.span)
                    lays[d.name] = self.layout(prefix, d)
                s.layouts[t.decl.name] = lays
            self.slots.append(s)
            self.add_var(s.pc, 0, max(off, 1), 0)
            for t in ts:
                for lay in s.layouts[t.decl.name].values():
                    for lf in lay.leaves():
                        self.add_var(lf.name, lf.lo, lf.hi, 0)
            # local channels: SPIN numbers channels in creation order (globals, then each
            # process's, by pid); with a fixed proctype in every slot up to this one, the ids are
            # the same in every run
            for t in ts:
                for d in t.locals:
                    if not isinstance(d.init, ChanInit):
                        continue
                    for lf in s.layouts[t.decl.name][d.name].leaves():
                        s.chans[lf.name] = self.new_chan(lf.name, d.init)

    def dynamic_slot_types(self, actives: list[ProcType]) -> list[list[ProcType]]:
        """For each pid after the active processes, the proctypes ``run`` can start in it.

        When only active processes run others, a dry run of each gives the creation order
        (``creation_sequence``); when created processes create processes too, every order
        of their ``run`` blocks is enumerated (``creation_orders``).

        Raises:
            ModelError: more than ``MAX_PROCESSES`` processes, or a creation order that
                cannot be bounded.
        """
        creators = [t for t in self.ptypes.values() if _runs_in(t.decl.body)]
        if any(t not in actives for t in creators):
            types_at = self.creation_orders(actives, creators)
        else:
            seq, exact = self.creation_sequence(actives, creators)
            types_at = []
            for i in range(len(seq)):
                if exact:
                    types_at.append([seq[i]])
                    continue
                ts: list[ProcType] = []
                for t in seq[i:]:
                    if t not in ts:
                        ts.append(t)
                types_at.append(ts)
        a = len(actives)
        if a + len(types_at) > MAX_PROCESSES:
            last = types_at[MAX_PROCESSES - a][0].decl
            raise self.err(
                f"max nr of processes is {MAX_PROCESSES} ('{last.name}')", span=last.span
            )
        return types_at

    def creation_orders(
        self, actives: list[ProcType], creators: list[ProcType]
    ) -> list[list[ProcType]]:
        """Pid -> possible proctypes when created processes create processes (mobile1.pml).

        Each creator's ``run`` statements come from its dry run (with unknown parameters): one
        block when it keeps exclusive control from the first to the last (``atomic``), else
        one event per ``run``. Every interleaving of these events is enumerated, a process's
        events after its own creation; a process that can terminate may die when it has the
        highest pid, and its pid is reused, as in SPIN. Each pid gets the union of the
        proctypes it receives over all interleavings.

        Raises:
            ModelError: a creator whose ``run`` statements depend on its choices, or more
                than 200,000 interleaving states.
        """
        blocks: dict[str, list[list[ProcType]]] = {}
        for t in creators:
            runs, deterministic, chained = self.dry_run(t, unknown_params=t not in actives)
            if not deterministic:
                raise self.err(
                    f"processes created by dynamically created processes ('{t.decl.name}')"
                    " are supported only when the processes each one creates do not depend"
                    " on its choices",
                    span=t.decl.span,
                )
            blocks[t.decl.name] = [runs] if chained else [[r] for r in runs]
        can_end = {name: _can_terminate(pt.fsm) for name, pt in self.ptypes.items()}
        types_at: list[list[ProcType]] = []
        a = len(actives)
        start = tuple((t.decl.name, 0) for t in actives)
        seen: set[tuple[tuple[str, int], ...]] = set()
        stack = [start]
        while stack:
            state = stack.pop()
            if state in seen:
                continue
            seen.add(state)
            if len(seen) > 200_000:
                raise self.err(
                    "cannot enumerate the orders in which processes are created",
                    span=creators[0].decl.span,
                )
            for i, (name, done) in enumerate(state):
                evs = blocks.get(name, [])
                if done < len(evs):
                    new = list(state)
                    new[i] = (name, done + 1)
                    for t in evs[done]:
                        pos = len(new) - a
                        if pos >= MAX_PROCESSES:
                            raise self.err(
                                f"max nr of processes is {MAX_PROCESSES} ('{t.decl.name}')",
                                span=t.decl.span,
                            )
                        while len(types_at) <= pos:
                            types_at.append([])
                        if t not in types_at[pos]:
                            types_at[pos].append(t)
                        new.append((t.decl.name, 0))
                    stack.append(tuple(new))
            name, done = state[-1]
            if len(state) > 1 and can_end[name] and done == len(blocks.get(name, [])):
                stack.append(state[:-1])
        return types_at

    def creation_sequence(
        self, actives: list[ProcType], creators: list[ProcType]
    ) -> tuple[list[ProcType], bool]:
        """The proctypes ``run`` creates, in creation order, from a dry run of the creating
        processes (all of them active); ``exact`` when that order fixes which pid each gets."""
        if not creators:
            return [], True
        seq: list[ProcType] = []
        exact = True
        for t in creators:
            n_inst = actives.count(t)
            runs, deterministic, chained = self.dry_run(t)
            exact = exact and deterministic and chained and n_inst == 1 and len(creators) == 1
            exact = exact and bool(actives) and actives[-1] is t
            for _ in range(n_inst):
                seq.extend(runs)
        return seq, bool(exact)

    def dry_run(
        self, t: ProcType, unknown_params: bool = False
    ) -> tuple[list[ProcType], bool, bool]:
        """Follow process ``t`` alone from its start with the initial values, counting the
        ``run`` statements it executes (the longest sequence over its choices); with
        ``unknown_params`` its parameters are unknown values instead of 0."""
        fsm = t.fsm
        slot = Slot(-1, [t], "dry", "dry._p")
        slot.offsets[t.decl.name] = 0
        lays: dict[str, Layout] = {}
        for d in [*t.decl.params, *t.locals]:
            lays[d.name] = self.layout("dry.", d)
        slot.layouts[t.decl.name] = lays
        ctx = _Ctx(slot, t)
        env: dict[str, Expr] = {v.name: Const(v.init) for v in self.vars}
        p0 = Path(env, [])
        for d in t.locals:
            for lf in lays[d.name].leaves():
                self.var_sorts.setdefault(lf.name, sort_of(lf.lo, lf.hi))
        self.var_sorts.setdefault("dry._p", sort_of(0, 255))
        saved_slots = getattr(self, "slots", [])
        self.slots = []
        try:
            params: list[Expr] = [Const(0)] * len(t.decl.params)
            if unknown_params:
                leaves = [lays[d.name].leaves()[0] for d in t.decl.params]
                params = [Var(f"{lf.name}#arg", sort_of(lf.lo, lf.hi)) for lf in leaves]
            self.start_process(slot, t, params, p0)
        except ModelError:
            self.slots = saved_slots
            return [], False, False
        best: list[ProcType] = []
        best_trace: list[tuple[Trans, int]] = []
        deterministic = True
        stack: list[tuple[int, dict[str, Expr], list[ProcType], list[tuple[Trans, int]]]] = [
            (fsm.start, p0.env, [], [])
        ]
        seen: set[Any] = set()
        steps = 0
        while stack:
            pc, env2, runs, trace = stack.pop()
            steps += 1
            if steps > 20000:
                raise self.err(
                    f"cannot bound the number of processes '{t.decl.name}' creates",
                    span=t.decl.span,
                )
            key = (pc, tuple(sorted((k, repr(v)) for k, v in env2.items())), len(runs))
            if key in seen:
                continue
            seen.add(key)
            if len(runs) > 255:
                raise self.err(f"'{t.decl.name}' creates more than 255 processes", span=t.decl.span)
            moves = []
            for tr in fsm.trans.get(pc, []):
                p = Path(dict(env2), [])
                created: list[ProcType] = []
                ok = True
                for i, el in enumerate(tr.steps):
                    rn = _run_of(el)
                    if rn is not None:
                        if rn.name not in self.ptypes:
                            raise self.err(f"run of an undeclared proctype '{rn.name}'", rn)
                        created.append(self.ptypes[rn.name or ""])
                        continue
                    try:
                        res = [r for r in self.exec_el(el, p, ctx, i == 0) if not r.error]
                    except ModelError:
                        ok = False
                        break
                    if not res:
                        ok = False
                        break
                    if len(res) > 1 or any(not isinstance(x, Const) for x in res[0].conds):
                        deterministic = False
                    p = res[0]
                if ok and all(c != FALSE for c in p.conds):
                    moves.append((tr, p, created))
            if len(moves) > 1:
                deterministic = False
            if not moves:
                if len(runs) > len(best):
                    best, best_trace = runs, trace
                continue
            for tr, p, created in moves:
                env3: dict[str, Expr] = {k: v for k, v in p.env.items() if isinstance(v, Const)}
                stack.append((tr.target, env3, runs + created, [*trace, (tr, len(created))]))
        self.slots = saved_slots
        # chained: from the first run to the last one, the creator keeps exclusive control
        idx = [i for i, (_tr, n) in enumerate(best_trace) if n]
        chained = True
        if idx:
            for tr, _n in best_trace[idx[0] : idx[-1]]:
                if not (tr.atomic or tr.d_step):
                    chained = False
        return best, deterministic, chained

    def total_runs(self, t: ProcType) -> int:
        return _count_runs(t.decl.body)

    # -- commands ---------------------------------------------------------------------------
    def pc_is(self, s: Slot, t: ProcType, state: int) -> Expr:
        return Op("==", (Var(s.pc, self.var_sorts[s.pc]), Const(s.offsets[t.decl.name] + state)))

    def transition_paths(self, s: Slot, t: ProcType, tr: Trans, tmo: bool) -> list[Path]:
        """Symbolic execution of one (non-rendezvous) transition in slot ``s``."""
        ctx = _Ctx(s, t)
        p = Path({"$timeout": TRUE if tmo else FALSE}, [self.pc_is(s, t, tr.source)])
        if t.decl.provided is not None:
            p.conds.append(bool_of(self.ev(t.decl.provided, p, ctx, [])))
        paths = [p]
        for i, el in enumerate(tr.steps):
            nxt: list[Path] = []
            for q in paths:
                if q.error:
                    nxt.append(q)
                    continue
                nxt.extend(self.exec_el(el, q, ctx, i == 0))
            paths = nxt
            if len(paths) > MAX_PATHS:
                raise self.err("a transition has too many paths to enumerate", el.n)
        for q in paths:
            if q.error:
                continue
            if tr.is_end:
                self.end_effects(s, t, q)
            else:
                q.env[s.pc] = Const(s.offsets[t.decl.name] + tr.target) if tr.target else Const(0)
        return paths

    def end_effects(self, s: Slot, t: ProcType, q: Path) -> None:
        if s.pid + 1 < len(self.slots):
            nxt = self.slots[s.pid + 1]
            q.conds.append(mk("==", Var(nxt.pc, self.var_sorts[nxt.pc]), Const(0)))
        q.env[s.pc] = Const(0)
        for lay in s.layouts[t.decl.name].values():
            for lf in lay.leaves():
                q.env[lf.name] = Const(0)
                c = s.chans.get(lf.name)
                if c is not None and c.cap > 0:  # the process's channels go with it
                    q.env[c.len_var] = Const(0)
                    if c.packed:
                        q.env[c.data_var] = Const(0)
                        continue
                    for row in c.slots:
                        for name in row:
                            q.env[name] = Const(0)

    def executable(self, s: Slot, t: ProcType, tr: Trans, tmo: bool) -> Expr:
        """When transition ``tr`` of the process in slot ``s`` can execute (for ``else``): a
        rendezvous counts only when a partner is ready."""
        parts = [conj(q.conds) for q in self.transition_paths(s, t, tr, tmo) if q.chan is None]
        if tr.first.kind == "s":
            parts += [conj(g) for g, _, _ in self.joint(s, t, tr, tmo)]
        if tr.first.kind == "r":
            parts += self.partner_guards(tmo).get((s.pid, t.index, id(tr)), [])
        return disj(parts)

    def partner_guards(self, tmo: bool) -> dict[tuple[int, int, int], list[Expr]]:
        """For every rendezvous receive transition (key: pid, proctype index, ``id`` of the
        transition), the guards of its joint commands with every send, in the order of the
        sends (slot, proctype, location, transition). Computed once per ``tmo``; as when it
        was computed on every call, ``timeout_used`` is set when a send path reads ``timeout``."""
        cached = self._partner_guards.get(tmo)
        if cached is not None:
            out_c, used = cached
            self.timeout_used = self.timeout_used or used
            return out_c
        before = self.timeout_used
        self.timeout_used = False
        out: dict[tuple[int, int, int], list[Expr]] = {}
        for s1 in self.slots:
            for t1 in s1.types:
                for trs in t1.fsm.trans.values():
                    for tr1 in trs:
                        if tr1.first.kind != "s":
                            continue
                        for g, _z, (s2, t2, tr2) in self.joint(s1, t1, tr1, tmo):
                            out.setdefault((s2.pid, t2.index, id(tr2)), []).append(conj(g))
        self._partner_guards[tmo] = (out, self.timeout_used)
        self.timeout_used = before or self.timeout_used
        return out

    def receivers(self, cid: int) -> list[tuple[Slot, ProcType, int, Trans]]:
        """The receive transitions (slot, proctype, location, transition) that may take a
        message from channel ``cid``, in slot, proctype, location and transition order: those
        whose channel expression may denote ``cid`` (a constant channel, or a channel variable,
        which may hold any channel with as many fields as the receive has arguments). The
        index is built once for all channels; each send then meets only its possible
        partners (linear loading instead of every send against every receive)."""
        if self._receivers is None:
            index: dict[int, list[tuple[Slot, ProcType, int, Trans]]] = {}
            for s2 in self.slots:
                for t2 in s2.types:
                    ctx2 = _Ctx(s2, t2)
                    for st2, trs in t2.fsm.trans.items():
                        for tr2 in trs:
                            if tr2.first.kind != "r":
                                continue
                            assert tr2.first.n is not None
                            try:
                                refs = self.refs_for(
                                    tr2.first.n, len(tr2.first.n.args) - 1, Path({}, []), ctx2
                                )
                            except ModelError:  # reported where the receive is lowered
                                refs = [(TRUE, c) for c in self.chans]
                            entry = (s2, t2, st2, tr2)
                            self._receiver_rank[id(entry)] = len(self._receiver_rank)
                            for _cond, c in refs:
                                index.setdefault(c.cid, []).append(entry)
            self._receivers = index
        if cid < 0:  # a group: every receiver of a member, once, in the order above
            got = self._receivers.get(cid)
            if got is None:
                uniq = {id(x): x for m in self.groups[cid] for x in self._receivers.get(m, [])}
                got = sorted(uniq.values(), key=lambda x: self._receiver_rank[id(x)])
                self._receivers[cid] = got
            return got
        return self._receivers.get(cid, [])

    def joint(
        self, s: Slot, t: ProcType, tr: Trans, tmo: bool
    ) -> list[tuple[list[Expr], Path, tuple[Slot, ProcType, Trans]]]:
        """Rendezvous partners of send transition ``tr``: (guard parts, combined path,
        receiver)."""
        out: list[tuple[list[Expr], Path, tuple[Slot, ProcType, Trans]]] = []
        for sp in self.transition_paths(s, t, tr, tmo):
            if sp.error or sp.chan is None:
                continue
            assert sp.msg is not None
            for s2, t2, st2, tr2 in self.receivers(sp.chan):
                if s2 is s:
                    continue
                ctx2 = _Ctx(s2, t2)
                q = sp.copy()
                q.chan = None
                q.conds.append(self.pc_is(s2, t2, st2))
                if t2.decl.provided is not None:
                    q.conds.append(bool_of(self.ev(t2.decl.provided, q, ctx2, [])))
                assert tr2.first.n is not None
                rs = self.exec_recv(tr2.first.n, q, ctx2, True, sp.msg, sp.chan, sp.chan_ref)
                for r in rs:
                    paths = [r]
                    for el in tr2.steps[1:]:
                        paths = [
                            z
                            for w in paths
                            for z in (self.exec_el(el, w, ctx2, False) if not w.error else [w])
                        ]
                    for z in paths:
                        if z.error:
                            continue
                        z.env[s2.pc] = (
                            Const(s2.offsets[t2.decl.name] + tr2.target) if tr2.target else Const(0)
                        )
                        g = conj(z.conds)
                        if g == FALSE:
                            continue
                        out.append((z.conds, z, (s2, t2, tr2)))
        return out

    def emit(
        self,
        s: Slot,
        t: ProcType,
        tr: Trans,
        p: Path,
        tmo: bool,
        exclusive: str | None,
        text: str,
        span: Any,
    ) -> None:
        guard = conj(p.conds)
        if guard == FALSE and not p.error:
            return
        # an error condition shared by several commands of one transition is checked once
        errors = tuple((c, m) for c, m in p.errors if c != FALSE and (c, m) not in self.seen_errors)
        self.seen_errors.update(errors)
        if p.error:
            cond = conj(p.conds)
            if cond == FALSE:
                return
            cmd = Command(
                s.name,
                Op("&&", (self.pc_is(s, t, tr.source), FALSE)),
                (),
                span=span,
                errors=((cond, p.error),),
                source_text=text,
            )
            self.commands.append(cmd)
            return
        updates = []
        for name, e in p.env.items():
            if name in self.hidden and not name.startswith(("$", "dry.")):
                # the value is not stored, but computing it may still divide by zero
                for c in _zero_divisions(e):
                    err = (conj([guard, c]), "division by zero")
                    if err[0] != FALSE and err not in errors:
                        errors = (*errors, err)
            if name.startswith("$") or name in self.hidden or name.startswith("dry."):
                continue
            cur = Var(name, self.var_sorts[name])
            if e == cur:
                continue
            updates.append((name, _unwrap(e, self.var_sorts[name])))
        self.commands.append(
            Command(
                s.name,
                guard,
                tuple(updates),
                span=span,
                flags=frozenset({"timeout"}) if tmo else frozenset(),
                exclusive=exclusive,
                asserts=tuple(p.asserts),
                errors=errors,
                source_text=text,
                prints=tuple(p.prints),
            )
        )

    def escape_guard(self, s: Slot, t: ProcType, trs: list[Trans], idx: int, tmo: bool) -> Expr:
        """``unless``: a transition is tried only when no transition of an earlier escape group
        at the same location can execute (pan: the first executed escape cuts the rest)."""
        mine = trs[idx].escape
        blockers = [
            self.executable(s, t, o, tmo) for o in trs[:idx] if o.escape != mine and o.escape
        ]
        return neg(disj(blockers)) if blockers else TRUE

    def commands_for(self, s: Slot, t: ProcType) -> None:
        fsm = t.fsm
        for st in fsm.reachable():
            trs = fsm.trans.get(st, [])
            elses = [tr for tr in trs if tr.is_else]
            if len(elses) > 1:  # pan refuses this at start-up
                raise self.err(
                    f"proctype '{t.decl.name}' state {st} inherits {len(elses)} 'else' statements",
                    elses[1].first.n,
                )
            for idx, tr in enumerate(trs):
                self.seen_errors = set()
                text = _stmt_text(tr)
                span = tr.first.n.span if tr.first.n is not None else None
                for tmo in (False, True):
                    if tmo and not self.timeout_used:
                        break
                    self.timeout_used = False
                    excl = s.name if tr.atomic else None
                    esc = (
                        self.escape_guard(s, t, trs, idx, tmo)
                        if any(o.escape for o in trs)
                        else TRUE
                    )
                    if tr.is_else:
                        # pan: `else` runs when no transition before it in the state's list
                        # moved (o_pm & 1); later ones (an enclosing do's options) don't count
                        others = [self.executable(s, t, o, tmo) for o in trs[:idx] if not o.is_else]
                        base = self.transition_paths(s, t, tr, tmo)
                        for q in base:
                            q.conds.append(neg(disj(others)))
                            q.conds.append(esc)
                            self.emit(s, t, tr, q, tmo, excl, text, span)
                    elif tr.first.kind == "s":
                        for _g, z, (s2, _t2, tr2) in self.joint(s, t, tr, tmo):
                            z.conds.append(esc)
                            ex = s2.name if tr2.atomic else None
                            self.emit(
                                s,
                                t,
                                tr,
                                z,
                                tmo,
                                ex,
                                f"{text}  ||  {s2.name}: {_stmt_text(tr2)}",
                                span,
                            )
                        for q in self.transition_paths(s, t, tr, tmo):
                            if q.chan is None:
                                q.conds.append(esc)
                                self.emit(s, t, tr, q, tmo, excl, text, span)
                    else:
                        for q in self.transition_paths(s, t, tr, tmo):
                            q.conds.append(esc)
                            self.emit(s, t, tr, q, tmo, excl, text, span)
                    if not self.timeout_used:
                        break

    def check_label_names(self, fsm: ProcFSM, local_names: set[str]) -> None:
        """SPIN's "bad label-name": a label may not have the name of a local variable of its
        proctype or of a global variable declared before it. Raises ``ModelError``."""
        for name, el, _ in fsm.builder.labels:
            if name.startswith(":"):
                continue
            where = fsm.builder.label_spans.get(name) or (el.n.span if el.n is not None else None)
            clash = name in local_names
            for d in self.m.globals:
                if d.name == name and (where is None or _before(d.span, where)):
                    clash = True
            if clash:
                raise self.err(f"bad label-name '{name}' (a variable has this name)", span=where)

    def _only_rv(self, tr: Trans) -> bool:
        assert tr.first.n is not None
        p = Path({}, [])
        try:
            chans = self.chan_refs(tr.first.n.args[0], p, _Ctx(None, None), [])
        except ModelError:
            return False
        return bool(chans) and all(c.cap == 0 for _, c in chans)

    # -- the system -------------------------------------------------------------------------
    def lower(self) -> System:
        running = 0
        for pd in sorted(self.m.procs, key=lambda x: x.order):
            running += pd.active
            if running > MAX_PROCESSES:
                raise self.err(f"max nr of processes is {MAX_PROCESSES}", span=pd.span)
        if not any(pd.active for pd in self.m.procs):
            first = min(self.m.procs, key=lambda x: x.order, default=None)
            span = first.span if first is not None else SourceSpan(self.file, 1, 1)
            raise self.err("no runnable process (no active proctype and no init)", span=span)
        self.global_decls()
        self.proc_types()
        self.auto_hide()
        self.allocate_slots()
        # initial state: active processes
        init_env: dict[str, Expr] = {v.name: Const(v.init) for v in self.vars}
        p = Path(init_env, [])
        k = 0
        for pd in sorted(self.m.procs, key=lambda x: x.order):
            for _ in range(pd.active):
                s = self.slots[k]
                self.start_process(
                    s, self.ptypes[pd.name], [Const(0)] * len(pd.params), p, initial=True
                )
                k += 1
        init_vals: dict[str, int] = {}
        for name, e in p.env.items():
            e = int_of(e)
            if not isinstance(e, Const) and name in self.init_decl:
                d = self.init_decl[name]
                try:
                    evaluate(e, {})
                    why = "is not a constant"
                except (EvalError, KeyError) as err:
                    why = f"cannot be computed: {err}"
                raise self.err(f"the initial value of '{d.name}' {why}", span=d.span)
            if not isinstance(e, Const):
                raise self.err("initial values of local variables must be constant")
            init_vals[name] = e.value
        variables = []
        for v in self.vars:
            val = init_vals.get(v.name, v.init)
            sort = v.sort
            assert hasattr(sort, "wrap")
            variables.append(Variable(v.name, sort, sort.wrap(val), v.span))
        processes = []
        for s in self.slots:
            processes.append(Process(s.name, s.pc))
            for t in s.types:
                self.commands_for(s, t)
        preds = [bool_of(self.ev(e, Path({}, []), _Ctx(None, None), [])) for e in self.m.preds]
        for s in self.slots:
            for t in s.types:
                for st in _preds_in(t.decl.body):
                    preds.append(bool_of(self.ev(st, Path({}, []), _Ctx(s, t), [])))
        ends: list[Expr] = []
        for s in self.slots:
            pcv = Var(s.pc, self.var_sorts[s.pc])
            ok = [mk("==", pcv, Const(0))]
            for t in s.types:
                for stop in sorted(t.fsm.stopstates()):
                    ok.append(mk("==", pcv, Const(s.offsets[t.decl.name] + stop)))
            ends.append(disj(ok))
        return System(
            tuple(variables),
            tuple(processes),
            tuple(self.commands),
            tuple(self.props),
            tuple(preds),
            self.name,
            self.file,
            valid_end=conj(ends),
        )


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
    seen = {fsm.start}
    todo = [fsm.start]
    while todo:
        pc = todo.pop()
        if pc == fsm.end:
            return True
        for tr in fsm.trans.get(pc, []):
            if tr.is_end or tr.target == fsm.end:
                return True
            if tr.target not in seen:
                seen.add(tr.target)
                todo.append(tr.target)
    return False


def _runs_in(body: list[Node]) -> bool:
    return _count_runs(body) > 0


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


def lower_model(model: Model, name: str = "") -> System:
    """The IR System of a parsed Promela model (see the module docstring). Raises
    ``ModelError`` for what absmc does not support or SPIN rejects."""
    return Lowerer(model, name).lower()
