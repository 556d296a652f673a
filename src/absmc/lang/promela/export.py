"""Export an ``ir.System`` as a Promela model that SPIN accepts.

The model is one process, ``main``, whose ``do`` loop has one option per guarded command, each
a ``d_step`` (one indivisible step): the reachable states of SPIN's model correspond one to one
to those of the System (``spin -o1``, ``-DNOREDUCE``), so state counts can be compared.

- Variables: ``bool`` -> ``bool``; a range ``lo..hi`` -> the smallest of ``bit``/``byte``/
  ``short``/``int`` that holds it; ``int`` -> ``int`` (SPIN's 32 bits: exact for models whose
  data stays within 32 bits; a finite range wider than 32 bits is refused, and constants
  outside 32 bits are written modulo 2^32, as SPIN's C arithmetic sees them). Names that are
  not Promela identifiers (``P(0)._p``, ``a[2]``, ``c#len`` of a Promela-derived System) are
  renamed (``P_0___p``, ...).
- Simultaneous updates: right-hand sides are first stored in ``hidden`` temporaries (not part of
  SPIN's state vector) when a later right-hand side reads an earlier target.
- Properties: each ``d_step`` ends with ``assert``s of the invariants and the negated
  unreachable conditions (the initial state is not asserted: SPIN would need an extra state);
  an assignment outside an ``overflow="error"`` range or a division by zero in an update is a
  failed ``assert`` and the command then changes nothing (absmc does not execute a failing
  command); a division by zero in a *guard* is not reproduced.
- Deadlock: a state in which no option is enabled is an invalid end state for SPIN, as it is a
  deadlock for absmc. ``System.valid_end`` is not exported: SPIN reports every terminal state.

The command fields of Promela-derived Systems (see :class:`absmc.ir.Command`) keep their
meaning:

- ``asserts``: ``assert(cond)`` at the start of the command's ``d_step`` (the pre-state, as
  absmc checks them; the command goes on, as with ``pan -c0``).
- ``errors``: the command's option is guarded by the negated error conditions; one more
  option, ``d_step { E -> assert(!(E)) }``, reports the model error as a failed assertion and
  changes nothing (absmc does not execute the command).
- ``"timeout"`` flag: ``atomic { timeout && (guard) -> d_step { ... } }`` (SPIN's ``timeout``
  is true when nothing else can move, which in the one-process model is absmc's rule).
- ``exclusive`` (exclusive control, SPIN's ``atomic``): all commands that take exclusive
  control are the options of one ``atomic { if ... fi; ... }`` option of the main loop; after
  each, control goes to the loop ``hold_P`` of the process P that holds it, whose options are
  P's (non-timeout) commands: a command without ``exclusive`` ends the chain, one with
  ``exclusive = Q`` moves to ``hold_Q``, and ``else`` (P is blocked) ends it too. The chain's
  end (label ``done``) asserts the state properties and leaves the atomic sequence, so SPIN
  stores exactly the states absmc stores (not the intermediate states of a chain). A chain
  that comes back to a state it passed is cut by absmc; SPIN would follow it to its depth
  limit.
"""

from __future__ import annotations

import re

from absmc.errors import ExportError
from absmc.ir.expr import Const, Expr, Op, Var, free_vars, subexpressions
from absmc.ir.rename import identifier_map, rename_variables
from absmc.ir.sorts import BoolSort, IntSort, RangeSort, Sort
from absmc.ir.system import Command, System
from absmc.ir.walker import ExprWalker

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


def _check_width(system: System) -> None:
    """Raise ``ExportError`` for a finite-range variable SPIN's ``int`` cannot hold (a Promela
    channel of capacity >= 2 is one variable holding every message: often wider than 32 bits)."""
    for v in system.variables:
        s = v.sort
        if isinstance(s, RangeSort) and not (s.lo >= -(2**31) and s.hi < 2**31):
            raise ExportError(
                f"cannot export '{v.name}' ({s.lo}..{s.hi}) to Promela: SPIN's int has 32 bits",
                "promela",
            )


def _int_literal(value: int) -> str:
    """``value`` as SPIN reads it: ``(0 - k)`` for a negative one (SPIN prints a unary minus
    without parentheses, and ``a - -k`` in its generated C is a decrement); a constant outside
    32 bits modulo 2^32 (SPIN's parser keeps 32 bits and its arithmetic is C's ``int``)."""
    if not -(2**31) <= value < 2**31:
        value = (value + 2**31) % 2**32 - 2**31
    if value == -(2**31):
        return "(0 - 2147483647 - 1)"
    return str(value) if value >= 0 else f"(0 - {-value})"


class PromelaPrinter(ExprWalker[str]):
    """Promela syntax of expressions, fully parenthesised, variables renamed by ``rename``
    (an iterative walk: any depth)."""

    def __init__(self, rename: dict[str, str] | None = None) -> None:
        super().__init__(transient=True)
        self.rename = rename or {}

    def walk_const(self, e: Const) -> str:
        if isinstance(e.const_sort, BoolSort):
            return "true" if e.value else "false"
        return _int_literal(e.value)

    def walk_var(self, e: Var) -> str:
        return self.rename.get(e.name, e.name)

    def walk_and(self, e: Op, a: list[str]) -> str:
        return "(" + " && ".join(a) + ")"

    def walk_or(self, e: Op, a: list[str]) -> str:
        return "(" + " || ".join(a) + ")"

    def walk_not(self, e: Op, a: list[str]) -> str:
        return f"(!{a[0]})"

    def walk_implies(self, e: Op, a: list[str]) -> str:
        return f"(!{a[0]} || {a[1]})"

    def walk_neg(self, e: Op, a: list[str]) -> str:
        return f"(0 - {a[0]})"

    def walk_bitnot(self, e: Op, a: list[str]) -> str:
        return f"(~{a[0]})"

    def walk_ite(self, e: Op, a: list[str]) -> str:
        return f"({a[0]} -> {a[1]} : {a[2]})"

    def walk_select(self, e: Op, a: list[str]) -> str:
        # the case split (ir.arrays.select_chain): exported variables are scalars
        out = a[-1]
        for k in range(len(a) - 2, 0, -1):
            out = f"(({a[0]} == {k - 1}) -> {a[k]} : {out})"
        return out

    def walk_op(self, e: Op, a: list[str]) -> str:
        if e.op in _INFIX:
            return f"({a[0]} {e.op} {a[1]})"
        raise ValueError(f"cannot export operator {e.op!r}")  # pragma: no cover


def promela_expr(e: Expr, rename: dict[str, str] | None = None) -> str:
    """``e`` in Promela syntax (fully parenthesised)."""
    return PromelaPrinter(rename).walk(e)


def _divisors(e: Expr) -> list[Expr]:
    return [x.args[1] for x in subexpressions(e) if isinstance(x, Op) and x.op in ("/", "%")]


def _effect(system: System, c: Command, checks: list[str], temps: list[str]) -> str:
    """The body of the command's ``d_step`` after its guard: assertions, updates, ``checks``."""
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
    asserts = [f"assert({promela_expr(cond)})" for _, cond in c.asserts]
    effect = "; ".join([*steps, *assigned, *checks]) or "skip"
    if safe:
        cond = " && ".join(f"({x})" for x in safe)
        # a model error: SPIN counts the failed assertion and (with -c0) goes on without
        # the updates, as absmc does not execute the failing command
        effect = f"if :: {cond} -> {effect} :: else -> assert({cond}) fi"
    return "; ".join([*asserts, effect])


def _guard(c: Command) -> str:
    """The command's guard, with its error conditions negated (they are checked first)."""
    errs = [promela_expr(e) for e, _ in c.errors]
    guard = promela_expr(c.guard)
    return " && ".join([*(f"!{e}" for e in errs), guard]) if errs else guard


def _error_option(c: Command) -> str | None:
    """``d_step { E -> assert(!(E)) }`` for the error conditions ``E`` of ``c``, or ``None``."""
    if not c.errors:
        return None
    e = " || ".join(promela_expr(x) for x, _ in c.errors)
    return f"d_step {{ ({e}) -> assert(!({e})) }}"


def _command(system: System, c: Command, checks: list[str], temps: list[str]) -> str:
    """The main-loop option of a command that does not take exclusive control."""
    effect = _effect(system, c, checks, temps)
    text = f"{c.process}: {c.text()}".replace("*/", "* /")
    if "timeout" in c.flags:
        return f"  :: atomic {{ timeout && {_guard(c)} -> d_step {{ {effect} }} }}  /* {text} */"
    return f"  :: d_step {{ {_guard(c)} -> {effect} }}  /* {text} */"


def _hold_label(system: System, process: str) -> str:
    k = next(i for i, p in enumerate(system.processes) if p.name == process)
    return f"hold_{k}"


def _then(system: System, c: Command, stay: str | None) -> str:
    """Where control goes after ``c`` inside the exclusive block."""
    if c.exclusive is None:
        return "; goto done"
    if c.exclusive == stay:
        return ""
    return f"; goto {_hold_label(system, c.exclusive)}"


def _exclusive_block(system: System, temps: list[str], checks: list[str]) -> list[str]:
    """The ``atomic`` main-loop option of the commands that take exclusive control, with one
    ``hold_P`` loop per process that may hold it (module docstring)."""
    entry = [c for c in system.commands if c.exclusive is not None]
    holders = [p.name for p in system.processes if any(c.exclusive == p.name for c in entry)]
    out = ["  :: atomic {", "       if"]
    for c in entry:
        text = f"{c.process}: {c.text()}".replace("*/", "* /")
        effect = _effect(system, c, [], temps)
        if "timeout" in c.flags:
            step = f"timeout && {_guard(c)} -> d_step {{ {effect} }}"
        else:
            step = f"d_step {{ {_guard(c)} -> {effect} }}"
        out.append(f"       :: {step}{_then(system, c, None)}  /* {text} */")
    out.append("       fi;")
    for p in holders:
        out.append(f"{_hold_label(system, p)}:  /* {p} holds exclusive control */")
        out.append("       do")
        for c in system.commands:
            if c.process != p or "timeout" in c.flags:
                continue
            text = f"{c.process}: {c.text()}".replace("*/", "* /")
            effect = _effect(system, c, [], temps)
            then = _then(system, c, p)
            out.append(f"       :: d_step {{ {_guard(c)} -> {effect} }}{then}  /* {text} */")
            err = _error_option(c)
            if err is not None:
                out.append(f"       :: {err}; goto done")
        out.append("       :: else -> goto done")
        out.append("       od;")
    end = f"skip; d_step {{ {'; '.join(checks)} }}" if checks else "skip"  # no jump into a d_step
    out.append(f"done:  /* the chain ends: an ordinary state */ {end}")
    out.append("     }")
    return out


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def with_identifiers(system: System) -> System:
    """``system`` with every variable renamed to a Promela identifier where it is not one
    (names made by the Promela front end, like ``P(0)._p`` or ``a[2]``), everywhere it occurs
    (:func:`absmc.ir.rename.rename_variables`)."""
    if all(_IDENT.fullmatch(v.name) for v in system.variables):
        return system
    return rename_variables(system, identifier_map(v.name for v in system.variables))


def to_promela(system: System) -> str:
    """The Promela text of ``system`` (see module docstring). Raises ``ExportError`` for a
    finite-range variable wider than SPIN's 32-bit ``int``."""
    if system.init_constraint is not None:
        raise ExportError(
            "cannot export an init: constraint to Promela (one initial state only)", "promela"
        )
    _check_width(system)
    system = with_identifiers(system)
    lines = [f"/* generated by absmc from {system.file or system.name or 'a model'} */"]
    for v in system.variables:
        init = ("true" if v.init else "false") if isinstance(v.sort, BoolSort) else str(v.init)
        lines.append(f"{promela_type(v.sort)} {v.name} = {init};")
    checks: list[str] = []
    for p in system.properties:
        if p.kind == "assert":  # checked by the commands' own assertions
            continue
        cond = promela_expr(p.expr)
        checks.append(f"assert({cond})" if p.kind == "invariant" else f"assert(!{cond})")
    temps: list[str] = []
    options: list[str] = []
    for c in system.commands:
        if c.exclusive is None:
            options.append(_command(system, c, checks, temps))
        err = _error_option(c)
        if err is not None:
            options.append(f"  :: {err}")
    if any(c.exclusive is not None for c in system.commands):
        options += _exclusive_block(system, temps, checks)
    if temps:
        lines.append(f"hidden int {', '.join(temps)};")
    lines.append("")
    lines.append("active proctype main() {")
    lines.append("  do")
    lines.extend(options)
    lines.append("  od")
    lines.append("}")
    return "\n".join(lines) + "\n"
