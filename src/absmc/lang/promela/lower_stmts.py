"""Promela lowering, statements by symbolic execution: sends and receives (buffered and
rendezvous), ``run``, ``d_step`` paths (a part of :class:`absmc.lang.promela.lower.Lowerer`)."""

from __future__ import annotations

from collections.abc import Callable

from absmc.ir.expr import FALSE, TRUE, Const, Expr, Var
from absmc.ir.system import Print, Property
from absmc.lang.promela.ast import ChanInit, Node
from absmc.lang.promela.fsm import D_ATOM, El, huntstart
from absmc.lang.promela.lower_base import (
    MAX_DSTEP_STEPS,
    MAX_PATHS,
    MAX_PROCESSES,
    Chan,
    Path,
    ProcType,
    Slot,
    _Ctx,
    _line,
    claim_message,
    el_node,
)
from absmc.lang.promela.lower_exprs import Expressions
from absmc.lang.promela.simplify import conj, disj, mk, neg
from absmc.lang.promela.text import expr_text
from absmc.lang.promela.types import (
    bool_of,
    int_of,
    wrap_expr,
)


class Statements(Expressions):
    """The lowering's statements by symbolic execution."""

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
        if k == "set_priority":
            return self.exec_set_priority(n, p, ctx)
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
            self.props.append(Property(name, "assert", cond, sp, expr_text(n.args[0])))
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
            q.ops.append(("S" if n.val == 1 else "s", c.cid))
            self.claim_errors(q, ctx, c, ("xs",))
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
            q.ops.append(("R" if rnd else "r", c.cid))
            self.claim_errors(q, ctx, c, ("xr",))
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
            # a running process's own slot is never free (its pc is not 0)
            if pt not in s.types or s.pid == 0 or s is ctx.slot:
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
            self.start_process(s, pt, vals, q, priority=max(e.val, 1))
            self.claim_conflicts(s, pt, q)
            if pid_to is not None:
                self.pids_observed = True
                self.assign(pid_to, Const(s.pid), q, ctx, [])
            out.append(q)
        bad = neg(disj(frees))
        if bad != FALSE:
            n = len(self.slots)
            # SPIN's limit is met only when all its 255 slots are taken; otherwise the slot
            # SPIN would give (the lowest free) is one absmc's dry run did not open to this
            # proctype, or there are fewer slots than SPIN's: absmc's own limit, which makes
            # the check unknown and repeated with more (and open) slots
            # (engines.registry.slots_exhausted, run_growing), never a violation
            full = (
                conj([mk("!=", p.val(s.pc, self.var_sorts[s.pc]), Const(0)) for s in self.slots])
                if n >= MAX_PROCESSES
                else FALSE
            )
            own = f"absmc allocated {n}; SPIN allows {MAX_PROCESSES}"
            for cond, limit in (
                (conj([bad, neg(full)]), own),
                (conj([bad, full]), f"SPIN's limit of {MAX_PROCESSES} processes"),
            ):
                if cond == FALSE:
                    continue
                r = p.copy()
                r.conds.append(cond)
                r.error = f"no free process slot for 'run {pt.decl.name}' ({limit})"
                out.append(r)
        return out

    def claim_conflicts(self, s: Slot, pt: ProcType, q: Path) -> None:
        """pan's ``setq_claim``: a process started in slot ``s`` (path ``q``) whose ``xr``/``xs``
        declaration claims a channel another running process claims alike is a model error."""
        for cl in self.claims_of.get((s.name, pt.decl.name), []):
            new = (
                q.env.get(cl.channel.name, cl.channel)
                if isinstance(cl.channel, Var)
                else cl.channel
            )
            for other in self.claims:
                if other.kind != cl.kind or other.process == s.name:
                    continue
                cond = conj([*q.conds, other.alive, mk("==", other.channel, new)])
                if cond != FALSE:
                    q.errors.append((cond, claim_message(cl.kind, "", 0, other.process)))

    def start_process(
        self,
        s: Slot,
        pt: ProcType,
        args: list[Expr],
        p: Path,
        initial: bool = False,
        priority: int = 1,
    ) -> None:
        p.env[s.pc] = Const(s.offsets[pt.decl.name] + pt.fsm.start)
        self.start_priority(s, p, priority)
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
