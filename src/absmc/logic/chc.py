"""Safety of a transition system as constrained Horn clauses, solved by Z3's Spacer (IC3/PDR
for CHCs: Komuravelli, Gurfinkel, Chaki, *SMT-based model checking for recursive programs*,
CAV 2014; Bradley's IC3, VMCAI 2011), and bounded model checking and k-induction on the same
encoding (Sheeran, Singh, Stålmarck, *Checking safety properties using induction and a
SAT-solver*, FMCAD 2000).

The clauses over one predicate ``Inv`` of the state vector (control locations are state
variables like any other):

* ``Init(s) ⇒ Inv(s)``;
* ``Inv(s) ∧ T_c(s, s′) ⇒ Inv(s′)``, one clause per command ``c`` (named ``c<index>``, so a
  counterexample's clauses are its commands);
* ``Inv(s) ∧ Bad(s) ⇒ false`` (named ``bad``), and ``Inv(s) ∧ Bad_c(s) ⇒ false`` (named
  ``bad<index>``) for a violation by executing command ``c``.

Answers: :class:`Proved` (the interpretation of ``Inv``: an inductive invariant), or
:class:`Refuted` (a command path and an initial state, rebuilt from the clauses along Spacer's
derivation by one satisfiability query over that path), or :class:`Inconclusive` (the solver's
reason). Nothing here is a verdict: the engines check the invariant
(:mod:`absmc.logic.certificate`) and replay the path on the concrete semantics.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import z3

from absmc.logic.interrupt import interruptible, watch
from absmc.logic.transition import BadCondition, TransitionSystem
from absmc.logic.z3conv import Z3Term

__all__ = ["Inconclusive", "Proved", "Refuted", "path_model", "spacer"]

State = tuple[int, ...]


@dataclass(frozen=True)
class Proved:
    """``invariant``: an inductive invariant over the current state variables (Z3);
    ``detail`` how it was found."""

    invariant: Z3Term
    detail: str


@dataclass(frozen=True)
class Refuted:
    """A counterexample: from initial state ``start`` the commands ``path`` (the last one
    violates the property when the violation is a step's, e.g. a failed assertion)."""

    start: State
    path: tuple[int, ...]


@dataclass(frozen=True)
class Inconclusive:
    """No answer, and why; ``depth``: the bound (steps from an initial state) a bounded
    search had reached when it stopped, or ``None``."""

    reason: str
    depth: int | None = None


Answer = Proved | Refuted | Inconclusive


@interruptible
def spacer(
    ts: TransitionSystem,
    cond: BadCondition,
    timeout_s: float | None,
    background: Z3Term | None = None,
) -> Answer:
    """Solve the clauses of the module doc for ``ts`` and ``cond`` with Spacer within
    ``timeout_s`` seconds (``None``: no limit). ``background``: a state formula known to hold
    in every reachable state (an inductive invariant that holds initially, e.g. Houdini's),
    assumed in every clause body; the invariant returned then includes it (``Inv ∧ S`` is
    inductive when ``S`` is and ``Inv`` is relative to ``S``)."""
    ctx = ts.ctx
    watch(ctx)
    fp = z3.Fixedpoint(ctx=ctx)
    fp.set(engine="spacer")
    # keep one clause per command (their names are the counterexample's commands)
    fp.set("xform.slice", False)
    fp.set("xform.inline_linear", False)
    fp.set("xform.inline_eager", False)
    if timeout_s is not None:
        fp.set("timeout", max(1, int(timeout_s * 1000)))
    sorts = [x.sort() for x in ts.current]
    inv = z3.Function("Inv", *sorts, z3.BoolSort(ctx))
    err = z3.Function("Err", z3.BoolSort(ctx))
    fp.register_relation(inv, err)
    fp.declare_var(*ts.current, *ts.primed)
    # the ranges hold in every reachable state (Init has them, every step keeps them): given
    # in each clause, Spacer need not learn them
    dom = ts.domain() if background is None else z3.And(ts.domain(), background)
    fp.rule(inv(*ts.current), ts.init(), name="init")
    for c in ts.commands:
        fp.rule(inv(*ts.primed), [inv(*ts.current), dom, ts.step(c)], name=f"c{c.index}")
    if cond.state is not None:
        fp.rule(err(), [inv(*ts.current), dom, ts.term(cond.state)], name="bad")
    for ci, e in cond.steps:
        fp.rule(err(), [inv(*ts.current), dom, ts.term(e)], name=f"bad{ci}")
    t0 = time.monotonic()
    answer = fp.query(err())
    if answer == z3.unsat:
        body = _interpretation(fp.get_answer(), inv, ts)
        if body is None:
            body = z3.substitute_vars(fp.get_cover_delta(-1, inv), *ts.current)
        levels = fp.get_num_levels(inv)
        how = f"Spacer, {levels} level{'s' if levels != 1 else ''}"
        if background is not None:
            return Proved(z3.And(body, background), f"{how}, with Houdini's invariants")
        return Proved(body, how)
    if answer == z3.sat:
        names = [str(n) for n in fp.get_rule_names_along_trace()]
        commands = [int(n[1:]) for n in reversed(names) if n.startswith("c") and n[1:].isdigit()]
        last = next((n for n in names if n.startswith("bad")), None)
        if last is None:
            return Inconclusive("Spacer found the error reachable but gave no derivation")
        end = None if last == "bad" else int(last[3:])
        left = None if timeout_s is None else max(1.0, timeout_s - (time.monotonic() - t0))
        found = path_model(ts, cond, commands, end, left)
        if found is None:
            return Inconclusive("Spacer's derivation could not be rebuilt as a path")
        return found
    return Inconclusive(f"Spacer: {fp.reason_unknown()}")


def _interpretation(answer: Z3Term, inv: z3.FuncDeclRef, ts: TransitionSystem) -> Z3Term | None:
    """The body of ``ForAll(xs, Inv(xs) == body)`` in Spacer's answer, over ``ts.current``."""
    todo = [answer]
    while todo:
        t = todo.pop()
        if z3.is_quantifier(t) and t.is_forall():
            b = t.body()
            if z3.is_eq(b) and z3.is_app(b.arg(0)) and b.arg(0).decl() == inv:
                lhs, rhs = b.arg(0), b.arg(1)
                n = t.num_vars()
                terms: list[Z3Term | None] = [None] * n
                for j in range(lhs.num_args()):
                    a = lhs.arg(j)
                    if not z3.is_var(a):
                        return None
                    terms[z3.get_var_index(a)] = ts.current[j]
                if any(x is None for x in terms):
                    return None
                return z3.substitute_vars(rhs, *terms)
        elif z3.is_app(t) and z3.is_eq(t) and z3.is_app(t.arg(0)) and t.arg(0).decl() == inv:
            return t.arg(1) if not ts.current else None
        elif z3.is_app(t):
            todo.extend(t.children())
    return None


@interruptible
def path_model(
    ts: TransitionSystem,
    cond: BadCondition,
    commands: Sequence[int],
    end: int | None,
    timeout_s: float | None,
) -> Refuted | None:
    """An initial state from which ``commands`` execute and then the violation ``cond`` happens
    (in the last state, or by executing command ``end``), as a :class:`Refuted`; ``None`` when
    there is none (or the solver does not say)."""
    by_index = {c.index: c for c in ts.commands}
    states = [ts.copy(str(k)) for k in range(len(commands) + 1)]
    s = z3.Solver(ctx=ts.ctx)
    if timeout_s is not None:
        s.set("timeout", max(1, int(timeout_s * 1000)))
    s.add(ts.rename(ts.init(), states[0]))
    for k, ci in enumerate(commands):
        c = by_index.get(ci)
        if c is None:
            return None
        s.add(ts.rename(ts.step(c), states[k], states[k + 1]))
    last = states[-1]
    if end is None:
        if cond.state is None:
            return None
        s.add(ts.rename(ts.term(cond.state), last))
    else:
        e = dict(cond.steps).get(end)
        if e is None:
            return None
        s.add(ts.rename(ts.term(e), last))
    if s.check() != z3.sat:
        return None
    start = ts.state_of(s.model(), states[0])
    return Refuted(start, (*commands, *([end] if end is not None else [])))
