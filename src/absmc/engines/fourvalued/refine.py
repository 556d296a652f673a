"""Predicates without the user: counterexample-guided refinement of the four-valued
abstraction (``--refine``; what ``--method auto`` runs).

Where a property's value is ⊥, the may-System's counterexample (for an LTL property: its
accepting lasso, the cycle unrolled as far as the concrete run got) has no concrete run. Its
concrete replay (:func:`absmc.kernel.replay.trace.concretize`) names the first step that has none
(:class:`~absmc.kernel.replay.trace.Unconfirmed`): the predicates cannot tell that the step's guard
is false there. As in paper 000's refinement (Section 3, weakest preconditions), the atoms of
that guard become predicates; when they are all tracked already, the guard is pulled back one
step (its weakest precondition through the step before, :func:`absmc.logic.wp.through`) and
the atoms of that are taken, and so on towards the initial state. A may-path that replays but
ends in a state where the property holds refines from the property's violation condition (a
deadlock: from the guards). Then the abstraction is built and checked again, up to
``max_iterations`` rounds (paper 004 gives no refinement; Bonsai's user writes ``pred``).

Start: the given predicates; when none of them mentions an abstractable variable (nothing would
be abstracted: the check would be an exact search), the atoms of the checked properties (LTL
properties included: the atoms of their automata) over such variables, else
``v == initial value`` for each abstractable variable that a guard or a property reads. An LTL
lasso that runs concretely but leaves the automaton refines from the edge guard that failed.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

from absmc.engines.fourvalued.check import Round, check_round
from absmc.engines.fourvalued.ltl import ltl_atoms
from absmc.engines.fourvalued.partition import abstractable
from absmc.ir.expr import Expr, Op, const, disj, free_vars, neg
from absmc.ir.span import ModelError
from absmc.ir.system import NO_DEADLOCK, NO_MODEL_ERROR, Command, System
from absmc.kernel.replay.trace import ReplayError, Unconfirmed
from absmc.kernel.run.limits import time_limit
from absmc.kernel.run.options import CheckOptions, select_properties
from absmc.kernel.run.result import PropertyResult, Result, Verdict
from absmc.logic.wp import chain_condition, predicate_atoms, through


def _abstractable(system: System) -> frozenset[str]:
    return frozenset(v.name for v in system.variables if abstractable(v))


def initial_predicates(
    system: System, options: CheckOptions, given: Sequence[Expr] | None
) -> list[Expr]:
    """The first round's predicates (module docstring)."""
    names = _abstractable(system)
    preds = list(system.predicates if given is None else given)
    if any(free_vars(p) & names for p in preds):
        return preds
    selection = select_properties(system, options)
    for p in selection.user:
        preds += predicate_atoms(p.bad, names, system.index_of, lift_conditionals=True)
    for atom, _ in ltl_atoms(selection.ltl):  # the atoms of the LTL properties' automata
        preds += predicate_atoms(atom, names, system.index_of, lift_conditionals=True)
    if any(free_vars(p) & names for p in preds):
        return preds
    read: set[str] = set()
    for c in system.commands:
        read |= free_vars(c.guard)
    for p in selection.user:
        read |= free_vars(p.bad)
    for v in system.variables:
        if v.name in names and v.name in read:
            preds.append(Op("==", (system.ref(v.name), const(v.init))))
    return preds


def _failure_condition(system: System, cmd: Command, prop: str) -> Expr:
    """When ``cmd`` (in the state before it) fails ``prop``: a model error or an assertion."""
    if prop == NO_MODEL_ERROR:
        return disj(e for e, _ in cmd.errors) if cmd.errors else cmd.guard
    return disj(neg(c) for p, c in cmd.asserts if p == prop) if cmd.asserts else cmd.guard


def refinement_atoms(
    system: System,
    prop: str,
    steps: Sequence[tuple[int, ...]],
    err: ReplayError,
    known: Sequence[Expr],
    condition: Expr | None = None,
) -> list[Expr]:
    """New predicates from one unconfirmed may-path (module docstring): ``steps`` are its
    concrete commands per step, ``err`` where its replay failed, ``known`` the predicates
    already tracked; ``condition`` (an LTL lasso that left its automaton) is what should have
    held after the steps, instead of the property's violation. Empty when the path's
    conditions give nothing new."""
    names = _abstractable(system)
    order = system.index_of
    cmds = [[system.commands[i] for i in step] for step in steps]
    k = err.step if isinstance(err, Unconfirmed) else len(steps) + 1
    k = max(1, min(k, len(steps) + 1))
    if k <= len(steps):
        chain = cmds[k - 1]
        failing = prop in (NO_MODEL_ERROR,) or (
            prop in {p.name for p in system.properties}
            and system.get_property(prop).kind == "assert"
        )
        if failing and k == len(steps):
            phi = chain_condition(chain[:-1])
            last = _failure_condition(system, chain[-1], prop)
            phi = disj([phi, through(last, chain[:-1]), chain[-1].guard])
        else:
            phi = chain_condition(chain)
    elif condition is not None:
        phi = condition
    elif prop == NO_DEADLOCK:
        phi = disj(c.guard for c in system.commands)
    elif prop not in {p.name for p in system.properties}:
        return []  # an LTL lasso that replays step by step but does not close: no condition
    else:
        phi = system.get_property(prop).bad
    for j in range(k - 1, -1, -1):
        new = [
            a for a in predicate_atoms(phi, names, order, lift_conditionals=True) if a not in known
        ]
        if new:
            return new
        if j == 0:
            break
        before = cmds[j - 1]
        phi = disj([chain_condition(before), through(phi, before)])
    return []


def check_refining(
    system: System,
    options: CheckOptions,
    predicates: Sequence[Expr] | None,
    shortcut: bool,
    max_iterations: int,
) -> Result:
    """Check, refine where a value is ⊥, check again (module docstring), at most
    ``max_iterations`` rounds and within ``options.limits.timeout`` overall. Every property's
    result carries the rounds in ``iterations``: ``iteration``, ``predicates_added``,
    ``predicates``, ``may_states``, ``must_states``, ``values`` (property -> t/f/⊥/⊤) and
    ``time_s``."""
    t0 = time.monotonic()
    # one deadline for all rounds (each round's searches share --max-states)
    options = dataclasses.replace(options, limits=options.limits.started(t0))
    preds = initial_predicates(system, options, predicates)
    rows: list[dict[str, Any]] = []
    added: list[Expr] = list(preds) if predicates is None and not system.predicates else []
    stop = ""
    while True:
        t1 = time.monotonic()
        opts = options
        if options.limits.expired() and rows:
            stop = time_limit(options.limits)
            break
        try:
            rnd = check_round(system, opts, preds, shortcut)
        except ModelError as err:
            if not rows:
                raise  # the user's own predicates
            stop = f"a predicate it found cannot be used ({err.message})"
            break
        values = {r.property: r.extra.get("value", "") for r in rnd.result.results}
        rows.append(
            {
                "iteration": len(rows) + 1,
                "predicates_added": [str(p) for p in added],
                "predicates": len(rnd.tracked),
                "may_states": rnd.may_states,
                "must_states": rnd.must_states,
                "values": values,
                "time_s": round(time.monotonic() - t1, 4),
            }
        )
        last = rnd
        added = _refine(system, rnd)
        if not rnd.unconfirmed:
            break
        if not added:
            stop = "the unconfirmed traces give no new predicate"
            break
        if len(rows) >= max_iterations:
            stop = f"no decision after {max_iterations} refinement rounds"
            break
        preds = [*preds, *added]
    return _with_rows(last, rows, stop)


def _refine(system: System, rnd: Round) -> list[Expr]:
    known = list(rnd.tracked)
    out: list[Expr] = []
    for prop, (steps, err) in rnd.unconfirmed.items():
        cond = rnd.conditions.get(prop)
        for a in refinement_atoms(system, prop, steps, err, [*known, *out], cond):
            out.append(a)
    return out


def _with_rows(rnd: Round, rows: list[dict[str, Any]], stop: str) -> Result:
    out: list[PropertyResult] = []
    for r in rnd.result.results:
        reason = r.reason
        if r.verdict is Verdict.UNKNOWN and stop:
            reason += f"; refinement stopped: {stop}"
        elif len(rows) > 1:
            reason += f" (after {len(rows)} refinement rounds)"
        out.append(dataclasses.replace(r, reason=reason, iterations=tuple(rows)))
    return dataclasses.replace(rnd.result, results=tuple(out))
