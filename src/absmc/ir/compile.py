"""Compile a System once into generated Python source for fast concrete execution.

States are tuples of ints (one slot per variable, declaration order, bools as 0/1). The
generated module defines:

* ``successors(s) -> list[(command index, successor state)]`` in command order. Model errors
  (division by zero, an assignment outside a finite ``overflow="error"`` range) do not raise:
  they are appended as ``(command index, message)`` to :attr:`CompiledSystem.errors`, which the
  caller inspects and clears.
* ``ok(s) -> bool``: every compiled property holds in ``s`` (the fast path of property checking);
  ``violated(s) -> list[int]``: indices (into ``CompiledSystem.properties``) of violated ones.
* ``valid_end(s) -> bool``: ``s`` is a valid end state (not a deadlock when terminal).
* ``expr_fn(e)``: any IR expression as a function of the state, for engines that need more
  (predicate bit-vectors, abstraction functions).

Commands of one process that all test the same control variable against a constant (a program
counter) are dispatched on that variable's value, so a state only evaluates the guards of the
commands at its current location. The generated code agrees with :mod:`absmc.ir.evaluate`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from absmc.ir.expr import Const, Expr, Op, Var, conj, conjuncts, subexpressions
from absmc.ir.sorts import BoolSort, RangeSort
from absmc.ir.system import Command, Property, System

State = tuple[int, ...]
Successors = list[tuple[int, State]]


def tdiv(a: int, b: int) -> int:
    """Truncating division; raises ``ZeroDivisionError`` when ``b == 0``."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def tmod(a: int, b: int) -> int:
    """Remainder of truncating division; raises ``ZeroDivisionError`` when ``b == 0``."""
    q = abs(a) // abs(b)
    return a - b * (q if (a >= 0) == (b >= 0) else -q)


class PyExpr:
    """Translates IR expressions into Python source over local names ``v0, v1, ...``."""

    def __init__(self, index_of: dict[str, int]) -> None:
        self.index_of = index_of

    def name(self, var: str) -> str:
        return f"v{self.index_of[var]}"

    def __call__(self, e: Expr) -> str:
        if isinstance(e, Const):
            return str(e.value)
        if isinstance(e, Var):
            return self.name(e.name)
        assert isinstance(e, Op)
        o, a = e.op, e.args
        if o == "&&":
            return "(" + " and ".join(self(x) for x in a) + ")"
        if o == "||":
            return "(" + " or ".join(self(x) for x in a) + ")"
        if o == "!":
            return f"(not {self(a[0])})"
        if o == "=>":
            return f"(not {self(a[0])} or {self(a[1])})"
        if o == "ite":
            return f"({self(a[1])} if {self(a[0])} else {self(a[2])})"
        if o == "neg":
            return f"(-{self(a[0])})"
        if o == "/":
            return f"_tdiv({self(a[0])}, {self(a[1])})"
        if o == "%":
            return f"_tmod({self(a[0])}, {self(a[1])})"
        return f"({self(a[0])} {o} {self(a[1])})"


def may_raise(e: Expr) -> bool:
    """True when evaluating ``e`` can divide by zero (a ``/`` or ``%`` by a non-constant or by
    the constant 0)."""
    for x in subexpressions(e):
        if isinstance(x, Op) and x.op in ("/", "%"):
            d = x.args[1]
            if not isinstance(d, Const) or d.value == 0:
                return True
    return False


def _dispatch_value(c: Command, var: str) -> int | None:
    for part in conjuncts(c.guard):
        if isinstance(part, Op) and part.op == "==":
            a, b = part.args
            if isinstance(a, Var) and a.name == var and isinstance(b, Const):
                return b.value
            if isinstance(b, Var) and b.name == var and isinstance(a, Const):
                return a.value
    return None


def _strip_dispatch(guard: Expr, var: str, value: int) -> Expr:
    kept = []
    for part in conjuncts(guard):
        if isinstance(part, Op) and part.op == "==":
            a, b = part.args
            if (
                isinstance(a, Var) and a.name == var and isinstance(b, Const) and b.value == value
            ) or (
                isinstance(b, Var) and b.name == var and isinstance(a, Const) and a.value == value
            ):
                continue
        kept.append(part)
    return conj(kept)


def choose_dispatch_var(system: System, cmds: Sequence[Command]) -> str | None:
    """A control variable every command in ``cmds`` compares with a constant at top level
    (preferring the process's declared program counter), or ``None``."""
    if len(cmds) < 2:
        return None
    candidates: list[str] = []
    proc = next((p for p in system.processes if p.name == cmds[0].process), None)
    if proc is not None and proc.pc is not None:
        candidates.append(proc.pc)
    for part in conjuncts(cmds[0].guard):
        if isinstance(part, Op) and part.op == "==":
            for x in part.args:
                if isinstance(x, Var) and x.name not in candidates:
                    candidates.append(x.name)
    for name in candidates:
        v = system.by_name.get(name)
        if v is None or not v.is_control:
            continue
        if all(_dispatch_value(c, name) is not None for c in cmds):
            return name
    return None


@dataclass
class CompiledSystem:
    """The compiled form of a System (see module docstring). ``source`` is the generated code."""

    system: System
    properties: tuple[Property, ...]
    source: str
    successors: Callable[[State], Successors]
    ok: Callable[[State], bool]
    violated: Callable[[State], list[int]]
    valid_end: Callable[[State], bool]
    errors: list[tuple[int, str]] = field(default_factory=list)

    @property
    def initial(self) -> State:
        """The initial state."""
        return self.system.initial_state()

    def expr_fn(self, e: Expr) -> Callable[[State], Any]:
        """Compile one expression into a function of the state (raises ``ZeroDivisionError`` on
        division by zero)."""
        return compile_expr_fn(self.system, e)


def compile_expr_fn(system: System, e: Expr) -> Callable[[State], Any]:
    """``e`` as a Python function of a state tuple."""
    tr = PyExpr(dict(system.index_of))
    used = sorted({system.index_of[n] for n in _names(e)})
    body = "".join(f"    v{i} = s[{i}]\n" for i in used)
    src = f"def f(s):\n{body}    return {tr(e)}\n"
    ns: dict[str, Any] = {"_tdiv": tdiv, "_tmod": tmod}
    exec(compile(src, "<absmc-expr>", "exec"), ns)
    fn: Callable[[State], Any] = ns["f"]
    return fn


def _names(e: Expr) -> set[str]:
    return {x.name for x in subexpressions(e) if isinstance(x, Var)}


class _Gen:
    def __init__(self, system: System) -> None:
        self.system = system
        self.tr = PyExpr(dict(system.index_of))
        self.lines: list[str] = []
        self.n = len(system.variables)

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def unpack(self, indent: int) -> None:
        if self.n == 0:
            return
        names = ", ".join(f"v{i}" for i in range(self.n))
        self.emit(indent, f"{names}{',' if self.n == 1 else ''} = s")

    def command(self, indent: int, c: Command, guard: Expr) -> None:
        sys = self.system
        tr = self.tr
        raises = may_raise(guard) or any(may_raise(e) for _, e in c.updates)
        self.emit(indent, f"# {c.process}: {c.text()}".replace("\n", " "))
        base = indent
        if raises:
            self.emit(indent, "try:")
            indent += 1
        g = tr(guard)
        if g != "1":
            self.emit(indent, f"if {g}:")
            indent += 1
        slots = [f"v{i}" for i in range(self.n)]
        checks: list[tuple[str, str, RangeSort]] = []
        for k, (name, rhs) in enumerate(c.updates):
            i = sys.index_of[name]
            sort = sys.by_name[name].sort
            src = tr(rhs)
            if isinstance(sort, BoolSort) and not isinstance(rhs, (Var, Const)):
                src = f"(1 if {src} else 0)"
            in_range = not isinstance(sort, RangeSort)
            if isinstance(sort, RangeSort):
                in_range = isinstance(rhs, Const) and sort.contains(rhs.value)
                if isinstance(rhs, Var) and sys.by_name[rhs.name].sort == sort:
                    in_range = True
            if in_range and isinstance(rhs, (Var, Const)):
                slots[i] = src  # a constant or a copy goes straight into the new tuple
                continue
            tmp = f"t{k}"
            self.emit(indent, f"{tmp} = {src}")
            if isinstance(sort, RangeSort) and not in_range:
                if sort.overflow == "wrap":
                    if sort.lo == 0:
                        self.emit(indent, f"{tmp} = {tmp} % {sort.size}")
                    else:
                        self.emit(indent, f"{tmp} = ({tmp} - {sort.lo}) % {sort.size} + {sort.lo}")
                else:
                    checks.append((tmp, name, sort))
            slots[i] = tmp
        tup = "(" + ", ".join(slots) + ("," if self.n == 1 else "") + ")"
        if checks:
            cond = " and ".join(f"{s.lo} <= {t} <= {s.hi}" for t, _, s in checks)
            self.emit(indent, f"if {cond}:")
            self.emit(indent + 1, f"out.append(({c.index}, {tup}))")
            self.emit(indent, "else:")
            args = ", ".join(f"({t}, {name!r}, {s.lo}, {s.hi})" for t, name, s in checks)
            self.emit(indent + 1, f"_range_error({c.index}, [{args}])")
        else:
            self.emit(indent, f"out.append(({c.index}, {tup}))")
        if raises:
            self.emit(base, "except ZeroDivisionError:")
            self.emit(base + 1, f"_errors.append(({c.index}, 'division by zero'))")

    def successors(self) -> None:
        sys = self.system
        self.emit(0, "def successors(s):")
        self.unpack(1)
        self.emit(1, "out = []")
        # consecutive runs of commands of one process, in global order
        runs: list[list[Command]] = []
        for c in sys.commands:
            if runs and runs[-1][0].process == c.process:
                runs[-1].append(c)
            else:
                runs.append([c])
        for run in runs:
            var = choose_dispatch_var(sys, run)
            if var is None:
                for c in run:
                    self.command(1, c, c.guard)
                continue
            groups: dict[int, list[Command]] = {}
            for c in run:
                value = _dispatch_value(c, var)
                assert value is not None
                groups.setdefault(value, []).append(c)
            # order is kept: in a given state only the commands of one group can be enabled,
            # and each group lists its commands in their original order
            pv = f"v{sys.index_of[var]}"
            first = True
            for value, cmds in groups.items():
                self.emit(1, f"{'if' if first else 'elif'} {pv} == {value}:")
                first = False
                for c in cmds:
                    self.command(2, c, _strip_dispatch(c.guard, var, value))
        self.emit(1, "return out")

    def properties(self, props: Sequence[Property]) -> None:
        sys = self.system
        tr = self.tr
        used = sorted({sys.index_of[n] for p in props for n in _names(p.expr)})
        self.emit(0, "def ok(s):")
        for i in used:
            self.emit(1, f"v{i} = s[{i}]")
        parts = []
        for p in props:
            x = tr(p.expr)
            parts.append(x if p.kind == "invariant" else f"not {x}")
        if any(may_raise(p.expr) for p in props):
            self.emit(1, "try:")
            self.emit(2, f"return {' and '.join(parts) or 'True'}")
            self.emit(1, "except ZeroDivisionError:")
            self.emit(2, "return False")
        else:
            self.emit(1, f"return {' and '.join(parts) or 'True'}")
        self.emit(0, "def violated(s):")
        for i in used:
            self.emit(1, f"v{i} = s[{i}]")
        self.emit(1, "out = []")
        for k, p in enumerate(props):
            x = tr(p.expr)
            bad = f"not {x}" if p.kind == "invariant" else x
            self.emit(1, "try:")
            self.emit(2, f"if {bad}:")
            self.emit(3, f"out.append({k})")
            self.emit(1, "except ZeroDivisionError:")
            self.emit(2, f"out.append({k})")
        self.emit(1, "return out")

    def valid_end(self) -> None:
        sys = self.system
        self.emit(0, "def valid_end(s):")
        if sys.valid_end is None:
            self.emit(1, "return False")
            return
        for i in sorted({sys.index_of[n] for n in _names(sys.valid_end)}):
            self.emit(1, f"v{i} = s[{i}]")
        self.emit(1, f"return bool({self.tr(sys.valid_end)})")


def compile_system(system: System, properties: Sequence[Property] | None = None) -> CompiledSystem:
    """Generate, compile and load the successor, property and end-state functions of ``system``.

    ``properties`` selects which properties ``ok``/``violated`` check (default: all of the
    System's). The result's ``source`` holds the generated Python for inspection.
    """
    props = tuple(system.properties if properties is None else properties)
    gen = _Gen(system)
    gen.successors()
    gen.properties(props)
    gen.valid_end()
    source = "\n".join(gen.lines) + "\n"
    errors: list[tuple[int, str]] = []

    def range_error(ci: int, checks: list[tuple[int, str, int, int]]) -> None:
        for value, name, lo, hi in checks:
            if not lo <= value <= hi:
                errors.append((ci, f"value {value} assigned to {name} is outside {lo}..{hi}"))
                return

    ns: dict[str, Any] = {
        "_tdiv": tdiv,
        "_tmod": tmod,
        "_errors": errors,
        "_range_error": range_error,
    }
    code = compile(source, f"<absmc-compiled {system.name or 'system'}>", "exec")
    exec(code, ns)
    return CompiledSystem(
        system=system,
        properties=props,
        source=source,
        successors=ns["successors"],
        ok=ns["ok"],
        violated=ns["violated"],
        valid_end=ns["valid_end"],
        errors=errors,
    )
