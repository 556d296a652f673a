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

``origin[i]`` is the concrete command the abstract command ``i`` comes from, so a path of the
abstract System maps back to a path of the concrete one (for replay, §7).

Properties are abstracted so that ``holds`` transfers (§3.2): an invariant ``p`` becomes
``must(p)`` (true only in abstract states whose every concretization satisfies ``p``), an
unreachable condition ``bad`` becomes ``may(bad)``. The built-in ``no-deadlock`` becomes the
abstract-state condition :attr:`Abstraction.deadlock`: every guard may be false (a concrete
deadlock needs all guards false, and the abstract search must not miss one).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from absmc.engines.typeabs.absexpr import AbstractEvaluator, Alt
from absmc.engines.typeabs.domains import Domain, residue
from absmc.engines.typeabs.infer import Typing
from absmc.engines.typeabs.operators import OperatorLibrary
from absmc.ir.expr import FALSE, TRUE, Const, Expr, Op, Var, conj, const, neg, op
from absmc.ir.sorts import BoolSort, RangeSort
from absmc.ir.system import Command, Property, System, Variable

#: ``Command.flags`` marker of a command that resolves a nondeterministic abstract choice
CHOOSE: Final = "choose"
#: ``Command.flags`` marker of a command that stands for a possible model error
ERROR: Final = "abstract-error"
#: the variable whose (impossible) assignment makes an abstract model error
ERROR_VAR: Final = "_abs_error"


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

    def choose_free(self) -> tuple[System, tuple[int, ...]]:
        """The abstract System without its ``choose`` commands (paper 001, §7: only
        choose-free paths are explored) and, per kept command, its abstract index."""
        kept = [c for c in self.system.commands if CHOOSE not in c.flags]
        return self.system.with_(commands=tuple(kept)), tuple(c.index for c in kept)

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
        for v, x in zip(self.system.variables, state, strict=True):
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


def _command_outcomes(ev: AbstractEvaluator, system: System, c: Command) -> list[_Outcome]:
    outcomes: list[_Outcome] = []
    for g in ev.truth(c.guard, Alt()):
        if g.error:
            outcomes.append(_Outcome(g.conds, (), g.choice, g.error))
            continue
        if g.value == FALSE:
            continue
        assert g.value is not None
        ctx = g.extend(g.value).to(TRUE) if g.value != TRUE else g
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


def abstract_system(
    system: System, typing: Typing, ops: OperatorLibrary | None = None
) -> Abstraction:
    """Generate the abstract System of ``system`` under ``typing`` (module docstring). Raises
    ``ModelError`` for an unsafe user-written abstract operator."""
    ops = ops or OperatorLibrary()
    sorts = {n: RangeSort(0, d.size - 1) for n, d in typing.domains.items()}
    ev = AbstractEvaluator(typing, ops, sorts)
    variables: list[Variable] = []
    for v in system.variables:
        d = typing.of(v.name)
        if d is None:
            variables.append(v)
        else:
            variables.append(Variable(v.name, sorts[v.name], d.alpha(v.init), v.span))
    commands: list[Command] = []
    origin: list[int] = []
    errors: dict[int, str] = {}
    labels = {(c.process, c.label) for c in system.commands if c.label}
    for c in system.commands:
        outcomes = _command_outcomes(ev, system, c)
        for k, o in enumerate(outcomes, start=1):
            label = c.label
            if label and len(outcomes) > 1:  # labels stay unique within a process
                label = f"{c.label}_{k}"
                while (c.process, label) in labels:
                    label += "_"
                labels.add((c.process, label))
            flags = set(c.flags)
            if o.choice:
                flags.add(CHOOSE)
            updates = o.updates
            if o.error is not None:
                flags.add(ERROR)
                updates = ((ERROR_VAR, const(1)),)
                errors[len(commands)] = o.error
            commands.append(
                Command(c.process, conj(o.conds), updates, label, c.span, -1, frozenset(flags))
            )
            origin.append(c.index)
    if errors:
        if ERROR_VAR in system.by_name:  # pragma: no cover - GCL names cannot clash in practice
            raise ValueError(f"the model already has a variable named {ERROR_VAR}")
        variables.append(Variable(ERROR_VAR, RangeSort(0, 0), 0))
    properties = []
    for p in system.properties:
        expr = ev.must(p.expr) if p.kind == "invariant" else ev.may(p.expr)
        properties.append(Property(p.name, p.kind, expr, p.span))
    deadlock_parts = [ev.may_be_false(c.guard) for c in system.commands]
    if system.valid_end is not None:
        deadlock_parts.append(ev.may(Op("!", (system.valid_end,))))
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
    return Abstraction(system, typing, abstract, tuple(origin), conj(deadlock_parts), errors)


def domains_note(typing: Typing) -> str:
    """``abstracted: x=signs (bound by --abstract), ...`` for result notes."""
    return "abstracted: " + "; ".join(typing.summary()) if typing.domains else "nothing abstracted"


def token_legend(domains: Mapping[str, Domain]) -> dict[str, list[str]]:
    """Abstracted variable -> its token names (index order), for JSON output."""
    return {v: list(d.tokens) for v, d in domains.items()}
