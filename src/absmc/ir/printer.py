"""Pretty-printing of IR expressions and Systems back to GCL syntax.

``format_expr`` inserts only the parentheses the GCL grammar needs, so that parsing the output
gives back an equal expression; ``format_system`` prints a whole System as a ``.gcl`` model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from absmc.ir.expr import Const, Expr, Op, Var
from absmc.ir.sorts import BoolSort, IntSort, RangeSort, Sort

if TYPE_CHECKING:
    from absmc.ir.system import System

# precedence levels, low to high; unary and atoms bind tightest
_PREC = {
    "ite": 0,
    "=>": 1,
    "||": 2,
    "&&": 3,
    "|": 3.2,
    "^": 3.4,
    "&": 3.6,
    "==": 4,
    "!=": 4,
    "<": 4,
    "<=": 4,
    ">": 4,
    ">=": 4,
    "<<": 4.5,
    ">>": 4.5,
    "+": 5,
    "-": 5,
    "*": 6,
    "/": 6,
    "%": 6,
    "neg": 7,
    "!": 7,
    "~": 7,
}
_ATOM = 8


def _prec(e: Expr) -> float:
    if isinstance(e, Op):
        return _PREC[e.op]
    if isinstance(e, Const) and e.value < 0 and not isinstance(e.const_sort, BoolSort):
        return _PREC["neg"]
    return _ATOM


def format_expr(e: Expr) -> str:
    """``e`` in GCL concrete syntax with minimal parentheses."""
    if isinstance(e, Const):
        if isinstance(e.const_sort, BoolSort):
            return "true" if e.value else "false"
        return str(e.value)
    if isinstance(e, Var):
        return e.name
    assert isinstance(e, Op)
    p = _PREC[e.op]

    def sub(x: Expr, min_prec: float) -> str:
        s = format_expr(x)
        return f"({s})" if _prec(x) < min_prec else s

    if e.op == "neg":
        return "-" + sub(e.args[0], p + (1 if _prec(e.args[0]) == p else 0))
    if e.op in ("!", "~"):
        return e.op + sub(e.args[0], p)
    if e.op == "ite":
        c, a, b = e.args
        return f"{sub(c, 1)} ? {sub(a, 1)} : {sub(b, 0)}"
    if e.op == "=>":  # right associative
        return f"{sub(e.args[0], p + 1)} => {sub(e.args[1], p)}"
    if e.op in ("&&", "||"):
        return f" {e.op} ".join(sub(a, p + 1) for a in e.args)
    if p == 4:  # comparisons are non-associative
        return f"{sub(e.args[0], p + 1)} {e.op} {sub(e.args[1], p + 1)}"
    # left-associative arithmetic
    return f"{sub(e.args[0], p)} {e.op} {sub(e.args[1], p + 1)}"


def format_sort(sort: Sort) -> str:
    """GCL syntax of a sort: ``bool``, ``int`` or ``lo..hi``."""
    if isinstance(sort, BoolSort):
        return "bool"
    if isinstance(sort, IntSort):
        return "int"
    assert isinstance(sort, RangeSort)
    return f"{sort.lo}..{sort.hi}"


def format_system(system: System) -> str:
    """The whole System as a GCL model (declarations, processes, predicates, properties)."""
    lines: list[str] = []
    if system.name:
        lines.append(f"// model {system.name}")
    for v in system.variables:
        init = v.init
        if isinstance(v.sort, BoolSort):
            init_s = "true" if init else "false"
        else:
            init_s = str(init)
        lines.append(f"var {v.name} : {format_sort(v.sort)} = {init_s};")
    for proc in system.processes:
        lines.append(f"process {proc.name} {{")
        for c in system.commands:
            if c.process != proc.name:
                continue
            label = f"{c.label}: " if c.label else ""
            lines.append(f"  {label}{format_expr(c.guard)} -> {c.format_updates()};")
        lines.append("}")
    for pred in system.predicates:
        lines.append(f"predicate {format_expr(pred)};")
    for prop in system.properties:
        if prop.kind in ("invariant", "unreachable"):
            assert prop.expr is not None
            lines.append(f"{prop.kind} {prop.name}: {format_expr(prop.expr)};")
    return "\n".join(lines) + "\n"
