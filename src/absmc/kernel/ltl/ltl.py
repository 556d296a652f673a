"""Checking one linear-time property (an ``ltl`` block or a ``never`` claim) on a Semantics:
the product with the property's violation automaton (:mod:`absmc.kernel.ltl.product`), searched by
the one DFS of :mod:`absmc.kernel.explore.search` with the nested search of
:mod:`absmc.kernel.explore.nested` as its hooks, and the verdict (a ``violated`` verdict only with a
lasso replayed by :func:`absmc.kernel.replay.trace.replay_lasso`). With ``safety`` the same search
also checks the system's safety properties on the product's states and steps (SPIN's checks "within
scope of claim"); :attr:`LtlOutcome.violations` holds what it found, as system paths.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from absmc.ir.ltl import NON_PROGRESS, Automaton, LtlProperty
from absmc.ir.steps import Expansion, State
from absmc.kernel.explore.nested import Lasso, NestedDfs
from absmc.kernel.explore.por import POR, AmpleSets
from absmc.kernel.explore.search import SearchOutcome, Violation, search
from absmc.kernel.explore.store import Store
from absmc.kernel.ltl.buchi import violation_automaton
from absmc.kernel.ltl.fairness import FairSemantics, fair_decode
from absmc.kernel.ltl.irproduct import fair_product, product_of
from absmc.kernel.ltl.por import ReducedProduct, product_refusal
from absmc.kernel.ltl.product import ProductSemantics, system_path
from absmc.kernel.model.irsemantics import IRSemantics
from absmc.kernel.replay.trace import replay_lasso
from absmc.kernel.run.options import Limits, Progress
from absmc.kernel.run.result import PropertyResult, Stats, Trace, Verdict

__all__ = ["LASSO_NOTE", "LtlOutcome", "automaton_of", "ltl_result", "search_ltl"]

#: the note of every replayed LTL counterexample (a lasso)
LASSO_NOTE = (
    "the run repeats the cycle forever: an accepting run of the property's violation automaton"
)


def automaton_of(prop: LtlProperty) -> Automaton:
    """The automaton whose accepting runs violate ``prop``: a never claim's own, or Spot's
    translation of the negated formula."""
    if prop.claim is not None:
        return prop.claim
    assert prop.formula is not None
    return violation_automaton(prop.formula)


@dataclass
class LtlOutcome:
    """What the product search found: the outer search's outcome, the first lasso (product
    labels) if any, the states the nested searches stored, the automaton searched with, and
    (with ``safety``) the first violation of each safety property met on the way, its path in
    system labels (``violations``; property name -> violation), and statistics the search adds
    (``extra``)."""

    outcome: SearchOutcome
    lasso: Lasso | None
    nested_states: int
    automaton: Automaton
    weakly_fair: bool = False
    violations: dict[str, Violation] = field(default_factory=dict)
    #: statistics of the search's own (e.g. the native back end's store bytes)
    extra: dict[str, object] = field(default_factory=dict)


def search_ltl(
    sem: IRSemantics,
    prop: LtlProperty,
    store: Store,
    nested_store: Store,
    limits: Limits | None = None,
    progress: Callable[[Progress], None] | None = None,
    deadline: float | None = None,
    weakly_fair: bool = False,
    stutter: bool = True,
    safety: bool = False,
    deadlock: bool = False,
    keep_going: bool = False,
    spin_order: bool = False,
    reduce: Callable[[], AmpleSets] | None = None,
    hand_over: Callable[[int], bool] | None = None,
) -> LtlOutcome:
    """Search the product of ``sem`` with ``prop``'s violation automaton for an accepting
    cycle (nested DFS; ``store`` for the outer search, ``nested_store`` for the nested ones).
    Stops at the first cycle; limits end the search with ``outcome.stopped`` set. With
    ``weakly_fair``, only weakly fair cycles count (:mod:`absmc.kernel.ltl.fairness`). Without
    ``stutter`` the product does not stutter at terminal states (an abstraction that says
    where it may stutter itself, :class:`absmc.kernel.ltl.lasso.StutterWhere`). With ``safety``
    the search also checks ``sem``'s failures and state properties (and, with ``deadlock``,
    its invalid end states) on the product (:class:`~absmc.kernel.ltl.product.ProductSemantics`),
    stopping at the first such violation unless ``keep_going`` (SPIN's ``-c1``; the first
    cycle stops it either way). ``spin_order``: SPIN's order of the steps (highest process
    first) and its early cycle detection in the outer search (:class:`NestedDfs` ``early``),
    which find SPIN's short lassos sooner. ``reduce``: partial-order reduction of the product
    (:mod:`absmc.kernel.ltl.por`) with the safe locations ``reduce()`` gives (called only when
    :func:`~absmc.kernel.ltl.por.product_refusal` does not refuse ``prop``; their visible
    variables :func:`~absmc.kernel.ltl.por.product_visible`'s); ``extra`` then has
    ``reductions`` (``["partial-order"]``) and ``reduced_states`` (states expanded by an ample
    set only), or ``reduction_note``, why the search ran unreduced. ``hand_over(states
    stored)``: as :func:`~absmc.kernel.explore.search.search`'s (the outer search asks it)."""
    aut = automaton_of(prop)
    product = product_of(
        sem,
        aut,
        stutter=stutter and prop.name != NON_PROGRESS,
        safety=safety,
        deadlock=deadlock,
        spin_ordered=spin_order,
    )
    searched: ProductSemantics | FairSemantics | ReducedProduct = product
    if weakly_fair:
        searched = fair_product(product, sem)
    extra: dict[str, object] = {}
    nested: Callable[[State], Expansion] = searched.successors
    on_stack: dict[State, int] = {}
    if reduce is not None:
        why = product_refusal(prop, weakly_fair)
        ample = reduce() if why is None else None
        if ample is not None and not ample.active:
            why = "no location is safe for the property"
        if why is None and ample is not None:
            searched = ReducedProduct(product, ample, on_stack)
            nested = searched.nested_successors
        else:
            extra["reduction_note"] = why
    hooks = NestedDfs(
        nested,
        searched.is_accepting,
        prop.name,
        f"ltl '{prop.name}' violated: an accepting cycle",
        nested_store,
        early=spin_order,
        on_stack=on_stack,
    )
    outcome = search(
        searched,
        store,
        order="dfs",
        limits=limits,
        keep_going=keep_going,
        check_deadlock=False,
        progress=progress,
        hooks=hooks,
        deadline=deadline,
        hand_over=hand_over,
    )
    lasso = hooks.lasso
    if lasso is not None and isinstance(searched, FairSemantics):
        k = searched.k
        lasso = Lasso([fair_decode(label, k)[0] for label in lasso.path], lasso.cycle_start)
    found: dict[str, Violation] = {}
    for name, v in outcome.violations.items():
        if name == prop.name:
            continue
        path = v.path
        if isinstance(searched, FairSemantics):
            path = [fair_decode(label, searched.k)[0] for label in path]
        found[name] = Violation(name, system_path(path, aut.size), v.message, v.count)
    if isinstance(searched, ReducedProduct):
        extra["reductions"] = [POR]
        extra["reduced_states"] = searched.reduced
    return LtlOutcome(outcome, lasso, hooks.states, aut, weakly_fair, found, extra)


def ltl_result(
    sem: IRSemantics,
    prop: LtlProperty,
    found: LtlOutcome,
    method: str,
    stats: Stats,
    exhaustive: bool,
    incomplete_reason: str | None = None,
) -> PropertyResult:
    """The verdict of one linear-time property from its product search (``stats.states``: the
    outer search's product states, SPIN's "states, stored"; the nested searches' states go to
    ``extra["nested_states"]``): ``violated`` with the
    lasso replayed on ``sem`` (``ReplayError`` if it does not replay), ``holds`` when the search
    was ``exhaustive`` (exact store) and not stopped, else ``unknown``."""
    out = found.outcome
    stats = replace(
        stats,
        extra={
            **stats.extra,
            "automaton_states": found.automaton.size,
            "nested_states": found.nested_states,
        },
    )
    if found.lasso is not None:
        trace: Trace = replay_lasso(
            sem,
            found.automaton,
            found.lasso.path,
            found.lasso.cycle_start,
            LASSO_NOTE + (" (weakly fair)" if found.weakly_fair else ""),
            found.weakly_fair,
        )
        n = len(trace.steps) - 1
        reason = (
            f"acceptance cycle: a lasso of {n} step{'s' if n != 1 else ''}, "
            f"the cycle from step {trace.cycle_start}"
        )
        return PropertyResult(prop.name, "ltl", method, Verdict.VIOLATED, reason, stats, trace, 1)
    if out.stopped is None and exhaustive:
        reason = f"no acceptance cycle in the {out.states:,} reachable product states"
        return PropertyResult(prop.name, "ltl", method, Verdict.HOLDS, reason, stats)
    why = out.stopped or incomplete_reason or "search incomplete"
    return PropertyResult(prop.name, "ltl", method, Verdict.UNKNOWN, why, stats)
