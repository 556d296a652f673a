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

Commands that do not touch the abstraction are copied with all their fields. Properties become
``unreachable`` properties of both Systems: the bad condition is evaluated four-valuedly on the
abstract state (:class:`~absmc.engines.fourvalued.bilattice.Sym`) and cut at ``j`` —
``bad ⊒ ⊥`` ("possibly bad") in the may System, ``bad ⊒ ⊤`` ("definitely bad") in the must
System. Deadlock is such a property too (the searches run without their built-in deadlock
check): a state is possibly deadlocked when no command *definitely* acts, definitely deadlocked
when none *possibly* acts.

What Promela adds (SPIN's semantics in the IR, see ``ir.Command``), carried so that both Systems
stay an over- and an under-approximation of the concrete *steps*:

* **assertions** (``assert`` properties) stay transition properties: each abstract command
  asserts "no represented concrete state violates it" (may: a violation is *possible*) or "some
  represented state does not violate it" (must: a violation is *certain*);
* **model errors** of an abstracted command (its ``errors`` conditions, a division by zero, an
  error range) are tested by a *probe*: a command of the same process with guard ``false``
  whose ``errors`` condition is "possibly fails" (may) / "definitely fails" (must). A probe has
  no successor, so an error is found where the concrete one happens — also inside an atomic
  chain, whose intermediate states are never stored;
* **exclusive control** (``atomic``): abstract commands keep their ``exclusive`` process. A
  chain ends where the process is blocked; abstractly that is only *possibly* or *definitely*
  so. In the may System a *release* command of the process (no effect, enabled where the process
  is not definitely enabled) lets a chain end wherever a concrete one might; in the must System
  a *stall* command (no effect, exclusive, enabled where the process is possibly but not
  definitely enabled) makes the compiled chain loop back on itself and end nowhere, so a must
  chain ends only where every represented concrete chain ends;
* **timeout** (``"timeout"`` flag: only when no other command has a successor) is a negative
  condition the abstraction cannot leave to the compiled semantics: an abstracted System's
  timeout command loses the flag and gets the condition "no other command definitely (may) /
  possibly (must) has a successor" in its guard, and moves to a process of its own
  (``P~timeout``) so that, as in the concrete semantics, it never runs inside an atomic chain.

When nothing is abstracted (no predicate mentions an abstractable variable) both Systems are the
concrete System itself (``AbstractModel.exact``): the method is exact search, with the same
states and verdicts.

An abstract state of the must System may leave predicates unknown; a condition "some represented
concrete state has valuation ``v``" is then a *compatibility* test (unknown is compatible with
both values), so the table of a command — computed for fully known valuations — serves every
partly unknown state without enumerating them (Bonsai flattens sets of pre-states instead, §3.4).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
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
    checked_asserts,
    touches_abstraction,
)
from absmc.engines.fourvalued.partition import Partition, negation_of, partition
from absmc.engines.fourvalued.semantics import (
    enabled_cleanly,
    enabled_or_failing,
    system_without_masks,
)
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
from absmc.ir.system import NO_DEADLOCK, Command, Process, Property, System, Variable
from absmc.logic import Prover

ModelKind = Kind["may", "must"]
#: the value of an unknown predicate in the must System
UNKNOWN_VALUE = 2
#: the join-irreducible element each abstract System decides
CUT: dict[str, Belnap] = {"may": BOT, "must": TOP}
#: ``origin`` of an abstract command that stands for no concrete command (release, stall)
HELPER = -1
#: suffix of the process that runs a process's timeout commands in an abstracted System
TIMEOUT_SUFFIX = "~timeout"

__all__ = [
    "HELPER",
    "AbstractModel",
    "AbstractionIncomplete",
    "AbstractionStats",
    "FourValuedAbstraction",
    "build_abstraction",
]


@dataclass
class AbstractModel:
    """One classical abstract System. ``origin[i]`` is the concrete command abstract command
    ``i`` comes from (:data:`HELPER` for a release / stall command); ``pred_vars[k]`` holds
    tracked predicate ``k``; ``concrete`` names the concrete variables, which come first in the
    abstract state (in the original order). ``exact``: nothing is abstracted and ``system`` is
    the concrete System with the checked properties (searched with the built-in deadlock
    check)."""

    kind: ModelKind
    system: System
    origin: tuple[int, ...]
    pred_vars: tuple[str, ...]
    concrete: tuple[str, ...]
    exact: bool = False
    #: a state condition of the concrete System as an abstract-state condition cut at this
    #: System's element (may: "possibly true", must: "definitely true"); ``None``: the identity
    #: (an exact model). Used for the guards of an LTL property's automaton.
    view: Callable[[Expr], Expr] | None = None
    #: the abstract-state condition "the concrete state may be (may) / is surely (must)
    #: terminal": no concrete command has a successor (built on demand: LTL's stuttering)
    terminal: Callable[[], Expr] | None = None


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
        checked: frozenset[str],
    ) -> None:
        self.memo = memo
        self.kind = kind
        self.system = system
        self.part = part
        self.tables = tables
        self.names = names
        self.checked = checked
        self.sort = BOOL if kind == "may" else RangeSort(0, UNKNOWN_VALUE)
        self.j = CUT[kind]
        self._en: dict[int, Sym] = {}

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

    # -- four-valued facts about concrete commands -------------------------------------
    def enabled(self, c: Command) -> Sym:
        """Four-valued "c acts here" (it is enabled, or it fails)."""
        ca = self.tables[c.index]
        if ca is None:
            return Sym.exact(enabled_or_failing(c))

        def acts(v: Valuation) -> Expr:
            return any_of(any_of([fl, en]) for en, fl, _, _ in ca.conditions(v))

        def idle(v: Valuation) -> Expr:
            return any_of(neg(any_of([fl, en])) for en, fl, _, _ in ca.conditions(v))

        return Sym(
            all_of([ca.peeled, neg(self.some(ca, idle))]),
            any_of([neg(ca.peeled), neg(self.some(ca, acts))]),
        )

    def stepping(self, c: Command) -> Sym:
        """Four-valued "c has a successor here" (enabled without a model error); its truth is
        the must-command's guard, its falsity the negated may-commands' guards."""
        hit = self._en.get(c.index)
        if hit is not None:
            return hit
        ca = self.tables[c.index]
        if ca is None:
            out = Sym.exact(enabled_cleanly(self.system, c, checked_asserts(c, self.checked)))
        else:

            def some_en(v: Valuation) -> Expr:
                return any_of(en for en, _, _, _ in ca.conditions(v))

            def some_not(v: Valuation) -> Expr:
                return any_of(neg(en) for en, _, _, _ in ca.conditions(v))

            out = Sym(
                all_of([ca.peeled, neg(self.some(ca, some_not))]),
                any_of([neg(ca.peeled), neg(self.some(ca, some_en))]),
            )
        self._en[c.index] = out
        return out

    def failing(self, ca: CommandAbstraction) -> Sym:
        """Four-valued "c fails here" (a model error)."""

        def fails(v: Valuation) -> Expr:
            return any_of(fl for _, fl, _, _ in ca.conditions(v))

        def succeeds(v: Valuation) -> Expr:
            return any_of(neg(fl) for _, fl, _, _ in ca.conditions(v))

        some_fail = self.some(ca, fails)
        return Sym(
            all_of([ca.peeled, some_fail, neg(self.some(ca, succeeds))]),
            any_of([neg(ca.peeled), neg(some_fail)]),
        )

    def timeout_allowed(self) -> Expr:
        """``timeout`` holds (no command without the flag has a successor), cut at ``j``."""
        normal = [c for c in self.system.commands if "timeout" not in c.flags]
        return sym_all(~self.stepping(c) for c in normal).cut(self.j)

    # -- commands ----------------------------------------------------------------------
    def commands(self) -> tuple[list[Command], list[int], list[Process]]:
        """The abstract commands (probes and helpers last, so that the compiled code still
        dispatches the others on program counters), their origins, and the extra processes."""
        out: list[Command] = []
        origin: list[int] = []
        late: list[tuple[Command, int]] = []
        extra_procs: list[Process] = []
        timeouts = any("timeout" in c.flags for c in self.system.commands)
        tmo = self.timeout_allowed() if timeouts else TRUE
        for c in self.system.commands:
            timeout = "timeout" in c.flags
            proc = c.process
            if timeout:
                proc = c.process + TIMEOUT_SUFFIX
                if all(p.name != proc for p in extra_procs):
                    extra_procs.append(Process(proc))
            extra = tmo if timeout else TRUE
            flags = c.flags - {"timeout"}
            ca = self.tables[c.index]
            if ca is None:
                copy = replace(
                    c,
                    process=proc,
                    guard=all_of([extra, c.guard]),
                    flags=flags,
                    errors=tuple((all_of([extra, e]), m) for e, m in c.errors),
                    index=-1,
                )
                out.append(copy)
                origin.append(c.index)
                continue
            made = self.may_commands(ca) if self.kind == "may" else self.must_commands(ca)
            for m in made:
                out.append(
                    replace(
                        m,
                        process=proc,
                        guard=all_of([extra, m.guard]),
                        flags=flags,
                        exclusive=c.exclusive,
                        source_text=c.source_text,
                    )
                )
                origin.append(c.index)
            if ca.fails:
                cond = all_of([extra, self.failing(ca).cut(self.j)])
                if cond != FALSE:
                    what = "possibly" if self.kind == "may" else "definitely"
                    msg = f"{what} a model error: {c.source_text or c.text()}"
                    probe = Command(proc, FALSE, (), c.label, c.span, errors=((cond, msg),))
                    late.append((probe, c.index))
        late += [(h, HELPER) for h in self.helpers()]
        out += [c for c, _ in late]
        origin += [i for _, i in late]
        return out, origin, extra_procs

    def helpers(self) -> list[Command]:
        """Release (may) or stall (must) commands of the processes that can hold exclusive
        control and have abstracted commands (see the module docstring)."""
        sysm = self.system
        holders = {c.exclusive for c in sysm.commands if c.exclusive is not None}
        targets = [p.name for p in sysm.processes if p.name in holders]
        out: list[Command] = []
        for name in targets:
            mine = [c for c in sysm.commands if c.process == name and "timeout" not in c.flags]
            if all(self.tables[c.index] is None for c in mine):
                continue  # exact: the compiled semantics decides blocking as the concrete one
            en = [self.stepping(c) for c in mine]
            definitely = any_of(e.truth for e in en)
            if self.kind == "may":
                out.append(Command(name, neg(definitely), (), "release"))
            else:
                possibly = neg(all_of(e.falsity for e in en))
                guard = all_of([possibly, neg(definitely)])
                if guard != FALSE:
                    out.append(Command(name, guard, (), "stall", exclusive=name))
        return out

    @staticmethod
    def violation(ca: CommandAbstraction, k: int, violated: bool) -> Callable[[Valuation], Expr]:
        """The condition "some row of ``v`` violates (``violated``) / does not violate
        assertion ``k``"."""

        def cond(v: Valuation) -> Expr:
            return any_of(x[3][k] if violated else neg(x[3][k]) for x in ca.conditions(v))

        return cond

    def may_commands(self, ca: CommandAbstraction) -> list[Command]:
        """One command per post-state, enabled where some row reaching it is enabled; each
        asserts that no represented concrete state violates the command's assertions."""
        c = ca.command
        posts = sorted({p for v in ca.rows for _, _, p, _ in ca.conditions(v)})
        asserts = tuple(
            (name, neg(self.some(ca, self.violation(ca, k, True))))
            for k, (name, _) in enumerate(ca.asserts)
        )
        out = []
        for post in posts:

            def reaches(v: Valuation, post: Valuation = post) -> Expr:
                return any_of(en for en, _, p, _ in ca.conditions(v) if p == post)

            guard = all_of([ca.peeled, self.some(ca, reaches)])
            if guard == FALSE:
                continue
            updates = [
                *ca.concrete_updates,
                *((self.names[k], const(bool(post[i]))) for i, k in enumerate(ca.post)),
            ]
            out.append(Command(c.process, guard, tuple(updates), c.label, c.span, asserts=asserts))
        return out

    def must_commands(self, ca: CommandAbstraction) -> list[Command]:
        """One command, enabled where every row of every represented valuation is enabled; the
        post-state is the consensus of the represented post-states; it asserts that some
        represented concrete state does not violate each of the command's assertions."""
        c = ca.command

        def blocked(v: Valuation) -> Expr:
            return any_of(neg(en) for en, _, _, _ in ca.conditions(v))

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
        asserts = tuple(
            (name, self.some(ca, self.violation(ca, k, False)))
            for k, (name, _) in enumerate(ca.asserts)
        )
        return [Command(c.process, guard, tuple(updates), c.label, c.span, asserts=asserts)]

    # -- properties --------------------------------------------------------------------
    def properties(self, checked: Sequence[Property], deadlock: bool) -> list[Property]:
        j = self.j
        out: list[Property] = []
        for p in checked:
            if p.kind == "assert":
                # checked on transitions: the abstract commands carry the abstract assertions
                out.append(p)
            else:
                out.append(
                    Property(p.name, "unreachable", boolean_sym(p.bad, self.atom).cut(j), p.span)
                )
        if deadlock:
            end = self.system.valid_end
            valid = boolean_sym(end, self.atom) if end is not None else Sym.const(F)
            dead = ~valid & sym_all(~self.enabled(c) for c in self.system.commands)
            out.append(Property(NO_DEADLOCK, "unreachable", dead.cut(j)))
        return out

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
        commands, origin, extra_procs = self.commands()
        props = self.properties(checked, deadlock)
        abstract = System(
            variables=tuple(variables),
            processes=(*sysm.processes, *extra_procs),
            commands=tuple(commands),
            properties=tuple(props),
            predicates=(),
            name=f"{sysm.name or 'model'}.{self.kind}",
            file=sysm.file,
        )
        kept = tuple(v.name for v in sysm.variables if v.name not in self.part.abstracted)
        j = self.j

        def view(e: Expr) -> Expr:
            return boolean_sym(e, self.atom).cut(j)

        def terminal() -> Expr:
            return sym_all(~self.stepping(c) for c in sysm.commands).cut(j)

        return AbstractModel(
            self.kind, abstract, tuple(origin), self.names, kept, view=view, terminal=terminal
        )


def property_atoms(system: System, checked: Sequence[Property]) -> list[tuple[Expr, str]]:
    """The atoms of the checked properties (for an ``assert`` property: of its conditions on the
    commands) and of the valid-end condition, with their origin (candidates for tracking: a
    property must be expressible in the abstract state)."""
    out: list[tuple[Expr, str]] = []
    names = {p.name for p in checked if p.kind == "assert"}
    for p in checked:
        if p.kind != "assert":
            out += [(a, f"atom of property {p.name}") for a in atoms(p.expr)]
    for c in system.commands:
        for name, cond in c.asserts:
            if name in names:
                out += [(a, f"atom of assertion {name}") for a in atoms(cond)]
    if system.valid_end is not None:
        out += [(a, "atom of the valid-end condition") for a in atoms(system.valid_end)]
    return out


def exact_model(kind: ModelKind, system: System, checked: Sequence[Property]) -> AbstractModel:
    """The concrete System as its own abstraction (nothing abstracted)."""
    model = system.with_(properties=tuple(checked), predicates=())
    names = tuple(v.name for v in system.variables)
    return AbstractModel(kind, model, tuple(range(len(system.commands))), (), names, exact=True)


def build_abstraction(
    system: System,
    checked: Sequence[Property],
    deadlock: bool,
    predicates: Sequence[Expr] | None = None,
    prover: Prover | None = None,
    shortcut: bool = True,
    ltl_atoms: Sequence[tuple[Expr, str]] = (),
) -> FourValuedAbstraction:
    """Partition the variables, enumerate every abstracted command once and build the may and
    must Systems for the ``checked`` properties (plus deadlock when ``deadlock``).

    ``predicates`` default to ``system.predicates``. When nothing is abstracted and
    ``shortcut`` holds, both Systems are the concrete one (:func:`exact_model`); without
    ``shortcut`` they are built the general way (what tests use to check that construction).
    ``ltl_atoms`` (atom, origin) are the atoms of checked linear-time properties: like the
    properties' atoms they are tracked as predicates where they read abstracted variables, so
    that the automaton's guards are expressible in the abstract state
    (:attr:`AbstractModel.view`). Raises ``ModelError`` for an unusable predicate or an
    assertion that cannot be abstracted, and :class:`AbstractionIncomplete` when the solver
    cannot finish an enumeration.
    """
    t0 = time.monotonic()
    prover = prover or Prover()
    preds = tuple(system.predicates if predicates is None else predicates)
    # C's truncations (bit masks) as arithmetic for the solver: the partition and the tables
    # read the rewritten commands; copied commands and replays keep the original ones
    work = system_without_masks(system)
    part = partition(work, preds, [*property_atoms(work, checked), *ltl_atoms])
    stats = AbstractionStats()
    if shortcut and not part.abstracted:
        stats.copied_commands = len(system.commands)
        stats.time_s = time.monotonic() - t0
        may = exact_model("may", system, checked)
        must = exact_model("must", system, checked)
        none = (None,) * len(system.commands)
        return FourValuedAbstraction(system, part, none, may, must, stats)
    checked_names = frozenset(p.name for p in checked if p.kind == "assert")
    cache: dict[tuple[object, ...], CommandAbstraction] = {}
    tables: list[CommandAbstraction | None] = []
    checks0 = prover.stats.calls
    for c in work.commands:
        if not touches_abstraction(part, c):
            tables.append(None)
            stats.copied_commands += 1
            continue
        stats.abstracted_commands += 1
        key = (c.guard, c.updates, c.process, checked_asserts(c, checked_names), c.errors)
        hit = cache.get(key)
        if hit is not None:
            # the same guard, updates, assertions and errors in the same process: share
            stats.cache_hits += 1
            tables.append(replace(hit, command=c))
            continue
        ca = abstract_command(work, part, c, prover, checked_names)
        cache[key] = ca
        stats.enumerations += 1
        stats.models += ca.models
        tables.append(ca)
    names = predicate_names(system, part)
    memo: dict[frozenset[Valuation], list[Cube]] = {}
    args = (system, part, tables, names, memo, checked_names)
    may = _Builder("may", *args).build(checked, deadlock)
    must = _Builder("must", *args).build(checked, deadlock)
    stats.checks = prover.stats.calls - checks0
    stats.time_s = time.monotonic() - t0
    return FourValuedAbstraction(system, part, tuple(tables), may, must, stats)
