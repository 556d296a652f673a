"""Promela lowering, process priorities (SPIN 6.2 and later; a part of
:class:`absmc.lang.promela.lower.Lowerer`).

SPIN's semantics, as pan implements it (SPIN 6.5.2 ``Src/pangen1.h`` ``highest_priority``,
``get_priority``, ``set_priority``; ``Src/pangen1.c`` and ``Src/pangen2.c`` ``addproc``'s
priority argument; ``Src/pangen2.c`` ``putstmnt`` for ``RUN``, ``GET_P``, ``SET_P``):

* every process has a priority (pan's 8-bit ``_priority`` field of the process): an active
  process the ``priority N`` of its proctype (``init priority N``), a process started by
  ``run P() priority N`` that ``N``, any other process 1 (a ``run`` does not take the
  proctype's ``priority``);
* a transition of process ``p`` may execute only when no *other* process (the never claim
  excluded) with a strictly higher priority has an executable transition (pan asks this before
  it tries any transition of ``p``, so a process held back meets none of its model errors
  either);
* ``_priority`` is the process's own priority (an assignment stores it modulo 256, unchecked);
  ``get_priority(pid)`` is the priority of process ``pid`` (0 when there is none);
  ``set_priority(pid, pr)`` is always executable and sets it (nothing when there is no such
  process; ``pr`` outside 1..255 is the error "priority is out of range").

The lowering: a slot's priority is a constant when it can only ever have one (its
:class:`PriorityPlan`), else a state variable ``<slot>._priority`` (0 while the slot is free,
set when a process starts, so the states are SPIN's, which keep ``_priority`` in each
process). When the priorities can differ, every command of process ``p`` gets the conjunct
``!(prio(q) > prio(p) && enabled(q))`` for each other slot ``q``, where ``enabled(q)`` is the
disjunction of ``q``'s command guards and model-error conditions (pan evaluates a transition up
to its first effect when it asks, and meets the error there; for a ``timeout`` command those of
``q``'s ``timeout`` commands: ``timeout`` holds only where no other command is enabled); the
command's own model-error conditions get the conjunct too, and its flags ``"priority"``, which
keeps partial-order reduction off (:mod:`absmc.ir.dependency`: as pan, which compiles models
with priorities with ``NOREDUCE``). pan refuses priorities with rendezvous channels ("use of
priorities cannot be combined with rendezvous"); so does absmc when the priorities can differ.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from absmc.ir.expr import FALSE, Const, Expr, Var, conjuncts, free_vars, substitute
from absmc.ir.sorts import BOOL
from absmc.ir.span import SourceSpan
from absmc.ir.system import Command
from absmc.lang.promela.assigned import nodes, written_names
from absmc.lang.promela.ast import Node, ProcDecl
from absmc.lang.promela.lower_base import Path, Slot, _Ctx
from absmc.lang.promela.lower_decls import Declarations
from absmc.lang.promela.simplify import conj, disj, mk, neg
from absmc.lang.promela.types import int_of, sort_of, wrap_expr

#: the ``Command.flags`` marker of a command whose guard depends on other processes' priorities
PRIORITY_FLAG = "priority"
#: pan's error for ``set_priority`` with a priority outside 1..255
OUT_OF_RANGE = "priority is out of range"


def declared_priority(pd: ProcDecl) -> int:
    """The priority of an active process of ``pd`` (its ``priority N``, else 1)."""
    return pd.priority.val if pd.priority is not None and pd.priority.val > 0 else 1


@dataclass
class PriorityPlan:
    """How the lowering represents the processes' priorities: per pid a constant or a state
    variable; ``uniform`` when every process always has the same priority (no guard changes);
    ``span``: the model's first use of priorities (for errors)."""

    constants: dict[int, int] = field(default_factory=dict)
    variables: dict[int, str] = field(default_factory=dict)
    uniform: bool = True
    span: SourceSpan | None = None


class Priorities(Declarations):
    """The lowering's process priorities (see the module docstring)."""

    #: set by :meth:`plan_priorities` once the slots are allocated (``None`` before: the dry
    #: runs of ``Processes.allocate_slots`` see an unknown priority)
    priorities: PriorityPlan | None = None
    _may_differ: bool | None = None
    #: ``enabled()`` placeholders of the commands built so far: name -> (pid, node)
    enabled_refs: dict[str, tuple[int, Node]]
    #: every command, built and its ``enabled()`` resolved, before priorities are added
    #: (:meth:`resolve_enabled`; ``None`` until then)
    tst_commands: Sequence[Command] | None = None
    _tst_ready: dict[tuple[str, bool], Expr] | None = None

    def priorities_may_differ(self) -> bool:
        """Can two processes ever have different priorities? Read from the model alone (the
        slots' dry runs ask it before :meth:`plan_priorities`): not when no ``priority``
        clause of an active proctype, ``init`` or ``run`` gives a priority other than 1 and
        nothing writes one (``set_priority``, an assignment to ``_priority``)."""
        if self._may_differ is None:
            bodies = [p.body for p in self.m.procs] + [i.body for i in self.m.inlines.values()]
            self._may_differ = (
                "_priority" in written_names(self.m)
                or any(
                    n.kind == "set_priority" or (n.kind == "run" and n.val > 1)
                    for n in nodes(bodies)
                )
                or any(pd.active and declared_priority(pd) != 1 for pd in self.m.procs)
            )
        return self._may_differ

    def plan_priorities(self) -> None:
        """Decide, per process slot, a constant priority or a state variable (added to the
        state), and whether priorities can differ at all. Raises ``ModelError`` when they can
        and the model has a rendezvous channel (pan refuses it)."""
        bodies = [p.body for p in self.m.procs] + [i.body for i in self.m.inlines.values()]
        everything = list(nodes(bodies))
        runs: dict[str, set[int]] = {}
        first: SourceSpan | None = None
        dynamic = "_priority" in written_names(self.m)
        for n in everything:
            if n.kind == "run" and n.name:
                runs.setdefault(n.name, set()).add(max(n.val, 1))
                if n.val and first is None:
                    first = n.span
            elif n.kind == "set_priority":
                dynamic = True
                first = first or n.span
            elif n.kind == "var" and n.name == "_priority" and first is None:
                first = n.span
        for pd in self.m.procs:
            if pd.priority is not None and first is None:
                first = pd.priority.span or pd.span
        plan = PriorityPlan(span=first)
        actives = [
            pd for pd in sorted(self.m.procs, key=lambda x: x.order) for _ in range(pd.active)
        ]
        sort = sort_of(0, 255)
        for s in self.slots:
            # a run may reuse an active process's pid (with its own priority) once it ended
            values = set().union(*(runs.get(t.decl.name, set()) for t in s.types))
            if s.pid < len(actives):
                values.add(declared_priority(actives[s.pid]))
            values = values or {1}
            if dynamic or len(values) > 1:
                name = f"{s.name}._priority"
                init = declared_priority(actives[s.pid]) if s.pid < len(actives) else 0
                self.add_var(name, 0, 255, init)
                plan.variables[s.pid] = name
            else:
                plan.constants[s.pid] = next(iter(values))
        self.var_sorts.setdefault("dry._priority", sort)
        plan.uniform = not plan.variables and len(set(plan.constants.values())) <= 1
        self.priorities = plan
        if not plan.uniform and any(c.cap == 0 for c in self.chans):
            raise self.err(
                "process priorities cannot be combined with rendezvous channels"
                " (pan: use of priorities cannot be combined with rendezvous)",
                span=plan.span,
            )

    def priority_of(self, s: Slot, p: Path) -> Expr:
        """The priority of the process in slot ``s`` on path ``p`` (an unknown value in a dry
        run, before the plan)."""
        plan = self.priorities
        if plan is None or s.pid < 0:
            name = f"{s.name}._priority"
            return p.val(name, self.var_sorts.setdefault(name, sort_of(0, 255)))
        var = plan.variables.get(s.pid)
        if var is not None:
            return p.val(var, self.var_sorts[var])
        return Const(plan.constants[s.pid])

    def own_priority(self, n: Node, p: Path, ctx: _Ctx) -> Expr:
        """``_priority``: the executing process's priority. Raises ``ModelError`` outside a
        process."""
        if ctx.slot is None:
            raise self.err("_priority outside a process", n)
        return self.priority_of(ctx.slot, p)

    def assign_priority(self, lhs: Node, value: Expr, p: Path, ctx: _Ctx) -> None:
        """``_priority = value``: stored modulo 256, as in pan's 8-bit field."""
        if ctx.slot is None:
            raise self.err("_priority outside a process", lhs)
        plan = self.priorities
        var = (
            f"{ctx.slot.name}._priority"
            if plan is None or ctx.slot.pid < 0
            else plan.variables[ctx.slot.pid]
        )
        v = int_of(value)
        fits = isinstance(v, Const) and 0 <= v.value <= 255
        p.env[var] = v if fits else wrap_expr(v, 0, 255)

    def get_priority(self, n: Node, p: Path, ctx: _Ctx, evc: list[Expr]) -> Expr:
        """``get_priority(pid)``: the priority of process ``pid``, 0 when there is none."""
        pid = int_of(self.ev(n.args[0], p, ctx, evc))
        out: Expr = Const(0)
        for s in reversed(self.slots):
            at = mk("==", pid, Const(s.pid))
            if at == FALSE:
                continue
            alive = mk("!=", p.val(s.pc, self.var_sorts[s.pc]), Const(0))
            out = mk("ite", conj([at, alive]), self.priority_of(s, p), out)
        return out

    def exec_set_priority(self, n: Node, p: Path, ctx: _Ctx) -> list[Path]:
        """``set_priority(pid, pr)``: always executable; sets the priority of process ``pid``
        when there is one (a model error when ``pr`` is outside 1..255 then)."""
        pid = int_of(self.ev(n.args[0], p, ctx, []))
        pr = int_of(self.ev(n.args[1], p, ctx, []))
        plan = self.priorities
        hits: list[tuple[Expr, Slot]] = []
        for s in self.slots:
            at = mk("==", pid, Const(s.pid))
            if at == FALSE:
                continue
            alive = conj([at, mk("!=", p.val(s.pc, self.var_sorts[s.pc]), Const(0))])
            if alive != FALSE:
                hits.append((alive, s))
        bad = conj(
            [
                *p.conds,
                disj([c for c, _ in hits]),
                disj([mk("<", pr, Const(1)), mk(">", pr, Const(255))]),
            ]
        )
        if bad != FALSE:
            p.errors.append((bad, OUT_OF_RANGE))
        fits = isinstance(pr, Const) and 0 <= pr.value <= 255
        value = pr if fits else wrap_expr(pr, 0, 255)
        for alive, s in hits:
            if plan is None:
                continue
            var = plan.variables[s.pid]
            p.env[var] = mk("ite", alive, value, p.val(var, self.var_sorts[var]))
        return [p]

    def start_priority(self, s: Slot, p: Path, priority: int) -> None:
        """A process starts in slot ``s`` with ``priority`` (its ``run``'s or its proctype's)."""
        plan = self.priorities
        if plan is not None and s.pid in plan.variables:
            p.env[plan.variables[s.pid]] = Const(priority)

    def end_priority(self, s: Slot, p: Path) -> None:
        """The process in slot ``s`` ends: its priority variable goes back to 0."""
        plan = self.priorities
        if plan is not None and s.pid in plan.variables:
            p.env[plan.variables[s.pid]] = Const(0)

    def readiness(self, commands: Sequence[Command] | None = None) -> dict[tuple[str, bool], Expr]:
        """``{(process slot, timeout): condition}``: the states where the slot has an
        executable command of ``commands`` (default: the commands built so far; ``timeout``:
        among its ``timeout`` commands, else among the others), as pan's ``TstOnly`` pass asks
        it: a command's guard, or one of its model-error conditions (pan evaluates a transition
        up to its first effect and meets the error there). Exclusive control (``atomic``) is
        not asked, as pan's ``TstOnly`` does not."""
        enabled: dict[tuple[str, bool], list[Expr]] = {}
        for c in self.commands if commands is None else commands:
            rows = enabled.setdefault((c.process, "timeout" in c.flags), [])
            if FALSE not in conjuncts(c.guard):  # not a model error only
                rows.append(c.guard)
            rows.extend(k for k, _ in c.errors)
        return {k: disj(v) for k, v in enabled.items()}

    def enabled_of(self, n: Node, p: Path, ctx: _Ctx, evc: list[Expr]) -> Expr:
        """Promela's ``enabled(pid)`` (pan's ``enabled``, ``Src/pangen1.h``): the process with
        that pid has an executable transition (:meth:`readiness`; 0 where no process runs).
        In a process it stands for a placeholder until every command is built
        (:meth:`resolve_enabled`); in a never claim or an ``ltl`` atom, read after the
        commands, it is the condition itself. Refused with a located ``ModelError``: with
        rendezvous channels (pan: "use of enabled() cannot be combined with rendezvous"), a pid
        that is not a constant, the asking process's own pid (pan: "used:
        enabled(pid=thisproc)"), and the pid of a process that itself uses ``enabled()``."""
        if any(c.cap == 0 for c in self.chans):
            raise self.err("use of enabled() cannot be combined with rendezvous (as in pan)", n)
        pid = int_of(self.ev(n.args[0], p, ctx, evc))
        if not isinstance(pid, Const):
            raise self.err("enabled() of a pid that is not a constant is not supported", n)
        if ctx.slot is not None and pid.value == ctx.slot.pid:
            raise self.err("enabled() of the process's own pid (pan: enabled(pid=thisproc))", n)
        if self.tst_commands is not None:
            if self._tst_ready is None:
                self._tst_ready = self.readiness(self.tst_commands)
            ready = self._tst_ready
            nothing = neg(disj([e for (_, tmo), e in ready.items() if not tmo]))
            return self._enabled_now(pid.value, ready, nothing)
        name = f"$enabled{len(self.enabled_refs)}"
        self.enabled_refs[name] = (pid.value, n)
        return Var(name, BOOL)

    def _enabled_now(self, pid: int, ready: dict[tuple[str, bool], Expr], nothing: Expr) -> Expr:
        alts = [
            disj(
                [
                    ready.get((q.name, False), FALSE),
                    conj([nothing, ready.get((q.name, True), FALSE)]),
                ]
            )
            for q in self.slots
            if q.pid == pid
        ]
        return disj(alts)

    def resolve_enabled(self) -> None:
        """Replace the placeholders of :meth:`enabled_of` in every command by the asked
        process's :meth:`readiness` under the asking command's ``timeout`` flag (pan's
        ``TstOnly`` evaluates ``timeout`` as the step's own timeout mode)."""
        refs = self.enabled_refs
        if refs:
            ready = self.readiness()
            by_pid = {s.pid: s.name for s in self.slots}
            for pid, n in refs.values():
                asked = [ready.get((by_pid.get(pid, ""), tmo), FALSE) for tmo in (False, True)]
                if any(v.startswith("$enabled") for e in asked for v in free_vars(e)):
                    raise self.err(
                        "enabled() of a process that itself uses enabled() is not supported", n
                    )
            out: list[Command] = []
            for c in self.commands:
                tmo = "timeout" in c.flags
                mapping = {
                    name: ready.get((by_pid[pid], tmo), FALSE) if pid in by_pid else FALSE
                    for name, (pid, _) in refs.items()
                }
                out.append(
                    replace(
                        c,
                        guard=substitute(c.guard, mapping),
                        updates=tuple((x, substitute(e, mapping)) for x, e in c.updates),
                        asserts=tuple((a, substitute(e, mapping)) for a, e in c.asserts),
                        errors=tuple((substitute(k, mapping), m) for k, m in c.errors),
                        prints=tuple(
                            replace(pr, args=tuple(substitute(a, mapping) for a in pr.args))
                            for pr in c.prints
                        ),
                    )
                )
            self.commands = out
        # what a never claim's or an ltl atom's enabled() asks (pan's TstOnly does not ask
        # priorities: the commands before priority_guards)
        self.tst_commands = self.commands

    def priority_guards(self) -> None:
        """Add to every command of process ``p`` the condition that no other process of a
        higher priority is enabled (see the module docstring); nothing when the priorities
        cannot differ."""
        plan = self.priorities
        if plan is None or plan.uniform:
            return
        # pan asks each transition of the other process whether it is executable, evaluating
        # its expressions up to its first effect: a model error met there (an index out of
        # bounds in a condition, a d_step that would block inside) counts as enabled too
        ready = self.readiness()
        empty = Path({}, [])
        slot_of = {s.name: s for s in self.slots}
        cache: dict[tuple[str, bool], Expr] = {}
        out: list[Command] = []
        for c in self.commands:
            tmo = "timeout" in c.flags
            key = (c.process, tmo)
            held = cache.get(key)
            if held is None:
                s = slot_of[c.process]
                mine = self.priority_of(s, empty)
                parts: list[Expr] = []
                for q in self.slots:
                    e = ready.get((q.name, tmo), FALSE)
                    if q is s or e == FALSE:
                        continue
                    higher = mk(">", self.priority_of(q, empty), mine)
                    if higher != FALSE:
                        parts.append(neg(conj([higher, e])))
                held = cache[key] = conj(parts)
            out.append(
                replace(
                    c,
                    guard=conj([c.guard, held]),
                    errors=tuple((conj([k, held]), m) for k, m in c.errors),
                    flags=c.flags | {PRIORITY_FLAG},
                )
            )
        self.commands = out


__all__ = ["OUT_OF_RANGE", "PRIORITY_FLAG", "Priorities", "PriorityPlan", "declared_priority"]
