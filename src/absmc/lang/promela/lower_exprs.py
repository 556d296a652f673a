"""Promela lowering, expressions: variable references (arrays by ``select``), remote references,
channel polls and receive matching, assignment (a part of
:class:`absmc.lang.promela.lower.Lowerer`)."""

from __future__ import annotations

from absmc.ir.expr import FALSE, TRUE, Const, Expr, Op, Var
from absmc.ir.sorts import BOOL
from absmc.lang.promela.ast import Node
from absmc.lang.promela.lower_base import (
    Chan,
    Path,
    ProcType,
    Slot,
    _Ctx,
    claim_message,
    select,
)
from absmc.lang.promela.lower_prio import Priorities
from absmc.lang.promela.simplify import conj, disj, mk, neg
from absmc.lang.promela.types import (
    Layout,
    Leaf,
    bool_of,
    int_of,
    wrap_expr,
)


class Expressions(Priorities):
    """The lowering's expressions."""

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

    def claim_errors(
        self, q: Path, ctx: _Ctx, c: Chan, kinds: tuple[str, ...], when: list[Expr] | None = None
    ) -> None:
        """pan's ``q_R_check``/``q_S_check``: an access to channel ``c`` that counts as a
        receive (``kinds`` holds xr) or a send (xs) by another process than the one whose
        ``xr``/``xs`` declaration claims it is a model error (on path ``q``, before it executes;
        ``when``: further conditions of the access, e.g. the branch of a channel reference)."""
        me = ctx.slot.name if ctx.slot is not None else None
        for cl in self.claims:
            if cl.kind not in kinds or cl.process == me:
                continue
            cond = conj([*q.conds, *(when or []), cl.alive, mk("==", cl.channel, Const(c.cid))])
            if cond != FALSE:
                q.errors.append((cond, claim_message(cl.kind, c.name, c.cid, cl.process)))

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
                self.pids_observed = True
                if ctx.slot is None:
                    raise self.err("_pid outside a process", n)
                return Const(ctx.slot.pid)
            if name == "_nr_pr":
                self.pids_observed = True
                return self.nr_pr()
            if name == "_priority" and self.lookup(name, ctx) is None:
                return self.own_priority(n, p, ctx)
            if name in ("_", "_last"):
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
            # pan's claim checks in a poll (pangen2.c, putstmnt): len, full and empty count as
            # a receive- and a send-side access, nfull as a send, nempty as a receive
            kinds = ("xs",) if k == "nfull" else ("xr",) if k == "nempty" else ("xr", "xs")
            op = "n" if k == "nfull" else "e" if k == "nempty" else "l"
            p.ops.extend((op, ch1.cid) for _, ch1 in chans)
            for ccond, ch1 in chans:
                self.claim_errors(p, ctx, ch1, kinds, [*evc, ccond])
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
                p.ops.append(("p", ch1.cid))
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
            self.pids_observed = True
            return self.remote_label(n, p, ctx, evc)
        if k == "remote_var":
            return self.remote_ref(n, p, ctx, evc)
        if k == "np_":
            progress = self.progress_expr()
            return neg(progress) if progress is not None else TRUE
        if k == "get_priority":
            return self.get_priority(n, p, ctx, evc)
        if k == "enabled":
            return self.enabled_of(n, p, ctx, evc)
        if k == "pc_value":
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
        """An ltl atom's ``P[pid]:v`` / ``P:v`` (recorded in :attr:`remote_vars`): the local
        ``v`` of the process with that pid (the only process of proctype ``P`` without a pid)."""
        pname, pid, var = self.remote_vars[n.name or ""]
        local = Node("var", n.args, name=var, span=n.span)
        return self._remote_read(pname, None if pid is None else Const(pid), local, n, p, ctx, evc)

    def remote_ref(self, n: Node, p: Path, ctx: _Ctx, evc: list[Expr]) -> Expr:
        """A statement's ``P[e]:v`` / ``P:v`` (``v`` a variable, array element or field)."""
        pid = None if n.args[0] is None else int_of(self.ev(n.args[0], p, ctx, evc))
        return self._remote_read(n.name or "", pid, n.args[1], n, p, ctx, evc)

    def _remote_read(
        self,
        pname: str,
        pid: Expr | None,
        local: Node,
        n: Node,
        p: Path,
        ctx: _Ctx,
        evc: list[Expr],
    ) -> Expr:
        """The value of ``local`` (a variable of proctype ``pname``, or an element of one) in the
        process with pid ``pid`` (``None``: the only process of ``pname``): SPIN's remote
        variable reference (``pangen2.c`` ``putremote``, pan's ``Pptr``). Where no process runs
        at that pid the value is 0, as pan reads it (a free slot's locals are 0 here); a pid
        whose process is of another proctype is the model error "remote reference to a process
        that is not a P" (pan reads the other process's memory). Raises ``ModelError`` when no
        process of ``pname`` can have that pid, or ``pname`` has no local of that name."""
        slots = [s for s in self.slots if any(t.decl.name == pname for t in s.types)]
        if isinstance(pid, Const):
            slots = [s for s in slots if s.pid == pid.value]
        var = local.name or ""
        if not slots or (pid is None and len(slots) != 1):
            which = pname if pid is None else f"{pname}[{pid}]"
            many = "no process" if not slots else "several processes"
            raise self.err(f"{many} for the remote reference '{which}:{var}'", n)
        if pid is None:
            pid = Const(slots[0].pid)
        vals: list[tuple[Expr, Expr]] = []
        for k, s in enumerate(slots):
            lay = s.layouts.get(pname, {}).get(var)
            if lay is None:
                raise self.err(f"proctype '{pname}' has no local variable '{var}'", n)
            ch = self._descend(lay, local, p if k == 0 else p.copy(), ctx, evc, TRUE)
            val: Expr = Const(0)
            if ch:
                val = self.read_leaf(ch[-1][1], p)
                for c, lf in reversed(ch[:-1]):
                    val = mk("ite", c, self.read_leaf(lf, p), val)
            vals.append((mk("==", pid, Const(s.pid)), val))
        for s in self.slots:
            others = [self.type_running(s, t) for t in s.types if t.decl.name != pname]
            wrong = conj([mk("==", pid, Const(s.pid)), disj(others)])
            if wrong != FALSE:
                msg = f"remote reference to a process that is not a {pname}"
                p.errors.append((conj([*p.conds, *evc, wrong]), msg))
        out: Expr = Const(0)
        for c, v in reversed(vals):
            out = mk("ite", c, v, out)
        return out

    def type_running(self, s: Slot, t: ProcType) -> Expr:
        """Slot ``s`` holds a process of proctype ``t`` (its program counter is in ``t``'s
        range; 0 is a free slot)."""
        lo = s.offsets[t.decl.name]
        hi = lo + t.fsm.last_location
        pc = Var(s.pc, self.var_sorts[s.pc])
        return conj([mk(">=", pc, Const(max(lo, 1))), mk("<=", pc, Const(hi))])

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
        key = (e, len(self.chans))
        known = self.chan_memo.get(key)
        if known is None:  # SPIN's mobile1: 4,437 channel expressions, 17 channels each
            out = []
            for c in self.chans:
                cond = mk("==", e, Const(c.cid))
                if cond != FALSE:
                    out.append((cond, c))
            valid = conj([mk("<=", Const(1), e), mk("<=", e, Const(len(self.chans)))])
            known = self.chan_memo[key] = (out, neg(valid))
        p.errors.append((conj([*p.conds, *evc, known[1]]), "use of an uninitialised channel"))
        return list(known[0])

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
        if lhs.name == "_priority" and self.lookup("_priority", ctx) is None:
            self.assign_priority(lhs, value, p, ctx)
            return
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

    def pc_is(self, s: Slot, t: ProcType, state: int) -> Expr:
        return Op("==", (Var(s.pc, self.var_sorts[s.pc]), Const(s.offsets[t.decl.name] + state)))
