"""Abstraction of one guarded command from ONE SMT enumeration (paper 004, §3.4 and Fig. 6).

For a command that touches the abstraction (reads an abstracted variable, or assigns a variable
of a tracked predicate), a single allSAT call (:meth:`absmc.logic.Prover.all_models`) enumerates
every feasible combination of

* the *enumerated context*: the values of bounded concrete variables that occur next to
  abstracted ones (one value at a time, §3.3), and concrete atoms the post-state depends on;
* the *pre-state* values of the relevant tracked predicates (:func:`relevant`);
* the values of the other guard atoms over abstracted variables (*auxiliary* atoms);
* the *post-state* values of the tracked predicates the command may change: each predicate with
  the command's assignments substituted (the effect term of Fig. 5).

A *valuation* is the enumerated context plus the pre-state; the table maps each valuation to its
rows ``(auxiliary values, post-state)``. The guard and the model-error condition are *not*
enumerated: for each row they are evaluated on the known atoms, leaving a condition over the
remaining *free* concrete atoms (``pc1 == 0`` and the like), which the abstract command tests
directly — concrete information stays concrete, and the enumeration does not multiply by the
control state. A row is *enabled* where its guard condition holds and its error condition does
not, *fails* where the error condition holds, and is *disabled* otherwise.

Both abstractions are read off the same table (the paper's point: the over- and
under-abstraction share the SMT results; see ``build.py``):

* **may** (over-approximation): one abstract command per possible post-state, enabled where some
  row reaching it is enabled;
* **must** (under-approximation): enabled where *every* row of every represented valuation is
  enabled (the under-approximated guard), with the post-states flattened by consensus ⊗ into
  one post-state in which a predicate is unknown (⊥) where they disagree.

Promela's transition assertions (``Command.asserts`` of the checked ``assert`` properties) and
model-error conditions (``Command.errors``, tested before the guard) are abstracted the same
way: their atoms over abstracted variables are auxiliary atoms, and each row gets, besides its
*enabled* and *fails* conditions, one *violation* condition per assertion (the may-abstraction
asks whether some row violates it, the must-abstraction whether every row does). A command
with ``errors`` keeps its whole guard in the rows (nothing is peeled off: the error conditions
are evaluated whether or not the guard holds).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from absmc.codegen.plan import may_raise
from absmc.engines.fourvalued.bilattice import Belnap, all_of, any_of, consensus_all
from absmc.engines.fourvalued.partition import Partition, negation_of
from absmc.engines.fourvalued.semantics import (
    assert_violation,
    can_fail,
    command_reads,
    defined,
    effective_value,
    error_condition,
    range_ok,
)
from absmc.ir.expr import (
    BIT_OPS,
    FALSE,
    TRUE,
    Const,
    Expr,
    Op,
    atoms,
    conjuncts,
    const,
    free_vars,
    neg,
    op,
    subexpressions,
    substitute,
)
from absmc.ir.printer import format_expr
from absmc.ir.sorts import BoolSort, RangeSort
from absmc.ir.span import ModelError
from absmc.ir.system import Command, System
from absmc.logic import Prover

Valuation = tuple[bool, ...]
Row = tuple[Valuation, Valuation]  # (auxiliary atom values, post-state values)


class AbstractionIncomplete(Exception):
    """The solver could not finish an enumeration (``unknown`` or a time limit): the abstraction
    would be unsound, so no verdict may be drawn from it."""


#: what a row yields: (enabled, fails, post-state, one violation condition per assertion)
RowConditions = tuple[Expr, Expr, Valuation, tuple[Expr, ...]]


def specialize(e: Expr, known: Mapping[Expr, bool]) -> Expr:
    """``e`` with the atoms of ``known`` (or their negated comparisons) replaced by their truth
    values and the boolean structure folded; the result only mentions the other atoms."""
    if isinstance(e, Const):
        return e
    if isinstance(e, Op):
        if e.op == "&&":
            parts = [specialize(a, known) for a in e.args]
            return all_of(parts)
        if e.op == "||":
            parts = [specialize(a, known) for a in e.args]
            return any_of(parts)
        if e.op == "!":
            return neg(specialize(e.args[0], known))
        if e.op == "=>":
            return specialize(Op("||", (Op("!", (e.args[0],)), e.args[1])), known)
    hit = known.get(e)
    if hit is not None:
        return TRUE if hit else FALSE
    n = negation_of(e)
    if n is not None:
        hit = known.get(n)
        if hit is not None:
            return FALSE if hit else TRUE
    return e


@dataclass
class CommandAbstraction:
    """The shared SMT result for one concrete command (see module docstring).

    ``peeled``: conjuncts of the guard over concrete variables, never failing, kept verbatim;
    ``concrete_updates``: assignments to concrete variables (exact, by the taint analysis);
    ``ctx`` and ``pre``: what a valuation's positions are (enumerated context terms, then
    tracked-predicate indices); ``aux``: the auxiliary guard atoms; ``post``: the tracked
    predicates the command may change; ``guard``/``error``: the rest of the guard and the
    model-error condition (``None`` when the command cannot fail); ``asserts``: the command's
    checked assertions (property name, condition) and ``violations`` the condition under which
    each is violated (:func:`~absmc.engines.fourvalued.semantics.assert_violation`); ``rows``:
    the table. ``models`` enumerated assignments cost ``checks`` solver calls and ``time_s``
    seconds.
    """

    command: Command
    peeled: Expr
    concrete_updates: tuple[tuple[str, Expr], ...]
    ctx: tuple[Expr, ...]
    pre: tuple[int, ...]
    aux: tuple[Expr, ...]
    post: tuple[int, ...]
    guard: Expr
    error: Expr | None
    tracked: tuple[Expr, ...]
    rows: dict[Valuation, list[Row]]
    models: int
    checks: int
    time_s: float
    asserts: tuple[tuple[str, Expr], ...] = ()
    violations: tuple[Expr, ...] = ()
    _conditions: dict[Valuation, list[RowConditions]] = field(default_factory=dict, repr=False)

    @property
    def fails(self) -> bool:
        """The command can be a model error in some state."""
        return self.error is not None

    def _known(self, v: Valuation, a: Valuation) -> dict[Expr, bool]:
        known = dict(zip(self.ctx, v[: len(self.ctx)], strict=True))
        for k, b in zip(self.pre, v[len(self.ctx) :], strict=True):
            known[self.tracked[k]] = b
        known.update(zip(self.aux, a, strict=True))
        return known

    def conditions(self, v: Valuation) -> list[RowConditions]:
        """For each row of ``v``: (enabled, fails, post-state, violations), the conditions over
        the free concrete atoms. All are safe to evaluate: ``enabled`` tests the error condition
        before the guard, and the error and violation conditions test definedness first."""
        hit = self._conditions.get(v)
        if hit is not None:
            return hit
        out: list[RowConditions] = []
        for a, p in self.rows[v]:
            known = self._known(v, a)
            g = specialize(self.guard, known)
            viols = tuple(specialize(x, known) for x in self.violations)
            if self.error is None:
                out.append((g, FALSE, p, viols))
                continue
            e = specialize(self.error, known)
            en = FALSE if g == FALSE or e == TRUE else all_of([neg(e), g])
            out.append((en, e, p, viols))
        self._conditions[v] = out
        return out

    def flattened(self, v: Valuation) -> tuple[Belnap, ...]:
        """The consensus ⊗ of the post-states of ``v``'s rows, one value per changed
        predicate."""
        posts = {p for _, p in self.rows[v]}
        return tuple(
            consensus_all(Belnap.from_bool(p[i]) for p in posts) for i in range(len(self.post))
        )


def _bitwise(e: Expr) -> bool:
    return any(isinstance(x, Op) and x.op in BIT_OPS for x in subexpressions(e))


def _split_guard(guard: Expr, abstracted: frozenset[str]) -> tuple[list[Expr], list[Expr]]:
    """Split a guard into the conjuncts evaluated directly (over concrete variables only, never
    failing) and the rest. When a conjunct can fail, only a prefix is split off, so that the
    left-to-right evaluation order (and its model errors) is kept."""
    parts = conjuncts(guard)
    failing = any(may_raise(x) for x in parts)
    peeled: list[Expr] = []
    rest: list[Expr] = []
    for x in parts:
        direct = not (free_vars(x) & abstracted) and not may_raise(x)
        if direct and not (failing and rest):
            peeled.append(x)
        else:
            rest.append(x)
    return peeled, rest


def _enumerated(
    system: System, abstracted: frozenset[str], terms: Sequence[Expr]
) -> tuple[list[str], list[Expr]]:
    """Bounded concrete variables occurring in atoms with abstracted ones, and the concrete
    atoms of ``terms`` (made safe to evaluate when they could fail)."""
    names: list[str] = []
    direct: list[Expr] = []
    for a in (a for t in terms for a in atoms(t)):
        fv = free_vars(a)
        if fv & abstracted:
            names += [n for n in sorted(fv - abstracted) if n not in names]
        else:
            for t in [defined(a), all_of([defined(a), a])] if may_raise(a) else [a]:
                if t not in direct and t != TRUE:
                    direct.append(t)
    return names, direct


def _values(system: System, names: Sequence[str]) -> list[Expr]:
    out: list[Expr] = []
    for n in names:
        v = system.by_name[n]
        if isinstance(v.sort, BoolSort):
            out.append(v.ref())
        else:
            assert isinstance(v.sort, RangeSort)
            out += [op("==", v.ref(), const(k)) for k in range(v.sort.lo, v.sort.hi + 1)]
    return out


def relevant(part: Partition, terms: Sequence[Expr], assigned: frozenset[str]) -> tuple[int, ...]:
    """The tracked predicates whose pre-state values the enumeration uses: those all of whose
    abstracted variables occur in ``terms`` (the guard, error condition and post-state terms)
    or are ``assigned`` (their old values relate the others: ``0 < n1 && n1 < MAX`` gives
    ``0 < MAX`` after ``n1 := 0``). A predicate over some other abstracted variable only
    constrains these through that variable; leaving it out loses no soundness (the
    may-abstraction grows, the must one shrinks) and keeps the enumeration from multiplying by
    unrelated predicates (Fischer: process 1's steps ignore process 2's deadline)."""
    used = (set().union(*(free_vars(t) for t in terms)) | assigned) & part.abstracted
    return tuple(
        k
        for k, p in enumerate(part.predicates)
        if (mine := free_vars(p.expr) & part.abstracted) and mine <= used
    )


def _domains(system: System, exprs: Sequence[Expr]) -> list[Expr]:
    names = sorted(set().union(*(free_vars(e) for e in exprs)))
    return [system.domain_constraint(n) for n in names if system.domain_constraint(n) != TRUE]


def checked_asserts(command: Command, checked: frozenset[str]) -> tuple[tuple[str, Expr], ...]:
    """The command's assertions of the checked ``assert`` properties (the compiled code checks
    only those)."""
    return tuple((n, e) for n, e in command.asserts if n in checked)


def abstract_command(
    system: System,
    part: Partition,
    command: Command,
    prover: Prover,
    checked: frozenset[str] = frozenset(),
) -> CommandAbstraction:
    """Enumerate ``command``'s abstract effect with one allSAT call (see module docstring).
    ``checked`` names the ``assert`` properties being checked.

    Raises :class:`AbstractionIncomplete` when the solver cannot finish the enumeration, and
    ``ModelError`` (at the command) for an assertion that could not be abstracted soundly: one
    whose evaluation can divide by zero, in a command that can also leave an error range.
    """
    t0 = time.monotonic()
    calls0 = prover.stats.calls
    absd = part.abstracted
    tracked = tuple(p.expr for p in part.predicates)
    assigned = command.assigned
    post = tuple(k for k, p in enumerate(tracked) if free_vars(p) & assigned)
    asserts = checked_asserts(command, checked)
    if asserts and (range_ok(system, command) != TRUE or any(may_raise(e) for _, e in asserts)):
        raise ModelError(
            "four-valued abstraction: an assertion that can divide by zero, or in a statement that "
            "can also leave an error range, is not abstracted (keep its variables concrete)",
            command.span,
            system.file,
        )
    if command.errors:
        # the error conditions are tested before the guard: keep the whole guard in the rows
        peeled: list[Expr] = []
        rest = list(conjuncts(command.guard))
    else:
        peeled, rest = _split_guard(command.guard, absd)
    guard = all_of(rest)
    error = (
        error_condition(system, command, guard, asserts)
        if can_fail(system, command, asserts)
        else None
    )
    violations = tuple(assert_violation(command, guard, asserts, k) for k in range(len(asserts)))
    subst = {n: effective_value(system, n, e) for n, e in command.updates}
    post_terms = [substitute(tracked[k], subst) for k in post]
    cond_terms = [guard, *([error] if error is not None else []), *violations]
    pre = relevant(part, [*cond_terms, *post_terms], assigned)
    # context: enumerated bounded variables, and concrete atoms the post-state depends on; the
    # other concrete atoms of the guard / error / violation conditions stay free (tested by the
    # command)
    names, post_direct = _enumerated(system, absd, post_terms)
    more, _ = _enumerated(system, absd, cond_terms)
    names += [n for n in more if n not in names]
    ctx = [t for t in post_direct if not free_vars(t) <= set(names)] + _values(system, names)
    # auxiliary atoms: guard / error atoms over abstracted variables that are not tracked
    known_atoms = {*ctx, *(tracked[k] for k in pre)}
    aux: list[Expr] = []
    for a in (a for t in cond_terms for a in atoms(t)):
        if not free_vars(a) & absd:
            continue
        n = negation_of(a)
        if a in known_atoms or (n is not None and n in known_atoms) or a in aux:
            continue
        aux.append(a)
    projection: list[Expr] = [*ctx, *(tracked[k] for k in pre), *aux, *post_terms]
    # the peeled conjuncts only narrow the enumeration (the abstract command tests them again):
    # those with a bitwise operator, which the solver does not take, are left out (sound: more
    # valuations are enumerated)
    narrowing = [x for x in peeled if not _bitwise(x)]
    formula = all_of([*_domains(system, [*projection, *narrowing]), *narrowing])
    found, complete = prover.all_models(formula, projection)
    if not complete:
        raise AbstractionIncomplete(
            f"the solver could not enumerate the effect of '{command.text()}' "
            f"({format_expr(formula)}): answer unknown"
        )
    width = len(ctx) + len(pre)
    rows: dict[Valuation, list[Row]] = {}
    for m in found:
        rows.setdefault(m[:width], []).append((m[width : width + len(aux)], m[width + len(aux) :]))
    return CommandAbstraction(
        command=command,
        peeled=all_of(peeled),
        concrete_updates=tuple((n, e) for n, e in command.updates if n not in absd),
        ctx=tuple(ctx),
        pre=pre,
        aux=tuple(aux),
        post=post,
        guard=guard,
        error=error,
        tracked=tracked,
        rows=rows,
        models=len(found),
        checks=prover.stats.calls - calls0,
        time_s=time.monotonic() - t0,
        asserts=asserts,
        violations=violations,
    )


def touches_abstraction(part: Partition, command: Command) -> bool:
    """The command reads an abstracted variable (in its guard, updates, assertions or error
    conditions) or assigns a variable of a tracked predicate (otherwise it is copied unchanged
    into both abstractions)."""
    reads = command_reads(command)
    if reads & part.abstracted:
        return True
    assigned = command.assigned
    return any(free_vars(p.expr) & assigned for p in part.predicates)
