"""The abstract Systems as Promela models for SPIN (paper 004, §3.2: "the diagrams are then
encoded as transitions in an abstract model using only standard Promela if-statements and
assignments").

Each abstract System becomes one process whose ``do`` loop has one ``d_step`` per abstract
command: the guard, then assignments; a post-state value that depends on the pre-state (the
must-abstraction's consensus ``1`` / ``0`` / unknown ``2``) is written as an ``if`` statement,
never as a conditional expression. Simultaneous assignments go through ``hidden`` temporaries
when a later right-hand side reads an earlier target. The abstract properties (their "bad"
conditions, deadlock included) are checked by one ``never`` claim that ends — a violation for
SPIN — in a bad state (a claim is compiled once; asserting the large abstract conditions after
every one of the many may-commands would make ``pan.c`` huge). The loop head is an ``end``
state, because the abstractions are searched without the built-in deadlock check (deadlock is
one of the claimed properties). A concrete assignment outside an error range (or a division by
zero) is a failed ``assert`` and the step then changes nothing, as in
:func:`absmc.lang.promela.export.to_promela`.

SPIN explores exactly the abstract System's states (``spin -o1``, ``-DNOREDUCE``), so its state
count and its verdict can be compared with absmc's.
"""

from __future__ import annotations

from absmc.engines.fourvalued.build import (
    AbstractionIncomplete,
    AbstractModel,
    FourValuedAbstraction,
    build_abstraction,
)
from absmc.engines.fourvalued.semantics import defined, range_ok
from absmc.ir.expr import TRUE, Const, Expr, Op, free_vars
from absmc.ir.printer import format_system
from absmc.ir.sorts import BoolSort, RangeSort
from absmc.ir.system import Command, System
from absmc.lang.promela.export import promela_expr, promela_type

_TITLES = {
    "may": "may-abstraction (over-approximation; j = ⊥: transitions that may exist)",
    "must": "must-abstraction (under-approximation; j = ⊤: transitions that must exist)",
}


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


def _safety(model: AbstractModel, c: Command) -> list[str]:
    """Conditions without which an update of a concrete variable is a model error."""
    concrete = [(n, e) for n, e in c.updates if n in model.concrete]
    safe = [promela_expr(defined(e)) for _, e in concrete if defined(e) != TRUE]
    ok = range_ok(model.system, Command(c.process, c.guard, tuple(concrete)))
    if ok != TRUE:
        safe.append(promela_expr(ok))
    return safe


def _command(model: AbstractModel, c: Command, temps: list[str]) -> str:
    targets = [n for n, _ in c.updates]
    reads_later = any(free_vars(rhs) & set(targets[:k]) for k, (_, rhs) in enumerate(c.updates))
    ind = "        "
    body: list[str] = []
    final: list[str] = []
    for k, (name, rhs) in enumerate(c.updates):
        if reads_later and not isinstance(rhs, Const):
            t = f"_t{k}"
            if t not in temps:
                temps.append(t)
            body.append(_assign(t, rhs, ind))
            final.append(f"{name} = {t}")
        else:
            final.append(_assign(name, rhs, ind))
    steps = [*body, *final] or ["skip"]
    text = f"{c.process}: {c.text()}".replace("*/", "* /").replace("\n", " ")
    head = f"  :: d_step {{ {promela_expr(c.guard)} ->   /* {text} */"
    safe = _safety(model, c)
    if not safe:
        return f"{head}\n{ind}" + f";\n{ind}".join(steps) + "\n     }"
    cond = " && ".join(f"({x})" for x in safe)
    inner = f";\n{ind}   ".join(steps)
    return (
        f"{head}\n{ind}if\n{ind}:: {cond} ->\n{ind}   {inner}\n"
        f"{ind}:: else -> assert({cond})\n{ind}fi\n     }}"
    )


def model_to_promela(model: AbstractModel, abstraction: FourValuedAbstraction) -> str:
    """One abstract System as Promela (see module docstring)."""
    system = model.system
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
        if isinstance(v.sort, BoolSort):
            init = "true" if v.init else "false"
        else:
            init = str(v.init)
        typ = "byte" if isinstance(v.sort, RangeSort) and v.name in model.pred_vars else None
        lines.append(f"{typ or promela_type(v.sort)} {v.name} = {init};")
    temps: list[str] = []
    options = [_command(model, c, temps) for c in system.commands]
    if temps:
        lines.append(f"hidden int {', '.join(temps)};")
    lines += ["", "active proctype main() {", "end:", "  do", *options, "  od", "}"]
    if system.properties:
        names = ", ".join(p.name for p in system.properties)
        bad = " || ".join(f"({promela_expr(p.expr)})" for p in system.properties)
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


def to_promela_models(abstraction: FourValuedAbstraction) -> dict[str, str]:
    """``{"may": text, "must": text}``: both abstract Systems as Promela."""
    return {
        "may": model_to_promela(abstraction.may, abstraction),
        "must": model_to_promela(abstraction.must, abstraction),
    }


def export_abstractions(system: System, target: str) -> dict[str, str]:
    """Build the abstraction of ``system`` for all its properties and deadlock, and write both
    abstract Systems in ``target`` (``promela`` or ``gcl``): ``{"may": text, "must": text}``.
    Raises ``ModelError`` for an unusable predicate, ``ValueError`` for an unknown target or
    when the solver cannot finish an enumeration."""
    try:
        abstraction = build_abstraction(system, system.properties, deadlock=True)
    except AbstractionIncomplete as err:
        raise ValueError(str(err)) from None
    if target == "promela":
        return to_promela_models(abstraction)
    if target == "gcl":
        out: dict[str, str] = {}
        for model in (abstraction.may, abstraction.must):
            head = f"// absmc four-valued abstraction: {_TITLES[model.kind]}\n"
            out[model.kind] = head + format_system(model.system)
        return out
    raise ValueError(f"cannot export to '{target}'")


def export_paths(output: str | None) -> dict[str, str]:
    """Where ``-o FILE`` puts the two models: ``FILE.may.EXT`` and ``FILE.must.EXT`` (``FILE.may``
    and ``FILE.must`` without an extension); ``{}`` for standard output."""
    if output is None:
        return {}
    base, dot, ext = output.rpartition(".")
    if not dot or "/" in ext or not base:
        return {kind: f"{output}.{kind}" for kind in ("may", "must")}
    return {kind: f"{base}.{kind}.{ext}" for kind in ("may", "must")}
