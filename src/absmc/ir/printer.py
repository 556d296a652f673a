"""Pretty-printing of IR expressions and Systems back to GCL syntax.

``format_expr`` inserts only the parentheses the GCL grammar needs, so that parsing the output
gives back an equal expression; ``format_system`` prints a whole System as a ``.gcl`` model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from absmc.ir.expr import Const, Expr, Op, Var
from absmc.ir.sorts import BoolSort, IntSort, RangeSort, Sort
from absmc.ir.walker import ExprWalker

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
    "select": 8,
}
_ATOM = 8


def _prec(e: Expr) -> float:
    if isinstance(e, Op):
        return _PREC[e.op]
    if isinstance(e, Const) and e.value < 0 and not isinstance(e.const_sort, BoolSort):
        return _PREC["neg"]
    return _ATOM


class GclPrinter(ExprWalker[str]):
    """GCL concrete syntax of expressions with minimal parentheses (iterative: any depth)."""

    def __init__(self) -> None:
        super().__init__(transient=True)

    def walk_const(self, e: Const) -> str:
        if isinstance(e.const_sort, BoolSort):
            return "true" if e.value else "false"
        return str(e.value)

    def walk_var(self, e: Var) -> str:
        return e.name

    def walk_neg(self, e: Op, args: list[str]) -> str:
        p = _PREC["neg"]
        q = _prec(e.args[0])
        return "-" + (f"({args[0]})" if q < p + (q == p) else args[0])

    def walk_not(self, e: Op, args: list[str]) -> str:
        return "!" + (f"({args[0]})" if _prec(e.args[0]) < _PREC["!"] else args[0])

    def walk_bitnot(self, e: Op, args: list[str]) -> str:
        return "~" + (f"({args[0]})" if _prec(e.args[0]) < _PREC["~"] else args[0])

    def walk_ite(self, e: Op, args: list[str]) -> str:
        c, a, b = args
        xs = e.args
        if _prec(xs[0]) < 1:
            c = f"({c})"
        if _prec(xs[1]) < 1:
            a = f"({a})"
        return f"{c} ? {a} : {b}"

    def walk_select(self, e: Op, args: list[str]) -> str:
        # not GCL (which has no arrays): exporters expand selects first (ir.arrays)
        return f"select({', '.join(args)})"

    def walk_and(self, e: Op, args: list[str]) -> str:
        return self._junction(e, args)

    def walk_or(self, e: Op, args: list[str]) -> str:
        return self._junction(e, args)

    def _junction(self, e: Op, args: list[str]) -> str:
        limit = _PREC[e.op] + 1
        return f" {e.op} ".join(
            f"({s})" if _prec(x) < limit else s for x, s in zip(e.args, args, strict=True)
        )

    def walk_op(self, e: Op, args: list[str]) -> str:
        # binary: => is right associative, comparisons are non-associative, the others are
        # left associative
        o = e.op
        p = _PREC[o]
        x, y = e.args
        a, b = args
        if _prec(x) < (p if p != 4 and o != "=>" else p + 1):
            a = f"({a})"
        if _prec(y) < (p if o == "=>" else p + 1):
            b = f"({b})"
        return f"{a} {o} {b}"


def format_expr(e: Expr) -> str:
    """``e`` in GCL concrete syntax with minimal parentheses."""
    if isinstance(e, Var):
        return e.name
    return GclPrinter().walk(e)


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
    if system.init_constraint is not None:
        lines.append(f"init: {format_expr(system.init_constraint)};")
    if system.ctl:
        from absmc.ir.ctl import format_ctl

        for cp in system.ctl:
            lines.append(f"ctl {cp.name}: {format_ctl(cp.formula)};")
    return "\n".join(lines) + "\n"
