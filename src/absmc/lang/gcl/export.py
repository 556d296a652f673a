"""Export an ``ir.System`` as a GCL model (``absmc export MODEL --to gcl``).

GCL has guarded commands with simultaneous updates over bools, unbounded ints and ranges whose
overflow is an error. A System that needs more — exclusive control (Promela's ``atomic``),
``timeout``, transition assertions, error conditions, wrap-around ranges (Promela's ``byte``,
``short``, ``int``), bitwise operators — cannot be written as GCL without changing its meaning:
:func:`to_gcl` refuses it with an ``ExportError`` naming the feature. Names that are not GCL
identifiers (``P0(0)._p``, ``x[1]``, ``assert@8``) are renamed.
"""

from __future__ import annotations

from dataclasses import replace

from absmc.errors import ExportError
from absmc.ir.arrays import expand_system
from absmc.ir.expr import Op, subexpressions
from absmc.ir.printer import format_system
from absmc.ir.rename import identifier_map, rename_variables
from absmc.ir.sorts import RangeSort
from absmc.ir.system import Command, System

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


def with_gcl_names(system: System) -> System:
    """``system`` with variables, processes, labels and properties renamed to GCL identifiers
    where they are not (:mod:`absmc.ir.rename`)."""
    used: set[str] = set()
    renamed = rename_variables(
        system, identifier_map((v.name for v in system.variables), _KEYWORDS, used)
    )
    procs = identifier_map((p.name for p in system.processes), _KEYWORDS, used)
    props = identifier_map((p.name for p in system.properties), _KEYWORDS, used)
    labels: dict[str, set[str]] = {}  # labels are unique per process

    def label(c: Command) -> str | None:
        if c.label is None:
            return None
        taken = labels.setdefault(c.process, set())
        return identifier_map([c.label], _KEYWORDS, taken)[c.label]

    return replace(
        renamed,
        processes=tuple(replace(p, name=procs[p.name], pc=None) for p in renamed.processes),
        commands=tuple(
            replace(c, process=procs[c.process], label=label(c)) for c in renamed.commands
        ),
        properties=tuple(replace(p, name=props[p.name]) for p in renamed.properties),
    )


def to_gcl(system: System) -> str:
    """``system`` as GCL text. Raises ``ExportError`` (a ``ValueError``) when GCL cannot
    express it (see :func:`gcl_obstacle`)."""
    obstacle = gcl_obstacle(system)
    if obstacle is not None:
        raise ExportError(f"GCL cannot express this model's {obstacle}", "gcl")
    return format_system(with_gcl_names(expand_system(system)))
