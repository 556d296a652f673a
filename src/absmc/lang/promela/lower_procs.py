"""Promela lowering, processes: hidden variables, proctypes, process slots and the creation orders
of ``run`` (a part of :class:`absmc.lang.promela.lower.Lowerer`)."""

from __future__ import annotations

from typing import Any

from absmc.ir.expr import FALSE, Const, Expr, Var
from absmc.ir.span import ModelError
from absmc.lang.promela.assigned import nodes
from absmc.lang.promela.ast import ChanInit, Node, VarDecl
from absmc.lang.promela.creation import (
    channels_flow_down,
    creation_bound,
    creation_counts,
    swappable_types,
)
from absmc.lang.promela.deadvars import candidates, dead_resets
from absmc.lang.promela.fsm import ProcFSM, Trans, build_fsm
from absmc.lang.promela.lower_base import (
    MAX_PROCESSES,
    Path,
    ProcType,
    Slot,
    _before,
    _can_terminate,
    _collect,
    _count_runs,
    _Ctx,
    _pname,
    _reads,
    _run_names,
    _run_of,
    _runs_in,
)
from absmc.lang.promela.lower_stmts import Statements
from absmc.lang.promela.types import (
    Layout,
    sort_of,
)


class Processes(Statements):
    """The lowering's processes."""

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
        self.ptypes = {}
        self.builders = {}
        gl = set(self.globals)
        xu: dict[str, int] = {}
        locs: dict[str, list[VarDecl]] = {}
        for pd in self.m.procs:
            lst = list(pd.params)
            acc: dict[str, int] = {}
            _collect(pd.body, lst, acc)
            locs[pd.name] = lst
            self.xu_decls[pd.name] = dict(acc)
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

            # SPIN 6.4.9 and later turn statement merging off in a model with a remote
            # variable reference (`main.c` `rem_var`: `merger = 0`)
            merge = not pd.provided and not any(p.provided for p in self.m.procs)
            merge = merge and not self.remote_vars and not self.remote_refs
            sizes = {d.name: d.size for d in [*self.m.globals, *locs[pd.name]] if d.size}

            def array_size(name: str, sizes: dict[str, Any] = sizes) -> int | None:
                return sizes.get(name)

            fsm = build_fsm(pd, self.m.inlines, is_global, xu_of, u_sync, merge, array_size)
            self.check_label_names(fsm, loc)
            self.builders[pd.name] = fsm.builder
            self.ptypes[pd.name] = ProcType(
                pd, fsm, [d for d in locs[pd.name] if d not in pd.params], i
            )
            if self.dead_variables and not self.remote_vars and not self.remote_refs:
                cands = candidates(locs[pd.name], self.m.typedefs, pd.provided)
                self.ptypes[pd.name].dead = dead_resets(fsm.graph, cands)

    def allocate_slots(self) -> None:
        self.slots = []
        actives: list[ProcType] = []
        for pd in sorted(self.m.procs, key=lambda x: x.order):
            for _ in range(pd.active):
                actives.append(self.ptypes[pd.name])
        types_at: list[list[ProcType]] = [[t] for t in actives]
        if self.extra_slots:
            # a repeated check (engines.registry.run_growing): an active process that ends may
            # die while it has the highest pid, and SPIN gives that pid to the next run
            # (nr_proc), so its slot is opened to every proctype a run names too (pid 0 is
            # never given again: a run comes from a live process)
            open_to = self.run_targets()
            types_at = [
                [t, *(o for o in open_to if o is not t)]
                if pid > 0 and _can_terminate(t.fsm)
                else [t]
                for pid, t in enumerate(actives)
            ]
        types_at += self.dynamic_slot_types(actives)
        for pid, ts in enumerate(types_at):
            single = len(ts) == 1
            name = f"{_pname(ts[0].decl)}({pid})" if single else f"pid{pid}"
            s = Slot(pid, ts, name, f"{name}._p")
            off = 0
            for t in ts:
                s.offsets[t.decl.name] = off
                off += t.fsm.last_location + 1
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

    def run_targets(self) -> list[ProcType]:
        """The proctypes some ``run`` statement of the model names (declaration order)."""
        named = set().union(*(_run_names(t.decl.body) for t in self.ptypes.values()))
        return [t for t in self.ptypes.values() if t.decl.name in named]

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
        if self.extra_slots:
            # a repeated check (engines.registry.run_growing): the dry run's slots are opened
            # to every proctype a run names too, since a run may have met a lowest free slot
            # the dry run had not opened to its proctype (a choice between runs in a loop)
            open_to = self.run_targets()
            types_at = [[*ts, *(t for t in open_to if t not in ts)] for ts in types_at]
            room = max(MAX_PROCESSES - a - len(types_at), 0) if open_to else 0
            types_at += [list(open_to) for _ in range(min(self.extra_slots, room))]
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
        for d in [*t.decl.params, *t.locals]:
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
        # (not with priorities: a process it starts with a higher priority takes control)
        idx = [i for i, (_tr, n) in enumerate(best_trace) if n]
        chained = not self.priorities_may_differ()
        if idx:
            for tr, _n in best_trace[idx[0] : idx[-1]]:
                if not (tr.atomic or tr.d_step):
                    chained = False
        return best, deterministic, chained

    def total_runs(self, t: ProcType) -> int:
        return _count_runs(t.decl.body)

    def pids_unobserved(self) -> bool:
        """``System.pids_unobserved``: no expression observed a pid or the number of processes
        while the commands were lowered (:attr:`pids_observed`: ``_pid``, ``_nr_pr``, a remote
        label, the value of ``run``), there is no remote variable, no process priority, no
        ``enabled``/``pc_value``/``get_priority``/``set_priority``, and no proctype declares a
        local channel unless channel ids flow only down the creation tree
        (:func:`.creation.channels_flow_down`: a local channel's id depends on the slot, and a
        stale copy of it could name a later process's channel)."""
        if self.pids_observed or self.remote_vars or self.remote_refs:
            return False
        if self.priorities_may_differ():
            return False
        bodies = [p.body for p in self.m.procs] + [i.body for i in self.m.inlines.values()]
        observing = (
            "enabled",
            "pc_value",
            "get_priority",
            "set_priority",
            "remote_label",
        )
        if any(n.kind in observing for n in nodes(bodies)):
            return False
        local = any(
            isinstance(d.init, ChanInit) or d.type in self.m.typedefs
            for t in self.ptypes.values()
            for d in t.locals
        )
        return not local or channels_flow_down(self.m, self.ptypes)

    def creation_bound(self) -> int | None:
        """``System.max_created``: :func:`.creation.creation_bound` (with the receives of
        tokens as fuel where the channels flow down the creation tree)."""
        return creation_bound(self.m, self.ptypes, channels_flow_down(self.m, self.ptypes))

    def swappable(self) -> frozenset[tuple[str, int]]:
        """``System.swappable``: per slot, the program-counter values of the start of each
        proctype it can hold whose processes may trade slots
        (:func:`.creation.swappable_types`); none with process priorities."""
        if self.priorities_may_differ():
            return frozenset()
        kinds = swappable_types(self.m, self.ptypes)
        return frozenset(
            (s.pc, s.offsets[t.decl.name] + t.fsm.start)
            for s in self.slots
            for t in s.types
            if t.decl.name in kinds
        )

    def filled_once(self) -> frozenset[str]:
        """``System.once``: the program counters of the slots whose proctypes are created at
        most once in all (:func:`.creation.creation_counts`), so the slot is filled at most
        once per execution."""
        counts = creation_counts(self.ptypes)
        return frozenset(
            s.pc
            for s in self.slots
            if all(t.decl.name in counts for t in s.types)
            and sum(counts[t.decl.name] for t in s.types) <= 1
        )

    def singles(self) -> frozenset[tuple[str, str, int, int]]:
        """``System.singles``: per slot and proctype created at most once in all
        (:func:`.creation.creation_counts`), the range of program-counter values it has
        there."""
        counts = creation_counts(self.ptypes)
        return frozenset(
            (
                s.pc,
                t.decl.name,
                s.offsets[t.decl.name] + 1,
                s.offsets[t.decl.name] + t.fsm.last_location,
            )
            for s in self.slots
            for t in s.types
            if counts.get(t.decl.name, 2) <= 1
        )

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
