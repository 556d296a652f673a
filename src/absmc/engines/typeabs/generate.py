"""Generation of the abstract System (paper 001, §6; Bandera's "verifier code generation").

Given a :class:`~absmc.engines.typeabs.infer.Typing`, every abstracted variable of the concrete
System becomes a variable over token indices (``RangeSort(0, k-1)``, initial value
``alpha(init)``); every concrete command becomes one or more deterministic guarded commands,
one per alternative of its abstract evaluation (:mod:`absmc.engines.typeabs.absexpr`):

* a guard that may be both true and false enables the command (both branches of a conditional
  are then enabled, each marked ``choose``);
* an abstract operation with several possible results (``Bandera.choose``) gives one command
  per result, each with the flag :data:`CHOOSE` in :attr:`absmc.ir.Command.flags`;
* a possible model error (a division by a token that includes 0, a value that may leave a
  finite range) becomes a command that assigns 1 to the extra variable ``_abs_error : 0..0``:
  executing it is a model error of the abstract System (flag :data:`ERROR`);
* storing an abstract value into an abstracted finite-range variable may overflow (wrap to
  another token, or fail): those outcomes are choices; the outcome where the value stays as
  it is, is not a choice of its own (the choose-free search assumes no overflow; its
  counterexamples are replayed on the concrete model anyway, which decides).

``origin[i]`` is the concrete command the abstract command ``i`` comes from (``-1`` for a
release command), so a path of the abstract System maps back to a path of the concrete one
(for replay, §7).

Properties are abstracted so that ``holds`` transfers (§3.2): an invariant ``p`` becomes
``must(p)`` (true only in abstract states whose every concretization satisfies ``p``), an
unreachable condition ``bad`` becomes ``may(bad)``. The built-in ``no-deadlock`` becomes the
abstract-state condition :attr:`Abstraction.deadlock`: every guard may be false (a concrete
deadlock needs all guards false, and the abstract search must not miss one).

The command fields of Promela-derived Systems (:class:`absmc.ir.Command`) keep their meaning:

* ``errors`` (checked before the guard): a condition that may hold gives an error outcome (a
  possible model error, as above); the other outcomes are guarded by its negation.
* ``asserts``: each abstract command checks ``must(cond)`` (an assertion that may fail fails
  in the abstract System, so ``holds`` transfers); the choose-free search checks whether it
  *surely* fails (:attr:`Abstraction.cf_asserts`). Possible errors while evaluating ``cond``
  are possible model errors.
* ``exclusive`` is copied. A concrete process P holding exclusive control gives it up where
  it is blocked, and in the abstract System P's commands may be enabled where the concrete
  ones are not: so P gets *release commands* (flag :data:`RELEASE`, a ``choose``, no effect,
  no ``exclusive``), enabled where every ordinary command of P may yield no successor (its
  guard may be false, or it may be a model error); in a chain they end it, so the abstract
  System also stores the state other processes move from (one release guard per value of
  P's program counter). Elsewhere they are self-loops.
* ``timeout``: SPIN's rule (tried only where no other command is enabled) on the abstract
  commands would be unsound — an abstract command may be enabled where the concrete one is
  not, and then the concrete timeout is missed. A timeout command becomes an ordinary
  abstract command whose guard also requires that every ordinary concrete command may yield
  no successor (an over-approximation of "nothing else can move"; the flag is dropped,
  :attr:`Abstraction.timeouts` keeps the plain guard for the choose-free search).
* A chain that comes back to a state it passed yields no successor in absmc's semantics, so
  the deadlock condition also holds where every ordinary command without ``exclusive`` may be
  blocked and a command that may start such a cycle (a loop inside an atomic sequence,
  :func:`_may_cycle`) may be enabled.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from absmc.engines.typeabs.absexpr import AbstractEvaluator, Alt
from absmc.engines.typeabs.domains import Domain, residue
from absmc.engines.typeabs.infer import Typing
from absmc.engines.typeabs.operators import OperatorLibrary
from absmc.ir.expr import (
    FALSE,
    TRUE,
    Const,
    Expr,
    Op,
    Var,
    as_const,
    conj,
    conjuncts,
    const,
    disj,
    neg,
    op,
    substitute,
)
from absmc.ir.simplify import simplify
from absmc.ir.sorts import BoolSort, RangeSort
from absmc.ir.system import NO_DEADLOCK, Command, Property, System, Variable

#: ``Command.flags`` marker of a command that resolves a nondeterministic abstract choice
CHOOSE: Final = "choose"
#: ``Command.flags`` marker of a command that stands for a possible model error
ERROR: Final = "abstract-error"
#: the variable whose (impossible) assignment makes an abstract model error
ERROR_VAR: Final = "_abs_error"
#: ``Command.flags`` marker of a release command (exclusive control may end, see above)
RELEASE: Final = "abstract-release"
#: the ``Command.flags`` marker of SPIN's ``timeout`` (see :class:`absmc.ir.Command`)
TIMEOUT: Final = "timeout"
#: the choose-free System's variable that marks a state reached through a ``choose`` (dead)
CUT_VAR: Final = "_abs_cut"
#: suffix of a property's *possible*-violation variant in the choose-free search
MAY: Final = " (possibly)"


@dataclass
class Abstraction:
    """An abstract System with everything needed to read its results back.

    ``system``: the abstract System (its properties are the abstracted ones); ``origin``:
    abstract command index -> concrete command index; ``deadlock``: the abstract-state
    condition of a possible deadlock; ``errors``: abstract command index -> the model error it
    stands for; ``domains``: abstracted variable -> domain.
    """

    concrete: System
    typing: Typing
    system: System
    origin: tuple[int, ...]
    deadlock: Expr
    errors: dict[int, str] = field(default_factory=dict)
    #: abstract timeout command index -> its guard without the "all may be blocked" condition
    timeouts: dict[int, Expr] = field(default_factory=dict)
    #: abstract command index -> its assertions as checked by the choose-free search
    cf_asserts: dict[int, tuple[tuple[str, Expr], ...]] = field(default_factory=dict)
    #: state property name (``no-deadlock`` too) -> the abstract states in which *every*
    #: concretization violates it (deterministic abstract operations only)
    surely_bad: dict[str, Expr] = field(default_factory=dict)
    #: the abstract-state condition "a represented concrete state may have no successor" (every
    #: command may be blocked or fail, or an atomic chain may loop): where an LTL product of
    #: the abstraction must be able to stutter, as the concrete one does at terminal states
    terminal: Expr = TRUE
    #: the abstract evaluator the System was generated with (``may``/``must`` of state
    #: conditions, e.g. the guards of an LTL property's automaton)
    evaluator: AbstractEvaluator | None = None

    @property
    def domains(self) -> dict[str, Domain]:
        """Abstracted variable -> its domain."""
        return self.typing.domains

    def is_choose(self, index: int) -> bool:
        """True when abstract command ``index`` resolves a choice."""
        return CHOOSE in self.system.commands[index].flags

    @property
    def choose_count(self) -> int:
        """How many abstract commands resolve a choice."""
        return sum(1 for c in self.system.commands if CHOOSE in c.flags)

    def choose_free(
        self, properties: Sequence[Property]
    ) -> tuple[System, tuple[int, ...], tuple[Property, ...]]:
        """The System of the choose-free search (paper 001, §7: only paths free of ``choose``
        are explored), per command its abstract index, and ``properties`` (of the abstract
        System) as checked there: each twice, as ``NAME`` where it is *surely* violated
        (:attr:`surely_bad`, :attr:`cf_asserts`) and as ``NAME`` + :data:`MAY` where it may be
        (the abstract property), so that a sure violation is found when there is one and a
        possible one (which the concrete replay may still confirm) otherwise.

        A ``choose`` command is not simply left out: it leads to a *cut* state (``_abs_cut ==
        1``) in which nothing is enabled and no property is checked. So it still counts as
        enabled where it is: an exclusive chain does not end early (the concrete process may
        go on), and a ``timeout`` command, which keeps its native semantics here, is only
        tried where no command may be enabled. Release commands are left out (a chain ends
        only where the process is surely blocked); assertions are checked as *surely* failing
        (:attr:`cf_asserts`)."""
        cut = Var(CUT_VAR, RangeSort(0, 1))
        live = op("==", cut, const(0))
        kept: list[Command] = []
        index: list[int] = []
        for c in self.system.commands:
            if RELEASE in c.flags:
                continue
            i = c.index
            flags = c.flags | ({TIMEOUT} if i in self.timeouts else set())
            guard = conj([self.timeouts.get(i, c.guard), live])
            if CHOOSE in c.flags:
                kept.append(
                    replace(
                        c,
                        guard=guard,
                        updates=((CUT_VAR, const(1)),),
                        flags=flags,
                        exclusive=None,
                        asserts=(),
                        index=-1,
                    )
                )
            else:
                sure = self.cf_asserts.get(i, ())
                maybe = tuple((n + MAY, e) for n, e in c.asserts)
                kept.append(replace(c, guard=guard, flags=flags, asserts=sure + maybe, index=-1))
            index.append(i)
        variables = (*self.system.variables, Variable(CUT_VAR, cut.var_sort, 0))
        props: list[Property] = []
        for p in properties:
            if p.kind == "assert":
                props += [p, replace(p, name=p.name + MAY)]
                continue
            sure_bad = self.surely_bad.get(p.name, FALSE)
            props.append(Property(p.name, "unreachable", conj([sure_bad, live]), p.span))
            props.append(Property(p.name + MAY, "unreachable", conj([p.bad, live]), p.span))
        system = self.system.with_(variables=variables, commands=tuple(kept))
        return system, tuple(index), tuple(props)

    def abstract_state(self, state: tuple[int, ...]) -> tuple[int, ...]:
        """The abstraction of a concrete state (``alpha`` of every abstracted variable)."""
        out = []
        for v, x in zip(self.concrete.variables, state, strict=True):
            d = self.domains.get(v.name)
            out.append(d.alpha(x) if d is not None else x)
        if ERROR_VAR in self.system.by_name:
            out.append(0)
        return tuple(out)

    def show(self, state: tuple[int, ...]) -> dict[str, int | bool | str]:
        """An abstract state for output: tokens by name, concrete values as they are (the
        ``_abs_error`` helper left out)."""
        out: dict[str, int | bool | str] = {}
        # strict=False: a state of the choose-free System has the extra variable _abs_cut
        for v, x in zip(self.system.variables, state, strict=False):
            if v.name == ERROR_VAR:
                continue
            d = self.domains.get(v.name)
            if d is not None:
                out[v.name] = d.tokens[x]
            elif isinstance(v.sort, BoolSort):
                out[v.name] = bool(x)
            else:
                out[v.name] = int(x)
        return out

    def export_system(self, deadlock_property: bool = True) -> System:
        """The abstract System for export, with the deadlock condition as the ``unreachable``
        property ``no_deadlock`` when asked (SPIN's own invalid-end-state check on the abstract
        model proves nothing about the concrete one)."""
        if not deadlock_property or self.deadlock == FALSE:
            return self.system
        names = {p.name for p in self.system.properties}
        name = "no_deadlock"
        while name in names:
            name += "_"
        prop = Property(name, "unreachable", self.deadlock)
        return self.system.with_(properties=(*self.system.properties, prop))


@dataclass
class _Outcome:
    conds: tuple[Expr, ...]
    updates: tuple[tuple[str, Expr], ...]
    choice: bool
    error: str | None


def _assign(ev: AbstractEvaluator, system: System, name: str, rhs: Expr, ctx: Alt) -> list[Alt]:
    sort = system.by_name[name].sort
    d = ev.typing.of(name)
    if d is None:
        return ev.value(rhs, ctx, None)
    alts = ev.value(rhs, ctx, d)
    if not isinstance(sort, RangeSort):
        return alts
    # storing into an abstracted finite-range variable: range check / wrap-around
    out: list[Alt] = []

    def inside(e: Expr) -> Expr:
        return conj([op("<=", const(sort.lo), e), op("<=", e, const(sort.hi))])

    for a in alts:
        if a.error:
            out.append(a)
            continue
        if isinstance(a.value, Var):  # a copy of a variable whose values all fit
            src = system.by_name[a.value.name].sort
            if isinstance(src, RangeSort) and sort.lo <= src.lo and src.hi <= sort.hi:
                out.append(a)
                continue
        if isinstance(a.source, Const):  # a constant: decided now
            value = a.source.value
            if sort.contains(value) or sort.overflow == "wrap":
                out.append(a.to(const(d.alpha(sort.wrap(value)))))
            else:
                out.append(a.fail(f"value {value} outside {sort}", a.choice))
            continue
        if a.source is not None:  # a coerced concrete value: decided exactly
            s = a.source
            if sort.overflow == "wrap":
                wrapped = op("+", residue(op("-", s, const(sort.lo)), sort.size), const(sort.lo))
                out.append(a.to(d.alpha_expr(wrapped)))
            else:
                out.append(a.extend(neg(inside(s))).fail(f"value outside {sort}", a.choice))
                out.append(a.extend(inside(s)).to(d.alpha_expr(s)))
            continue
        for at in ev.tokens(a, d):
            assert isinstance(at.value, Const)
            token = at.value.value
            st = ev.ops.store(d, token, sort)
            multi = len(st.tokens) + (1 if st.error else 0) > 1
            for t in sorted(st.tokens):
                # the value stays as it is (no overflow): not a choice of its own; an overflow
                # (wrap-around to another token) is
                out.append(at.to(const(t), at.choice or (multi and t != token)))
            if st.error:
                msg = f"a {d.tokens[token]} value may be outside {sort}"
                out.append(at.fail(msg, at.choice or multi))
    return out


def _error_checks(ev: AbstractEvaluator, c: Command, outcomes: list[_Outcome]) -> list[Alt]:
    """The ``errors`` conditions of ``c`` (checked before the guard, in order): each one that
    may hold adds an error outcome; returns the contexts in which none holds."""
    ctxs = [Alt()]
    for cond, msg in c.errors:
        nxt: list[Alt] = []
        for a in ctxs:
            for e in ev.truth(cond, a):
                if e.error:
                    outcomes.append(_Outcome(e.conds, (), e.choice, e.error))
                elif e.value == TRUE:
                    outcomes.append(_Outcome(e.conds, (), e.choice, msg))
                elif e.value == FALSE:
                    nxt.append(e.to(TRUE))
                else:
                    v = _v(e)
                    outcomes.append(_Outcome(e.extend(v).conds, (), e.choice, msg))
                    nxt.append(e.extend(neg(v)).to(TRUE))
        ctxs = nxt
    return ctxs


def _command_outcomes(ev: AbstractEvaluator, system: System, c: Command) -> list[_Outcome]:
    outcomes: list[_Outcome] = []
    guards = [g for ctx in _error_checks(ev, c, outcomes) for g in ev.truth(c.guard, ctx)]
    for g in guards:
        if g.error:
            outcomes.append(_Outcome(g.conds, (), g.choice, g.error))
            continue
        if g.value == FALSE:
            continue
        assert g.value is not None
        ctx = g.extend(g.value).to(TRUE) if g.value != TRUE else g
        for _, cond in c.asserts:  # evaluating an assertion may fail (a model error)
            for a in ev.truth(cond, ctx):
                if a.error:
                    outcomes.append(_Outcome(a.conds, (), a.choice, a.error))
        partial: list[tuple[Alt, tuple[tuple[str, Expr], ...]]] = [(ctx, ())]
        for name, rhs in c.updates:
            nxt: list[tuple[Alt, tuple[tuple[str, Expr], ...]]] = []
            for a, ups in partial:
                if a.error:
                    nxt.append((a, ups))
                    continue
                for r in _assign(ev, system, name, rhs, a):
                    if r.error or r.value is None:
                        nxt.append((r, ups))
                    else:
                        nxt.append((r, (*ups, (name, r.value))))
            partial = nxt
        for a, ups in partial:
            outcomes.append(_Outcome(a.conds, () if a.error else ups, a.choice, a.error))
    # identical alternatives (same conditions, same effect) are one command
    merged: dict[tuple[object, ...], _Outcome] = {}
    for o in outcomes:
        if FALSE in o.conds:  # infeasible
            continue
        key = (o.conds, o.updates, o.error)
        prev = merged.get(key)
        if prev is None:
            merged[key] = o
        else:
            prev.choice = prev.choice or o.choice
    return list(merged.values())


def _v(a: Alt) -> Expr:
    assert a.value is not None
    return a.value


def _blocked(ev: AbstractEvaluator, c: Command, outcomes: list[_Outcome]) -> Expr:
    """An abstract-state condition that holds in ``alpha(s)`` whenever ``c`` yields no
    successor in the concrete state ``s``: its guard may be false, or it may be a model error
    (an ``errors`` condition, a failing evaluation)."""
    return disj([ev.may_be_false(c.guard), *(conj(o.conds) for o in outcomes if o.error)])


def _pc_value(c: Command, pc: str) -> int | None:
    for part in conjuncts(c.guard):
        if isinstance(part, Op) and part.op == "==":
            a, b = part.args
            if isinstance(a, Var) and a.name == pc and isinstance(b, Const):
                return b.value
    return None


def _release_guards(
    system: System, typing: Typing, process: str, blocked: list[Expr]
) -> list[Expr]:
    """The guards of the release commands of ``process`` (module docstring): together they
    hold wherever every ordinary command of ``process`` may yield no successor; split by the
    value of the process's program counter when every command tests it (one small guard per
    location instead of one over all commands)."""
    mine = [c for c in system.commands if c.process == process and TIMEOUT not in c.flags]
    cond = conj(blocked[c.index] for c in mine)
    proc = next(p for p in system.processes if p.name == process)
    pc = proc.pc
    values = [_pc_value(c, pc) for c in mine] if pc is not None else [None]
    if pc is None or typing.of(pc) is not None or None in values:
        return [] if cond == FALSE else [cond]  # (``true`` when it has no ordinary command)
    ref = system.ref(pc)
    out: list[Expr] = []
    for k in dict.fromkeys(values):
        assert k is not None
        g = simplify(substitute(cond, {pc: const(k)}))
        if g != FALSE:
            out.append(conj([op("==", ref, const(k)), g]))
    # where no ordinary command of the process is, it is blocked (the abstract commands of its
    # timeout commands, which are ordinary ones in the abstract System, may still be enabled)
    out.append(conj(op("!=", ref, const(k)) for k in dict.fromkeys(values) if k is not None))
    return out


def _may_cycle(system: System) -> list[Command]:
    """The commands that start a chain of exclusive control that may come back to a state it
    passed (a loop inside an atomic sequence): such a chain yields no successor at all, so
    the state it starts from may be a deadlock although a command is enabled there.

    The chain graph has an edge ``c -> d`` when ``d`` may be the next command of the process
    ``c`` hands exclusive control to: ``d`` belongs to it, has no ``timeout`` flag and tests
    its program counter against the value it has after ``c`` (any command when that value is
    not a known constant). The result: the commands with ``exclusive`` from which a cycle of
    the graph is reachable (none in a model without loops inside atomic sequences)."""
    pcs = {p.name: p.pc for p in system.processes}
    normal = [c for c in system.commands if TIMEOUT not in c.flags]

    def after(c: Command) -> list[Command]:
        assert c.exclusive is not None
        mine = [d for d in normal if d.process == c.exclusive]
        pc = pcs.get(c.exclusive)
        if pc is None:
            return mine
        ups = c.update_map()
        if pc in ups:
            value = as_const(ups[pc])
        else:
            value = _pc_value(c, pc)
        if value is None:
            return mine
        return [d for d in mine if _pc_value(d, pc) in (value, None)]

    succ = {
        c.index: {d.index for d in after(c) if d.exclusive is not None}
        for c in system.commands
        if c.exclusive is not None
    }
    # remove commands that reach no cycle, until none is left to remove
    changed = True
    while changed:
        changed = False
        for i in [i for i, out in succ.items() if not out & succ.keys()]:
            del succ[i]
            changed = True
    return [system.commands[i] for i in sorted(succ)]


def abstract_system(
    system: System,
    typing: Typing,
    ops: OperatorLibrary | None = None,
    deadline: float | None = None,
) -> Abstraction:
    """Generate the abstract System of ``system`` under ``typing`` (module docstring). Raises
    ``ModelError`` for an unsafe user-written abstract operator and
    :class:`~absmc.engines.typeabs.absexpr.GenerationTimeout` once ``deadline`` (a
    ``time.monotonic()`` instant) has passed."""
    ops = ops or OperatorLibrary()
    sorts = {n: RangeSort(0, d.size - 1) for n, d in typing.domains.items()}
    ev = AbstractEvaluator(typing, ops, sorts, deadline)
    variables: list[Variable] = []
    for v in system.variables:
        d = typing.of(v.name)
        if d is None:
            variables.append(v)
        else:
            variables.append(Variable(v.name, sorts[v.name], d.alpha(v.init), v.span))
    outcomes = [_command_outcomes(ev, system, c) for c in system.commands]
    blocked = [_blocked(ev, c, outcomes[c.index]) for c in system.commands]
    any_timeout = any(TIMEOUT in c.flags for c in system.commands)
    # a concrete timeout needs every ordinary command blocked: each may be, abstractly
    timeout_cond = (
        conj(blocked[c.index] for c in system.commands if TIMEOUT not in c.flags)
        if any_timeout
        else TRUE
    )
    holders = {c.exclusive for c in system.commands if c.exclusive is not None}
    last_of = {c.process: c.index for c in system.commands}
    commands: list[Command] = []
    origin: list[int] = []
    errors: dict[int, str] = {}
    timeouts: dict[int, Expr] = {}
    cf_asserts: dict[int, tuple[tuple[str, Expr], ...]] = {}
    labels = {(c.process, c.label) for c in system.commands if c.label}
    for c in system.commands:
        outs = outcomes[c.index]
        asserts = tuple((n, ev.must(cond)) for n, cond in c.asserts)
        sure = tuple((n, neg(ev.surely_false(cond))) for n, cond in c.asserts)
        for k, o in enumerate(outs, start=1):
            label = c.label
            if label and len(outs) > 1:  # labels stay unique within a process
                label = f"{c.label}_{k}"
                while (c.process, label) in labels:
                    label += "_"
                labels.add((c.process, label))
            flags = set(c.flags) - {TIMEOUT}
            if o.choice:
                flags.add(CHOOSE)
            guard = conj(o.conds)
            updates = o.updates
            index = len(commands)
            if o.error is not None:
                flags.add(ERROR)
                updates = ((ERROR_VAR, const(1)),)
                errors[index] = o.error
            elif asserts:
                cf_asserts[index] = sure
            if TIMEOUT in c.flags:
                timeouts[index] = guard
                guard = conj([guard, timeout_cond])
            commands.append(
                Command(
                    c.process,
                    guard,
                    updates,
                    label,
                    c.span,
                    -1,
                    frozenset(flags),
                    c.exclusive,
                    () if o.error is not None else asserts,
                    (),
                    c.source_text,
                )
            )
            origin.append(c.index)
        if c.process in holders and last_of[c.process] == c.index:
            for g in _release_guards(system, typing, c.process, blocked):
                commands.append(
                    Command(
                        c.process,
                        g,
                        (),
                        None,
                        None,
                        -1,
                        frozenset({CHOOSE, RELEASE}),
                        source_text=f"(exclusive control of {c.process} may end here)",
                    )
                )
                origin.append(-1)
    if errors:
        if ERROR_VAR in system.by_name:  # pragma: no cover - GCL names cannot clash in practice
            raise ValueError(f"the model already has a variable named {ERROR_VAR}")
        variables.append(Variable(ERROR_VAR, RangeSort(0, 0), 0))
    properties = []
    for p in system.properties:
        if p.kind == "assert":  # checked on transitions (abstract ``asserts``); text as written
            properties.append(p)
            continue
        expr = ev.must(p.expr) if p.kind == "invariant" else ev.may(p.expr)
        properties.append(Property(p.name, p.kind, expr, p.span))
    # a concrete deadlock: every command blocked, or every ordinary command without
    # ``exclusive`` blocked while the enabled chains all come back to a state they passed
    cyclic = _may_cycle(system)
    plain = [c for c in system.commands if c.exclusive is None and TIMEOUT not in c.flags]
    rest = [c for c in system.commands if c.exclusive is not None or TIMEOUT in c.flags]
    deadlock_parts = [ev.may_be_false(c.guard) for c in plain]
    all_blocked = conj(ev.may_be_false(c.guard) for c in rest)
    deadlock_parts.append(disj([all_blocked, *(ev.may(c.guard) for c in cyclic)]))
    surely_dead = [ev.surely_false(c.guard) for c in system.commands]
    if system.valid_end is not None:
        deadlock_parts.append(ev.may(Op("!", (system.valid_end,))))
        surely_dead.append(ev.surely_false(system.valid_end))
    surely_bad = {NO_DEADLOCK: conj(surely_dead)}
    # LTL's stuttering: no successor at all (valid end state or not)
    plain_blocked = [blocked[c.index] for c in plain]
    rest_blocked = conj(blocked[c.index] for c in rest)
    terminal = conj([*plain_blocked, disj([rest_blocked, *(ev.may(c.guard) for c in cyclic)])])
    for p in system.properties:
        if p.kind != "assert":
            surely_bad[p.name] = ev.surely_false(neg(p.bad))
    abstract = System(
        tuple(variables),
        system.processes,
        tuple(commands),
        tuple(properties),
        (),
        f"{system.name}-abstract" if system.name else "abstract",
        system.file,
        None,
    )
    return Abstraction(
        system,
        typing,
        abstract,
        tuple(origin),
        conj(deadlock_parts),
        errors,
        timeouts,
        cf_asserts,
        surely_bad,
        terminal,
        ev,
    )


def domains_note(typing: Typing) -> str:
    """``abstracted: x=signs (bound by the user), ...`` for result notes."""
    return "abstracted: " + "; ".join(typing.summary()) if typing.domains else "nothing abstracted"


def token_legend(domains: Mapping[str, Domain]) -> dict[str, list[str]]:
    """Abstracted variable -> its token names (index order), for JSON output."""
    return {v: list(d.tokens) for v, d in domains.items()}
