"""Selection help and slicing (paper 001, §5.1-5.2).

Bandera's dependence-based methodology: (II) the variables a property refers to must be
abstracted so that its propositions can still be decided; (III) the variables they are data
and control dependent on, through the *controlling conditionals*, suggest further variables;
(IV) the variables that occur most often in those conditionals have the broadest impact. The
comparisons in the conditionals suggest a domain (``x == 0`` and ``x > 0`` suggest signs,
``y % 2 == 0`` modulo(2), ...).

Over the IR the dependences are those of guarded commands: a command that assigns a relevant
variable makes the variables of its right-hand side relevant (data dependence) and those of its
guard (control dependence: the guard is the conditional controlling the assignment).

The same closure gives a cone-of-influence *slice*: the commands that assign no relevant
variable, and the variables that are not relevant, cannot change what the property observes
and are removed (an update that may fail — a division, a range check — stays with what it
reads, since a failing command does not execute). The slice preserves the selected
``invariant``/``unreachable`` properties, not deadlocks or model errors elsewhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from absmc.codegen.plan import may_raise
from absmc.engines.typeabs.infer import is_data, value_vars
from absmc.errors import UsageError
from absmc.ir.arrays import expand_selects, expand_system
from absmc.ir.expr import (
    COMPARE_OPS,
    SWAPPED_COMPARISON,
    Const,
    Expr,
    Op,
    Var,
    as_const,
    atoms,
    free_vars,
    subexpressions,
)
from absmc.ir.printer import format_expr
from absmc.ir.sorts import RangeSort
from absmc.ir.system import Command, Property, System


@dataclass
class Dependence:
    """The dependence closure of some properties: ``relevant`` variables (in declaration
    order), the ``controlling`` commands (those that assign a relevant variable; their guards
    are the controlling conditionals), and for each relevant variable the relevant variables
    its assignments read (``data``) and the guards that control them (``control``)."""

    roots: tuple[str, ...]
    relevant: tuple[str, ...]
    controlling: tuple[int, ...]
    data: dict[str, set[str]] = field(default_factory=dict)


def _may_fail(system: System, name: str, rhs: Expr) -> bool:
    sort = system.by_name[name].sort
    if may_raise(rhs):
        return True
    if isinstance(sort, RangeSort) and sort.overflow == "error":
        if isinstance(rhs, Const) and sort.contains(rhs.value):
            return False
        return not (isinstance(rhs, Var) and system.by_name[rhs.name].sort == sort)
    return False


def dependence(
    system: System, properties: Sequence[Property], for_slice: bool = False
) -> Dependence:
    """The dependence closure of ``properties`` (see :class:`Dependence`). With ``for_slice``
    the updates of a relevant command that may fail are relevant too (with their targets)."""
    roots: set[str] = set()
    for p in properties:
        roots |= free_vars(p.expr)
    relevant = set(roots)
    data: dict[str, set[str]] = {}
    controlling: set[int] = set()
    changed = True
    while changed:
        changed = False
        for c in system.commands:
            assigned = c.assigned & relevant
            if not assigned:
                continue
            controlling.add(c.index)
            new = set(free_vars(c.guard))
            for name, rhs in c.updates:
                if name in relevant:
                    reads = set(free_vars(rhs))
                    data.setdefault(name, set()).update(reads)
                    new |= reads
                elif for_slice and _may_fail(system, name, rhs):
                    new |= free_vars(rhs) | {name}
            if not new <= relevant:
                relevant |= new
                changed = True
    order = [v.name for v in system.variables]
    return Dependence(
        tuple(v for v in order if v in roots),
        tuple(v for v in order if v in relevant),
        tuple(sorted(controlling)),
        data,
    )


@dataclass
class Slice:
    """A cone-of-influence slice: the sliced System and what was removed."""

    system: System
    removed_commands: tuple[int, ...]
    removed_variables: tuple[str, ...]


def uses_control_fields(system: System) -> bool:
    """True when some command has ``exclusive`` or the ``timeout`` flag: whether a command is
    enabled then depends on the other commands, which a slice removes."""
    return any(c.exclusive is not None or "timeout" in c.flags for c in system.commands)


def slice_system(system: System, properties: Sequence[Property]) -> Slice:
    """The slice of ``system`` for ``properties`` (module docstring): only the commands that
    assign a relevant variable, only relevant variables and updates, only ``properties``
    (commands keep their assertions and error conditions). Raises ``UsageError`` for a System
    with exclusive control or ``timeout`` (Promela's ``atomic`` and ``timeout``: removing
    commands would change when the others may run)."""
    system = expand_system(system)  # array reads as case splits (ir.arrays)
    properties = [replace(p, expr=expand_selects(p.expr)) for p in properties]
    if uses_control_fields(system):
        raise UsageError(
            "cannot slice a model with atomic sequences or timeout (removing commands would "
            "change when the others may run)"
        )
    dep = dependence(system, properties, for_slice=True)
    keep = set(dep.relevant)
    commands: list[Command] = []
    removed: list[int] = []
    for c in system.commands:
        if not c.assigned & keep:
            removed.append(c.index)
            continue
        ups = tuple((n, e) for n, e in c.updates if n in keep)
        commands.append(replace(c, updates=ups, index=-1))
    procs = tuple(p for p in system.processes if any(c.process == p.name for c in commands))
    variables = tuple(v for v in system.variables if v.name in keep)
    sliced = System(
        variables,
        procs,
        tuple(commands),
        tuple(properties),
        (),
        f"{system.name}-slice" if system.name else "slice",
        system.file,
        None,
    )
    gone = tuple(v.name for v in system.variables if v.name not in keep)
    return Slice(sliced, tuple(removed), gone)


@dataclass
class Candidate:
    """One integer variable of the dependence closure, for ``absmc abstract --suggest``:
    ``occurrences`` in controlling conditionals (and the property), the comparisons and
    assignments seen, where its values come from, and the suggested domain with the reason."""

    name: str
    role: str
    occurrences: int
    compared: list[str]
    sources: list[str]
    domain: str | None
    reason: str


@dataclass
class Suggestion:
    """What ``absmc abstract --suggest PROPERTY`` reports."""

    property: str
    dependence: Dependence
    candidates: list[Candidate]
    bindings: list[tuple[str, str]]
    #: ``None`` for a model with exclusive control or timeout (see :func:`slice_system`)
    slice: Slice | None


def _comparisons(e: Expr, name: str) -> list[tuple[str, Expr, Expr]]:
    """``(op, operand side of name, other side)`` for comparisons in ``e`` mentioning ``name``
    (normalised so that the side mentioning ``name`` is first)."""
    out: list[tuple[str, Expr, Expr]] = []
    for a in atoms(e):
        if not (isinstance(a, Op) and a.op in COMPARE_OPS):
            continue
        left, right = a.args
        if name in free_vars(left):
            out.append((a.op, left, right))
        elif name in free_vars(right):
            out.append((SWAPPED_COMPARISON[a.op], right, left))
    return out


def _modulus(e: Expr, name: str) -> int | None:
    for x in subexpressions(e):
        if isinstance(x, Op) and x.op == "%" and x.args[0] == Var(name, x.args[0].sort()):
            k = as_const(x.args[1])
            if k is not None and k > 1:
                return k
    return None


def _sources(system: System, name: str) -> set[str]:
    """Integer variables whose values flow (transitively) into ``name``."""
    into: dict[str, set[str]] = {}
    for c in system.commands:
        for n, rhs in c.updates:
            into.setdefault(n, set()).update(value_vars(rhs))
    seen = {name}
    todo = [name]
    while todo:
        v = todo.pop()
        for w in into.get(v, ()):
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return seen


def _suggest_domain(
    system: System, family: set[str], exprs: Sequence[Expr]
) -> tuple[str | None, str]:
    """A domain for the variables of ``family`` (a variable and those it copies) from the
    comparisons in ``exprs`` and the constants assigned to them."""
    consts: set[int] = set()
    ordered = False
    words: list[str] = []
    for v in sorted(family):
        for e in exprs:
            k = _modulus(e, v)
            if k is not None:
                return f"modulo({k})", f"'{v} % {k}' is compared"
            for o, side, other in _comparisons(e, v):
                value = as_const(other)
                if value is not None and side == Var(v, side.sort()):
                    consts.add(value)
                    ordered |= o not in ("==", "!=")
                    words.append(f"{v} {o} {value}")
                elif isinstance(other, Var) and side == Var(v, side.sort()):
                    a, b, sym = v, other.name, o
                    if b < a:  # one spelling per comparison of two variables
                        a, b, sym = b, a, SWAPPED_COMPARISON[o]
                    words.append(f"{a} {sym} {b}")
    assigned: set[int] = set()
    increments = False
    for cmd in system.commands:
        for n, rhs in cmd.updates:
            if n not in family:
                continue
            k = as_const(rhs)
            if k is not None:
                assigned.add(k)
            elif isinstance(rhs, Op) and rhs.op in ("+", "-") and n in free_vars(rhs):
                increments = True
    for v in family:
        if v in system.by_name and is_data(system, v):
            assigned.add(system.by_name[v].init)
    why = ", ".join(dict.fromkeys(words)) or "no comparison with a constant"
    if assigned:
        why += f"; assigned {', '.join(map(str, sorted(assigned)))}"
    if increments:
        why += " and incremented/decremented"
    allc = consts | assigned
    if allc <= {0}:
        return "signs", why
    if not ordered and not increments:
        return f"set({','.join(map(str, sorted(consts or allc)))})", why
    lo, hi = min(allc), max(allc)
    if hi - lo <= 6:
        return f"range({lo},{hi})", why
    return "signs", why + " (a wide range: signs keeps the state space small)"


def suggest(system: System, prop: Property) -> Suggestion:
    """Rank the integer variables the property depends on by their occurrences in the
    controlling conditionals (§5.1 step IV) and suggest domains and bindings (module
    docstring)."""
    system = expand_system(system)  # array reads as case splits (ir.arrays)
    prop = replace(prop, expr=expand_selects(prop.expr))
    dep = dependence(system, [prop])
    guards = [system.commands[i].guard for i in dep.controlling]
    exprs = [prop.expr, *guards]
    candidates: list[Candidate] = []
    for name in dep.relevant:
        if not is_data(system, name):
            continue
        occ = sum(1 for g in guards for a in atoms(g) if name in free_vars(a))
        role = (
            "in the property"
            if name in dep.roots
            else ("in controlling conditionals" if occ else "data source")
        )
        srcs = sorted(_sources(system, name) - {name})
        compared = [
            f"{o} {format_expr(other)}" for e in exprs for o, _, other in _comparisons(e, name)
        ]
        family = {name} | {
            w for w in dep.relevant if is_data(system, w) and name in _sources(system, w)
        }
        domain, reason = _suggest_domain(system, family, exprs)
        candidates.append(
            Candidate(name, role, occ, list(dict.fromkeys(compared)), srcs, domain, reason)
        )
    candidates.sort(key=lambda c: (-(c.occurrences + (c.role == "in the property")), c.name))
    # bind the origins of the values of the important variables (type inference propagates)
    bindings: list[tuple[str, str]] = []
    chosen: set[str] = set()
    by_name = {c.name: c for c in candidates}
    for c in candidates:
        if c.occurrences == 0 and c.role != "in the property":
            continue
        origins = [
            s for s in [c.name, *c.sources] if s in by_name and not _copies_only(system, s)
        ] or [c.name]
        for o in origins:
            if o not in chosen and by_name[o].domain is not None:
                chosen.add(o)
                bindings.append((o, by_name[o].domain or "point"))
    sliced = None if uses_control_fields(system) else slice_system(system, [prop])
    return Suggestion(prop.name, dep, candidates, bindings, sliced)


def _copies_only(system: System, name: str) -> bool:
    """True when every assignment to ``name`` copies another integer variable (its values
    originate elsewhere)."""
    rhss = [rhs for c in system.commands for n, rhs in c.updates if n == name]
    return bool(rhss) and all(
        isinstance(r, Var) and r.name != name and is_data(system, r.name) for r in rhss
    )
