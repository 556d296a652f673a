"""Options shared by every checking method (the common part of ``absmc check``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from absmc.errors import OptionError
from absmc.ir.ctl import CtlProperty
from absmc.ir.expr import FALSE
from absmc.ir.ltl import NON_PROGRESS, LtlProperty, non_progress_property
from absmc.ir.system import NO_DEADLOCK, NO_MODEL_ERROR, Property, System
from absmc.kernel.run.limits import Limits

if TYPE_CHECKING:
    from absmc.kernel.run.result import PropertyResult

__all__ = [
    "CheckOptions",
    "Limits",
    "OptionError",
    "Order",
    "Progress",
    "Selection",
    "StoreKind",
    "property_kind",
    "reduces",
    "select_properties",
]

StoreKind = Literal["exact", "bitstate", "hash-compact", "tree"]
Order = Literal["bfs", "dfs"]


@dataclass
class Progress:
    """A snapshot handed to the progress callback about once a second."""

    states: int
    transitions: int
    depth: int
    elapsed_s: float


def reduces(given: bool | None, program: bool = False) -> bool:
    """Whether a check applies its state-space reductions: ``given`` when said
    (``--reduce/--no-reduce``, ``reduce=``), else the one default of every entry point: on for
    models (partial-order reduction, SPIN's dead-variable reset), off for Python programs
    (``program``: the component checker's reduction is asked for)."""
    return (not program) if given is None else given


@dataclass(frozen=True)
class CheckOptions:
    """What to check and how far to search.

    ``properties``: names to check (``None``: all of the model's, plus ``no-deadlock`` unless
    ``check_deadlock`` is false); ``no-model-error`` is always checked. ``timeout`` in seconds.
    ``graph_bound``: when set, engines add a picture of (at most this many states of) the state
    space they explored to ``Result.graphs`` (:mod:`absmc.kernel.explore.graph`).
    ``ltl``: the one linear-time property (``ltl`` block or never claim) to check (SPIN's
    ``-N NAME``: only its product search, which reports the safety violations it meets;
    ``None``: all of them, each with its own result, and the safety properties).
    ``fairness``: ``"weak"`` restricts the cycles of linear-time properties to weakly fair
    ones (SPIN's ``-f``).
    ``non_progress``: also look for non-progress cycles (SPIN's ``-l``).
    ``hand_over``: called with the number of stored states about every thousand expansions
    of a one-process explicit search; when it returns true the search stops (``unknown``, "handed
    over") because the caller goes on elsewhere (``--backend auto`` moving to C).
    ``reduce``: apply the explicit search's reductions (partial-order reduction of the safety
    search, :mod:`absmc.kernel.explore.por`) where they are sound for what is checked; on by default
    as in ``absmc check`` and :func:`absmc.check` (:func:`reduces`; ``False`` gives the full
    state space, SPIN's ``-o1 -DNOREDUCE`` counts).
    ``decided``: called with a property's conclusive result as soon as an engine that reports
    early has it (before its ``Result``; the induction engines do): a portfolio member sends
    it to the portfolio at once.
    """

    properties: Sequence[str] | None = None
    order: Order = "bfs"
    store: StoreKind = "exact"
    bitstate_bits: int = 27
    hash_functions: int = 3
    limits: Limits = field(default_factory=Limits)
    keep_going: bool = False
    check_deadlock: bool = True
    progress: Callable[[Progress], None] | None = None
    graph_bound: int | None = None
    ltl: str | None = None
    fairness: Literal["none", "weak"] = "none"
    non_progress: bool = False
    hand_over: Callable[[int], bool] | None = None
    reduce: bool = reduces(None)
    decided: Callable[[PropertyResult], None] | None = None


@dataclass
class Selection:
    """The properties one run checks: the model's chosen ones, which built-ins, the
    linear-time properties (each checked by its own product search) and the chosen CTL
    properties (``ctl``; only methods with the ``ctl`` capability look at them)."""

    user: tuple[Property, ...]
    deadlock: bool
    model_error: bool = True
    ltl: tuple[LtlProperty, ...] = ()
    ctl: tuple[CtlProperty, ...] = ()

    def all_names(self) -> list[str]:
        """The safety properties' names (:meth:`names`), then the linear-time ones."""
        return [*self.names(), *(p.name for p in self.ltl)]

    def names(self) -> list[str]:
        """The names of the properties one safety search checks (no linear-time or CTL
        ones: ``ltl``, ``ctl``)."""
        out = [p.name for p in self.user]
        if self.deadlock:
            out.append(NO_DEADLOCK)
        out.append(NO_MODEL_ERROR)
        return out


def select_properties(system: System, options: CheckOptions) -> Selection:
    """Resolve ``options.properties`` and ``options.ltl`` against the model. Raises
    ``OptionError`` naming the unknown property and the known ones (option ``"properties"`` or
    ``"ltl"``)."""
    ltl = tuple(p for p in system.ltl if p.name != NON_PROGRESS)
    if options.non_progress:
        if options.ltl is not None:
            raise OptionError(
                "non-progress cycles are checked on their own, not with an ltl property", "ltl"
            )
        given = [p for p in system.ltl if p.name == NON_PROGRESS]
        ltl = tuple(given) or (non_progress_property(FALSE),)
    elif options.ltl is not None:
        ltl = tuple(p for p in system.ltl if p.name == options.ltl)
        if not ltl:
            names = ", ".join(p.name for p in system.ltl) or "none"
            raise OptionError(
                f"the model has no ltl property or never claim '{options.ltl}' (it has: {names})",
                "ltl",
            )
    if options.properties is None:
        return Selection(system.properties, options.check_deadlock, ltl=ltl, ctl=system.ctl)
    known = {p.name: p for p in system.properties}
    temporal = {p.name: p for p in ltl}
    ctl_known = {p.name: p for p in system.ctl}
    user: list[Property] = []
    chosen: list[LtlProperty] = []
    ctl: list[CtlProperty] = []
    deadlock = False
    for name in options.properties:
        if name == NO_DEADLOCK:
            deadlock = options.check_deadlock
        elif name == NO_MODEL_ERROR:
            pass
        elif name in known:
            if known[name] not in user:
                user.append(known[name])
        elif name in temporal:
            if temporal[name] not in chosen:
                chosen.append(temporal[name])
        elif name in ctl_known:
            if ctl_known[name] not in ctl:
                ctl.append(ctl_known[name])
        else:
            choices = ", ".join([*known, *temporal, *ctl_known, NO_DEADLOCK, NO_MODEL_ERROR])
            raise OptionError(
                f"the model has no property '{name}' (it has: {choices})", "properties"
            )
    return Selection(tuple(user), deadlock, ltl=tuple(chosen), ctl=tuple(ctl))


def property_kind(system: System, name: str) -> str:
    """The kind of a checked property: ``deadlock`` for ``no-deadlock``, ``model-error`` for
    ``no-model-error``, ``ctl`` for a CTL property, else the model's property kind
    (``invariant``, ``unreachable``, ``assert``), ``ltl`` for a linear-time property (an
    ``ltl`` block or a never claim). Raises ``KeyError`` for an unknown name."""
    if name == NO_DEADLOCK:
        return "deadlock"
    if name == NO_MODEL_ERROR:
        return "model-error"
    if name == NON_PROGRESS or any(p.name == name for p in system.ltl):
        return "ltl"
    if any(p.name == name for p in system.ctl):
        return "ctl"
    return system.get_property(name).kind
