"""Hand-written ``never { ... }`` claims as Büchi automata (:class:`absmc.ir.ltl.Automaton`).

The claim's control flow is SPIN's automaton of its body (:mod:`.fsm`, as for a proctype): a
claim state is an element number, a transition's first statement is its condition (an
expression over the global state, remote references and ``np_`` included; ``skip``, ``goto``
and ``printf`` are true; ``else`` is "no other transition of the state is executable"; an
``assert(e)`` is always executable and moves to the end, a match, where ``e`` is false, as
SPIN's Examples/werkplaats.pml uses it).
Accepting states are those labelled ``accept...``. Reaching the end of the claim is a *match*
(SPIN: "claim violated"): the end becomes an accepting state with a ``true`` self-loop, so the
nested search reports it as an acceptance cycle (a terminal system state stutters, so every
run that reaches it goes on forever).
"""

from __future__ import annotations

from absmc.ir.expr import TRUE, Expr
from absmc.ir.ltl import Automaton, Edge, LtlProperty
from absmc.ir.span import ModelError
from absmc.lang.promela.ast import ProcDecl
from absmc.lang.promela.fsm import build_fsm
from absmc.lang.promela.lower import Lowerer
from absmc.lang.promela.simplify import disj, neg

#: statements of a claim that are always executable and change nothing
_TRUE_KINDS = frozenset({"skip", "goto", "break", "print", "printm", ".", "label", "@"})


def claim_property(lowerer: Lowerer, decl: ProcDecl) -> LtlProperty:
    """The never claim ``decl`` as a linear-time property (named ``decl.name`` or
    ``never_0``). Raises ``ModelError`` for statements a claim may not contain."""
    fsm = build_fsm(decl, lowerer.m.inlines, lambda _n: True, lambda _n: 0, False, True)
    states = fsm.reachable()
    index = {s: i for i, s in enumerate(states)}
    end = len(states)
    edges: list[tuple[Edge, ...]] = []
    for s in states:
        guards: list[tuple[int, Expr | None]] = []
        for tr in fsm.trans.get(s, []):
            first = tr.first.n
            target = index.get(tr.target, end)
            if first is None or first.kind in _TRUE_KINDS:
                guards.append((target, TRUE))
            elif first.kind == "else":
                guards.append((target, None))
            elif first.kind == "c":
                guards.append((target, lowerer.state_expr(first.args[0])))
            elif first.kind == "assert" and len(tr.steps) == 1:
                # always executable; a false assertion is a match (SPIN: assertion violated)
                cond = lowerer.state_expr(first.args[0])
                guards += [(target, cond), (end, neg(cond))]
            else:
                raise ModelError(
                    f"a never claim may only test conditions (not '{first.kind}')",
                    first.span or decl.span,
                )
        others = disj([g for _, g in guards if g is not None])
        edges.append(tuple(Edge(t, g if g is not None else neg(others)) for t, g in guards))
    edges.append((Edge(end, TRUE),))
    accepting = {index[s] for s in fsm.accept_labels if s in index} | {end}
    names = [f"{decl.name or 'never'}@{s}" for s in states] + ["-end-"]
    automaton = Automaton(
        index[fsm.start], tuple(edges), frozenset(accepting), tuple(names), frozenset({end})
    )
    name = decl.name if decl.name and decl.name != "never" else "never_0"
    return LtlProperty(name, None, decl.span, claim=automaton, text="never claim")


__all__ = ["claim_property"]
