"""Linear-time properties (``ltl`` blocks, never claims) in the four-valued abstraction
(paper 004, §2.4: a four-valued check as two classical checks, one per join-irreducible
element of FOUR).

The property's violation automaton (Spot's Büchi automaton of the negated formula, or the never
claim) is searched for an accepting lasso with the kernel's product and nested DFS
(:func:`absmc.kernel.ltl.ltl.search_ltl`) on each abstract System, its edge guards read through the
System's view (:attr:`~absmc.engines.fourvalued.build.AbstractModel.view`); the formula's atoms
over abstracted variables are tracked predicates (``build_abstraction(ltl_atoms=...)``), so a
guard is ⊥ on an abstract state only where a predicate is unknown, and each side reads ⊥ the
way that keeps it sound:

* ``j = ⊥`` (the **may** System, transitions ``⊒ ⊥``): a guard is taken where it is *possibly*
  true (``guard ⊒ ⊥``), and the System stutters wherever the represented concrete state *may*
  be terminal (:class:`absmc.kernel.ltl.lasso.StutterWhere`; the product stutters at terminal
  states). Every concrete run of the product then has an abstract run through the same
  automaton states, so **no accepting lasso** means no concrete violation: value **t**
  (``holds``). An atomic chain of the abstraction cut at a repeated state makes that ⊥ (a
  concrete chain that loops forever leaves a terminal state the abstraction does not see).
* ``j = ⊤`` (the **must** System): guards taken only where *definitely* true, stuttering
  only where the concrete state is surely terminal. Its lasso
  stands, in the paper, for the value **f**; absmc reports ``violated`` only with a concrete
  lasso: the abstract lasso's concrete commands are executed from the initial state, the cycle
  repeated until the concrete state repeats (:func:`absmc.kernel.ltl.lasso.concretize_lasso`), and
  the lasso replayed with the original automaton (:func:`absmc.kernel.replay.trace.replay_lasso`).
  The may System's lasso is tried the same way first (it may replay as it is).
* Otherwise **⊥** (``unknown``), naming why the abstract lasso is not concretizable (e.g. an
  abstract cycle of ``x := x + 1`` that never closes concretely).

Weak fairness and non-progress cycles are not offered (refused with ``OptionError``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from absmc.codegen.python import CompiledSystem, State, compile_system
from absmc.engines.fourvalued.bilattice import Belnap
from absmc.engines.fourvalued.build import HELPER, AbstractModel, FourValuedAbstraction
from absmc.ir.expr import Expr, disj
from absmc.ir.ltl import Automaton, LtlProperty
from absmc.ir.sorts import BoolSort
from absmc.kernel.explore.store import ExactStore
from absmc.kernel.ltl.irproduct import guard_fn
from absmc.kernel.ltl.lasso import (
    StutterWhere,
    abstract_lasso,
    abstract_lasso_trace,
    concretize_lasso,
    guard_atoms,
    search_viewed,
)
from absmc.kernel.ltl.ltl import LASSO_NOTE, automaton_of, ltl_result, search_ltl
from absmc.kernel.ltl.product import STUTTER, decode
from absmc.kernel.replay.trace import ReplayError, Unconfirmed, replay_lasso
from absmc.kernel.run.options import Limits
from absmc.kernel.run.result import PropertyResult, StateValue, Stats, Trace, Verdict

METHOD = "fourvalued"

__all__ = ["LassoRefutation", "check_ltl", "ltl_atoms"]


def ltl_atoms(props: Sequence[LtlProperty]) -> list[tuple[Expr, str]]:
    """The atoms of the properties' automata with their origin (for the partition)."""
    return [(a, f"atom of ltl {p.name}") for p in props for a in guard_atoms(automaton_of(p))]


@dataclass
class LassoRefutation:
    """An unconfirmed abstract lasso of one property: the concrete commands per step (stem,
    then the cycle as often as the replay got, stutter steps empty) and where it failed (what
    a refinement starts from)."""

    steps: list[tuple[int, ...]]
    error: Unconfirmed
    #: the automaton edge guard that failed after ``steps`` (the lasso ran concretely)
    condition: Expr | None = None


class _Side:
    """One abstract System's product search."""

    def __init__(
        self,
        model: AbstractModel,
        compiled: CompiledSystem,
        prop: LtlProperty,
        aut: Automaton,
        limits: Limits,
    ) -> None:
        self.model = model
        self.compiled = compiled
        view = model.view
        assert view is not None and model.terminal is not None
        # may: stutter also where the state may be terminal; must: only where it surely is
        must = model.kind == "must"
        self.sem = StutterWhere(self.compiled, model.terminal(), terminal_too=must)
        self.found = search_viewed(self.sem, prop, aut, view, limits, stutter=not must)

    def concrete_commands(self, label: int) -> tuple[int, ...]:
        origin = self.model.origin
        return tuple(origin[i] for i in self.compiled.commands_of(label) if origin[i] != HELPER)

    @property
    def word(self) -> str:
        if self.found.lasso is not None:
            return "violated"
        return "holds" if self.found.outcome.stopped is None else "unknown"


def _confirm(
    concrete: CompiledSystem, aut: Automaton, side: _Side
) -> tuple[list[int], int] | LassoRefutation:
    """Concretize ``side``'s lasso (:func:`absmc.kernel.ltl.lasso.concretize_lasso`): the concrete
    product labels and cycle start, or the unconfirmed lasso (its steps unrolled as far as the
    concrete run got)."""
    lasso = side.found.lasso
    assert lasso is not None
    abstract = abstract_lasso(lasso.path, lasso.cycle_start, aut.size, side.concrete_commands)
    steps = [s if s is not None else () for s in abstract.steps]
    try:
        return concretize_lasso(concrete, aut, abstract)
    except Unconfirmed as err:
        unrolled = list(steps)
        while len(unrolled) < err.step:
            unrolled += steps[abstract.cycle_start :]
        return LassoRefutation(unrolled[: max(err.step, 1)], err)


def _left_automaton(
    sem: CompiledSystem, aut: Automaton, labels: list[int], err: ReplayError
) -> LassoRefutation:
    """A concrete lasso whose replay failed (``err``): where the automaton's guard fails first
    (the steps before it and the guard), else just the error."""
    system = sem.system
    s, q = sem.initial, aut.initial
    done: list[tuple[int, ...]] = []
    for plabel in labels:
        ci, target = decode(plabel, aut.size)
        guards = [e.guard for e in aut.edges[q] if e.target == target]
        if not any(guard_fn(system, g)(s) for g in guards):
            failed = Unconfirmed(len(done) + 1, f"the automaton has no edge {q} -> {target} here")
            return LassoRefutation(done, failed, disj(guards))
        if ci != STUTTER:
            s = next(t for lab, t in sem.successors(s)[0] if lab == ci)
            done.append(sem.commands_of(ci))
        else:
            done.append(())
        q = target
    return LassoRefutation(done, Unconfirmed(len(done), str(err)))


def _stats(may: _Side, must: _Side | None, extra: dict[str, object]) -> Stats:
    sides = [may] if must is None else [may, must]
    outs = [s.found.outcome for s in sides]
    return Stats(
        sum(o.states for o in outs),
        sum(o.transitions for o in outs),
        max(o.max_depth for o in outs),
        sum(o.time_s for o in outs),
        extra={
            **extra,
            "automaton_states": may.found.automaton.size,
            "may_states": outs[0].states,
            "must_states": outs[1].states if must is not None else 0,
            "nested_states": sum(s.found.nested_states for s in sides),
        },
    )


def _abstract(
    abstraction: FourValuedAbstraction,
    systems: tuple[CompiledSystem, CompiledSystem],
    concrete: CompiledSystem,
    prop: LtlProperty,
    aut: Automaton,
    limits: Limits,
) -> tuple[PropertyResult, LassoRefutation | None]:
    """One property on the may and must Systems (module docstring)."""
    may = _Side(abstraction.may, systems[0], prop, aut, limits)
    extra: dict[str, object] = {"may": may.word}

    def result(
        verdict: Verdict, value: Belnap, reason: str, must: _Side | None = None, **more: object
    ) -> PropertyResult:
        extra["value"] = value.symbol
        extra.update(more)
        stats = _stats(may, must, {})
        return PropertyResult(prop.name, "ltl", METHOD, verdict, reason, stats, extra=extra)

    if may.found.lasso is None:
        stopped = may.found.outcome.stopped
        if stopped is not None:
            return result(
                Verdict.UNKNOWN,
                Belnap.UNKNOWN,
                f"value ⊥: the may-product search stopped ({stopped})",
            ), None
        if may.compiled.cut_chains > 0:
            reason = (
                "value ⊥: no accepting lasso in the may-abstraction, but an atomic chain of it "
                "came back to a state it had passed: a concrete process may loop forever inside "
                "atomic (a terminal state the abstraction does not see)"
            )
            return result(
                Verdict.UNKNOWN, Belnap.UNKNOWN, reason, undecided="looping atomic chain"
            ), None
        reason = (
            f"value t: no accepting lasso in the may-abstraction (over-approximation, "
            f"{may.found.outcome.states:,} product states)"
        )
        return result(Verdict.HOLDS, Belnap.TRUE, reason), None
    failed: list[tuple[str, LassoRefutation]] = []
    must: _Side | None = None
    for name in ("may-lasso", "must-lasso"):
        if name == "must-lasso":
            must = _Side(abstraction.must, systems[1], prop, aut, limits)
            extra["must"] = must.word
            if must.found.lasso is None:
                break
        side = may if must is None else must
        got = _confirm(concrete, aut, side)
        if isinstance(got, LassoRefutation):
            failed.append((name, got))
            continue
        labels, start = got
        try:
            trace = replay_lasso(
                concrete,
                aut,
                labels,
                start,
                LASSO_NOTE,
            )
        except ReplayError as err:
            failed.append((name, _left_automaton(concrete, aut, labels, err)))
            continue
        n = len(trace.steps) - 1
        reason = (
            f"value f: the {name[:-6]}-abstraction's accepting lasso replays concretely: a "
            f"lasso of {n} step{'s' if n != 1 else ''}, the cycle from step {trace.cycle_start}"
        )
        r = result(Verdict.VIOLATED, Belnap.FALSE, reason, must, confirmed_by=name)
        return PropertyResult(
            r.property, "ltl", METHOD, Verdict.VIOLATED, reason, r.stats, trace, 1, extra=r.extra
        ), None
    why = "; ".join(f"{name}: {got.error}" for name, got in failed)
    reason = f"value ⊥: abstract lasso not concretizable ({why})"
    if must is not None and must.found.lasso is None:
        reason += "; the must-abstraction has no accepting lasso" + (
            f" (search stopped: {must.found.outcome.stopped})" if must.found.outcome.stopped else ""
        )
    refutation = failed[0][1]
    r = result(Verdict.UNKNOWN, Belnap.UNKNOWN, reason, must, unconfirmed=why)
    return replace(r, trace=_may_trace(abstraction, may, aut, why)), refutation


def _may_trace(abstraction: FourValuedAbstraction, may: _Side, aut: Automaton, why: str) -> Trace:
    """The may-System's accepting lasso over abstract states (concrete variables and the
    tracked predicates as ``[p]``), not replayed."""
    lasso = may.found.lasso
    assert lasso is not None
    model = may.model
    n = len(model.concrete)
    variables = model.system.variables[:n]
    preds = abstraction.partition.predicates

    def show(s: State) -> dict[str, StateValue]:
        d: dict[str, StateValue] = {
            v.name: bool(x) if isinstance(v.sort, BoolSort) else x
            for v, x in zip(variables, s, strict=False)
        }
        for i, p in enumerate(preds):
            d[f"[{p.text}]"] = bool(s[n + i])
        return d

    note = f"unconfirmed: an accepting lasso of the may-abstraction without a concrete run ({why})"
    return abstract_lasso_trace(
        may.sem,
        abstraction.system,
        lasso.path,
        lasso.cycle_start,
        aut.size,
        show,
        may.concrete_commands,
        note,
    )


def check_ltl(
    abstraction: FourValuedAbstraction,
    concrete: CompiledSystem,
    props: Sequence[LtlProperty],
    limits: Limits,
    systems: tuple[CompiledSystem, CompiledSystem] | None = None,
) -> tuple[list[PropertyResult], dict[str, LassoRefutation]]:
    """The results of the linear-time properties ``props`` (module docstring) and, per ⊥
    property, its unconfirmed lasso. ``concrete`` is ``system`` compiled; ``limits`` bound
    each product search; ``systems`` are the may and must Systems compiled (compiled here when
    not given). With nothing abstracted the check is the explicit one."""
    results: list[PropertyResult] = []
    unconfirmed: dict[str, LassoRefutation] = {}
    for prop in props:
        aut = automaton_of(prop)
        if abstraction.may.exact:
            found = search_ltl(concrete, prop, ExactStore(), ExactStore(), limits)
            out = found.outcome
            stats = Stats(out.states, out.transitions, out.max_depth, out.time_s)
            r = ltl_result(concrete, prop, found, METHOD, stats, True)
            value = {Verdict.HOLDS: Belnap.TRUE, Verdict.VIOLATED: Belnap.FALSE}.get(
                r.verdict, Belnap.UNKNOWN
            )
            r.extra["value"] = value.symbol
            results.append(r)
            continue
        if systems is None:
            systems = (
                compile_system(abstraction.may.system, ()),
                compile_system(abstraction.must.system, ()),
            )
        result, refutation = _abstract(abstraction, systems, concrete, prop, aut, limits)
        results.append(result)
        if refutation is not None:
            unconfirmed[prop.name] = refutation
    return results, unconfirmed
