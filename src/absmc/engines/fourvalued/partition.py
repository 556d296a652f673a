"""Partial abstraction: which variables are abstracted, which stay concrete, and why (paper 004,
§3.2–3.3).

Bonsai abstracts only what the predicates talk about and keeps the rest concrete:

1. a variable that no predicate mentions stays **concrete**;
2. bounded variables (``bool`` and ranges of at most :data:`ENUM_LIMIT` values) and program
   counters are control and stay concrete; when they occur together with abstracted variables
   (e.g. an array index next to array slots, once the Promela front end lowers ``a[i]`` to
   ``ite`` chains over slot variables), the SMT enumeration enumerates their values — the
   "concrete parts in a bounded domain" of §3.3, with the bound taken from the variable's range;
3. **taint analysis** — concrete information is never created from abstract information: every
   variable read by an assignment to a concrete variable is concrete (a fixpoint, since making
   a variable concrete can taint others);
4. a formula the abstraction must decide (a tracked predicate, an atom of a guard, assertion or
   error condition, or a predicate after a command's assignments) may not mix abstracted
   variables with *unbounded* concrete ones: its abstracted variables become concrete too (§3.3:
   "we require the concrete parts of the predicate to be somehow in a bounded domain"); nor may
   it use a bitwise operator (``& | ^ << >> ~``, Promela's C operators), which the solver
   interface does not take; nor may a tracked property atom divide by zero (its variables stay
   concrete, so the compiled semantics decides it, undefinedness included).

The remaining candidates — unbounded integer variables (``int``, or ranges wider than
:data:`ENUM_LIMIT`) that a predicate mentions — are **abstracted**: they disappear from the
abstract state, which holds one value per *tracked* predicate instead. Tracked predicates are
the given ones that mention an abstracted variable (the others are decided by the concrete
variables alone), plus the atoms of the checked properties and of the valid-end condition that
mention one (a property must be expressible in the abstract state).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from absmc.codegen.plan import may_raise
from absmc.engines.fourvalued.semantics import command_reads
from absmc.ir.expr import (
    BIT_OPS,
    NEGATED_COMPARISON,
    Expr,
    Op,
    atoms,
    free_vars,
    subexpressions,
    substitute,
)
from absmc.ir.printer import format_expr
from absmc.ir.sorts import BoolSort, IntSort, RangeSort
from absmc.ir.span import ModelError
from absmc.ir.system import Command, System, Variable

#: bounded variables with at most this many values are enumerated by value when they occur
#: next to abstracted variables; wider ranges count as unbounded
ENUM_LIMIT = 256


def enumerable(v: Variable) -> bool:
    """A bool or a range of at most :data:`ENUM_LIMIT` values."""
    return isinstance(v.sort, BoolSort) or (
        isinstance(v.sort, RangeSort) and v.sort.size <= ENUM_LIMIT
    )


def abstractable(v: Variable) -> bool:
    """An unbounded ``int`` or a range too wide to enumerate."""
    return isinstance(v.sort, IntSort) or (
        isinstance(v.sort, RangeSort) and v.sort.size > ENUM_LIMIT
    )


def where(c: Command) -> str:
    """``FILE:LINE`` of a command, or its process and index."""
    if c.span is not None:
        return f"{c.span.file}:{c.span.line}"
    return f"command {c.index} of {c.process}"


def negation_of(e: Expr) -> Expr | None:
    """The comparison equivalent to ``!e`` (``x < y`` for ``x >= y``), or ``None``."""
    if isinstance(e, Op) and e.op in NEGATED_COMPARISON:
        return Op(NEGATED_COMPARISON[e.op], e.args)
    return None


@dataclass(frozen=True)
class VariableRole:
    """One variable's fate: ``abstracted`` or kept concrete, and the reason."""

    name: str
    abstracted: bool
    reason: str


@dataclass(frozen=True)
class TrackedPredicate:
    """A predicate the abstract state records: ``origin`` is ``predicate`` (given by the user or
    the model), ``property atom`` or ``end-state atom``."""

    expr: Expr
    origin: str

    @property
    def text(self) -> str:
        return format_expr(self.expr)


@dataclass(frozen=True)
class Partition:
    """The outcome of the partial-abstraction analysis (see module docstring)."""

    abstracted: frozenset[str]
    roles: tuple[VariableRole, ...]
    predicates: tuple[TrackedPredicate, ...]
    untracked: tuple[tuple[Expr, str], ...]

    def index(self, e: Expr) -> int | None:
        """The position of ``e`` among the tracked predicates, or ``None``."""
        for k, p in enumerate(self.predicates):
            if p.expr == e:
                return k
        return None

    def is_concrete(self, e: Expr) -> bool:
        """``e`` reads no abstracted variable."""
        return not free_vars(e) & self.abstracted

    def report(self) -> list[str]:
        """Human-readable lines: abstracted variables, kept ones with reasons, predicates."""
        lines: list[str] = []
        absd = [r for r in self.roles if r.abstracted]
        if absd:
            lines.append("abstracted: " + "; ".join(f"{r.name} ({r.reason})" for r in absd))
        else:
            lines.append("abstracted: none (every variable is concrete: the search is exact)")
        kept = [r for r in self.roles if not r.abstracted]
        if kept:
            lines.append("concrete: " + "; ".join(f"{r.name} ({r.reason})" for r in kept))
        for k, p in enumerate(self.predicates):
            lines.append(f"tracked predicate p{k}: {p.text} ({p.origin})")
        for e, why in self.untracked:
            lines.append(f"predicate {format_expr(e)} not tracked: {why}")
        return lines


def _mentions(predicates: Sequence[Expr]) -> dict[str, Expr]:
    out: dict[str, Expr] = {}
    for p in predicates:
        for n in sorted(free_vars(p)):
            out.setdefault(n, p)
    return out


def _track(
    predicates: Sequence[Expr], extra: Sequence[tuple[Expr, str]], abstract: set[str]
) -> list[TrackedPredicate]:
    out: list[TrackedPredicate] = []
    seen: set[Expr] = set()
    for p in predicates:
        if free_vars(p) & abstract and p not in seen:
            out.append(TrackedPredicate(p, "predicate"))
            seen.add(p)
    for a, origin in extra:
        if not free_vars(a) & abstract:
            continue
        n = negation_of(a)
        if a in seen or (n is not None and n in seen):
            continue
        out.append(TrackedPredicate(a, origin))
        seen.add(a)
    return out


def _post_terms(tracked: Sequence[TrackedPredicate], c: Command) -> list[Expr]:
    assigned = c.assigned
    subst = c.update_map()
    return [substitute(p.expr, subst) for p in tracked if free_vars(p.expr) & assigned]


def partition(
    system: System,
    predicates: Sequence[Expr],
    property_atoms: Iterable[tuple[Expr, str]] = (),
) -> Partition:
    """Decide which variables to abstract (see module docstring).

    ``predicates`` are the seed predicates (bool IR formulas over ``system``'s variables);
    ``property_atoms`` pairs atoms of the checked properties / valid-end condition with their
    origin. Raises ``ModelError`` (located at the predicate) for a predicate that could divide by
    zero, since its value would be undefined in some states.
    """
    for p in predicates:
        if may_raise(p):
            raise ModelError(
                f"predicate {format_expr(p)} may divide by zero; predicates must be defined in "
                "every state",
                p.span,
                system.file,
            )
    extra = list(property_atoms)
    pcs = {p.pc for p in system.processes if p.pc is not None}
    mentioned = _mentions(predicates)
    reasons: dict[str, str] = {}
    abstract: set[str] = set()
    for v in system.variables:
        if v.name in pcs:
            reasons[v.name] = "program counter"
        elif v.name not in mentioned:
            reasons[v.name] = "no predicate mentions it"
        elif not abstractable(v):
            kind = "bool" if isinstance(v.sort, BoolSort) else f"range {v.sort}"
            reasons[v.name] = f"bounded ({kind}): enumerated by value, never abstracted"
        else:
            abstract.add(v.name)
            reasons[v.name] = f"mentioned by predicate {format_expr(mentioned[v.name])}"
    by_name = system.by_name

    def unbounded_concrete(names: Iterable[str]) -> list[str]:
        return sorted(n for n in names if n not in abstract and not enumerable(by_name[n]))

    changed = True
    while changed:
        changed = False

        def demote(names: Iterable[str], reason: str) -> None:
            nonlocal changed
            for n in sorted(set(names) & abstract):
                abstract.discard(n)
                reasons[n] = reason
                changed = True

        # taint: an assignment to a concrete variable reads only concrete variables
        for c in system.commands:
            for target, rhs in c.updates:
                if target not in abstract and free_vars(rhs) & abstract:
                    demote(free_vars(rhs), f"flows into concrete variable {target} ({where(c)})")
        tracked = _track(predicates, extra, abstract)
        # a tracked atom of a property that may divide by zero has no truth value in some
        # states (the compiled property check counts that as a violation): it is decided on
        # concrete values, never as a predicate the solver's unspecified x / 0 would guess
        # (assertions are the abstraction's own business: effect.py refuses one that can fail)
        for tp in tracked:
            if may_raise(tp.expr) and not tp.origin.startswith("atom of assertion"):
                demote(
                    free_vars(tp.expr),
                    f"occurs in {format_expr(tp.expr)}, which may divide by zero ({tp.origin})",
                )
        tracked = _track(predicates, extra, abstract)
        # mixing: a formula the abstraction decides may not read unbounded concrete variables
        terms: list[tuple[Expr, str]] = [(p.expr, f"{p.origin} {p.text}") for p in tracked]
        for c in system.commands:
            reads = command_reads(c)
            posts = _post_terms(tracked, c)
            if not (reads & abstract) and not posts:
                continue
            conds = [c.guard, *(e for _, e in c.asserts), *(e for e, _ in c.errors)]
            for t in [*(a for x in [*conds, *posts] for a in atoms(x))]:
                terms.append((t, where(c)))
        for t, context in terms:
            fv = free_vars(t)
            if not fv & abstract:
                continue
            if any(isinstance(x, Op) and x.op in BIT_OPS for x in subexpressions(t)):
                demote(
                    fv,
                    f"occurs in {format_expr(t)} with a bitwise operator the solver does not "
                    f"take ({context})",
                )
                continue
            unb = unbounded_concrete(fv)
            if unb:
                demote(
                    fv,
                    f"occurs with unbounded concrete variable {unb[0]} in {format_expr(t)} "
                    f"({context})",
                )
    tracked = _track(predicates, extra, abstract)
    untracked: list[tuple[Expr, str]] = []
    seen: set[Expr] = set()
    for p in predicates:
        if p in seen:
            continue
        seen.add(p)
        if not free_vars(p) & abstract:
            untracked.append((p, "all its variables are concrete (decided by their values)"))
    roles = tuple(
        VariableRole(v.name, v.name in abstract, reasons[v.name]) for v in system.variables
    )
    return Partition(frozenset(abstract), roles, tuple(tracked), tuple(untracked))
