"""Partial-order reduction of the LTL product search (docs/reductions.md, "The LTL product
search"), the Python back end's; the C back end's is ``l_ample`` in ``native/runtime_ltl.c``,
with the same choice, so that both searches, which visit the product in the same order, store
the same states.

The conditions are Peled's ("Combining partial order reductions with on-the-fly
model-checking", CAV 1994; FMSD 8(1), 1996) and Clarke, Grumberg & Peled's (*Model Checking*,
§10.5):

* **C0, C1**: the ample set of a product state ``(s, q)`` is every enabled step of one process
  at a location safe in ``s`` (the safety search's choice,
  :meth:`absmc.kernel.explore.por.AmpleSets.safe_processes`), with each of the automaton's
  moves from ``q``.
* **C2**: the safe locations are computed with the visible variables of
  :func:`product_visible` (the state properties' and every variable the automata's guards
  read), so an ample step changes no atom.
* **Stutter invariance**: only next-free ``ltl`` blocks reduce (:func:`stutter_refusal`).
* **C3**, the stack condition of a DFS: the outer search takes, youngest first, the first safe
  process with some but not every step none of whose product successors is on its stack (the
  state itself counts as on it); else it expands fully.
* **The nested search** uses the outer search's recorded choice for each state (Holzmann,
  Peled & Yannakakis, "On nested depth first search", 1996), so both search one fixed reduced
  graph (:class:`ReducedProduct`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from absmc.ir.dependency import reads_of, visible_variables
from absmc.ir.ltl import NON_PROGRESS, Automaton, Ltl, LtlProperty
from absmc.ir.steps import Expansion, State
from absmc.ir.system import Property
from absmc.kernel.explore.por import AmpleSets
from absmc.kernel.ltl.product import ProductSemantics
from absmc.kernel.model.semantics import ModelWrapper

__all__ = [
    "FAIRNESS_REFUSAL",
    "ReducedProduct",
    "product_refusal",
    "product_visible",
    "stutter_refusal",
]

#: the note of a product search under weak fairness (searched unreduced)
FAIRNESS_REFUSAL = "weak fairness: the product is searched unreduced"


def _uses_next(f: Ltl) -> bool:
    return f.op == "X" or any(_uses_next(g) for g in f.args)


def stutter_refusal(prop: LtlProperty) -> str | None:
    """Why the product of ``prop`` is not reduced whatever the search (``None``: it may be):
    the reduction preserves only stutter-invariant properties (Peled 1994: next-free LTL;
    Peled & Wilke 1997), so never claims (not known to be stutter-invariant) and formulas with
    ``X`` are refused, as is the non-progress property (its progress labels are read through
    the program counters every step moves)."""
    if prop.name == NON_PROGRESS:
        return "non-progress cycles are searched unreduced"
    if prop.formula is None:
        return "a never claim is searched unreduced (not known to be stutter-invariant)"
    if _uses_next(prop.formula):
        return "a formula with X is searched unreduced (not stutter-invariant)"
    return None


def product_refusal(prop: LtlProperty, weakly_fair: bool) -> str | None:
    """Why the Python back end's product search for ``prop`` runs unreduced (``None``: it may
    reduce): :func:`stutter_refusal`, or weak fairness (its search has no fair-safe locations;
    the C search reduces with them, :mod:`absmc.native.fairpor`, docs/reductions.md "Weak
    fairness")."""
    why = stutter_refusal(prop)
    if why is None and weakly_fair:
        why = FAIRNESS_REFUSAL
    return why


def product_visible(
    properties: Iterable[Property], automata: Iterable[Automaton]
) -> frozenset[str]:
    """The visible variables of the product searches of one run (condition C2): those the
    selected state ``properties`` read and those the edge guards of ``automata`` (the automata
    of every property of the run that may reduce) read. Channels, program counters and remote
    references are IR variables, so ``len(c)``, ``P@label`` and ``P[i]:x`` atoms are covered."""
    guards = [e.guard for aut in automata for edges in aut.edges for e in edges]
    return visible_variables(properties) | reads_of(guards)


class ReducedProduct(ModelWrapper):
    """``product`` (a :class:`~absmc.kernel.ltl.product.ProductSemantics`) whose
    :meth:`successors` are the outer search's ample sets (see the module docstring) and whose
    :meth:`nested_successors` replay them for the nested search. ``ample``: the safe locations
    (its visible variables :func:`product_visible`'s); ``on_stack``: the outer search's stack
    (product state -> depth; the :class:`~absmc.kernel.explore.nested.NestedDfs` keeps it,
    filled after each expansion, so the state being expanded is not in it yet). ``reduced``
    counts the states expanded by an ample set only; ``chosen`` records the ample process of
    each of them (a state absent from it was expanded fully, or never by the outer search —
    past a depth bound, or a bitstate store's false match — and the nested search expands it
    fully: every lasso found is a lasso of the full product, and is replayed)."""

    def __init__(
        self, product: ProductSemantics, ample: AmpleSets, on_stack: Mapping[State, int]
    ) -> None:
        super().__init__(product)
        self.product = product
        self.ample = ample
        self.on_stack = on_stack
        self.size = product.size
        self.chosen: dict[State, int] = {}
        self.reduced = 0

    def _processes(self, succ: list[tuple[int, State]]) -> list[int]:
        """The process of each product step's system step (-1 for a stutter step)."""
        size, process_of = self.size, self.ample.process_of
        return [process_of(lab // size - 1) if lab >= size else -1 for lab, _ in succ]

    def successors(self, ps: State) -> Expansion:
        """The outer search's expansion of ``ps``: the full product's failures, and the steps
        of the first safe process (youngest first) with some but not every step, none of whose
        successors is on the outer stack or ``ps`` itself; every step when there is none."""
        succ, fails = self.product.successors(ps)
        if len(succ) < 2:
            return succ, fails
        procs: list[int] | None = None
        on_stack = self.on_stack
        for proc in self.ample.safe_processes(ps[:-1]):
            if procs is None:
                procs = self._processes(succ)
            mine = [st for st, p in zip(succ, procs, strict=True) if p == proc]
            if not mine:
                continue
            if len(mine) == len(succ):
                break  # the process has every step: nothing to leave out
            if any(t == ps or t in on_stack for _, t in mine):
                continue  # the cycle proviso: try the next safe process
            self.chosen[ps] = proc
            self.reduced += 1
            return mine, fails
        return succ, fails

    def nested_successors(self, ps: State) -> Expansion:
        """The nested search's expansion of ``ps``: the steps of the outer search's ample
        process for ``ps`` (all steps where it expanded ``ps`` fully)."""
        succ, fails = self.product.successors(ps)
        proc = self.chosen.get(ps)
        if proc is None:
            return succ, fails
        return [st for st, p in zip(succ, self._processes(succ), strict=True) if p == proc], fails

    def is_accepting(self, ps: State) -> bool:
        """The automaton part of ``ps`` is accepting."""
        return self.product.is_accepting(ps)
