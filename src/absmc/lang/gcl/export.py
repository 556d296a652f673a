"""Export an ``ir.System`` as a GCL model (``absmc export MODEL --to gcl``).

GCL has guarded commands with simultaneous updates over bools, unbounded ints and ranges whose
overflow is an error. A System that needs more — exclusive control (Promela's ``atomic``),
``timeout``, transition assertions, error conditions, wrap-around ranges (Promela's ``byte``,
``short``, ``int``), bitwise operators — cannot be written as GCL without changing its meaning:
:func:`to_gcl` refuses it with a ``ValueError`` naming the feature. Names that are not GCL
identifiers (``P0(0)._p``, ``x[1]``, ``assert@8``) are renamed.
"""

from __future__ import annotations

import re
from dataclasses import replace

from absmc.ir.expr import Op, Var, subexpressions, substitute
from absmc.ir.printer import format_system
from absmc.ir.sorts import RangeSort
from absmc.ir.system import System

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEYWORDS = frozenset(
    {
        "var",
        "int",
        "bool",
        "process",
        "skip",
        "true",
        "false",
        "predicate",
        "invariant",
        "unreachable",
    }
)
_BITWISE = frozenset({"&", "|", "^", "<<", ">>", "~"})


def gcl_obstacle(system: System) -> str | None:
    """Why ``system`` cannot be written as GCL with the same meaning, or ``None``."""
    for c in system.commands:
        if c.exclusive is not None:
            return "atomic sequences (exclusive control)"
        if "timeout" in c.flags:
            return "timeout"
        if c.asserts:
            return "assertions"
        if c.errors:
            return "error conditions (e.g. array bounds)"
    for v in system.variables:
        if isinstance(v.sort, RangeSort) and v.sort.overflow == "wrap":
            return f"wrap-around integers ({v.name} : {v.sort})"
    exprs = [c.guard for c in system.commands] + [e for c in system.commands for _, e in c.updates]
    exprs += [p.expr for p in system.properties]
    for e in exprs:
        for x in subexpressions(e):
            if isinstance(x, Op) and x.op in _BITWISE:
                return f"bitwise operator '{x.op}'"
    if system.valid_end is not None:
        return "valid end states"
    return None


def _identifier(name: str, used: set[str]) -> str:
    base = re.sub(r"\W", "_", name)
    if not _IDENT.fullmatch(base) or base in _KEYWORDS:
        base = "_" + base
    out, k = base, 1
    while out in used:
        out, k = f"{base}_{k}", k + 1
    used.add(out)
    return out


def with_gcl_names(system: System) -> System:
    """``system`` with variables, processes, labels and properties renamed to GCL identifiers
    where they are not (unchanged names stay)."""
    used: set[str] = set()
    var_names = {v.name: _identifier(v.name, used) for v in system.variables}
    proc_names = {p.name: _identifier(p.name, used) for p in system.processes}
    prop_names = {p.name: _identifier(p.name, used) for p in system.properties}
    ren = {old: Var(new, system.by_name[old].sort) for old, new in var_names.items()}
    labels: dict[str, set[str]] = {}  # labels are unique per process
    commands = tuple(
        replace(
            c,
            process=proc_names[c.process],
            label=_identifier(c.label, labels.setdefault(c.process, set())) if c.label else None,
            guard=substitute(c.guard, ren),
            updates=tuple((var_names[n], substitute(e, ren)) for n, e in c.updates),
        )
        for c in system.commands
    )
    return replace(
        system,
        variables=tuple(replace(v, name=var_names[v.name]) for v in system.variables),
        processes=tuple(replace(p, name=proc_names[p.name], pc=None) for p in system.processes),
        commands=commands,
        properties=tuple(
            replace(p, name=prop_names[p.name], expr=substitute(p.expr, ren))
            for p in system.properties
        ),
        predicates=tuple(substitute(e, ren) for e in system.predicates),
    )


def to_gcl(system: System) -> str:
    """``system`` as GCL text. Raises ``ValueError`` when GCL cannot express it (see
    :func:`gcl_obstacle`)."""
    obstacle = gcl_obstacle(system)
    if obstacle is not None:
        raise ValueError(f"GCL cannot express this model's {obstacle}; export it --to promela")
    return format_system(with_gcl_names(system))
