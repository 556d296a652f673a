"""The abstract Systems as Promela models for SPIN (paper 004, §3.2: "the diagrams are then
encoded as transitions in an abstract model using only standard Promela if-statements and
assignments").

Each abstract System becomes one process whose ``do`` loop has one ``d_step`` per abstract
command: the guard, then the command's assertions, then assignments; a post-state value that
depends on the pre-state (the must-abstraction's consensus ``1`` / ``0`` / unknown ``2``) is
written as an ``if`` statement, never as a conditional expression. Simultaneous assignments go
through ``hidden`` temporaries when a later right-hand side reads an earlier target. Variables
whose names are not Promela identifiers (``P(0)._p``, ``n[1]`` from the Promela front end) are
renamed (:func:`absmc.lang.promela.export.with_identifiers`).

What the IR adds for Promela-derived Systems is written out with the same statements:

* exclusive control (``Command.exclusive``, SPIN's ``atomic``): a variable ``_excl`` holds the
  number of the process in control (0: none); a command of process ``k`` runs only when
  ``_excl`` is 0 or ``k`` and sets it to the number of its ``exclusive`` process (or 0); a
  *release* option hands control back where process ``k`` holds it and has no enabled command
  (where absmc's compiled semantics ends the chain). SPIN stores the states in between, absmc
  does not: with exclusive control the state counts differ, the verdicts do not;
* model-error conditions (``Command.errors``, tested before the guard, also the abstract
  Systems' failure *probes*): an option that fails an ``assert`` where one holds; the command's
  own guard is conjoined with their negation;
* assertions (``Command.asserts`` of ``assert`` properties): ``assert`` statements.

The abstract state properties (their "bad" conditions, deadlock included) are checked by one
``never`` claim that ends — a violation for SPIN — in a bad state where no process holds
exclusive control (a claim is compiled once; asserting the large abstract conditions after
every one of the many may-commands would make ``pan.c`` huge). The loop head is an ``end``
state, because the abstractions are searched without the built-in deadlock check (deadlock is
one of the claimed properties). A concrete assignment outside an error range (or a division by
zero) is a failed ``assert`` and the step then changes nothing, as in
:func:`absmc.lang.promela.export.to_promela`. Without exclusive control SPIN explores exactly
the abstract System's states (``spin -o1``, ``-DNOREDUCE``), so its state count and its verdict
can be compared with absmc's.
"""

from __future__ import annotations

from collections.abc import Sequence

from absmc.engines.fourvalued.build import (
    AbstractionIncomplete,
    AbstractModel,
    FourValuedAbstraction,
    build_abstraction,
)
from absmc.engines.fourvalued.semantics import (
    defined,
    enabled_cleanly,
    pre_error,
    range_ok,
)
from absmc.errors import UsageError
from absmc.ir.arrays import expand_system
from absmc.ir.expr import FALSE, TRUE, Const, Expr, Op, conj, disj, free_vars, neg
from absmc.ir.sorts import BoolSort, RangeSort
from absmc.ir.system import Command, System
from absmc.lang.gcl.export import to_gcl
from absmc.lang.promela.export import promela_expr, promela_type, with_identifiers

_TITLES = {
    "may": "may-abstraction (over-approximation; j = ⊥: transitions that may exist)",
    "must": "must-abstraction (under-approximation; j = ⊤: transitions that must exist)",
}
#: the variable that records which process holds exclusive control (0: none)
EXCL = "_excl"
_IND = "        "


def _assign(target: str, e: Expr, indent: str) -> str:
    """The statement ``target = e`` with every top-level ``ite`` of ``e`` turned into an
    if-statement (``indent`` prefixes its continuation lines)."""
    if isinstance(e, Op) and e.op == "ite":
        c, a, b = e.args
        inner = indent + "   "
        return (
            f"if\n{indent}:: {promela_expr(c)} -> {_assign(target, a, inner)}\n"
            f"{indent}:: else -> {_assign(target, b, inner)}\n{indent}fi"
        )
    return f"{target} = {promela_expr(e)}"


def _safety(system: System, concrete: Sequence[str], c: Command) -> list[str]:
    """Conditions without which an update of a concrete variable is a model error."""
    kept = [(n, e) for n, e in c.updates if n in concrete]
    safe = [promela_expr(defined(e)) for _, e in kept if defined(e) != TRUE]
    ok = range_ok(system, Command(c.process, c.guard, tuple(kept)))
    if ok != TRUE:
        safe.append(promela_expr(ok))
    return safe


class _Writer:
    """One abstract System (already renamed to Promela identifiers) as Promela text."""

    def __init__(self, model: AbstractModel, system: System, concrete: Sequence[str]) -> None:
        if any("timeout" in c.flags for c in system.commands):
            raise ValueError("the exported abstract model has a timeout command")  # not built
        self.model = model
        self.system = system
        self.concrete = concrete
        self.temps: list[str] = []
        self.pid = {p.name: k + 1 for k, p in enumerate(system.processes)}
        self.exclusive = any(c.exclusive is not None for c in system.commands)
        self.asserted = {p.name for p in system.properties if p.kind == "assert"}

    def head(self, c: Command) -> str:
        """The test "``c``'s process may move" (prefix of the guard; empty without exclusive
        control)."""
        k = self.pid[c.process]
        return f"({EXCL} == 0 || {EXCL} == {k}) && " if self.exclusive else ""

    def checked(self, c: Command) -> list[tuple[str, Expr]]:
        """The command's assertions of the System's ``assert`` properties."""
        return [(name, cond) for name, cond in c.asserts if name in self.asserted]

    def command(self, c: Command) -> list[str]:
        """The options for one abstract command: its ``d_step`` and, when it has error
        conditions, the option that fails where one holds."""
        text = f"{c.process}: {c.text()}".replace("*/", "* /").replace("\n", " ")
        if len(text) > 160:
            text = text[:157] + "..."
        err = pre_error(c)
        out: list[str] = []
        if err != FALSE:
            cond = promela_expr(err)
            out.append(f"  :: d_step {{ {self.head(c)}{cond} -> assert(!{cond}) }}")
        guard = conj([neg(err), c.guard]) if err != FALSE else c.guard
        if guard == FALSE:
            return out
        targets = [n for n, _ in c.updates]
        reads_later = any(free_vars(rhs) & set(targets[:k]) for k, (_, rhs) in enumerate(c.updates))
        checks = [f"assert({promela_expr(cond)})" for _, cond in self.checked(c)]
        body: list[str] = []
        final: list[str] = []
        for k, (name, rhs) in enumerate(c.updates):
            if reads_later and not isinstance(rhs, Const):
                t = f"_t{k}"
                if t not in self.temps:
                    self.temps.append(t)
                body.append(_assign(t, rhs, _IND))
                final.append(f"{name} = {t}")
            else:
                final.append(_assign(name, rhs, _IND))
        if self.exclusive:
            final.append(f"{EXCL} = {self.pid[c.exclusive] if c.exclusive else 0}")
        steps = [*body, *final] or ["skip"]
        head = f"  :: d_step {{ {self.head(c)}{promela_expr(guard)} ->   /* {text} */"
        safe = _safety(self.system, self.concrete, c)
        if not safe:
            out.append(f"{head}\n{_IND}" + f";\n{_IND}".join([*checks, *steps]) + "\n     }")
            return out
        cond = " && ".join(f"({x})" for x in safe)
        inner = f";\n{_IND}   ".join(steps)
        pre = "".join(f"{x};\n{_IND}" for x in checks)
        out.append(
            f"{head}\n{_IND}{pre}if\n{_IND}:: {cond} ->\n{_IND}   {inner}\n"
            f"{_IND}:: else -> assert({cond})\n{_IND}fi\n     }}"
        )
        return out

    def releases(self) -> list[str]:
        """Where the process in control has no enabled command, control returns to all."""
        out: list[str] = []
        holders = {c.exclusive for c in self.system.commands if c.exclusive is not None}
        for p in self.system.processes:
            if p.name not in holders:
                continue
            mine = [c for c in self.system.commands if c.process == p.name]
            blocked = neg(disj([enabled_cleanly(self.system, c, self.checked(c)) for c in mine]))
            k = self.pid[p.name]
            out.append(
                f"  :: d_step {{ {EXCL} == {k} && {promela_expr(blocked)} -> {EXCL} = 0 }}"
                f"   /* {p.name} is blocked: it loses exclusive control */"
            )
        return out

    def text(self, abstraction: FourValuedAbstraction) -> str:
        model, system = self.model, self.system
        source = abstraction.system.file or abstraction.system.name or "a model"
        lines = [
            f"/* absmc four-valued abstraction of {source}: {_TITLES[model.kind]} */",
            "/* tracked predicates"
            + (" (0 false, 1 true, 2 unknown):" if model.kind == "must" else ":"),
        ]
        for name, p in zip(model.pred_vars, abstraction.partition.predicates, strict=True):
            lines.append(f"   {name}: {p.text}".replace("*/", "* /"))
        lines.append("*/")
        for v in system.variables:
            init = ("true" if v.init else "false") if isinstance(v.sort, BoolSort) else str(v.init)
            pred = isinstance(v.sort, RangeSort) and v.name in model.pred_vars
            lines.append(f"{'byte' if pred else promela_type(v.sort)} {v.name} = {init};")
        if self.exclusive:
            lines.append(f"byte {EXCL} = 0;   /* the process in exclusive control (0: none) */")
        options = [o for c in system.commands for o in self.command(c)]
        if self.exclusive:
            options += self.releases()
        if self.temps:
            lines.append(f"hidden int {', '.join(self.temps)};")
        lines += ["", "active proctype main() {", "end:", "  do", *options, "  od", "}"]
        states = [p for p in system.properties if p.kind != "assert"]
        if states:
            names = ", ".join(p.name for p in states)
            bad = " || ".join(f"({promela_expr(p.expr)})" for p in states)
            if self.exclusive:
                bad = f"{EXCL} == 0 && ({bad})"
            lines += [
                "",
                f"/* a state violating one of the abstract properties ({names}) ends the claim */",
                "never {",
                "  do",
                f"  :: {bad} -> break",
                "  :: else",
                "  od",
                "}",
            ]
        return "\n".join(lines) + "\n"


def model_to_promela(model: AbstractModel, abstraction: FourValuedAbstraction) -> str:
    """One abstract System as Promela (see module docstring)."""
    renamed = with_identifiers(model.system)
    names = dict(
        zip(
            (v.name for v in model.system.variables),
            (v.name for v in renamed.variables),
            strict=True,
        )
    )
    concrete = [names[n] for n in model.concrete]
    return _Writer(model, renamed, concrete).text(abstraction)


def to_promela_models(abstraction: FourValuedAbstraction) -> dict[str, str]:
    """``{"may": text, "must": text}``: both abstract Systems as Promela."""
    return {
        "may": model_to_promela(abstraction.may, abstraction),
        "must": model_to_promela(abstraction.must, abstraction),
    }


def export_abstractions(system: System, target: str) -> dict[str, str]:
    """Build the abstraction of ``system`` for all its properties and deadlock (always the
    general construction, also when nothing is abstracted: timeout as a guard condition,
    deadlock as a property), and write both abstract Systems in ``target`` (``promela`` or
    ``gcl``): ``{"may": text, "must": text}``. Raises ``ModelError`` for an unusable predicate,
    ``UsageError`` for an unknown target or when the solver cannot finish an enumeration, and
    ``ExportError`` when GCL cannot express an abstract System (Promela's atomic, timeout, ...)."""
    system = expand_system(system)  # array reads as case splits (ir.arrays)
    try:
        abstraction = build_abstraction(system, system.properties, deadlock=True, shortcut=False)
    except AbstractionIncomplete as err:
        raise UsageError(f"cannot build the abstraction: {err}") from None
    if target == "promela":
        return to_promela_models(abstraction)
    if target == "gcl":
        out: dict[str, str] = {}
        for model in (abstraction.may, abstraction.must):
            head = f"// absmc four-valued abstraction: {_TITLES[model.kind]}\n"
            # through the GCL exporter: its checks (what GCL cannot express) and renaming
            out[model.kind] = head + to_gcl(model.system)
        return out
    raise UsageError(f"cannot export to '{target}'")


def export_paths(output: str | None) -> dict[str, str]:
    """Where ``-o FILE`` puts the two models: ``FILE.may.EXT`` and ``FILE.must.EXT`` (``FILE.may``
    and ``FILE.must`` without an extension); ``{}`` for standard output."""
    if output is None:
        return {}
    base, dot, ext = output.rpartition(".")
    if not dot or "/" in ext or not base:
        return {kind: f"{output}.{kind}" for kind in ("may", "must")}
    return {kind: f"{base}.{kind}.{ext}" for kind in ("may", "must")}
