"""The initial states of a System with an ``init:`` constraint (GCL ``init: EXPR;``).

A System's initial states are the states that satisfy ``System.init_constraint`` and give every
variable the constraint does not mention its declared initial value. The symbolic method keeps
that set as a formula; every method that enumerates states needs it finite and small:
:func:`initial_states` enumerates it and raises :class:`~absmc.ir.span.ModelError` (located at
the constraint) when a mentioned integer variable is unbounded or the set is larger than
``limit``, so no method ever hangs on it.

Bounds of unbounded integer variables come from the constraint's top-level conjuncts
``x == c``, ``x <= c``, ``c <= x`` (and ``<``, ``>``, ``>=``) and ``x == y`` with ``y`` bounded,
propagated to a fixpoint; the product of the resulting domains (at most ``limit * 64``
candidate valuations) is filtered by evaluating the constraint.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Final

from absmc.ir.evaluate import EvalError, evaluate
from absmc.ir.expr import Const, Expr, Op, Var, conjuncts, free_vars
from absmc.ir.sorts import BoolSort, RangeSort
from absmc.ir.span import ModelError, SourceSpan
from absmc.ir.steps import State
from absmc.ir.system import System
from absmc.kernel.run.limits import INTERRUPTED
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import PropertyResult, Result, Stats, Verdict

__all__ = [
    "MAX_INITIAL_STATES",
    "check_per_initial_state",
    "initial_states",
    "is_initial",
    "mentioned",
    "merge_results",
    "rooted",
    "stored_states",
]

#: the most initial states an enumerating method accepts
MAX_INITIAL_STATES: Final = 4096

_FLIP: Final = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "=="}


def mentioned(system: System) -> list[str]:
    """Names of the variables the ``init:`` constraint mentions, in declaration order."""
    if system.init_constraint is None:
        return []
    names = free_vars(system.init_constraint)
    return [v.name for v in system.variables if v.name in names]


def is_initial(system: System, state: State) -> bool:
    """Whether ``state`` is an initial state of ``system`` (declared values outside the
    ``init:`` constraint, the constraint true; an evaluation error counts as false)."""
    free = set(mentioned(system))
    for v, x in zip(system.variables, state, strict=True):
        if v.name not in free and x != v.init:
            return False
    if system.init_constraint is None:
        return True
    env = dict(zip((v.name for v in system.variables), state, strict=True))
    try:
        return bool(evaluate(system.init_constraint, env))
    except (EvalError, ZeroDivisionError):
        return False


def initial_states(system: System, limit: int = MAX_INITIAL_STATES) -> list[State]:
    """Every initial state of ``system`` (declaration order of variables), sorted.

    Without an ``init:`` constraint this is the one declared initial state. Raises
    ``ModelError`` at the constraint when a mentioned unbounded integer variable has no finite
    bounds from the constraint, when there are more than ``limit`` initial states (or more
    than ``64 * limit`` candidates to test), or when no state satisfies it.
    """
    cons = system.init_constraint
    base = system.initial_state()
    if cons is None:
        return [base]
    span = cons.span or SourceSpan(system.file or "<model>", 1, 1)
    names = mentioned(system)
    bounds = _bounds(system, cons, names)
    domains: list[range] = []
    size = 1
    for n in names:
        lo, hi = bounds[n]
        if lo is None or hi is None:
            raise ModelError(
                f"the init constraint leaves '{n}' unbounded: this method enumerates the "
                "initial states and needs finitely many (--method symbolic takes any)",
                span,
            )
        domains.append(range(lo, hi + 1))
        size *= max(0, hi - lo + 1)
    if size > 64 * limit:
        raise ModelError(
            f"the init constraint allows up to {size} initial states; this method enumerates "
            f"at most {limit} (--method symbolic takes any number)",
            span,
        )
    index = system.index_of
    pos = [index[n] for n in names]
    out: list[State] = []
    env = dict(zip((v.name for v in system.variables), base, strict=True))
    for values in itertools.product(*domains):
        for n, x in zip(names, values, strict=True):
            env[n] = x
        try:
            ok = evaluate(cons, env)
        except (EvalError, ZeroDivisionError):
            ok = 0
        if not ok:
            continue
        s = list(base)
        for p, x in zip(pos, values, strict=True):
            s[p] = x
        out.append(tuple(s))
        if len(out) > limit:
            raise ModelError(
                f"the init constraint allows more than {limit} initial states "
                "(--method symbolic takes any number)",
                span,
            )
    if not out:
        raise ModelError("no state satisfies the init constraint", span)
    out.sort()
    return out


def _bounds(system: System, cons: Expr, names: list[str]) -> dict[str, list[int | None]]:
    """``[lo, hi]`` per mentioned variable (``None``: unbounded) from sorts and conjuncts."""
    b: dict[str, list[int | None]] = {}
    for n in names:
        sort = system.var(n).sort
        if isinstance(sort, RangeSort):
            b[n] = [sort.lo, sort.hi]
        elif isinstance(sort, BoolSort):
            b[n] = [0, 1]
        else:
            b[n] = [None, None]
    facts: list[tuple[str, str, Expr]] = []
    for c in conjuncts(cons):
        if isinstance(c, Op) and c.op in _FLIP and len(c.args) == 2:
            x, y = c.args
            if isinstance(x, Var) and x.name in b:
                facts.append((x.name, str(c.op), y))
            if isinstance(y, Var) and y.name in b:
                facts.append((y.name, _FLIP[str(c.op)], x))
    changed = True
    rounds = 0
    while changed and rounds < 2 * len(facts) + 2:  # cyclic facts (x < y, y < x) stop too
        rounds += 1
        changed = False
        for n, o, e in facts:
            lo, hi = _value_range(e, b)
            cur = b[n]
            new = list(cur)
            if o in ("==", ">=", ">") and lo is not None:
                v = lo + (1 if o == ">" else 0)
                new[0] = v if cur[0] is None else max(cur[0], v)
            if o in ("==", "<=", "<") and hi is not None:
                v = hi - (1 if o == "<" else 0)
                new[1] = v if cur[1] is None else min(cur[1], v)
            if new != cur:
                b[n] = new
                changed = True
    return b


def _value_range(e: Expr, b: dict[str, list[int | None]]) -> tuple[int | None, int | None]:
    if isinstance(e, Const):
        return e.value, e.value
    if isinstance(e, Var) and e.name in b:
        lo, hi = b[e.name]
        return lo, hi
    return None, None


def rooted(system: System, state: tuple[int, ...]) -> System:
    """``system`` with ``state`` as its declared initial state and no ``init:`` constraint."""
    variables = tuple(replace(v, init=x) for v, x in zip(system.variables, state, strict=True))
    return system.with_(variables=variables, init_constraint=None)


def _shared_labels(per: list[PropertyResult]) -> dict[str, object]:
    """The statistics' labels every run reports alike (``backend``, ``reductions``, a
    fallback's reason: not numbers, which would need adding up or a maximum)."""
    first = per[0].stats.extra
    return {
        k: v
        for k, v in first.items()
        if isinstance(v, (str, list, tuple)) and all(p.stats.extra.get(k) == v for p in per)
    }


def merge_results(
    results: list[Result], total: int | None = None, stopped: str | None = None
) -> Result:
    """One Result from the runs from each initial state (same properties in each): per
    property the first ``violated`` one, else the first ``unknown`` one, else ``holds``;
    statistics added up (depth: the maximum). ``total``: the number of initial states, when
    the runs ended early (``stopped``: why; a limit of the check) before all were searched —
    then nothing that was not violated holds."""
    first = results[0]
    total = len(results) if total is None else total
    if len(results) == 1 and total == 1:
        return first
    merged: list[PropertyResult] = []
    for k, base in enumerate(first.results):
        per = [r.results[k] for r in results]
        pick = next((p for p in per if p.verdict == Verdict.VIOLATED), None)
        pick = pick or next((p for p in per if p.verdict == Verdict.UNKNOWN), None) or base
        st = Stats(
            sum(p.stats.states for p in per),
            sum(p.stats.transitions for p in per),
            max(p.stats.max_depth for p in per),
            sum(p.stats.time_s for p in per),
            extra={
                **_shared_labels(per),
                "initial_states": total,
                "initial_states_searched": len(per),
            },
        )
        reason = pick.reason
        if pick.verdict == Verdict.HOLDS and len(per) < total:
            why = stopped or "not every initial state was searched"
            pick = replace(pick, verdict=Verdict.UNKNOWN, trace=None)
            reason = f"{why} ({len(per)} of {total} initial states searched)"
        elif pick.verdict == Verdict.HOLDS:
            reason = f"{reason} (from each of the {len(per)} initial states)"
        elif pick.verdict == Verdict.UNKNOWN and len(per) < total:
            reason = f"{reason} ({len(per)} of {total} initial states searched)"
        merged.append(replace(pick, stats=st, reason=reason))
    notes = (*first.notes, f"{total} initial states, one run from each")
    if len(results) < total:
        notes = (*first.notes, f"{total} initial states, {len(results)} searched: {stopped}")
    return Result(first.model, first.method, tuple(merged), notes)


def stored_states(result: Result) -> int:
    """The states a run stored: its largest search's (the properties of one search share its
    statistics; the searches of a run bound their sum themselves)."""
    return max((p.stats.states for p in result.results), default=0)


def check_per_initial_state(
    check: Callable[[System, CheckOptions, Any], Result],
    system: System,
    options: CheckOptions,
    own: Any,
) -> Result:
    """Run ``check`` (an engine's ``check``, which reads only declared initial values) once
    from each initial state of ``system``'s ``init:`` constraint and merge the results
    (:func:`merge_results`). The limits are the whole check's (:mod:`absmc.kernel.run.limits`):
    one deadline for all runs, ``max_states`` for the states stored by all runs together;
    no run starts once a limit is used up or after Ctrl-C. Raises ``ModelError`` when the
    set is unbounded or too large (:func:`initial_states`)."""
    roots = initial_states(system)
    limits = options.limits.started()
    results: list[Result] = []
    used = 0
    stopped: str | None = None
    for r in roots:
        if results:
            stopped = limits.exhausted_reason(used)
            if stopped is not None:
                break
        run = replace(options, limits=limits.less(used))
        res = check(rooted(system, r), run, own)
        results.append(res)
        used += stored_states(res)
        if any(INTERRUPTED in p.reason for p in res.results):
            stopped = INTERRUPTED
            break
    return merge_results(results, len(roots), stopped)
