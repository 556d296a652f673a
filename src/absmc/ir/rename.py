"""Renaming variables of a System everywhere they occur, and making names into identifiers of
an output language (for exporters)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace

from absmc.ir.expr import Expr, Var, substitute
from absmc.ir.system import System


def rename_variables(system: System, names: Mapping[str, str]) -> System:
    """``system`` with each variable ``v`` in ``names`` renamed to ``names[v]`` in its
    declaration and in every expression: guards, updates, assertions, error conditions,
    properties, predicates and the valid-end condition. Names not in ``names`` stay."""
    if all(names.get(v.name, v.name) == v.name for v in system.variables):
        return system
    new = {v.name: names.get(v.name, v.name) for v in system.variables}
    ren = {old: Var(n, system.by_name[old].sort) for old, n in new.items() if n != old}

    def sub(e: Expr) -> Expr:
        return substitute(e, ren)

    commands = tuple(
        replace(
            c,
            guard=sub(c.guard),
            updates=tuple((new[n], sub(e)) for n, e in c.updates),
            asserts=tuple((n, sub(e)) for n, e in c.asserts),
            errors=tuple((sub(e), m) for e, m in c.errors),
        )
        for c in system.commands
    )
    return replace(
        system,
        variables=tuple(replace(v, name=new[v.name]) for v in system.variables),
        commands=commands,
        properties=tuple(replace(p, expr=sub(p.expr)) for p in system.properties),
        predicates=tuple(sub(e) for e in system.predicates),
        valid_end=sub(system.valid_end) if system.valid_end is not None else None,
    )


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def identifier_map(
    names: Iterable[str], reserved: frozenset[str] = frozenset(), used: set[str] | None = None
) -> dict[str, str]:
    """A map from each name to a unique identifier (``[A-Za-z_][A-Za-z0-9_]*``, not in
    ``reserved``): names that already are identifiers keep their spelling where possible,
    others get their non-word characters replaced by ``_`` (``P(0)._p`` -> ``P_0___p``).
    ``used`` (updated) holds identifiers already taken."""
    taken = used if used is not None else set()
    out: dict[str, str] = {}
    for name in names:
        base = re.sub(r"\W", "_", name)
        if not _IDENT.fullmatch(base) or base in reserved:
            base = "_" + base
        ident, k = base, 1
        while ident in taken:
            ident, k = f"{base}_{k}", k + 1
        taken.add(ident)
        out[name] = ident
    return out
