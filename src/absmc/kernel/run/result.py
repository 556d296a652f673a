"""The one result shape every engine returns (rendered by ``absmc.report``).

A :class:`Result` holds one :class:`PropertyResult` per checked property. ``violated`` results
carry a :class:`Trace` that was replayed on the concrete (compiled) semantics before it was
reported; ``unknown`` results say why (a limit, a possibly spurious abstract trace, ...).
"""

from __future__ import annotations

import dataclasses
import resource
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

#: a variable's value in a trace: an int or bool of a concrete state, or a token name of an
#: abstract state (the type-based abstraction shows abstract traces with token names)
StateValue = int | bool | str


class Verdict(StrEnum):
    """The answer for one property (or, combined, for a whole run)."""

    HOLDS = "holds"
    VIOLATED = "violated"
    UNKNOWN = "unknown"

    def __str__(self) -> str:
        return self.value


#: the version of the JSON shapes (``Result.to_json``, ``simulate --json``, trails, errors)
#: described by ``absmc/schema/absmc.schema.json``; raised when a field changes meaning or
#: disappears (new optional fields keep it)
SCHEMA_VERSION = 1

#: process exit code for each overall verdict (2 is usage/model error, 4 internal error)
EXIT_CODES = {Verdict.HOLDS: 0, Verdict.VIOLATED: 1, Verdict.UNKNOWN: 3}


@dataclass(frozen=True)
class TraceStep:
    """One entry of a trace: step 0 is the initial state (no command); step k > 0 is the state
    after executing ``command`` (its text) of ``process``, written at ``source``
    (``FILE:LINE``). ``state`` maps every variable to its value (a token name for an
    abstracted variable in an abstract trace)."""

    step: int
    state: Mapping[str, StateValue]
    process: str | None = None
    command: str | None = None
    source: str | None = None
    command_index: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "process": self.process,
            "command": self.command,
            "source": self.source,
            "state": dict(self.state),
        }


@dataclass(frozen=True)
class Trace:
    """A finite run from the initial state. ``replayed`` is True once it was re-executed on the
    concrete semantics; ``note`` describes the last step when it is special (the model error it
    causes, a deadlock, ...). ``steps`` is a tuple (a list given is copied). A *lasso* (the
    counterexample of a linear-time property) has ``cycle_start`` = the index of the step
    whose state the last step's state equals: the steps from there on repeat forever."""

    steps: Sequence[TraceStep]
    replayed: bool = False
    note: str | None = None
    cycle_start: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "steps", tuple(self.steps))

    def __len__(self) -> int:
        return len(self.steps)

    def changed(self, k: int) -> dict[str, StateValue]:
        """Variables whose value differs between step ``k - 1`` and step ``k``."""
        if k == 0:
            return dict(self.steps[0].state)
        before, after = self.steps[k - 1].state, self.steps[k].state
        return {n: v for n, v in after.items() if before.get(n) != v}


@dataclass(frozen=True)
class Stats:
    """Search statistics: ``states`` stored, ``transitions`` executed, ``max_depth`` reached,
    wall ``time_s`` in seconds, process ``peak_mb`` (peak resident set size, MiB) and
    method-specific ``extra`` entries (e.g. bitstate hash factor and coverage)."""

    states: int = 0
    transitions: int = 0
    max_depth: int = 0
    time_s: float = 0.0
    peak_mb: float = field(default_factory=lambda: peak_rss_mb())
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def states_per_s(self) -> float:
        """Stored states per second of wall time."""
        return self.states / self.time_s if self.time_s > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "states": self.states,
            "transitions": self.transitions,
            "max_depth": self.max_depth,
            "time_s": round(self.time_s, 6),
            "peak_mb": round(self.peak_mb, 1),
        }
        out.update(self.extra)
        return out


@dataclass(frozen=True)
class PropertyResult:
    """The verdict for one property. ``violations`` counts violating states/transitions found
    (more than one only with ``--keep-going``); ``iterations`` holds per-iteration rows of
    iterating methods; ``extra`` holds method-specific fields (e.g. a four-valued ``value``)."""

    property: str
    kind: str
    method: str
    verdict: Verdict
    reason: str
    stats: Stats
    trace: Trace | None = None
    violations: int = 0
    iterations: Sequence[dict[str, Any]] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.iterations is not None:
            object.__setattr__(self, "iterations", tuple(self.iterations))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "property": self.property,
            "kind": self.kind,
            "method": self.method,
            "verdict": self.verdict.value,
            "reason": self.reason,
            "stats": self.stats.to_json(),
            "trace": [s.to_json() for s in self.trace.steps] if self.trace is not None else None,
        }
        if self.trace is not None and self.trace.note:
            out["trace_note"] = self.trace.note
        if self.trace is not None and self.trace.cycle_start is not None:
            out["cycle_start"] = self.trace.cycle_start
        if self.violations:
            out["violations"] = self.violations
        if self.iterations is not None:
            out["iterations"] = list(self.iterations)
        out.update(self.extra)
        return out


@dataclass(frozen=True)
class Result:
    """The outcome of one ``absmc check`` run on one model (frozen: ``results``, ``notes`` and
    ``graphs`` are tuples; lists given are copied). ``graphs`` are bounded pictures of explored
    state spaces (:mod:`absmc.kernel.explore.graph`), present when asked for
    (``CheckOptions.graph_bound``)."""

    model: str
    method: str
    results: Sequence[PropertyResult]
    notes: Sequence[str] = ()
    graphs: Sequence[dict[str, Any]] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "results", tuple(self.results))
        object.__setattr__(self, "notes", tuple(self.notes))
        object.__setattr__(self, "graphs", tuple(self.graphs))

    @property
    def verdict(self) -> Verdict:
        """``violated`` if any property is violated, else ``unknown`` if any is unknown, else
        ``holds`` (also for a run with no property at all)."""
        verdicts = {r.verdict for r in self.results}
        if Verdict.VIOLATED in verdicts:
            return Verdict.VIOLATED
        if Verdict.UNKNOWN in verdicts:
            return Verdict.UNKNOWN
        return Verdict.HOLDS

    @property
    def exit_code(self) -> int:
        """0 all hold, 1 some violated, 3 unknown."""
        return EXIT_CODES[self.verdict]

    def with_reductions(self, names: Sequence[str]) -> Result:
        """This result with ``names`` (the state-space reductions built into the checked
        System, e.g. ``"dead-variable-reset"``) as ``reductions`` in every property's
        statistics, before those the search applied (``"partial-order"``); the result itself
        when ``names`` is empty."""
        if not names:
            return self

        def named(st: Stats) -> Stats:
            # the System's reductions first, then the search's own (partial-order)
            searched = [n for n in st.extra.get("reductions", []) if n not in names]
            return dataclasses.replace(st, extra={**st.extra, "reductions": [*names, *searched]})

        return self.map_stats(named)

    def map_stats(self, update: Callable[[Stats], Stats]) -> Result:
        """This result with ``update`` applied to every property's statistics, once per
        statistics object: properties of one search keep sharing theirs."""
        new: dict[int, Stats] = {}
        out = []
        for r in self.results:
            st = new.get(id(r.stats))
            if st is None:
                st = new[id(r.stats)] = update(r.stats)
            out.append(dataclasses.replace(r, stats=st))
        return dataclasses.replace(self, results=out)

    def __repr__(self) -> str:
        each = ", ".join(f"{r.property!r}: {r.verdict.value}" for r in self.results)
        return (
            f"Result(model={self.model!r}, method={self.method!r}, "
            f"verdict={self.verdict.value!r}, results={{{each}}})"
        )

    def to_json(self) -> dict[str, Any]:
        """The result as JSON-ready data (the shape ``check --json`` prints; its schema is
        ``absmc/schema/absmc.schema.json``, version ``schema_version``)."""
        out: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "model": self.model,
            "method": self.method,
            "verdict": self.verdict.value,
            "results": [r.to_json() for r in self.results],
        }
        if self.notes:
            out["notes"] = list(self.notes)
        if self.graphs:
            out["graphs"] = list(self.graphs)
        return out


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
