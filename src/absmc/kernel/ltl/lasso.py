"""Lassos of abstract Systems: what the abstraction methods (``fourvalued``, ``types``) add to
the one LTL product search (:mod:`absmc.kernel.ltl.ltl`) to check a linear-time property on an
abstract System and carry the answer back to the concrete one.

* :func:`map_guards` — the property's violation automaton with every edge guard rewritten
  into an abstract-state condition (e.g. "the guard may hold" for an over-approximation,
  "the guard surely holds" for a counterexample search);
* :class:`StutterWhere` — an abstract Semantics plus a stutter step (label
  :data:`MAY_STUTTER`, the state repeats) wherever a condition holds, although the state has
  successors. A concrete terminal state stutters forever in the product
  (:mod:`absmc.kernel.ltl.product`); its abstract state may still have steps (of other concrete
  states it represents), so an over-approximation must also be able to stutter wherever the
  abstract state *may* be terminal;
* :func:`abstract_lasso` / :func:`concretize_lasso` — an abstract lasso (product labels found
  by the nested DFS) as the concrete commands of each step, executed on the concrete
  semantics from the initial state: the stem once, then the cycle again and again until the
  concrete state at the cycle's start repeats (a concrete lasso), or :class:`Unconfirmed`.
  An abstract cycle need not close concretely (``x := x + 1`` forever stays in the abstract
  state "positive"): then there may be no concrete lasso at all. The concrete labels are
  product labels of the *concrete* semantics with the original automaton, ready for
  :func:`absmc.kernel.replay.trace.replay_lasso`, which every ``violated`` verdict goes through.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final

from absmc.ir.expr import Expr, atoms
from absmc.ir.intsem import IntegerTooLarge
from absmc.ir.ltl import Automaton, Edge, LtlProperty
from absmc.ir.steps import Expansion, State
from absmc.ir.system import Property, System
from absmc.kernel.explore.store import ExactStore
from absmc.kernel.ltl.irproduct import guard_fn
from absmc.kernel.ltl.ltl import LtlOutcome, search_ltl
from absmc.kernel.ltl.product import STUTTER, decode, encode
from absmc.kernel.model.irsemantics import IRSemantics
from absmc.kernel.model.semantics import ModelWrapper
from absmc.kernel.replay.trace import STUTTER_TEXT, Unconfirmed, command_source, command_text
from absmc.kernel.run.options import CheckOptions, Limits, OptionError
from absmc.kernel.run.result import StateValue, Trace, TraceStep

__all__ = [
    "MAY_STUTTER",
    "AbstractLasso",
    "StutterWhere",
    "abstract_lasso",
    "abstract_lasso_trace",
    "concretize_lasso",
    "guard_atoms",
    "map_guards",
    "refuse_ltl_options",
    "search_viewed",
]

#: the label of :class:`StutterWhere`'s stutter step (above every command and chain label)
MAY_STUTTER: Final = 1 << 40

#: at most this many rounds of an abstract cycle are executed concretely
MAX_ROUNDS: Final = 1000
#: ... and at most this many concrete steps in all
MAX_STEPS: Final = 200_000


def map_guards(aut: Automaton, fn: Callable[[Expr], Expr]) -> Automaton:
    """``aut`` with every edge guard ``g`` replaced by ``fn(g)`` (same states, targets and
    acceptance)."""
    cache: dict[Expr, Expr] = {}

    def mapped(g: Expr) -> Expr:
        out = cache.get(g)
        if out is None:
            out = cache[g] = fn(g)
        return out

    edges = tuple(tuple(Edge(e.target, mapped(e.guard)) for e in es) for es in aut.edges)
    return replace(aut, edges=edges)


def search_viewed(
    sem: IRSemantics,
    prop: LtlProperty,
    aut: Automaton,
    view: Callable[[Expr], Expr],
    limits: Limits,
    stutter: bool = True,
) -> LtlOutcome:
    """The product search of ``prop`` on an abstract ``sem`` with ``aut``'s guards read
    through ``view`` (e.g. "may be true" or "must be true"; :func:`map_guards`), exact stores;
    ``stutter`` as :func:`absmc.kernel.ltl.ltl.search_ltl`'s."""
    claim = LtlProperty(prop.name, claim=map_guards(aut, view), span=prop.span, text=prop.text)
    return search_ltl(sem, claim, ExactStore(), ExactStore(), limits, stutter=stutter)


class StutterWhere(ModelWrapper):
    """``base`` with an extra stutter step (label :data:`MAY_STUTTER`, to the same state) in
    every state that has successors and satisfies ``cond`` (an IR condition over ``base``'s
    System). A state without successors is left alone (the product stutters there anyway),
    unless ``terminal_too``: for a product without stuttering of its own, which then stutters
    exactly where ``cond`` holds (an under-approximation: where the state is surely terminal).
    A :class:`~absmc.kernel.model.semantics.ModelWrapper` of ``base`` (initial states, ``step``,
    ``valid_end`` and descriptions are the base's; :data:`MAY_STUTTER` is no command) without
    state properties."""

    def __init__(self, base: IRSemantics, cond: Expr, terminal_too: bool = False) -> None:
        super().__init__(base)
        self.base: IRSemantics = base
        self.cond = guard_fn(base.system, cond)
        self.terminal_too = terminal_too

    @property
    def system(self) -> System:
        """The base's System (``cond`` and the product's guards are over it)."""
        return self.base.system

    @property
    def properties(self) -> tuple[Property, ...]:
        return ()

    @property
    def state_checks(self) -> bool:
        return False

    def successors(self, s: State) -> Expansion:
        succ, fails = self.base.successors(s)
        if (succ or self.terminal_too) and self.cond(s):
            return [*succ, (MAY_STUTTER, s)], fails
        return succ, fails

    def ok(self, s: State) -> bool:
        return True

    def violated(self, s: State) -> list[int]:
        return []

    def commands_of(self, label: int) -> tuple[int, ...]:
        return () if label == MAY_STUTTER else self.base.commands_of(label)

    def describe_step(self, label: int) -> str:
        return "(may stutter)" if label == MAY_STUTTER else self.base.describe_step(label)

    @property
    def dependencies(self) -> None:
        """Unknown (the stutter step reads ``cond``)."""
        return None


@dataclass(frozen=True)
class AbstractLasso:
    """An abstract lasso read as concrete behaviour: per step the concrete commands it stands
    for (``None``: a stutter step, the concrete state must be terminal), the automaton state
    it moves to, and the index (in the path's states) where the cycle starts."""

    steps: tuple[tuple[int, ...] | None, ...]
    targets: tuple[int, ...]
    cycle_start: int


def abstract_lasso(
    path: Sequence[int],
    cycle_start: int,
    size: int,
    concrete_commands: Callable[[int], tuple[int, ...]],
) -> AbstractLasso:
    """Decode a product lasso (labels of :mod:`absmc.kernel.ltl.product` over an abstract System;
    ``size`` automaton states): ``concrete_commands(label)`` gives the concrete commands of an
    abstract step label (helper commands dropped); :data:`STUTTER` and :data:`MAY_STUTTER`
    become ``None``."""
    steps: list[tuple[int, ...] | None] = []
    targets: list[int] = []
    for plabel in path:
        label, q = decode(plabel, size)
        steps.append(None if label in (STUTTER, MAY_STUTTER) else concrete_commands(label))
        targets.append(q)
    return AbstractLasso(tuple(steps), tuple(targets), cycle_start)


def concretize_lasso(
    sem: IRSemantics,
    aut: Automaton,
    lasso: AbstractLasso,
    max_rounds: int = MAX_ROUNDS,
    max_steps: int = MAX_STEPS,
) -> tuple[list[int], int]:
    """Execute ``lasso`` on the concrete ``sem`` (module docstring): each step takes the
    concrete successor executing the same concrete commands (IR commands are deterministic:
    the commands fix the successor); a stutter step needs a concrete state without
    successors. The stem runs once, the cycle up to ``max_rounds`` times (at most
    ``max_steps`` steps in all) until the concrete state at the cycle's start repeats.

    Returns the product labels of ``sem`` × ``aut`` (``aut`` the original automaton: the
    targets are the abstract lasso's) and the concrete ``cycle_start``. Raises
    :class:`~absmc.kernel.replay.trace.Unconfirmed` at the first step without a concrete
    counterpart, or when the cycle does not close within the bounds."""
    size = aut.size
    n = len(lasso.steps)
    c0 = lasso.cycle_start
    if not 0 <= c0 < n:
        raise Unconfirmed(0, f"cycle start {c0} outside the lasso of {n} steps")
    s = sem.initial
    labels: list[int] = []
    commands_of = sem.commands_of

    def advance(k: int) -> None:
        nonlocal s
        want = lasso.steps[k]
        at = len(labels) + 1
        try:
            succ, _ = sem.successors(s)
        except IntegerTooLarge as err:
            raise Unconfirmed(at, f"a concrete value grows too large ({err})") from None
        if want is None:
            if succ:
                raise Unconfirmed(at, "a stutter step where the concrete state has successors")
            labels.append(encode(STUTTER, lasso.targets[k], size))
            return
        pick = next(((lab, t) for lab, t in succ if commands_of(lab) == want), None)
        if pick is None:
            what = (
                f"command {want[0]} is not enabled"
                if len(want) == 1
                else f"the chain of commands {list(want)} is not a concrete step"
            )
            raise Unconfirmed(at, what)
        labels.append(encode(pick[0], lasso.targets[k], size))
        s = pick[1]

    for k in range(c0):
        advance(k)
    seen: dict[State, int] = {}
    rounds = 0
    while s not in seen:
        seen[s] = len(labels)
        if rounds >= max_rounds or len(labels) >= max_steps:
            raise Unconfirmed(
                len(labels),
                f"the abstract cycle does not close concretely: no concrete state repeats at "
                f"its start in {rounds} rounds",
            )
        for k in range(c0, n):
            advance(k)
        rounds += 1
    return labels, seen[s]


def guard_atoms(aut: Automaton) -> list[Expr]:
    """The atoms (:func:`absmc.ir.expr.atoms`) of ``aut``'s edge guards, each once, in order:
    what an abstraction must be able to evaluate to check the property."""
    out: dict[Expr, None] = {}
    for es in aut.edges:
        for e in es:
            for a in atoms(e.guard):
                out.setdefault(a, None)
    return list(out)


def refuse_ltl_options(options: CheckOptions, method: str) -> None:
    """Raise ``OptionError`` for weak fairness or non-progress cycles, which the abstraction
    method ``method`` does not check."""
    if options.fairness == "weak":
        raise OptionError(
            f"--method {method} does not check weak fairness (use --method explicit)", "fairness"
        )
    if options.non_progress:
        raise OptionError(
            f"--method {method} does not check non-progress cycles (use --method explicit)",
            "non_progress",
        )


def abstract_lasso_trace(
    sem: IRSemantics,
    concrete: System,
    path: Sequence[int],
    cycle_start: int,
    size: int,
    show: Callable[[State], Mapping[str, StateValue]],
    concrete_commands: Callable[[int], tuple[int, ...]],
    note: str,
) -> Trace:
    """An abstract lasso (product labels over the abstract ``sem``; ``size`` automaton
    states) as a trace for the user, **not replayed**: one row per step with the abstract state
    (``show``) and the ``concrete`` System's commands it stands for (a chain's joined by
    ``;``). A step that does not execute on ``sem`` ends the rows (the note says so)."""
    s = sem.initial
    steps = [TraceStep(0, show(s))]
    for k, plabel in enumerate(path, start=1):
        label, _ = decode(plabel, size)
        if label in (STUTTER, MAY_STUTTER):
            steps.append(TraceStep(k, show(s), command=STUTTER_TEXT))
            continue
        nxt = next((t for lab, t in sem.successors(s)[0] if lab == label), None)
        if nxt is None:  # pragma: no cover - the lasso was found on sem
            note += f"; the abstract lasso breaks off at step {k}"
            return Trace(tuple(steps), replayed=False, note=note)
        s = nxt
        cmds = concrete_commands(label)
        first = cmds[0] if cmds else None
        steps.append(
            TraceStep(
                k,
                show(s),
                concrete.commands[first].process if first is not None else None,
                "; ".join(command_text(concrete, ci) for ci in cmds) or "(helper step)",
                command_source(concrete, first) if first is not None else None,
                first,
            )
        )
    return Trace(tuple(steps), replayed=False, note=note, cycle_start=cycle_start)
