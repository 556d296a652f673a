"""Export an ``ir.System`` as a Promela model that SPIN accepts.

The model is one process, ``main``, whose ``do`` loop has one option per guarded command, each
a ``d_step`` (one indivisible step): the reachable states of SPIN's model correspond one to one
to those of the System (``spin -o1``, ``-DNOREDUCE``), so state counts can be compared.

- Variables: ``bool`` -> ``bool``; a range ``lo..hi`` -> the smallest of ``bit``/``byte``/
  ``short``/``int`` that holds it; ``int`` -> ``int`` (SPIN's 32 bits: exact for models whose
  data stays within 32 bits).
- Simultaneous updates: right-hand sides are first stored in ``hidden`` temporaries (not part of
  SPIN's state vector) when a later right-hand side reads an earlier target.
- Properties: each ``d_step`` ends with ``assert``s of the invariants and the negated
  unreachable conditions (the initial state is not asserted: SPIN would need an extra state);
  an assignment outside an ``overflow="error"`` range or a division by zero in an update is a
  failed ``assert`` and the command then changes nothing (absmc does not execute a failing
  command); a division by zero in a *guard* is not reproduced.
- Deadlock: a state in which no option is enabled is an invalid end state for SPIN, as it is a
  deadlock for absmc.
"""

from __future__ import annotations

import re
from dataclasses import replace

from absmc.ir.expr import Const, Expr, Op, Var, free_vars, subexpressions, substitute
from absmc.ir.sorts import BoolSort, IntSort, RangeSort, Sort
from absmc.ir.system import Command, System

_INFIX = frozenset(
    {"+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&", "|", "^", "<<", ">>"}
)


def promela_type(sort: Sort) -> str:
    """The Promela type that holds every value of ``sort``."""
    if isinstance(sort, BoolSort):
        return "bool"
    if isinstance(sort, IntSort):
        return "int"
    assert isinstance(sort, RangeSort)
    if sort.lo >= 0 and sort.hi <= 1:
        return "bit"
    if sort.lo >= 0 and sort.hi <= 255:
        return "byte"
    if sort.lo >= -32768 and sort.hi <= 32767:
        return "short"
    return "int"


def promela_expr(e: Expr, rename: dict[str, str] | None = None) -> str:
    """``e`` in Promela syntax (fully parenthesised)."""
    rename = rename or {}
    if isinstance(e, Const):
        if isinstance(e.const_sort, BoolSort):
            return "true" if e.value else "false"
        return str(e.value) if e.value >= 0 else f"({e.value})"
    if isinstance(e, Var):
        return rename.get(e.name, e.name)
    assert isinstance(e, Op)
    a = [promela_expr(x, rename) for x in e.args]
    o = e.op
    if o in ("&&", "||"):
        return "(" + f" {o} ".join(a) + ")"
    if o == "!":
        return f"(!{a[0]})"
    if o == "=>":
        return f"(!{a[0]} || {a[1]})"
    if o == "neg":
        return f"(-{a[0]})"
    if o == "~":
        return f"(~{a[0]})"
    if o == "ite":
        return f"({a[0]} -> {a[1]} : {a[2]})"
    if o in _INFIX:
        return f"({a[0]} {o} {a[1]})"
    raise ValueError(f"cannot export operator {o!r}")  # pragma: no cover


def _divisors(e: Expr) -> list[Expr]:
    return [x.args[1] for x in subexpressions(e) if isinstance(x, Op) and x.op in ("/", "%")]


def _command(system: System, c: Command, checks: list[str], temps: list[str]) -> str:
    guard = promela_expr(c.guard)
    targets = [n for n, _ in c.updates]
    # conditions without which the command is a model error in absmc
    safe: list[str] = []
    assigned: list[str] = []
    steps: list[str] = []
    # evaluate right-hand sides in the old state: use temporaries when needed
    reads_later = any(free_vars(rhs) & set(targets[:k]) for k, (_, rhs) in enumerate(c.updates))
    for k, (name, rhs) in enumerate(c.updates):
        safe += [f"{promela_expr(d)} != 0" for d in _divisors(rhs) if not isinstance(d, Const)]
        value = promela_expr(rhs)
        sort = system.by_name[name].sort
        checked = isinstance(sort, RangeSort) and sort.overflow == "error"
        if checked and not (isinstance(rhs, Const) and sort.contains(rhs.value)):  # type: ignore[union-attr]
            safe.append(f"{sort.lo} <= {value} && {value} <= {sort.hi}")  # type: ignore[union-attr]
        if reads_later:
            t = f"_t{k}"
            if t not in temps:
                temps.append(t)
            steps.append(f"{t} = {value}")
            assigned.append(f"{name} = {t}")
        else:
            assigned.append(f"{name} = {value}")
    effect = "; ".join([*steps, *assigned, *checks]) or "skip"
    if safe:
        cond = " && ".join(f"({x})" for x in safe)
        # a model error: SPIN counts the failed assertion and (with -c0) goes on without
        # the updates, as absmc does not execute the failing command
        effect = f"if :: {cond} -> {effect} :: else -> assert({cond}) fi"
    text = f"{c.process}: {c.text()}".replace("*/", "* /")
    return f"  :: d_step {{ {guard} -> {effect} }}  /* {text} */"


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def with_identifiers(system: System) -> System:
    """``system`` with every variable renamed to a Promela identifier where it is not one
    (names made by the Promela front end, like ``P(0)._p`` or ``a[2]``), in every expression
    of the commands (guards, updates, assertions, error conditions), the properties and the
    valid-end condition."""
    if all(_IDENT.fullmatch(v.name) for v in system.variables):
        return system
    used: set[str] = set()
    new_names: dict[str, str] = {}
    for v in system.variables:
        base = re.sub(r"\W", "_", v.name)
        if not _IDENT.fullmatch(base):
            base = "_" + base
        name, k = base, 1
        while name in used:
            name, k = f"{base}_{k}", k + 1
        used.add(name)
        new_names[v.name] = name
    ren = {old: Var(new, system.by_name[old].sort) for old, new in new_names.items()}
    variables = tuple(replace(v, name=new_names[v.name]) for v in system.variables)
    commands = tuple(
        replace(
            c,
            guard=substitute(c.guard, ren),
            updates=tuple((new_names[n], substitute(e, ren)) for n, e in c.updates),
            asserts=tuple((n, substitute(e, ren)) for n, e in c.asserts),
            errors=tuple((substitute(e, ren), m) for e, m in c.errors),
        )
        for c in system.commands
    )
    props = tuple(replace(p, expr=substitute(p.expr, ren)) for p in system.properties)
    end = substitute(system.valid_end, ren) if system.valid_end is not None else None
    return replace(system, variables=variables, commands=commands, properties=props, valid_end=end)


def to_promela(system: System) -> str:
    """The Promela text of ``system`` (see module docstring). Raises ``ValueError`` for what
    one ``d_step`` per command cannot express (exclusive control, timeout, transition
    assertions and error conditions of a Promela-derived System)."""
    if any(c.exclusive or "timeout" in c.flags or c.asserts or c.errors for c in system.commands):
        raise ValueError(
            "export to Promela writes one d_step per guarded command; this model uses atomic "
            "sequences, timeout, assertions or error checks that this form cannot express"
        )
    system = with_identifiers(system)
    lines = [f"/* generated by absmc from {system.file or system.name or 'a model'} */"]
    for v in system.variables:
        init = ("true" if v.init else "false") if isinstance(v.sort, BoolSort) else str(v.init)
        lines.append(f"{promela_type(v.sort)} {v.name} = {init};")
    checks: list[str] = []
    for p in system.properties:
        cond = promela_expr(p.expr)
        checks.append(f"assert({cond})" if p.kind == "invariant" else f"assert(!{cond})")
    temps: list[str] = []
    options = [_command(system, c, checks, temps) for c in system.commands]
    if temps:
        lines.append(f"hidden int {', '.join(temps)};")
    lines.append("")
    lines.append("active proctype main() {")
    lines.append("  do")
    lines.extend(options)
    lines.append("  od")
    lines.append("}")
    return "\n".join(lines) + "\n"
