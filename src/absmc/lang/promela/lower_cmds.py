"""Promela lowering, commands: transitions of each process slot as guarded commands, rendezvous
pairing, ``else`` and ``unless`` guards, timeouts (a part of
:class:`absmc.lang.promela.lower.Lowerer`)."""

from __future__ import annotations

from typing import Any

from absmc.ir.expr import FALSE, TRUE, Const, Expr, Op, Var
from absmc.ir.span import ModelError
from absmc.ir.system import Command
from absmc.lang.promela.fsm import El, Trans
from absmc.lang.promela.lower_base import (
    MAX_PATHS,
    Path,
    ProcType,
    Slot,
    _Ctx,
    _stmt_text,
    _unwrap,
    _zero_divisions,
)
from absmc.lang.promela.lower_procs import Processes
from absmc.lang.promela.simplify import conj, disj, mk, neg
from absmc.lang.promela.types import (
    bool_of,
)


class Commands(Processes):
    """The lowering's commands."""

    # -- commands ---------------------------------------------------------------------------
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
                nxt.extend(self.reset_dead(el, self.exec_el(el, q, ctx, i == 0), ctx))
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

    def reset_dead(self, el: El, paths: list[Path], ctx: _Ctx) -> list[Path]:
        """``paths`` after element ``el`` with SPIN's dead-variable resets (:mod:`.deadvars`):
        the locals dead after ``el`` set to 0 on every path without an error."""
        assert ctx.slot is not None and ctx.pt is not None
        names = ctx.pt.dead.get(id(el))
        if names:
            lays = ctx.slot.layouts[ctx.pt.decl.name]
            for q in paths:
                if q.error is None:
                    for name in names:
                        for lf in lays[name].leaves():
                            q.env[lf.name] = Const(0)
        return paths

    def end_effects(self, s: Slot, t: ProcType, q: Path) -> None:
        if s.pid + 1 < len(self.slots):
            nxt = self.slots[s.pid + 1]
            q.conds.append(mk("==", Var(nxt.pc, self.var_sorts[nxt.pc]), Const(0)))
        q.env[s.pc] = Const(0)
        self.end_priority(s, q)
        for lay in s.layouts[t.decl.name].values():
            for lf in lay.leaves():
                q.env[lf.name] = Const(0)
                c = s.chans.get(lf.name)
                if c is not None and c.cap > 0:  # the process's channels go with it
                    q.ops.append(("p", c.cid))
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
        paths = self.transition_paths(s, t, tr, tmo)
        parts = [conj(q.conds) for q in paths if q.chan is None]
        self.exec_ops.extend(("p", cid) for q in paths for _, cid in q.ops)
        n = len(parts)
        if tr.first.kind == "s":
            parts += [conj(g) for g, _, _ in self.joint(s, t, tr, tmo)]
        if tr.first.kind == "r":
            parts += self.partner_guards(tmo).get((s.pid, t.index, id(tr)), [])
        if len(parts) > n:  # a rendezvous partner's guard: channels not recorded
            self.exec_ops.append(("?", 0))
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
                for r in self.reset_dead(tr2.first, rs, ctx2):
                    paths = [r]
                    for el in tr2.steps[1:]:
                        paths = [
                            z
                            for w in paths
                            for z in (
                                self.reset_dead(el, self.exec_el(el, w, ctx2, False), ctx2)
                                if not w.error
                                else [w]
                            )
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
                chan_ops=tuple(dict.fromkeys([*p.ops, *self.exec_ops])),
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
                    self.exec_ops = []
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
                    self.exec_ops = []
                    if not self.timeout_used:
                        break

    def _only_rv(self, tr: Trans) -> bool:
        assert tr.first.n is not None
        p = Path({}, [])
        try:
            chans = self.chan_refs(tr.first.n.args[0], p, _Ctx(None, None), [])
        except ModelError:
            return False
        return bool(chans) and all(c.cap == 0 for _, c in chans)
