"""Validity, satisfiability and model enumeration with a cache (Z3 behind a small interface).

A solver answer ``unknown`` (or a timeout) is an explicit :data:`Validity.UNKNOWN` and is never
read as valid: :meth:`Prover.is_valid` returns ``True`` only for a proof (paper 000, Section 4:
"if the theorem prover can not decide the validity of a formula, we assume that it is not
valid").
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import z3

from absmc.ir.expr import Expr, Op
from absmc.logic.interrupt import interruptible
from absmc.logic.interrupt import watch as watch_interrupts
from absmc.logic.z3conv import Z3Term, Z3Translator


class Validity(StrEnum):
    """The answer to a validity query."""

    VALID = "valid"
    INVALID = "invalid"
    UNKNOWN = "unknown"


@dataclass
class ProverStats:
    """Counters: ``calls`` that reached the solver, ``cache_hits`` answered from the cache,
    ``unknown`` answers, and solver wall time ``time_s`` (seconds)."""

    calls: int = 0
    cache_hits: int = 0
    unknown: int = 0
    time_s: float = 0.0


class Prover:
    """Decides validity of IR formulas over the integers with Z3, caching by formula.

    ``timeout_ms`` bounds each solver call (milliseconds; ``0``: none). ``seed`` fixes Z3's
    random seed so that runs are reproducible. All methods take IR expressions; variables of a
    finite-range sort are *not* constrained to their range unless ``assumptions`` say so.

    ``incremental`` (default ``True``) answers validity and satisfiability queries with one
    solver and push/pop (fast for many small linear queries). With ``incremental=False`` every
    such query gets a fresh solver, which lets Z3 apply its non-incremental tactics: about ten
    times slower per query, but it decides nonlinear integer facts (``n1 * n2`` and residues, as
    in the abstract-operator generation of paper 001, Section 4) on which the incremental solver
    answers ``unknown``.

    ``deadline`` (a ``time.monotonic()`` instant, settable) bounds every call by the time left
    of the run: past it a query answers ``unknown`` at once (never valid) and
    ``deadline_reached`` is set.
    """

    def __init__(
        self,
        timeout_ms: int = 10_000,
        seed: int = 0,
        incremental: bool = True,
        deadline: float | None = None,
    ) -> None:
        self.timeout_ms = timeout_ms
        self.deadline = deadline
        #: a query was answered ``unknown`` because ``deadline`` had come (less than 1 ms
        #: left): callers report the time limit, not the solver, as the reason
        self.deadline_reached = False
        self.seed = seed
        self.incremental = incremental
        self.tr = Z3Translator()
        watch_interrupts(self.tr.ctx)
        self.stats = ProverStats()
        self._valid_cache: dict[Expr, Validity] = {}
        self._solver = self._new_solver()

    def _new_solver(self) -> z3.Solver:
        s = z3.Solver(ctx=self.tr.ctx)
        # Z3's own Ctrl-C handler would cancel the call and swallow the signal (the run then
        # went on as after a timeout); logic.interrupt cancels it and Python still raises
        s.set("ctrl_c", False)
        if self.timeout_ms:
            s.set("timeout", self.timeout_ms)
        s.set("random_seed", self.seed)
        return s

    def _bound(self, s: z3.Solver) -> bool:
        """Fit ``s``'s timeout to the time left before ``deadline``; ``False`` when none is
        (then :attr:`deadline_reached` is set)."""
        if self.deadline is None:
            return True
        left_ms = int((self.deadline - time.monotonic()) * 1000)
        if left_ms <= 0:
            self.deadline_reached = True
            return False
        s.set("timeout", min(self.timeout_ms, left_ms) if self.timeout_ms else left_ms)
        return True

    @interruptible
    def _check(self, terms: Sequence[Z3Term]) -> z3.CheckSatResult:
        if not self._bound(self._solver):
            self.stats.calls += 1
            self.stats.unknown += 1
            return z3.unknown
        if not self.incremental:
            fresh = self._new_solver()
            self._bound(fresh)
            for t in terms:
                fresh.add(t)
            t0 = time.monotonic()
            res = fresh.check()
            self.stats.time_s += time.monotonic() - t0
            self.stats.calls += 1
            if res == z3.unknown:
                self.stats.unknown += 1
            return res
        s = self._solver
        s.push()
        try:
            for t in terms:
                s.add(t)
            t0 = time.monotonic()
            res = s.check()
            self.stats.time_s += time.monotonic() - t0
        finally:
            s.pop()
        self.stats.calls += 1
        if res == z3.unknown:
            self.stats.unknown += 1
        return res

    def validity(self, formula: Expr) -> Validity:
        """``VALID`` when ``formula`` holds for all integer/bool values of its variables,
        ``INVALID`` when a counter-model exists, ``UNKNOWN`` when the solver cannot tell."""
        hit = self._valid_cache.get(formula)
        if hit is not None:
            self.stats.cache_hits += 1
            return hit
        res = self._check([z3.Not(self.tr(formula))])
        v = (
            Validity.VALID
            if res == z3.unsat
            else (Validity.INVALID if res == z3.sat else Validity.UNKNOWN)
        )
        self._valid_cache[formula] = v
        return v

    def is_valid(self, formula: Expr) -> bool:
        """True only when ``formula`` is proved valid (``UNKNOWN`` counts as not valid)."""
        return self.validity(formula) is Validity.VALID

    def implies(self, premise: Expr, conclusion: Expr) -> bool:
        """True only when ``premise => conclusion`` is proved valid."""
        return self.is_valid(Op("=>", (premise, conclusion)))

    def satisfiable(self, formula: Expr) -> Validity:
        """``VALID`` (read: satisfiable) / ``INVALID`` (unsatisfiable) / ``UNKNOWN``."""
        res = self._check([self.tr(formula)])
        if res == z3.sat:
            return Validity.VALID
        return Validity.INVALID if res == z3.unsat else Validity.UNKNOWN

    @interruptible
    def model(self, formula: Expr) -> dict[str, int | bool] | None:
        """A satisfying assignment of ``formula``'s variables, or ``None`` when unsatisfiable or
        unknown."""
        s = self._solver
        s.push()
        try:
            s.add(self.tr(formula))
            self.stats.calls += 1
            if not self._bound(s) or s.check() != z3.sat:
                return None
            m = s.model()
            out: dict[str, int | bool] = {}
            for d in m.decls():
                val = m[d]
                out[d.name()] = bool(z3.is_true(val)) if z3.is_bool(val) else val.as_long()
            return out
        finally:
            s.pop()

    @interruptible
    def all_models(
        self, formula: Expr, projection: Sequence[Expr], limit: int | None = None
    ) -> tuple[list[tuple[bool, ...]], bool]:
        """allSAT: every assignment of truth values to the boolean ``projection`` terms that
        extends to a model of ``formula``. Returns ``(assignments, complete)``; ``complete`` is
        False when the solver answered ``unknown`` or ``limit`` was reached, in which case the
        list may miss assignments."""
        s = self._new_solver()
        s.add(self.tr(formula))
        terms = [self.tr(p) for p in projection]
        found: list[tuple[bool, ...]] = []
        while limit is None or len(found) < limit:
            if not self._bound(s):
                self.stats.calls += 1
                self.stats.unknown += 1
                return found, False
            t0 = time.monotonic()
            res = s.check()
            self.stats.time_s += time.monotonic() - t0
            self.stats.calls += 1
            if res == z3.unsat:
                return found, True
            if res != z3.sat:
                self.stats.unknown += 1
                return found, False
            m = s.model()
            values = tuple(bool(z3.is_true(m.eval(t, model_completion=True))) for t in terms)
            found.append(values)
            if not terms:
                return found, True
            s.add(z3.Or(*[t if not v else z3.Not(t) for t, v in zip(terms, values, strict=True)]))
        return found, False
