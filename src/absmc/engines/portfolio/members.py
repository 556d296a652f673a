"""Which registered engines take part in a portfolio, for which properties, with which options
and which share of the limits (:mod:`absmc.engines.portfolio`)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from absmc.engines.engine import FEATURES, AnyEngine, checks_property, system_features
from absmc.ir.sorts import IntSort
from absmc.ir.system import System
from absmc.kernel.run.options import CheckOptions, Limits, property_kind

#: seconds (at most) of ``--timeout`` kept back from the members for collecting their answers
MARGIN_S = 0.5


@dataclass(frozen=True)
class Member:
    """One engine's part: ``options`` are its own options (``None`` when it sits out),
    ``properties`` the selected property names it checks, ``absent`` why it sits out."""

    engine: AnyEngine
    options: object | None
    properties: tuple[str, ...]
    absent: str | None = None

    @property
    def runs(self) -> bool:
        return self.absent is None


def plan(
    system: System,
    options: CheckOptions,
    names: Sequence[str],
    engines: Sequence[AnyEngine],
    given: Mapping[str, object],
) -> list[Member]:
    """One :class:`Member` per engine of ``engines``: it takes part when it can prove or refute,
    supports every feature ``system`` uses and ``options.store``, checks at least one of the
    selected properties ``names`` (by kind) and does not sit out by its own
    :meth:`~absmc.engines.engine.Engine.for_portfolio` (given the options ``given`` by the
    user's arguments, by engine name; default options otherwise)."""
    features = system_features(system)
    kinds = {n: property_kind(system, n) for n in names}
    out: list[Member] = []
    for eng in engines:
        caps = eng.capabilities
        mine = tuple(n for n in names if checks_property(caps, system, n, kinds[n]))
        missing = sorted(features - caps.features)
        absent: str | None = None
        joined: object = eng.for_portfolio(given.get(eng.name, eng.default_options()))
        if not (caps.proves or caps.refutes):
            absent = "it neither proves nor refutes"
        elif missing:
            absent = f"it does not support {FEATURES[missing[0]]}"
        elif options.store not in caps.stores:
            absent = f"it does not search with the {options.store} store"
        elif not mine:
            absent = "it checks none of the selected property kinds"
        elif isinstance(joined, str):
            absent = joined
        out.append(Member(eng, None if absent else joined, mine if not absent else (), absent))
    return out


#: the rank of an exhaustive engine on a model without unbounded integers (before the others)
#: and on one with them (after the others: it can only find bugs there)
FINITE_RANK, INFINITE_RANK = 0, 100


def finite_state(system: System) -> bool:
    """``system`` has no unbounded integer variable (its state space is finite)."""
    return not any(isinstance(v.sort, IntSort) for v in system.variables)


def start_order(members: Sequence[Member], system: System) -> list[Member]:
    """``members`` in the order a portfolio starts them when it has fewer worker processes than
    members: by ``Capabilities.start_rank`` (cheap first), an ``exhaustive`` engine first on a
    :func:`finite_state` model and last on the others; ties keep the registry's order."""
    finite = finite_state(system)

    def rank(m: Member) -> int:
        caps = m.engine.capabilities
        if caps.exhaustive:
            return min(FINITE_RANK, caps.start_rank) if finite else INFINITE_RANK
        return caps.start_rank

    return sorted(members, key=rank)


def member_options(
    options: CheckOptions, member: Member, time_left: float | None, sharing: int
) -> CheckOptions:
    """The shared options for one member process: its properties, no progress line, the time
    left of ``--timeout`` (wall clock: the members run side by side) less a margin for
    collecting the answers, and ``1/sharing`` of ``--max-memory``."""
    limits = options.limits
    deadline = None
    if time_left is not None:
        # the member's deadline (time.monotonic() is the same clock in every process); its
        # stop reasons still quote the user's --timeout
        share = max(0.001, time_left - min(MARGIN_S, 0.1 * time_left))
        deadline = time.monotonic() + share
    memory = None if limits.max_memory_mb is None else limits.max_memory_mb / max(1, sharing)
    return dataclasses.replace(
        options,
        properties=list(member.properties),
        progress=None,
        limits=Limits(limits.max_states, limits.max_depth, limits.timeout, memory, deadline),
    )
