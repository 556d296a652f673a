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
* Process priorities (:mod:`.lower_prio`): when they can differ, each command also requires
  that no process of a higher priority is enabled.
"""

from __future__ import annotations

from itertools import chain

from absmc.ir.evaluate import EvalError, evaluate
from absmc.ir.expr import Const, Expr, Var
from absmc.ir.span import SourceSpan
from absmc.ir.system import Channel, ChannelClaim, Process, System, Variable
from absmc.lang.promela.assigned import written_names
from absmc.lang.promela.ast import Model
from absmc.lang.promela.lower_base import (
    MAX_DSTEP_STEPS,
    MAX_PATHS,
    MAX_PROCESSES,
    MAX_STATE_VARIABLES,
    Chan,
    Path,
    ProcType,
    Slot,
    _Ctx,
    _preds_in,
    select,
)
from absmc.lang.promela.lower_cmds import Commands
from absmc.lang.promela.lower_prio import declared_priority
from absmc.lang.promela.simplify import conj, disj, mk
from absmc.lang.promela.types import (
    bool_of,
    int_of,
)

__all__ = [
    "MAX_DSTEP_STEPS",
    "MAX_PATHS",
    "MAX_PROCESSES",
    "MAX_STATE_VARIABLES",
    "Chan",
    "Lowerer",
    "Path",
    "ProcType",
    "Slot",
    "lower_model",
    "select",
]


class Lowerer(Commands):
    """Turns a :class:`Model` into a :class:`System` (see the module docstring). Its parts, in
    the order they build on each other: :class:`~absmc.lang.promela.lower_base.LowererBase`
    (state), ``lower_decls.Declarations``, ``lower_prio.Priorities``, ``lower_exprs.Expressions``,
    ``lower_stmts.Statements``, ``lower_procs.Processes``, ``lower_cmds.Commands``."""

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
        self.plan_priorities()
        self.channel_claims()
        # initial state: active processes
        init_env: dict[str, Expr] = {v.name: Const(v.init) for v in self.vars}
        p = Path(init_env, [])
        k = 0
        for pd in sorted(self.m.procs, key=lambda x: x.order):
            for _ in range(pd.active):
                s = self.slots[k]
                self.start_process(
                    s,
                    self.ptypes[pd.name],
                    [Const(0)] * len(pd.params),
                    p,
                    initial=True,
                    priority=declared_priority(pd),
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
        self.resolve_enabled()
        self.priority_guards()
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
            channels=tuple(
                Channel(
                    c.cid,
                    c.name,
                    c.cap,
                    c.len_var,
                    frozenset([c.len_var, *([c.data_var] if c.packed else []), *chain(*c.slots)]),
                )
                for c in self.chans
                if c.cap > 0
            ),
            claims=tuple(self.claims),
            pids_unobserved=self.pids_unobserved(),
            max_created=self.creation_bound(),
            swappable=self.swappable(),
            once=self.filled_once(),
            singles=self.singles(),
        )

    def channel_claims(self) -> None:
        """The ``xr``/``xs`` declarations as claims (:class:`ChannelClaim`), one per process
        slot and proctype that declares one on a channel variable (a scalar local, parameter or
        global; a claim on an array element makes none: no reduction relies on it)."""
        written = written_names(self.m)
        for s in self.slots:
            pcv = Var(s.pc, self.var_sorts[s.pc])
            for t in s.types:
                decl = self.xu_decls.get(t.decl.name, {})
                if not decl:
                    continue
                # running t: pc neither 0 nor a location of another proctype of the slot
                other = [
                    s.offsets[o.decl.name] + k
                    for o in s.types
                    if o is not t
                    for k in range(o.fsm.last_location + 1)
                ]
                alive = conj([mk("!=", pcv, Const(k)) for k in sorted({0, *other})])
                lays = s.layouts[t.decl.name]
                for name, flags in sorted(decl.items()):
                    lay = lays.get(name) or self.globals.get(name)
                    leaves = lay.leaves() if lay is not None else []
                    if len(leaves) != 1:
                        continue
                    var = leaves[0].name
                    ch: Expr
                    if var in self.var_sorts:
                        ch = Var(var, self.var_sorts[var])
                    elif var in self.chan_of_var:  # a global channel: a constant
                        ch = Const(self.chan_of_var[var][0])
                    else:
                        continue
                    if name in written:  # a claim variable must keep its value
                        continue
                    new = [ChannelClaim(s.name, "xr", ch, alive)] if flags & 1 else []
                    if flags & 2:
                        new.append(ChannelClaim(s.name, "xs", ch, alive))
                    self.claims_of.setdefault((s.name, t.decl.name), []).extend(new)
                    self.claims.extend(new)


def lower_model(model: Model, name: str = "") -> System:
    """The IR System of a parsed Promela model (see the module docstring). Raises
    ``ModelError`` for what absmc does not support or SPIN rejects."""
    return Lowerer(model, name).lower()
