"""The soundness rule of the portfolio: which member answers are accepted, which member decides
each property, and what the others did (:mod:`absmc.engines.portfolio`).

* ``holds`` is accepted only from an engine whose capabilities say it proves;
* ``violated`` only with a trace that replays here, in the portfolio's process, on the
  concrete semantics (:func:`absmc.kernel.replay.trace.replay_trace`); for a linear-time property
  the trace must be a lasso that the automaton of the negated property accepts
  (:func:`absmc.kernel.replay.trace.replay_lasso_rows`, with weak fairness when asked); for a CTL
  property the witness must be a path (or lasso) of the concrete semantics
  (:func:`absmc.kernel.replay.trace.replay_rows`; that it witnesses the negated formula is checked
  by the member with :mod:`absmc.kernel.replay.witness`);
* an accepted ``holds`` and an accepted ``violated`` for the same property is a
  :class:`Disagreement`: a bug in an engine, reported with both answers, never settled by a
  vote.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from absmc.engines.engine import AnyEngine
from absmc.engines.portfolio.engine import METHOD, Disagreement
from absmc.ir.ltl import Automaton, LtlProperty
from absmc.kernel.ltl.ltl import automaton_of
from absmc.kernel.model.irsemantics import IRSemantics
from absmc.kernel.replay.trace import ReplayError, replay_lasso_rows, replay_rows, replay_trace
from absmc.kernel.run.result import PropertyResult, Result, Stats, Trace, Verdict


@dataclass(frozen=True)
class LassoCheck:
    """What a linear-time violation is checked against: the selected properties by name and
    whether the run asks for weak fairness."""

    properties: Mapping[str, LtlProperty] = field(default_factory=dict)
    weakly_fair: bool = False


class Board:
    """The answers collected so far for the selected properties ``names``: the accepted
    (conclusive) one of each property, in arrival order, and every member's outcome."""

    def __init__(
        self,
        sem: IRSemantics,
        kinds: Mapping[str, str],
        engines: Sequence[AnyEngine],
        lassos: LassoCheck | None = None,
    ) -> None:
        self.sem = sem
        self.lassos = lassos or LassoCheck()
        self._automata: dict[str, Automaton] = {}
        self.kinds = dict(kinds)
        self.names = list(kinds)
        names = self.names
        self.engines = {e.name: e for e in engines}
        self.accepted: dict[str, list[PropertyResult]] = {n: [] for n in names}
        #: property -> engine -> {"verdict": ..., "reason": ...}
        self.outcomes: dict[str, dict[str, dict[str, Any]]] = {n: {} for n in names}
        self.notes: list[str] = []
        #: the first unknown answer with a (possibly abstract) trace, or else the one that
        #: explored the most states (the most telling partial statistics)
        self.unknown: dict[str, PropertyResult] = {}

    @property
    def complete(self) -> bool:
        """Every property has a conclusive answer."""
        return all(self.accepted[n] for n in self.names)

    def first_violation(self) -> str | None:
        """The first property with an accepted violation, if any."""
        return next(
            (n for n in self.names if any(a.verdict is Verdict.VIOLATED for a in self.accepted[n])),
            None,
        )

    def note_all(
        self, engine: str, verdict: str | None, reason: str, only: Sequence[str] = ()
    ) -> None:
        """Record the same outcome of ``engine`` for the properties ``only`` (all: empty)."""
        for n in only or self.names:
            self.outcomes[n].setdefault(engine, {"verdict": verdict, "reason": reason})

    def offer(self, result: Result) -> None:
        """Take a member's result. Raises :class:`Disagreement` when it contradicts an
        accepted answer."""
        for r in result.results:
            if r.property not in self.accepted:
                continue
            if any(a.method == r.method for a in self.accepted[r.property]):
                continue  # sent early already (CheckOptions.decided)
            outcome: dict[str, Any] = {"verdict": r.verdict.value, "reason": r.reason}
            accepted = self._accept(r, outcome)
            self.outcomes[r.property][r.method] = outcome
            if accepted is None:
                seen = self.unknown.get(r.property)
                if (
                    seen is None
                    or (seen.trace is None and r.trace is not None)
                    or (
                        (r.trace is None) is (seen.trace is None)
                        and r.stats.states > seen.stats.states
                    )
                ):
                    self.unknown[r.property] = r
                continue
            for other in self.accepted[r.property]:
                if other.verdict is not accepted.verdict:
                    pair = (other, accepted)
                    holds, bad = pair if other.verdict is Verdict.HOLDS else pair[::-1]
                    raise Disagreement(r.property, holds, bad)
            self.accepted[r.property].append(accepted)

    def _accept(self, r: PropertyResult, outcome: dict[str, Any]) -> PropertyResult | None:
        engine = self.engines.get(r.method)
        if r.verdict is Verdict.HOLDS:
            if engine is None or not engine.capabilities.proves:
                outcome["rejected"] = "holds from a method that does not prove"
                self.notes.append(f"{r.method}: '{r.property}' holds ignored (it does not prove)")
                return None
            return r
        if r.verdict is Verdict.VIOLATED:
            if r.trace is None:
                outcome["rejected"] = "violated without a trace"
                return None
            try:
                again = self._replay(r)
            except ReplayError as e:
                outcome["rejected"] = f"its trace does not replay on the concrete semantics: {e}"
                self.notes.append(f"{r.method}: '{r.property}' violated ignored ({e})")
                return None
            note = r.trace.note or again.note
            return dataclasses.replace(r, trace=dataclasses.replace(again, note=note))
        return None

    def _replay(self, r: PropertyResult) -> Trace:
        """The member's trace replayed here (see the module docstring). Raises
        ``ReplayError``."""
        assert r.trace is not None
        kind = self.kinds.get(r.property)
        if kind == "ltl":
            aut = self._automata.get(r.property)
            if aut is None:  # translated once, however many members report a lasso
                prop = self.lassos.properties.get(r.property)
                if prop is None:
                    raise ReplayError("not a selected linear-time property")
                aut = self._automata[r.property] = automaton_of(prop)
            return replay_lasso_rows(self.sem, aut, r.trace, self.lassos.weakly_fair)
        if kind == "ctl":
            replay_rows(self.sem, r.trace)
            return dataclasses.replace(r.trace, replayed=True)
        return replay_trace(self.sem, r.property, r.trace)

    def results(self, order: Sequence[str], fallback: Stats) -> list[PropertyResult]:
        """One result per property: the first accepted answer (``decided_by`` its engine,
        ``methods`` every member's outcome in ``order``), else ``unknown`` with why each
        member did not decide."""
        out: list[PropertyResult] = []
        for n in self.names:
            outcomes = self.outcomes[n]
            methods = {e: outcomes[e] for e in order if e in outcomes}
            if self.accepted[n]:
                first = self.accepted[n][0]
                for e, o in methods.items():
                    if e == first.method:
                        o["role"] = "decided"
                    elif any(a.method == e for a in self.accepted[n]):
                        o["role"] = "agrees"
                extra = {**first.extra, "decided_by": first.method, "methods": methods}
                reason = f"{first.method}: {first.reason}"
                out.append(dataclasses.replace(first, reason=reason, extra=extra))
                continue
            seen = self.unknown.get(n)
            out.append(
                PropertyResult(
                    n,
                    self.kinds[n],
                    METHOD,
                    Verdict.UNKNOWN,
                    "no method decided it" if methods else "no method could check it",
                    seen.stats if seen is not None else fallback,
                    seen.trace if seen is not None else None,
                    iterations=seen.iterations if seen is not None else None,
                    extra={"decided_by": None, "methods": methods},
                )
            )
        return out
