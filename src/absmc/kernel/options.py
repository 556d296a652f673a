"""Options shared by every checking method (the common part of ``absmc check``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from absmc.errors import OptionError
from absmc.ir.ctl import CtlProperty
from absmc.ir.system import NO_DEADLOCK, NO_MODEL_ERROR, Property, System

__all__ = [
    "CheckOptions",
    "Limits",
    "OptionError",
    "Order",
    "Progress",
    "Selection",
    "StoreKind",
    "property_kind",
    "select_properties",
]

StoreKind = Literal["exact", "bitstate", "hash-compact"]
Order = Literal["bfs", "dfs"]


@dataclass(frozen=True)
class Limits:
    """Resource limits; ``None`` means unlimited. ``timeout`` is wall-clock seconds,
    ``max_memory_mb`` the resident set size (MiB) at which a search stops."""

    max_states: int | None = None
    max_depth: int | None = None
    timeout: float | None = None
    max_memory_mb: float | None = None


@dataclass
class Progress:
    """A snapshot handed to the progress callback about once a second."""

    states: int
    transitions: int
    depth: int
    elapsed_s: float


@dataclass(frozen=True)
class CheckOptions:
    """What to check and how far to search.

    ``properties``: names to check (``None``: all of the model's, plus ``no-deadlock`` unless
    ``check_deadlock`` is false); ``no-model-error`` is always checked. ``timeout`` in seconds.
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


@dataclass
class Selection:
    """The properties one run checks: the model's chosen ones, which built-ins, and the chosen
    CTL properties (``ctl``; only methods with the ``ctl`` capability look at them)."""

    user: tuple[Property, ...]
    deadlock: bool
    model_error: bool = True
    ctl: tuple[CtlProperty, ...] = ()

    def names(self) -> list[str]:
        """The selected state/transition properties and built-ins (CTL ones: ``ctl``)."""
        out = [p.name for p in self.user]
        if self.deadlock:
            out.append(NO_DEADLOCK)
        out.append(NO_MODEL_ERROR)
        return out


def select_properties(system: System, options: CheckOptions) -> Selection:
    """Resolve ``options.properties`` against the model. Raises ``OptionError`` naming the
    unknown property and the known ones (option ``"properties"``)."""
    if options.properties is None:
        return Selection(system.properties, options.check_deadlock, ctl=system.ctl)
    known = {p.name: p for p in system.properties}
    ctl_known = {p.name: p for p in system.ctl}
    user: list[Property] = []
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
        elif name in ctl_known:
            if ctl_known[name] not in ctl:
                ctl.append(ctl_known[name])
        else:
            choices = ", ".join([*known, *ctl_known, NO_DEADLOCK, NO_MODEL_ERROR])
            raise OptionError(
                f"the model has no property '{name}' (it has: {choices})", "properties"
            )
    return Selection(tuple(user), deadlock, ctl=tuple(ctl))


def property_kind(system: System, name: str) -> str:
    """The kind of a checked property: ``deadlock`` for ``no-deadlock``, ``model-error`` for
    ``no-model-error``, ``ctl`` for a CTL property, else the model's property kind
    (``invariant``, ``unreachable``, ``assert``). Raises ``KeyError`` for an unknown name."""
    if name == NO_DEADLOCK:
        return "deadlock"
    if name == NO_MODEL_ERROR:
        return "model-error"
    if any(p.name == name for p in system.ctl):
        return "ctl"
    return system.get_property(name).kind
