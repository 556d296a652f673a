"""Build the two classical abstract Systems, one per join-irreducible element of FOUR (paper 004,
§2.4 and §3.2, Fig. 4).

Both Systems keep every concrete variable (same names, sorts and initial values) and add one
variable per tracked predicate, named ``p<k>_<description>`` (Bonsai: "predicates additionally
have a unique number and a short descriptive string as a part of their name"):

* the **may** System (``j = ⊥``: transitions ``⊒ ⊥``, the over-abstraction): predicates are
  ``bool``; each abstracted command becomes one command per possible post-state;
* the **must** System (``j = ⊤``: transitions ``⊒ ⊤``, the under-abstraction): predicates range
  over ``0..2`` with ``2`` = unknown (⊥); each abstracted command becomes one deterministic
  command, enabled where every represented concrete state is enabled, whose post-state is the
  consensus of the possible ones.

Commands that do not touch the abstraction are copied unchanged. Properties become
``unreachable`` properties of both Systems: the bad condition is evaluated four-valuedly on the
abstract state (:class:`~absmc.engines.fourvalued.bilattice.Sym`) and cut at ``j`` —
``bad ⊒ ⊥`` ("possibly bad") in the may System, ``bad ⊒ ⊤`` ("definitely bad") in the must
System. Deadlock and model errors of abstracted commands are such properties too (the searches
run without their built-in deadlock check): a state is possibly deadlocked when no command is
*definitely* enabled, definitely deadlocked when none is *possibly* enabled.

An abstract state of the must System may leave predicates unknown; a condition "some represented
concrete state has valuation ``v``" is then a *compatibility* test (unknown is compatible with
both values), so the table of a command — computed for fully known valuations — serves every
partly unknown state without enumerating them (Bonsai flattens sets of pre-states instead, §3.4).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal as Kind

from absmc.engines.fourvalued.bilattice import (
    BOT,
    TOP,
    Belnap,
    F,
    Sym,
    all_of,
    any_of,
    sym_all,
    sym_any,
)
from absmc.engines.fourvalued.cubes import Cube, Literal, encode, minimize
from absmc.engines.fourvalued.effect import (
    AbstractionIncomplete,
    CommandAbstraction,
    Valuation,
    abstract_command,
    touches_abstraction,
)
from absmc.engines.fourvalued.partition import Partition, negation_of, partition
from absmc.engines.fourvalued.semantics import enabled_or_failing
from absmc.ir.evaluate import EvalError, env_of, evaluate
from absmc.ir.expr import (
    FALSE,
    TRUE,
    Const,
    Expr,
    Op,
    Var,
    atoms,
    const,
    neg,
    op,
)
from absmc.ir.sorts import BOOL, RangeSort
from absmc.ir.system import NO_DEADLOCK, Command, Property, System, Variable
from absmc.logic import Prover

ModelKind = Kind["may", "must"]
#: the value of an unknown predicate in the must System
UNKNOWN_VALUE = 2
#: name of the property "an abstracted command may / must fail" in the abstract Systems
ABSTRACT_ERROR = "abstract-model-error"
#: the join-irreducible element each abstract System decides
CUT: dict[str, Belnap] = {"may": BOT, "must": TOP}

__all__ = [
    "ABSTRACT_ERROR",
    "AbstractModel",
    "AbstractionIncomplete",
    "AbstractionStats",
    "FourValuedAbstraction",
    "build_abstraction",
]


@dataclass
class AbstractModel:
    """One classical abstract System. ``origin[i]`` is the concrete command abstract command
    ``i`` comes from; ``pred_vars[k]`` holds tracked predicate ``k``; ``concrete`` names the
    concrete variables, which come first in the abstract state (in the original order);
    ``failures`` maps a concrete command index to the condition (over this System's state)
    under which that abstracted command possibly (may) / definitely (must) fails."""

    kind: ModelKind
    system: System
    origin: tuple[int, ...]
    pred_vars: tuple[str, ...]
    concrete: tuple[str, ...]
    failures: dict[int, Expr] = field(default_factory=dict)


@dataclass
class AbstractionStats:
    """Cost of building the abstraction: wall seconds, allSAT enumerations (one per abstracted
    command), solver checks, enumerated models, and cache hits (commands sharing an
    enumeration)."""

    time_s: float = 0.0
    enumerations: int = 0
    checks: int = 0
    models: int = 0
    cache_hits: int = 0
    abstracted_commands: int = 0
    copied_commands: int = 0


@dataclass
class FourValuedAbstraction:
    """The partition, the per-command SMT tables and the two abstract Systems."""

    system: System
    partition: Partition
    tables: tuple[CommandAbstraction | None, ...]
    may: AbstractModel
    must: AbstractModel
    stats: AbstractionStats


def _slug(text: str) -> str:
    words = {
        "<=": "le",
        ">=": "ge",
        "==": "eq",
        "!=": "ne",
        "<": "lt",
        ">": "gt",
        "+": "plus",
        "-": "minus",
        "*": "times",
        "/": "div",
        "%": "mod",
        "&&": "and",
        "||": "or",
        "!": "not",
    }
    for sym in sorted(words, key=len, reverse=True):
        text = text.replace(sym, f" {words[sym]} ")
    return "_".join(re.findall(r"[A-Za-z0-9]+", text))[:28].strip("_")


def predicate_names(system: System, part: Partition) -> tuple[str, ...]:
    """Variable names for the tracked predicates: ``p<k>_<slug>``, unique in ``system``."""
    taken = set(system.index_of)
    out = []
    for k, p in enumerate(part.predicates):
        base = f"p{k}_{_slug(p.text)}".rstrip("_")
        name = base
        n = 1
        while name in taken:
            name = f"{base}_{n}"
            n += 1
        taken.add(name)
        out.append(name)
    return tuple(out)


def boolean_sym(e: Expr, atom: Callable[[Expr], Sym]) -> Sym:
    """The four-valued value of a boolean formula from the values of its atoms (the truth-order
    operations of FOUR; ``=>`` as ``¬a ∨ b``)."""
    if isinstance(e, Const):
        return Sym.const(Belnap.from_bool(bool(e.value)))
    if isinstance(e, Op):
        if e.op == "&&":
            return sym_all(boolean_sym(a, atom) for a in e.args)
        if e.op == "||":
            return sym_any(boolean_sym(a, atom) for a in e.args)
        if e.op == "!":
            return ~boolean_sym(e.args[0], atom)
        if e.op == "=>":
            return ~boolean_sym(e.args[0], atom) | boolean_sym(e.args[1], atom)
    return atom(e)


class _Builder:
    def __init__(
        self,
        kind: ModelKind,
        system: System,
        part: Partition,
        tables: Sequence[CommandAbstraction | None],
        names: tuple[str, ...],
        memo: dict[frozenset[Valuation], list[Cube]],
    ) -> None:
        self.memo = memo
        self.kind = kind
        self.system = system
        self.part = part
        self.tables = tables
        self.names = names
        self.sort = BOOL if kind == "may" else RangeSort(0, UNKNOWN_VALUE)

    def pred_var(self, k: int) -> Var:
        return Var(self.names[k], self.sort)

    def pred_sym(self, k: int) -> Sym:
        v = self.pred_var(k)
        if self.kind == "may":
            return Sym.exact(v)
        return Sym(op("==", v, const(1)), op("==", v, const(0)))

    def atom(self, a: Expr) -> Sym:
        if self.part.is_concrete(a):
            return Sym.exact(a)
        k = self.part.index(a)
        if k is not None:
            return self.pred_sym(k)
        n = negation_of(a)
        k = self.part.index(n) if n is not None else None
        if k is not None:
            return ~self.pred_sym(k)
        raise AssertionError(f"atom {a} over abstracted variables is not tracked")

    def literal(self, ca: CommandAbstraction) -> Literal:
        nctx = len(ca.ctx)

        def lit(i: int, b: bool) -> Expr:
            if i < nctx:
                t = ca.ctx[i]
                return t if b else neg(t)
            v = self.pred_var(ca.pre[i - nctx])
            if self.kind == "may":
                return v if b else neg(v)
            # some represented concrete state has value b: known b, or unknown
            return op("!=", v, const(0 if b else 1))

        return lit

    def some(self, ca: CommandAbstraction, cond: Callable[[Valuation], Expr]) -> Expr:
        """Some concrete state of the abstract state has a valuation ``v`` whose condition
        ``cond(v)`` (over the free concrete atoms) holds. Valuations with the same condition
        are merged into cubes."""
        groups: dict[Expr, list[Valuation]] = {}
        for v in ca.rows:
            c = cond(v)
            if c != FALSE:
                groups.setdefault(c, []).append(v)
        lit = self.literal(ca)
        return any_of(all_of([encode(self.cubes(vs), lit), c]) for c, vs in groups.items())

    def cubes(self, vals: Sequence[Valuation]) -> list[Cube]:
        """:func:`minimize`, memoized per abstraction (both Systems encode many equal sets)."""
        key = frozenset(vals)
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo[key] = minimize(key)
        return hit

    def among(self, ca: CommandAbstraction, vals: Sequence[Valuation]) -> Expr:
        """Some concrete state of the abstract state has one of the valuations ``vals``."""
        chosen = set(vals)
        return self.some(ca, lambda v: TRUE if v in chosen else FALSE)

    # -- commands ----------------------------------------------------------------------
    def commands(self) -> tuple[list[Command], list[int]]:
        out: list[Command] = []
        origin: list[int] = []
        for c in self.system.commands:
            ca = self.tables[c.index]
            if ca is None:
                out.append(Command(c.process, c.guard, c.updates, c.label, c.span))
                origin.append(c.index)
                continue
            made = self.may_commands(ca) if self.kind == "may" else self.must_commands(ca)
            out += made
            origin += [c.index] * len(made)
        return out, origin

    def may_commands(self, ca: CommandAbstraction) -> list[Command]:
        """One command per post-state, enabled where some row reaching it is enabled."""
        c = ca.command
        posts = sorted({p for v in ca.rows for _, _, p in ca.conditions(v)})
        out = []
        for post in posts:

            def reaches(v: Valuation, post: Valuation = post) -> Expr:
                return any_of(en for en, _, p in ca.conditions(v) if p == post)

            guard = all_of([ca.peeled, self.some(ca, reaches)])
            if guard == FALSE:
                continue
            updates = [
                *ca.concrete_updates,
                *((self.names[k], const(bool(post[i]))) for i, k in enumerate(ca.post)),
            ]
            out.append(Command(c.process, guard, tuple(updates), c.label, c.span))
        return out

    def must_commands(self, ca: CommandAbstraction) -> list[Command]:
        """One command, enabled where every row of every represented valuation is enabled; the
        post-state is the consensus of the represented post-states."""
        c = ca.command

        def blocked(v: Valuation) -> Expr:
            return any_of(neg(en) for en, _, _ in ca.conditions(v))

        guard = all_of([ca.peeled, neg(self.some(ca, blocked))])
        if guard == FALSE or all(blocked(v) == TRUE for v in ca.rows):
            return []
        updates: list[tuple[str, Expr]] = list(ca.concrete_updates)
        flat = {v: ca.flattened(v) for v in ca.rows}
        for i, k in enumerate(ca.post):
            may_be_1 = [v for v in ca.rows if flat[v][i] is not Belnap.FALSE]
            may_be_0 = [v for v in ca.rows if flat[v][i] is not Belnap.TRUE]
            value: Expr
            if not may_be_0:
                value = const(1)
            elif not may_be_1:
                value = const(0)
            else:
                value = op(
                    "ite",
                    neg(self.among(ca, may_be_0)),
                    const(1),
                    op("ite", neg(self.among(ca, may_be_1)), const(0), const(UNKNOWN_VALUE)),
                )
            updates.append((self.names[k], value))
        return [Command(c.process, guard, tuple(updates), c.label, c.span)]

    # -- properties --------------------------------------------------------------------
    def enabled(self, c: Command) -> Sym:
        """Four-valued "c does something here" (it is enabled, or it fails)."""
        ca = self.tables[c.index]
        if ca is None:
            return Sym.exact(enabled_or_failing(c))

        def acts(v: Valuation) -> Expr:
            return any_of(any_of([fl, en]) for en, fl, _ in ca.conditions(v))

        def idle(v: Valuation) -> Expr:
            return any_of(neg(any_of([fl, en])) for en, fl, _ in ca.conditions(v))

        return Sym(
            all_of([ca.peeled, neg(self.some(ca, idle))]),
            any_of([neg(ca.peeled), neg(self.some(ca, acts))]),
        )

    def failing(self, ca: CommandAbstraction) -> Sym:
        """Four-valued "c fails here" (a model error)."""

        def fails(v: Valuation) -> Expr:
            return any_of(fl for _, fl, _ in ca.conditions(v))

        def succeeds(v: Valuation) -> Expr:
            return any_of(neg(fl) for _, fl, _ in ca.conditions(v))

        some_fail = self.some(ca, fails)
        return Sym(
            all_of([ca.peeled, some_fail, neg(self.some(ca, succeeds))]),
            any_of([neg(ca.peeled), neg(some_fail)]),
        )

    def properties(
        self, checked: Sequence[Property], deadlock: bool
    ) -> tuple[list[Property], dict[int, Expr]]:
        j = CUT[self.kind]
        out = [
            Property(p.name, "unreachable", boolean_sym(p.bad, self.atom).cut(j), p.span)
            for p in checked
        ]
        if deadlock:
            end = self.system.valid_end
            valid = boolean_sym(end, self.atom) if end is not None else Sym.const(F)
            dead = ~valid & sym_all(~self.enabled(c) for c in self.system.commands)
            out.append(Property(NO_DEADLOCK, "unreachable", dead.cut(j)))
        failures: dict[int, Expr] = {}
        for ca in self.tables:
            if ca is not None and ca.fails:
                failures[ca.command.index] = self.failing(ca).cut(j)
        if failures:
            out.append(Property(ABSTRACT_ERROR, "unreachable", any_of(failures.values())))
        return out, failures

    def build(self, checked: Sequence[Property], deadlock: bool) -> AbstractModel:
        sysm = self.system
        init = sysm.initial_state()
        env = env_of(sysm, init)
        variables = [v for v in sysm.variables if v.name not in self.part.abstracted]
        for k, p in enumerate(self.part.predicates):
            try:
                value = int(bool(evaluate(p.expr, env)))
            except EvalError:  # pragma: no cover - predicates that can fail are rejected
                value = UNKNOWN_VALUE
            variables.append(Variable(self.names[k], self.sort, value))
        commands, origin = self.commands()
        props, failures = self.properties(checked, deadlock)
        abstract = System(
            variables=tuple(variables),
            processes=sysm.processes,
            commands=tuple(commands),
            properties=tuple(props),
            predicates=(),
            name=f"{sysm.name or 'model'}.{self.kind}",
            file=sysm.file,
        )
        kept = tuple(v.name for v in sysm.variables if v.name not in self.part.abstracted)
        return AbstractModel(self.kind, abstract, tuple(origin), self.names, kept, failures)


def property_atoms(system: System, checked: Sequence[Property]) -> list[tuple[Expr, str]]:
    """The atoms of the checked properties and of the valid-end condition, with their origin
    (candidates for tracking: a property must be expressible in the abstract state)."""
    out: list[tuple[Expr, str]] = []
    for p in checked:
        out += [(a, f"atom of property {p.name}") for a in atoms(p.expr)]
    if system.valid_end is not None:
        out += [(a, "atom of the valid-end condition") for a in atoms(system.valid_end)]
    return out


def build_abstraction(
    system: System,
    checked: Sequence[Property],
    deadlock: bool,
    predicates: Sequence[Expr] | None = None,
    prover: Prover | None = None,
) -> FourValuedAbstraction:
    """Partition the variables, enumerate every abstracted command once and build the may and
    must Systems for the ``checked`` properties (plus deadlock when ``deadlock``).

    ``predicates`` default to ``system.predicates``. Raises ``ModelError`` for an unusable
    predicate and :class:`AbstractionIncomplete` when the solver cannot finish an enumeration.
    """
    t0 = time.monotonic()
    prover = prover or Prover()
    preds = tuple(system.predicates if predicates is None else predicates)
    part = partition(system, preds, property_atoms(system, checked))
    stats = AbstractionStats()
    cache: dict[tuple[Expr, tuple[tuple[str, Expr], ...], str], CommandAbstraction] = {}
    tables: list[CommandAbstraction | None] = []
    checks0 = prover.stats.calls
    for c in system.commands:
        if not touches_abstraction(part, c):
            tables.append(None)
            stats.copied_commands += 1
            continue
        stats.abstracted_commands += 1
        key = (c.guard, c.updates, c.process)
        hit = cache.get(key)
        if hit is not None:
            # the same guard and updates in the same process: share the enumeration
            stats.cache_hits += 1
            tables.append(replace(hit, command=c))
            continue
        ca = abstract_command(system, part, c, prover)
        cache[key] = ca
        stats.enumerations += 1
        stats.models += ca.models
        tables.append(ca)
    names = predicate_names(system, part)
    memo: dict[frozenset[Valuation], list[Cube]] = {}
    may = _Builder("may", system, part, tables, names, memo).build(checked, deadlock)
    must = _Builder("must", system, part, tables, names, memo).build(checked, deadlock)
    stats.checks = prover.stats.calls - checks0
    stats.time_s = time.monotonic() - t0
    return FourValuedAbstraction(system, part, tuple(tables), may, must, stats)
