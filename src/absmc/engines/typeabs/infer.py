"""Abstract type inference (paper 001, §5.3 and §6.2).

From the user's bindings (``--abstract x=signs``) abstract types are propagated through every
expression and assignment of a System until nothing changes:

* the type of an integer expression is the join of its operands' types (constants and
  concrete operands are *coerced* with ``abstract(n)`` when the expression is generated);
* an assignment ``v := e`` makes ``v`` at least as abstract as ``e`` (a variable cannot hold
  an abstract value concretely, so abstraction flows forward along data dependences, as
  ``cp := itsPeriodId`` makes ``cp`` signs in the paper's DEOS example, §8.2);
* comparisons coerce their operands to a common type; their result is a concrete bool.

The types form a lattice per variable: *concrete* below every domain, every domain below
``point`` (any value can be coerced to the one-token domain). Two different domains that meet
in an expression or an assignment, with no coercion between them, are a *conflict*, reported
as ``ModelError`` at the source of the expression (§5.3: "y = z ... would be flagged as an
abstract type conflict"). A variable bound by the user keeps its binding: a value of another
domain assigned to it is a conflict (unless the binding is a one-token domain).

Integer variables that inference does not reach stay concrete, or become ``point`` with
``rest="point"`` — except those whose values flow into a variable of a finer domain (they
must stay concrete to be coerced there).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from absmc.engines.typeabs.domains import Domain, point
from absmc.errors import OptionError
from absmc.ir.expr import COMPARE_OPS, LOGIC_OPS, Const, Expr, Op, Var
from absmc.ir.printer import format_expr
from absmc.ir.sorts import BoolSort, IntSort, RangeSort
from absmc.ir.span import ModelError, SourceSpan
from absmc.ir.system import System

Rest = Literal["concrete", "point"]


@dataclass
class Typing:
    """The result of inference: ``domains`` maps each abstracted variable to its domain (the
    others stay concrete); ``reasons`` says why (bound by the user, the assignment that made it
    abstract, or the ``point`` default); ``bound`` are the user's bindings."""

    domains: dict[str, Domain]
    reasons: dict[str, str] = field(default_factory=dict)
    bound: frozenset[str] = frozenset()

    def of(self, name: str) -> Domain | None:
        """The domain of variable ``name`` (``None``: concrete)."""
        return self.domains.get(name)

    def expr_type(self, e: Expr) -> Domain | None:
        """The abstract type of integer expression ``e`` (``None``: concrete); for a boolean
        expression ``None`` after checking its operands. Raises ``ModelError`` at ``e`` when two
        domains meet without a coercion."""
        return expr_type(e, self.domains)

    @property
    def inferred(self) -> list[str]:
        """Variables made abstract by inference (not bound by the user), in binding order."""
        return [v for v in self.domains if v not in self.bound]

    def summary(self) -> list[str]:
        """One ``name=domain (reason)`` entry per abstracted variable."""
        return [f"{v}={d} ({self.reasons.get(v, '')})" for v, d in self.domains.items()]


def join(a: Domain | None, b: Domain | None) -> Domain | None:
    """The least common abstract type, or raise ``_Clash`` when there is none."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    if a.is_point:
        return a
    if b.is_point:
        return b
    raise _Clash(a, b)


class _Clash(Exception):
    def __init__(self, a: Domain, b: Domain) -> None:
        super().__init__(f"{a} / {b}")
        self.a = a
        self.b = b


def _show(e: Expr) -> str:
    text = format_expr(e)
    return text if len(text) <= 60 else text[:57] + "..."


def expr_type(e: Expr, domains: Mapping[str, Domain]) -> Domain | None:
    """See :meth:`Typing.expr_type`."""
    if isinstance(e, Const):
        return None
    if isinstance(e, Var):
        return None if isinstance(e.var_sort, BoolSort) else domains.get(e.name)
    assert isinstance(e, Op)
    if e.op in LOGIC_OPS:
        for a in e.args:
            expr_type(a, domains)
        return None
    if e.op == "ite":
        expr_type(e.args[0], domains)
        operands: tuple[Expr, ...] = e.args[1:]
    else:
        operands = e.args
    types = [expr_type(a, domains) for a in operands]
    out: Domain | None = None
    for a, t in zip(operands, types, strict=True):
        try:
            out = join(out, t)
        except _Clash as clash:
            other = next(x for x, tx in zip(operands, types, strict=True) if tx == clash.a)
            raise ModelError(
                f"abstract type conflict in '{_show(e)}': '{_show(other)}' is {clash.a} but "
                f"'{_show(a)}' is {clash.b} (no coercion between them)",
                e.span,
            ) from None
    if e.op in COMPARE_OPS or (e.op == "ite" and e.args[1].is_bool):
        return None
    return out


def value_vars(e: Expr) -> frozenset[str]:
    """Integer variables whose *values* flow into the value of ``e`` (through arithmetic and
    ``ite`` branches, not through conditions)."""
    if isinstance(e, Var):
        return frozenset() if isinstance(e.var_sort, BoolSort) else frozenset({e.name})
    if isinstance(e, Op):
        if e.op in COMPARE_OPS or e.op in LOGIC_OPS:
            return frozenset()
        args = e.args[1:] if e.op == "ite" else e.args
        out: frozenset[str] = frozenset()
        for a in args:
            out |= value_vars(a)
        return out
    return frozenset()


def is_data(system: System, name: str) -> bool:
    """True for an integer variable that holds data: an unbounded ``int``, or a wrap-around
    range wider than a byte that is no process's program counter (Promela's ``short``,
    ``int``); GCL's finite ranges and Promela's ``byte`` counters count as control (they can
    still be bound with ``--abstract``)."""
    sort = system.by_name[name].sort
    if isinstance(sort, IntSort):
        return True
    if not isinstance(sort, RangeSort) or sort.overflow != "wrap" or sort.size <= 256:
        return False
    return all(p.pc != name for p in system.processes)


def _where(span: SourceSpan | None) -> str:
    return f" at {span.file}:{span.line}" if span is not None else ""


def check_bindings(system: System, bindings: Mapping[str, Domain]) -> None:
    """Raise ``OptionError`` (option ``"bindings"``) for a binding of an unknown or boolean
    variable."""
    for name in bindings:
        v = system.by_name.get(name)
        if v is None:
            known = ", ".join(x.name for x in system.variables if not isinstance(x.sort, BoolSort))
            raise OptionError(f"the model has no variable '{name}' (it has: {known})", "bindings")
        if isinstance(v.sort, BoolSort):
            raise OptionError(f"'{name}' is a bool; only integers can be abstracted", "bindings")


def _propagate(
    system: System, domains: dict[str, Domain], bound: Mapping[str, Domain], reasons: dict[str, str]
) -> None:
    changed = True
    while changed:
        changed = False
        for c in system.commands:
            for name, rhs in c.updates:
                if isinstance(system.by_name[name].sort, BoolSort):
                    expr_type(rhs, domains)
                    continue
                t = expr_type(rhs, domains)
                if t is None:
                    continue
                cur = domains.get(name)
                if cur == t:
                    continue
                span = rhs.span or c.span
                assign = f"'{name} := {_show(rhs)}'"
                if name in bound:
                    if cur is not None and cur.is_point:
                        continue
                    raise ModelError(
                        f"abstract type conflict: '{name}' is bound to {cur} but {assign} "
                        f"assigns it a {t} value (no coercion from {t} to {cur})",
                        span,
                        system.file,
                    )
                try:
                    new = join(cur, t)
                except _Clash:
                    raise ModelError(
                        f"abstract type conflict: {assign} assigns a {t} value to '{name}', "
                        f"which is {cur} ({reasons.get(name, '')})",
                        span,
                        system.file,
                    ) from None
                if new != cur and new is not None:
                    domains[name] = new
                    reasons[name] = f"from {assign}{_where(span)}"
                    changed = True


def _flows_into_fine(system: System, domains: Mapping[str, Domain]) -> set[str]:
    """Variables whose values flow (transitively) into a variable of a domain finer than
    point: they must stay concrete to be coerced."""
    into: dict[str, set[str]] = {}
    for c in system.commands:
        for name, rhs in c.updates:
            for v in value_vars(rhs):
                into.setdefault(v, set()).add(name)
    targets = {v for v, d in domains.items() if not d.is_point}
    keep: set[str] = set()
    changed = True
    while changed:
        changed = False
        for v, outs in into.items():
            if v not in keep and v not in domains and outs & (targets | keep):
                keep.add(v)
                changed = True
    return keep


def _check_all(system: System, domains: Mapping[str, Domain]) -> None:
    exprs: list[Expr] = []
    for c in system.commands:
        exprs.append(c.guard)
        exprs.extend(rhs for _, rhs in c.updates)
        exprs.extend(cond for _, cond in c.asserts)
        exprs.extend(cond for cond, _ in c.errors)
    exprs.extend(p.expr for p in system.properties)
    if system.valid_end is not None:
        exprs.append(system.valid_end)
    for e in exprs:
        expr_type(e, domains)


def infer(system: System, bindings: Mapping[str, Domain], rest: Rest = "concrete") -> Typing:
    """Infer the abstract type of every variable from the user's ``bindings`` (module
    docstring). Raises ``OptionError`` for bindings of unknown or boolean variables and
    ``ModelError`` at the source of the first abstract type conflict."""
    check_bindings(system, bindings)
    domains: dict[str, Domain] = {}
    reasons: dict[str, str] = {}
    for v in system.variables:  # declaration order
        if v.name in bindings:
            domains[v.name] = bindings[v.name]
            reasons[v.name] = "bound by the user"
    _propagate(system, domains, bindings, reasons)
    if rest == "point":
        keep = _flows_into_fine(system, domains)
        pt = point()
        for v in system.variables:
            if is_data(system, v.name) and v.name not in domains and v.name not in keep:
                domains[v.name] = pt
                reasons[v.name] = "not reached by inference: the rest are point"
        _propagate(system, domains, bindings, reasons)
    _check_all(system, domains)
    ordered = {v.name: domains[v.name] for v in system.variables if v.name in domains}
    return Typing(ordered, reasons, frozenset(bindings))
