"""REFINEMENTSEARCH (paper 000, Fig. 3) and its variants; the ``--method under`` entry point."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from absmc.codegen.plan import choose_dispatch_var
from absmc.codegen.python import CompiledSystem, compile_system
from absmc.engines.under.abstraction import Abstraction, Predicate, PredicateSet
from absmc.engines.under.checks import PrecisionChecks
from absmc.engines.under.options import UnderOptions
from absmc.engines.under.search import SearchRun, alpha_search
from absmc.ir.arrays import expand_system
from absmc.ir.expr import Const, Expr, Op, const
from absmc.ir.linear import canonical_atom
from absmc.ir.printer import format_expr
from absmc.ir.simplify import simplify
from absmc.ir.system import Command, System
from absmc.kernel.explore.search import SearchOutcome, Violation
from absmc.kernel.replay.outcome import results_from_outcome
from absmc.kernel.run.limits import INTERRUPTED
from absmc.kernel.run.options import CheckOptions, Selection, select_properties
from absmc.kernel.run.result import PropertyResult, Result, Stats, Verdict
from absmc.logic import interrupt
from absmc.logic.prover import Prover
from absmc.logic.wp import predicate_atoms


@dataclass
class _Loop:
    rows: list[dict[str, Any]] = field(default_factory=list)
    violations: dict[str, Violation] = field(default_factory=dict)
    exact: bool = False
    stopped: str | None = None
    last: SearchRun | None = None


def _data_atoms(system: System, e: Expr) -> list[Expr]:
    """Canonical atoms of ``e`` that mention a data variable."""
    data = frozenset(v.name for v in system.data_vars)
    return predicate_atoms(e, data, system.index_of)


def initial_predicates(system: System, under: UnderOptions) -> PredicateSet:
    """Φ₁: the model's predicates, ``under.predicates`` and the requested seeds."""
    sources: list[Expr] = [*system.predicates, *under.predicates]
    if "guards" in under.seed_predicates:
        sources += [c.guard for c in system.commands]
    if "property" in under.seed_predicates:
        sources += [p.bad for p in system.properties]
    out = PredicateSet()
    for e in sources:
        for a in _data_atoms(system, e):
            out.add(Predicate(a))
    return out


class _Locator:
    """The location (pc variable, value) of a command's process in an abstract state."""

    def __init__(self, system: System, alpha: Abstraction) -> None:
        self.alpha = alpha
        self.pc: dict[str, str | None] = {}
        for p in system.processes:
            pc = p.pc or choose_dispatch_var(system, system.commands_of(p.name))
            self.pc[p.name] = pc if pc in alpha.control_pos else None

    def __call__(self, cmd: Command, a: tuple[int, ...]) -> tuple[str, int] | None:
        pc = self.pc.get(cmd.process)
        if pc is None:
            return None
        return pc, a[self.alpha.control_pos[pc]]


def _eq(a: Expr, b: Expr) -> Expr:
    return Op("==", (a, b))


def _concrete_state_predicates(system: System, states: Iterable[tuple[int, ...]]) -> list[Expr]:
    out: list[Expr] = []
    for s in states:
        for v in system.data_vars:
            atom = canonical_atom(
                _eq(v.ref(), const(s[system.index_of[v.name]])), dict(system.index_of)
            )
            if atom not in out:
                out.append(atom)
    return out


def check_under(system: System, options: CheckOptions, under: UnderOptions) -> Result:
    """Run REFINEMENTSEARCH on ``system`` and return per-property verdicts with the
    per-iteration table in ``PropertyResult.iterations``.

    ``holds`` only when an iteration adds no predicate (an exact abstraction: the explored
    structure is bisimilar to the concrete system, Theorem 2); ``violated`` with a concrete
    trace replayed on the compiled semantics; ``unknown`` at ``max_iterations`` or a limit.
    Raises ``OptionError`` for unknown property names. Systems with exclusive control or
    timeout commands (Promela's ``atomic``/``timeout``), which αSEARCH does not model yet, are
    refused by the registry (``ENGINE.capabilities``).
    """
    start = time.monotonic()
    system = expand_system(system)  # array reads as case splits (ir.arrays)
    selection = select_properties(system, options)
    compiled = compile_system(system, selection.user)
    deadline = options.limits.end(start)
    prover = (
        Prover(timeout_ms=under.prover_timeout_ms, deadline=deadline)
        if under.prover == "z3"
        else None
    )
    phi = initial_predicates(system, under)
    signals = interrupt.count()  # Ctrl-C from here on ends the loop (checked between calls)
    loop = _Loop()
    streak: dict[int, int] = {}
    iteration = 0
    try:
        while True:
            iteration += 1
            interrupt.raise_if_since(signals)
            t0 = time.monotonic()
            calls0 = prover.stats.calls if prover else 0
            hits0 = prover.stats.cache_hits if prover else 0
            alpha = Abstraction(system, phi)
            checks = (
                None if under.store == "range" else PrecisionChecks(system, alpha, prover, signals)
            )
            run = alpha_search(
                compiled,
                alpha,
                checks,
                order=options.order,
                keep_going=options.keep_going,
                check_deadlock=selection.deadlock,
                limits=options.limits,
                deadline=deadline,
                track_ranges=under.store == "range",
                progress=options.progress,
            )
            loop.last = run
            nxt = phi.copy()
            added: list[Predicate] = []

            def add(p: Predicate, nxt: PredicateSet = nxt, added: list[Predicate] = added) -> None:
                if nxt.add(p):
                    added.append(p)

            if under.store == "range":
                for _, name, low in run.merged:
                    ref = system.ref(name)
                    add(Predicate(canonical_atom(_eq(ref, const(low)), dict(system.index_of))))
            else:
                locate = _Locator(system, alpha)
                for r in run.refinements:
                    loc = None
                    if under.local_predicates and r.command is not None and r.source is not None:
                        loc = locate(system.commands[r.command], r.source)
                    add(Predicate(r.atom, loc))
                if under.concrete_after is not None:
                    for ci in list(streak):
                        if ci not in run.inexact:
                            del streak[ci]
                    for ci, sources in run.inexact.items():
                        streak[ci] = streak.get(ci, 0) + 1
                        if streak[ci] >= under.concrete_after:
                            for atom in _concrete_state_predicates(system, sources):
                                if not isinstance(simplify(atom), Const):
                                    add(Predicate(atom))
            loop.rows.append(
                {
                    "iteration": iteration,
                    "concrete_states": run.concrete_states,
                    "abstract_states": run.abstract_states,
                    "new_predicates": [str(p) for p in added],
                    "prover_calls": (prover.stats.calls - calls0) if prover else 0,
                    "cache_hits": (prover.stats.cache_hits - hits0) if prover else 0,
                    "time_s": round(time.monotonic() - t0, 6),
                }
            )
            for name, found in run.violations.items():
                loop.violations.setdefault(name, found)  # the first iteration that found it
            if run.violations and not options.keep_going:
                loop.stopped = run.stopped
                break
            if run.stopped is not None:
                loop.stopped = run.stopped
                break
            if not added:
                loop.exact = True
                break
            if iteration >= under.max_iterations:
                loop.stopped = (
                    f"no exact abstraction after {under.max_iterations} iterations "
                    f"({len(nxt)} predicates)"
                )
                break
            phi = nxt
    except KeyboardInterrupt:  # Ctrl-C between two searches (a search ends on its own)
        if loop.last is None:
            raise
        loop.stopped, loop.exact = INTERRUPTED, False
    return _result(system, compiled, selection, loop, phi, prover, start, under)


def _result(
    system: System,
    compiled: CompiledSystem,
    selection: Selection,
    loop: _Loop,
    phi: PredicateSet,
    prover: Prover | None,
    start: float,
    under: UnderOptions,
) -> Result:
    last = loop.last
    assert last is not None
    iterations = len(loop.rows)
    stats = Stats(
        states=last.abstract_states,
        transitions=last.concrete_states,
        max_depth=last.max_depth,
        time_s=time.monotonic() - start,
        extra={
            "iterations": iterations,
            "predicates": len(phi),
            "prover_calls": prover.stats.calls if prover else 0,
            "cache_hits": prover.stats.cache_hits if prover else 0,
            "abstract_transitions": last.abstract_transitions,
        },
    )
    outcome = SearchOutcome(
        violations=loop.violations,
        states=last.abstract_states,
        transitions=last.concrete_states,
        stopped=None if loop.exact else (loop.stopped or "refinement stopped"),
    )
    if loop.exact:
        how = "lightweight " if under.prover == "none" else ""
        how = "range-store " if under.store == "range" else how
        reason_holds = (
            f"{how}exact abstraction after {iterations} iteration"
            f"{'s' if iterations != 1 else ''}: {last.abstract_states:,} abstract states, "
            f"bisimilar to the concrete system"
        )
    results = results_from_outcome(compiled, selection, outcome, "under", stats, loop.exact)
    out: list[PropertyResult] = []
    for r in results:
        reason = reason_holds if r.verdict is Verdict.HOLDS else r.reason
        out.append(dataclasses.replace(r, reason=reason, iterations=tuple(loop.rows)))
    notes = [f"predicates: {', '.join(format_expr(p.atom) for p in phi) or 'none'}"]
    return Result(system.file or system.name, "under", tuple(out), tuple(notes))
