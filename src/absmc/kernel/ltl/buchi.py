"""LTL to Büchi automata with Spot (PyPI ``spottl``, imported as ``spot``).

:func:`violation_automaton` translates the *negation* of an LTL formula (its accepting runs are
the violations) into a state-based Büchi automaton (Spot's ``translate(..., "BA", "sbacc")``,
small and highly optimized) and turns each edge's BDD label back into an IR guard over the
formula's atoms (the atoms are the IR state expressions themselves, named ``p0, p1, ...`` for
Spot). Results are cached per formula (formulas are hash-consed).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from absmc.ir.expr import FALSE, TRUE, Expr, conj, disj, neg
from absmc.ir.ltl import Automaton, Edge, Ltl, atoms_of, mk_ltl, to_spot_text

__all__ = ["automaton_text", "spot_automaton", "violation_automaton"]


def spot_automaton(f: Ltl) -> tuple[Any, dict[str, Expr]]:
    """Spot's state-based Büchi automaton (a ``spot.twa_graph``) of ``f`` itself and the map
    from Spot's atomic proposition names to the atoms' IR expressions."""
    import spot

    names = {e: f"p{i}" for i, e in enumerate(atoms_of(f))}
    aut = spot.translate(spot.formula(to_spot_text(f, names)), "BA", "sbacc", "small", "high")
    return aut, {n: e for e, n in names.items()}


@cache
def violation_automaton(f: Ltl) -> Automaton:
    """The Büchi automaton of ``!f`` with IR guards (cached). Raises nothing for well-formed
    formulas (Spot's own errors would be internal errors)."""
    import spot

    aut, atoms = spot_automaton(mk_ltl("!", f))
    bdict = aut.get_dict()
    n = aut.num_states()
    edges: list[tuple[Edge, ...]] = []
    accepting: set[int] = set()
    for q in range(n):
        if aut.state_is_accepting(q):
            accepting.add(q)
        out = []
        for e in aut.out(q):
            guard = _to_expr(spot.bdd_to_formula(e.cond, bdict), atoms)
            if guard != FALSE:
                out.append(Edge(int(e.dst), guard))
        edges.append(tuple(out))
    return Automaton(
        int(aut.get_init_state_number()),
        tuple(edges),
        frozenset(accepting),
        tuple(f"S{q}" for q in range(n)),
    )


def _to_expr(g: Any, atoms: dict[str, Expr]) -> Expr:
    """A Boolean Spot formula (an edge label) as an IR expression."""
    import spot

    k = g.kind()
    if k == spot.op_tt:
        return TRUE
    if k == spot.op_ff:
        return FALSE
    if k == spot.op_ap:
        return atoms[g.ap_name()]
    kids = [_to_expr(c, atoms) for c in g]
    if k == spot.op_Not:
        return neg(kids[0])
    if k == spot.op_And:
        return conj(kids)
    if k == spot.op_Or:
        return disj(kids)
    raise ValueError(f"unexpected operator in an edge label: {g}")


def automaton_text(f: Ltl, fmt: str = "hoa") -> str:
    """Spot's violation automaton of ``f`` (the automaton of ``!f``) as text: ``hoa`` (the
    Hanoi Omega-Automata format) or ``spin`` (a never claim); atoms are named ``p0, p1, ...``
    and listed first as comments (``// p0 = EXPR``). Raises ``ValueError`` for another
    ``fmt``."""
    from absmc.ir.printer import format_expr

    if fmt not in ("hoa", "spin"):
        raise ValueError(f"unknown automaton format {fmt!r}")
    aut, atoms = spot_automaton(mk_ltl("!", f))
    legend = "".join(f"// {n} = {format_expr(e)}\n" for n, e in atoms.items())
    return legend + str(aut.to_str(fmt))
