"""``--method symbolic``: approximate symbolic CTL model checking of unbounded-integer systems
(paper 002 §2-3; ALV's approach, Bultan, Gerber, Pugh CAV'97).

Every selected property becomes the ENF negation of a CTL formula: ``invariant p`` is
``AG p``; ``unreachable e`` is ``AG !e``; ``no-deadlock`` is ``AG`` (some guard holds);
``no-model-error`` is ``AG`` (no enabled command assigns outside a range); ``ctl`` properties
are their formulas. Verdicts:

* ``holds`` — no initial state lies in the over-approximated solution of the negation
  (Lemma 2.1 / Theorem 3.1 of the paper: sound for every CTL formula without abstraction,
  for ACTL formulas with predicate abstraction);
* ``violated`` — a concrete witness of the negation from a concrete initial state, walked on
  the concrete semantics (:mod:`absmc.kernel.replay.witness`) and replayed: a trace for safety, a
  lasso or a run into a state without successor for liveness. A part of the witness that is
  not walked (a universal subformula, the second conjunct of ``&&``) must come from an exact
  solution set;
* ``unknown`` — otherwise, with the approximations used and why no witness was found.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import cache
from typing import Any

from absmc.codegen.python import compile_system
from absmc.engines.symbolic.abstract import PartialAbstraction
from absmc.engines.symbolic.budget import IslBudget
from absmc.engines.symbolic.cegaar import default_seeds, run_cegaar
from absmc.engines.symbolic.composite import Split
from absmc.engines.symbolic.composite_bdd import BddSplit
from absmc.engines.symbolic.encode import Encoding
from absmc.engines.symbolic.fixpoint import Fixpoints
from absmc.engines.symbolic.options import SymbolicOptions
from absmc.ir.ctl import (
    TRUE_F,
    And,
    Atom,
    Formula,
    Not,
    Or,
    Temporal,
    Until,
    format_ctl,
    is_universal,
    state_atoms,
    to_enf,
)
from absmc.ir.expr import Expr, as_const, conj, const, disj, free_vars, neg, op
from absmc.ir.sorts import RangeSort
from absmc.ir.steps import State
from absmc.ir.system import NO_DEADLOCK, NO_MODEL_ERROR, System
from absmc.kernel.model.irsemantics import IRSemantics
from absmc.kernel.replay.trace import ReplayError, replay, replay_witness
from absmc.kernel.replay.witness import NoWitness, Witness, witness_path
from absmc.kernel.run.isolate import run_with_deadline
from absmc.kernel.run.limits import INTERRUPTED, Limits, time_limit
from absmc.kernel.run.options import CheckOptions, Progress, Selection, select_properties
from absmc.kernel.run.result import PropertyResult, Result, Stats, Verdict

__all__ = ["SymbolicOptions", "check_symbolic", "negation_of"]

METHOD = "symbolic"


def negation_of(system: System, name: str, kind: str) -> Formula:
    """The ENF negation of a property (see the module doc)."""
    if kind == "ctl":
        prop = next(p for p in system.ctl if p.name == name)
        return to_enf(Not(prop.formula))
    if kind == "deadlock":
        bad: Expr = conj([neg(c.guard) for c in system.commands])
        if system.valid_end is not None:
            bad = conj([bad, neg(system.valid_end)])
    elif kind == "model-error":
        bad = model_error_condition(system)
    else:
        bad = system.get_property(name).bad
    return Until("E", TRUE_F, Atom(bad))


def model_error_condition(system: System) -> Expr:
    """Some command is enabled and assigns a value outside a finite range."""
    parts: list[Expr] = []
    for c in system.commands:
        outs: list[Expr] = []
        for n, e in c.updates:
            sort = system.var(n).sort
            if isinstance(sort, RangeSort) and sort.overflow != "wrap":
                k = as_const(e)
                if k is not None and sort.lo <= k <= sort.hi:
                    continue  # a constant in range (no atoms of the guard for CEGAAR's seed)
                outs.append(disj([op("<", e, const(sort.lo)), op(">", e, const(sort.hi))]))
        if outs:
            parts.append(conj([c.guard, disj(outs)]))
    return disj(parts)


def check_symbolic(system: System, options: CheckOptions, own: SymbolicOptions) -> Result:
    """Check the selected properties of ``system`` symbolically (see the module doc). Raises
    ``ModelError`` (``Unsupported``) for nonlinear arithmetic."""
    start = time.monotonic()
    limits = options.limits.started(start)
    if limits.deadline is None:
        return _check_here(system, options, own, start, limits)
    # isl holds the GIL inside one operation and its quota follows wall time only roughly:
    # the check runs in a child process that is ended at the deadline (kernel/run/isolate.py)
    grace = max(_GRACE_S, _GRACE_SHARE * (limits.timeout or 0.0))
    out = run_with_deadline(
        lambda: _check_here(system, options, own, start, limits), limits.deadline, grace
    )
    if out.killed or out.interrupted:
        reason = INTERRUPTED if out.interrupted else time_limit(limits)
        res = _unchecked(system, options, reason, time.monotonic() - start)
        if out.killed:
            note = "the time limit ended an isl operation that was still running"
            return Result(res.model, res.method, res.results, notes=(note,))
        return res
    result = out.get()
    assert result is not None
    return result


#: seconds (at least) and share of the time limit that an isl operation may overrun the
#: deadline before the check's process is ended
_GRACE_S = 1.0
_GRACE_SHARE = 0.1


def _check_here(
    system: System, options: CheckOptions, own: SymbolicOptions, start: float, limits: Limits
) -> Result:
    """:func:`check_symbolic` in this process (the deadline kept by isl's quota)."""
    budget = IslBudget(limits.deadline)
    try:
        return _check_all(system, options, own, limits)
    except KeyboardInterrupt:  # while the model was encoded: nothing checked yet
        return _unchecked(system, options, INTERRUPTED, time.monotonic() - start)
    except Exception as err:
        if not budget.explains(err):
            raise
        return _unchecked(system, options, time_limit(limits), time.monotonic() - start)
    finally:
        budget.disarm()  # no quota left behind for later isl users of this process


def _unchecked(system: System, options: CheckOptions, reason: str, spent: float) -> Result:
    """Every selected property ``unknown`` for ``reason`` (a limit met while the model was
    encoded, before any property was checked, or the check's process ended at the deadline);
    ``spent`` (seconds) is the first property's time, the others' 0."""
    selection = select_properties(system, options)
    names = [(n, _kind(system, n)) for n in selection.names()]
    names += [(p.name, "ctl") for p in selection.ctl]
    # the time is the first property's (the properties' times add up to the check's)
    results = [
        PropertyResult(
            n,
            k,
            METHOD,
            Verdict.UNKNOWN,
            reason,
            Stats(0, 0, 0, spent if i == 0 else 0.0, extra={"reachable_states": "not computed"}),
        )
        for i, (n, k) in enumerate(names)
    ]
    return Result(system.file or system.name, METHOD, tuple(results))


def _observed(system: System, selection: Selection) -> set[str]:
    """The variables the selected properties read (for the collapse of dead predicate bits,
    :attr:`PartialAbstraction.collapsed`: these stay live everywhere)."""
    out: set[str] = set()
    for p in selection.user:
        out |= set(free_vars(p.expr))
    for c in selection.ctl:
        for a in state_atoms(c.formula):
            out |= set(free_vars(a))
    if system.valid_end is not None:
        out |= set(free_vars(system.valid_end))
    return out


def _check_all(
    system: System, options: CheckOptions, own: SymbolicOptions, limits: Limits
) -> Result:
    """Every selected property in turn, each ending at the check's deadline (``limits``) or
    at Ctrl-C/SIGTERM with verdict ``unknown`` and the statistics gathered so far; once the
    run was interrupted, the remaining properties are ``unknown`` at once."""
    selection = select_properties(system, options)
    deadline = limits.deadline
    quota = IslBudget(deadline)
    enc = Encoding(system)
    # the relations are built lazily, inside the time limit (between commands, and isl's
    # operation quota within one)
    tick = quota.tick
    beat = None if options.progress is None else _Heartbeat(options.progress)
    # one composite encoding shared by the levels
    rep: type[Split] | type[BddSplit] = BddSplit if own.composite == "bdd" else Split
    split = rep(enc, tick=tick)
    concrete = [_fixpoints(split, own, deadline, *level, beat) for level in LEVELS]
    abstract = concrete
    if system.predicates:
        model = rep(
            PartialAbstraction(enc, system.predicates, observed=_observed(system, selection)),
            tick=tick,
        )
        abstract = [_fixpoints(model, own, deadline, *level, beat) for level in LEVELS]
    # the concrete semantics, compiled only when a witness is walked (a proof needs none)
    sem = cache(lambda: compile_system(system, selection.user))
    names = [(n, _kind(system, n)) for n in selection.names()]
    names += [(p.name, "ctl") for p in selection.ctl]
    results: list[PropertyResult] = []
    ended: str | None = None  # an interruption: no further property is checked
    for name, kind in names:
        t0 = time.monotonic()
        # predicate abstraction preserves ACTL only (Lemma 2.3): other formulas stay concrete
        # and an inconclusive abstract check falls back to the concrete fixpoints
        # (cheap levels first: the convex widening abstractly, then concretely, then the
        # disjunctive widening in the same order)
        levels = concrete
        if abstract is not concrete and (kind != "ctl" or _actl(system, name)):
            levels = [fx for pair in zip(abstract, concrete, strict=True) for fx in pair]
        fix = levels[0]
        rounds: list[dict[str, Any]] | None = None
        on_abstraction = False
        try:
            if ended is not None:
                raise _Ended(ended)
            if own.refine and (kind != "ctl" or _actl(system, name)):
                res, rounds = _refine(system, enc, sem, name, kind, own, deadline)
            # without a conclusive refinement: the (concrete) approximation levels
            todo = levels if rounds is None or res[0] is Verdict.UNKNOWN else []
            refined = res[1] if rounds is not None else None
            # a CEGAAR proof is on an abstraction unless its predicate set was empty
            on_abstraction = (
                bool(rounds)
                and not todo
                and rounds is not None
                and rounds[-1]["predicates"] != "(none)"
            )
            for k, fix in enumerate(todo):
                last = k == len(levels) - 1
                budget = own.witness_budget if last else own.witness_budget // 20
                # a concrete level follows every abstract one: its walk, guided by concrete
                # sets, looks for the witness, so an abstract level only tries the proof
                walk = fix.enc.abstraction is None
                res = _check_one(system, enc, fix, sem, name, kind, budget, walk=walk)
                if res[0] != Verdict.UNKNOWN:
                    on_abstraction = fix.enc.abstraction is not None
                    break
            if todo and refined is not None:
                res = (res[0], f"{refined}; then without abstraction: {res[1]}", res[2])
        except _Ended as why:
            on_abstraction = False
            res = (Verdict.UNKNOWN, str(why), None)
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM (the CLI turns it into this)
            ended = INTERRUPTED
            on_abstraction = False
            res = (Verdict.UNKNOWN, ended, None)
        except Exception as err:  # the time limit: between operations, or isl's quota inside
            if not quota.explains(err):
                raise
            # the next properties meet the deadline at their first tick (CEGAAR still
            # records its round)
            on_abstraction = False
            res = (Verdict.UNKNOWN, time_limit(limits), None)
        verdict, reason, trace = res
        try:
            size = None if ended is not None else fix.reach_size()
        except KeyboardInterrupt:
            ended, size = INTERRUPTED, None
        counted = size if isinstance(size, int) else 0
        reach: dict[str, Any] = {
            "reachable_states": "not computed" if size is None else size,
            "fixpoint": _fix_json(fix),
        }
        notes = ["of the abstract system"] if fix.enc.abstraction is not None else []
        if size is not None and not fix.stats.reach_exact:
            notes.append("over-approximated by widening")
        if notes:
            reach["reachable_states_of"] = ", ".join(notes)
        stats = Stats(counted, 0, 0, time.monotonic() - t0, extra=reach)
        extra: dict[str, Any] = {} if rounds is None else {"rounds": rounds}
        if verdict is Verdict.HOLDS:
            # how the proof was made: on a predicate abstraction (CEGAAR's or the model's
            # predicates) or by the fixpoints without abstraction (CEGAAR's fallback)
            extra["proved_by"] = "abstraction" if on_abstraction else "concrete"
        results.append(
            PropertyResult(
                name, kind, METHOD, verdict, reason, stats, trace, iterations=rounds, extra=extra
            )
        )
    return Result(system.file or system.name, METHOD, tuple(results))


class _Ended(Exception):
    """A property not checked because the time limit or an interruption ended the run."""


#: the approximation levels tried in turn, as (widening delay factor, widening rounds done
#: disjunct by disjunct before the convex H79 form): convex at once (cheap); a disjunctive
#: start, more precise; then the delay times 4 (at least 8), an approximation refinement in
#: the paper's terms (§4: APP grows the widening delay), which airportSM-bk2's taxiway needs
LEVELS = ((1, 0), (1, 8), (4, 8))


class _Heartbeat:
    """``--progress`` for the symbolic method: about once a second, the reachability
    iterations (as the depth) and the time since the check began."""

    def __init__(self, progress: Callable[[Progress], None]) -> None:
        self.progress = progress
        self.start = self.last = time.monotonic()

    def __call__(self, iterations: int) -> None:
        now = time.monotonic()
        if now - self.last >= 1.0:
            self.last = now
            self.progress(Progress(0, 0, iterations, now - self.start))


def _fixpoints(
    enc: Split | BddSplit,
    own: SymbolicOptions,
    deadline: float | None,
    delay_factor: int,
    rounds: int,
    heartbeat: Callable[[int], None] | None = None,
) -> Fixpoints:
    delay = own.widen_delay if delay_factor == 1 else max(own.widen_delay * delay_factor, 8)
    fix = Fixpoints(enc, delay, own.eg_bound, own.restrict, deadline=deadline, heartbeat=heartbeat)
    fix.disjunctive_rounds = rounds
    return fix


def _refine(
    system: System,
    enc: Encoding,
    sem: Callable[[], IRSemantics],
    name: str,
    kind: str,
    own: SymbolicOptions,
    deadline: float | None,
) -> tuple[tuple[Verdict, str, Any], list[dict[str, Any]]]:
    """``--refine``: CEGAAR (:mod:`absmc.engines.symbolic.cegaar`) for one ACTL property."""
    negf = negation_of(system, name, kind)
    quota = IslBudget(deadline)  # made before: a budget arms the quota when made
    try:
        seeds = system.predicates or default_seeds(system, negf, enc)
    except Exception as err:
        # near the time limit isl's quota fails even a parse (with a misleading message): the
        # seed is a heuristic, so take the syntactic rule, which needs no isl
        if not quota.explains(err):
            raise
        seeds = default_seeds(system, negf)

    def witness(fix: Fixpoints) -> Any:
        v, _reason, trace = _check_one(
            system, enc, fix, sem, name, kind, own.witness_budget // 20, skip_proof=True
        )
        return trace if v is Verdict.VIOLATED else None

    verdict, reason, trace, rows = run_cegaar(
        system,
        enc,
        negf,
        tuple(seeds),
        own.widen_delay,
        own.eg_bound,
        own.restrict,
        own.max_rounds,
        deadline,
        witness,
    )
    return (Verdict(verdict), f"CEGAAR: {reason}", trace), rows


def _actl(system: System, name: str) -> bool:
    return is_universal(next(p for p in system.ctl if p.name == name).formula)


def _kind(system: System, name: str) -> str:
    if name == NO_DEADLOCK:
        return "deadlock"
    if name == NO_MODEL_ERROR:
        return "model-error"
    return system.get_property(name).kind


def _fix_json(fix: Fixpoints) -> dict[str, Any]:
    st = fix.stats
    reach = fix._reach
    return {
        "reach_iterations": st.reach_iterations,
        "reach_exact": st.reach_exact,
        "iterations": dict(st.iterations),
        "widenings": st.widenings,
        "truncations": st.truncations,
        "reach_disjuncts": reach.states.n_basic_set() if reach is not None else 0,
    }


def _check_one(
    system: System,
    enc: Encoding,
    fix: Fixpoints,
    sem_of: Callable[[], IRSemantics],
    name: str,
    kind: str,
    budget: int,
    skip_proof: bool = False,
    walk: bool = True,
) -> tuple[Verdict, str, Any]:
    negf = negation_of(system, name, kind)
    sol = fix.solve(negf, over=True)
    approx = _approximations(fix)
    absn = fix.enc.abstraction
    if absn is not None:
        names = ", ".join(system.variables[i].name for i in absn.abstracted)
        approx = f"partial predicate abstraction of {names}; {approx}"
    if not skip_proof and fix.enc.initial.intersect(sol.states).is_empty():
        return Verdict.HOLDS, f"no initial state satisfies the negation ({approx})", None
    if not walk:
        return Verdict.UNKNOWN, f"initial states satisfy the negation ({approx})", None
    failures: list[str] = []
    tried: list[State] = []
    candidates = enc.initial.intersect(fix.enc.concretize(sol.states))
    sem = sem_of()
    for _ in range(3):
        s0 = enc.sample(candidates)
        if s0 is None:
            break
        tried.append(s0)
        candidates = candidates.subtract(enc.point(s0))

        def holds(f: Formula, s: State) -> bool:
            return fix.enc.contains(fix.solve(f, over=True).states, s)

        try:
            w = witness_path(sem, s0, negf, holds, budget)
        except NoWitness as err:
            failures.append(err.reason)
            continue
        unsure = _unverified(fix, negf)
        if unsure is not None:
            failures.append(f"the witness relies on an approximated {unsure}")
            continue
        try:
            trace = _replay(sem, name, kind, w)
        except ReplayError as err:  # pragma: no cover - a walked run replays
            failures.append(f"replay failed: {err}")
            continue
        steps = len(w.labels)
        return (
            Verdict.VIOLATED,
            f"concrete witness of the negation ({steps} step{'s' if steps != 1 else ''})",
            trace,
        )
    why = failures[0] if failures else "no concrete initial state found"
    exactness = "exact" if sol.exact else "over-approximated"
    return (
        Verdict.UNKNOWN,
        f"initial states satisfy the {exactness} negation ({approx}); no concrete witness: {why}",
        None,
    )


def _approximations(fix: Fixpoints) -> str:
    st = fix.stats
    parts = []
    if st.widenings:
        parts.append(f"{st.widenings} widening{'s' if st.widenings != 1 else ''}")
    if st.truncations:
        parts.append(f"{st.truncations} truncated fixpoint{'s' if st.truncations != 1 else ''}")
    return ", ".join(parts) if parts else "exact fixpoints"


def _unverified(fix: Fixpoints, f: Formula) -> str | None:
    """A subformula the witness walk trusts without walking it that is not exact (the walk
    checks atoms concretely and walks ``EX``, ``E[U]``, ``EG`` of its path)."""
    if isinstance(f, Atom) or (isinstance(f, Not) and isinstance(f.arg, Atom)):
        return None
    if isinstance(f, Not):
        return None if fix.solve(f, True).exact else format_ctl(f)
    if isinstance(f, And):
        walked, other = (f.left, f.right) if _temporal(f.left) else (f.right, f.left)
        if not _state(other) and not fix.solve(other, True).exact:
            return format_ctl(other)
        return _unverified(fix, walked)
    if isinstance(f, Or):
        return _unverified(fix, f.left) or _unverified(fix, f.right)
    if isinstance(f, Temporal) and f.op == "EX":
        return _unverified(fix, f.arg)
    if isinstance(f, Until):
        if not _state(f.left) and not fix.solve(f.left, True).exact:
            return format_ctl(f.left)
        return _unverified(fix, f.right)
    assert isinstance(f, Temporal)
    if not _state(f.arg) and not fix.solve(f.arg, True).exact:
        return format_ctl(f.arg)
    return None


def _state(f: Formula) -> bool:
    if isinstance(f, Atom):
        return True
    if isinstance(f, Not):
        return _state(f.arg)
    if isinstance(f, (And, Or)):
        return _state(f.left) and _state(f.right)
    return False


def _temporal(f: Formula) -> bool:
    return not _state(f)


def _replay(sem: IRSemantics, name: str, kind: str, w: Witness) -> Any:
    if kind in ("invariant", "unreachable", "deadlock"):
        return replay(sem, name, list(w.labels), w.start)
    if kind == "model-error":
        s = w.start
        for lab in w.labels:
            s = next(t for c, t in sem.successors(s)[0] if c == lab)
        _, fails = sem.successors(s)
        bad = next(f for f in fails if f.property == NO_MODEL_ERROR)
        return replay(sem, name, [*w.labels, bad.label], w.start)
    return replay_witness(sem, w, "witness of the negation")
