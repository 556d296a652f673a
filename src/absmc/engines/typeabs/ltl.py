"""Linear-time properties (``ltl`` blocks, never claims) on the abstract program of the
type-based abstraction (paper 001, §3.2 and §7).

1. **Proof.** The property's violation automaton is searched for an accepting lasso with the
   kernel's product and nested DFS (:func:`absmc.kernel.ltl.ltl.search_ltl`) on the abstract
   System, every edge guard read as ``may(guard)`` (it *may* hold in a concrete state the
   abstract state represents) and with a stutter step wherever a represented concrete state may
   be terminal (:attr:`~absmc.engines.typeabs.generate.Abstraction.terminal`,
   :class:`absmc.kernel.ltl.lasso.StutterWhere`). The abstract program simulates the concrete one:
   every concrete step ``s -> t`` has an abstract step ``alpha(s) -> alpha(t)`` (one command
   per outcome of each imprecise operation, the nondeterministic ``choose``), a guard that holds
   in ``s`` has ``may(guard)`` in ``alpha(s)``, and a concrete terminal state's abstraction may
   stutter. So every accepting run of the concrete product has an accepting abstract run, and
   **no accepting lasso** in the (finite) abstract product means the property ``holds``. An
   atom whose value the abstract state does not determine is true *and* false under ``may``:
   it never supports ``holds`` on its own.
2. **Counterexample.** Otherwise the *choose-free* System
   (:meth:`~absmc.engines.typeabs.generate.Abstraction.choose_free`: a ``choose`` step leads to
   a dead state) is searched with the guards read as ``must(guard)`` (surely true), then as
   ``may(guard)``. Its lasso follows deterministic abstract steps only; its concrete commands
   are executed from the initial state, the cycle repeated until the concrete state repeats
   (:func:`absmc.kernel.ltl.lasso.concretize_lasso`), and the concrete lasso is replayed with the
   original automaton (:func:`absmc.kernel.replay.trace.replay_lasso`): ``violated``.
3. Otherwise ``unknown``, naming why (the lasso uses ``choose``; the abstract cycle does not
   close concretely; ...).

Weak fairness and non-progress cycles are refused (``OptionError``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from absmc.codegen.python import CompiledSystem, compile_system
from absmc.engines.typeabs.absexpr import GenerationTimeout
from absmc.engines.typeabs.generate import CUT_VAR, Abstraction
from absmc.ir.expr import Expr, Var, conj, const, op
from absmc.ir.ltl import Automaton, LtlProperty
from absmc.ir.sorts import RangeSort
from absmc.kernel.ltl.lasso import (
    StutterWhere,
    abstract_lasso,
    abstract_lasso_trace,
    concretize_lasso,
    search_viewed,
)
from absmc.kernel.ltl.ltl import LASSO_NOTE, LtlOutcome, automaton_of
from absmc.kernel.replay.trace import ReplayError, replay_lasso
from absmc.kernel.run.options import Limits
from absmc.kernel.run.result import PropertyResult, Stats, Trace, Verdict

METHOD = "types"

__all__ = ["check_ltl"]


def _steps(n: int) -> str:
    return f"{n} step{'s' if n != 1 else ''}"


class _ChooseFree:
    """The choose-free System, compiled once for all properties."""

    def __init__(self, abstraction: Abstraction) -> None:
        system, self.index, _ = abstraction.choose_free(())
        self.compiled = compile_system(system, ())
        self.origin = abstraction.origin
        self.live = op("==", Var(CUT_VAR, RangeSort(0, 1)), const(0))

    def concrete_commands(self, label: int) -> tuple[int, ...]:
        cmds = (self.origin[self.index[ci]] for ci in self.compiled.commands_of(label))
        return tuple(oi for oi in cmds if oi >= 0)


def _confirm(
    concrete: CompiledSystem, aut: Automaton, cf: _ChooseFree, found: LtlOutcome
) -> tuple[Trace | None, str]:
    """Concretize and replay a choose-free lasso: the concrete trace, or why not."""
    lasso = found.lasso
    assert lasso is not None
    abstract = abstract_lasso(lasso.path, lasso.cycle_start, aut.size, cf.concrete_commands)
    try:
        labels, start = concretize_lasso(concrete, aut, abstract)
        trace = replay_lasso(
            concrete,
            aut,
            labels,
            start,
            LASSO_NOTE,
        )
    except ReplayError as err:  # Unconfirmed included
        return None, str(err)
    return trace, ""


def check_ltl(
    abstraction: Abstraction,
    concrete: CompiledSystem,
    props: Sequence[LtlProperty],
    limits: Limits,
    extra: dict[str, object],
) -> list[PropertyResult]:
    """The results of the linear-time properties ``props`` on ``abstraction`` (module
    docstring); ``concrete`` is the concrete System compiled, ``limits`` bound each product
    search, ``extra`` is added to every result's statistics. A property whose abstract guards
    are not generated before the run's deadline is ``unknown``."""
    compiled = compile_system(abstraction.system, ())
    over = StutterWhere(compiled, abstraction.terminal)
    cf: list[_ChooseFree] = []  # compiled once, when a property needs it

    def choose_free() -> _ChooseFree:
        if not cf:
            cf.append(_ChooseFree(abstraction))
        return cf[0]

    results: list[PropertyResult] = []
    for prop in props:
        try:
            one = _check_one(concrete, abstraction, over, choose_free, prop, limits, extra)
            results.append(one)
        except GenerationTimeout as err:  # the abstract guards past the run's deadline
            tally = _Tally(0, 0, 0, 0.0)
            tally.extra = dict(extra)
            results.append(tally.result(prop, Verdict.UNKNOWN, str(err)))
    return results


def _check_one(
    concrete: CompiledSystem,
    abstraction: Abstraction,
    over: StutterWhere,
    choose_free: Callable[[], _ChooseFree],
    prop: LtlProperty,
    limits: Limits,
    extra: dict[str, object],
) -> PropertyResult:
    """Steps 1 and 2 of the module docstring for one property. Raises ``GenerationTimeout``
    past the run's deadline."""
    ev = abstraction.evaluator
    assert ev is not None
    aut = automaton_of(prop)
    found = search_viewed(over, prop, aut, ev.may, limits)
    out = found.outcome
    tally = _Tally(out.states, out.transitions, out.max_depth, out.time_s)
    tally.extra = {**extra, "automaton_states": aut.size}
    if found.lasso is None:
        if out.stopped is not None:
            return tally.result(prop, Verdict.UNKNOWN, out.stopped)
        reason = (
            f"holds on the abstraction: no accepting lasso in the {out.states:,} "
            "reachable product states of the abstract program (exhaustive search)"
        )
        return tally.result(prop, Verdict.HOLDS, reason)
    r = _choose_free(concrete, choose_free(), prop, aut, limits, tally, ev.must, ev.may)
    if r.verdict is Verdict.UNKNOWN:  # show the abstract lasso
        origin = abstraction.origin
        base = over.base

        def commands(label: int) -> tuple[int, ...]:
            return tuple(origin[ci] for ci in base.commands_of(label) if origin[ci] >= 0)

        lasso = found.lasso
        trace = abstract_lasso_trace(
            over,
            abstraction.concrete,
            lasso.path,
            lasso.cycle_start,
            aut.size,
            abstraction.show,
            commands,
            "an accepting lasso of the abstract program, not replayed (it may use choose)",
        )
        r = replace(r, trace=trace)
    return r


class _Tally:
    """Statistics of one property's searches."""

    def __init__(self, states: int, transitions: int, depth: int, time_s: float) -> None:
        self.states, self.transitions, self.depth, self.time_s = states, transitions, depth, time_s
        self.extra: dict[str, object] = {}

    def add(self, found: LtlOutcome) -> None:
        out = found.outcome
        self.states += out.states
        self.transitions += out.transitions
        self.depth = max(self.depth, out.max_depth)
        self.time_s += out.time_s

    def result(
        self, prop: LtlProperty, verdict: Verdict, reason: str, trace: Trace | None = None
    ) -> PropertyResult:
        stats = Stats(self.states, self.transitions, self.depth, self.time_s, extra=self.extra)
        n = 1 if trace is not None else 0
        return PropertyResult(prop.name, "ltl", METHOD, verdict, reason, stats, trace, n)


def _choose_free(
    concrete: CompiledSystem,
    cf: _ChooseFree,
    prop: LtlProperty,
    aut: Automaton,
    limits: Limits,
    tally: _Tally,
    must: Callable[[Expr], Expr],
    may: Callable[[Expr], Expr],
) -> PropertyResult:
    """Step 2 of the module docstring: choose-free lassos with the guards read as ``must``,
    then as ``may``; ``violated`` with a replayed concrete lasso, else ``unknown``."""
    whys: list[str] = []
    live = cf.live
    for word, view in (("must", must), ("may", may)):

        def guard(g: Expr, view: Callable[[Expr], Expr] = view) -> Expr:
            return conj([view(g), live])

        found = search_viewed(cf.compiled, prop, aut, guard, limits)
        tally.add(found)
        tally.extra[f"choose_free_states_{word}"] = found.outcome.states
        if found.lasso is None:
            stop = found.outcome.stopped
            whys.append(
                f"no choose-free accepting lasso with the guards read as {word}"
                + (f" ({stop})" if stop else "")
            )
            continue
        trace, why = _confirm(concrete, aut, cf, found)
        if trace is not None:
            n = len(trace.steps) - 1
            reason = (
                "choose-free accepting lasso of the abstract program replayed on the concrete "
                f"model: a lasso of {_steps(n)}, the cycle from step {trace.cycle_start}"
            )
            return tally.result(prop, Verdict.VIOLATED, reason, trace)
        whys.append(f"the choose-free lasso ({word} guards) is not concretizable: {why}")
    reason = (
        "the abstract program has an accepting lasso (it may use choose and be spurious); "
        + "; ".join(whys)
    )
    return tally.result(prop, Verdict.UNKNOWN, reason)
