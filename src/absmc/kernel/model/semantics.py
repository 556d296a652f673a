"""The model interface: what every explorer (search, nested DFS, partitioned search, graph
building, partial-order reduction, the C drivers) needs of a model, and nothing more — after
the PINS interface of LTSmin (Blom, van de Pol, Weber, "LTSmin: Distributed and Symbolic
Reachability", CAV 2010, §3): a next-state function over opaque state vectors, per transition
group (command) its dependency information, and names for traces. It carries no IR: a model
of a System and a Python component implement it alike.

Implementations:

* :class:`absmc.codegen.python.CompiledSystem` — a System in generated Python (the fast back
  end); :class:`absmc.native.semantics.NativeSemantics` — the same in C;
* :class:`absmc.codegen.reference.ReferenceSemantics` — a System by tree-walking evaluation
  (slow, obviously right: the definition the others are tested against);
* :class:`absmc.component.machine.ComponentSemantics` — a Python component (no dependency
  information: ``dependencies`` is ``None``).

The IR implementations also offer their ``system``
(:class:`absmc.kernel.model.irsemantics.IRSemantics`) for the code that needs the IR (trace building
with source locations, abstraction engines); explorers never ask for it. The LTL product, fairness
and stutter wrappers derive from :class:`ModelWrapper`, which delegates every member to the wrapped
model. The contract is stated once in ``tests/test_model_contract.py``; the IR implementations agree
step for step by ``tests/test_semantics_conformance.py``. Shapes (``State``, labels, ``Failure``,
``Expansion``, ``GroupDeps``) are defined in :mod:`absmc.ir.steps`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from absmc.ir.steps import NO_DEADLOCK, NO_MODEL_ERROR, Expansion, Failures, GroupDeps, State

__all__ = ["ModelWrapper", "PropertyDesc", "PropertyInfo", "Semantics", "is_step_property"]


class PropertyInfo(Protocol):
    """What an explorer knows of a checked property: its ``name`` and ``kind`` (``invariant``,
    ``unreachable`` — the state properties ``violated`` answers for —, ``assert``, ...)."""

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> str: ...


@dataclass(frozen=True, slots=True)
class PropertyDesc:
    """A :class:`PropertyInfo` of a model with no IR properties (a Python component)."""

    name: str
    kind: str


def is_step_property(properties: Sequence[PropertyInfo], name: str) -> bool:
    """Whether violations of property ``name`` are steps (a model error, an ``assert``
    property among ``properties``), not states (a deadlock, a state property)."""
    if name == NO_MODEL_ERROR:
        return True
    if name == NO_DEADLOCK:
        return False
    return any(p.name == name and p.kind == "assert" for p in properties)


class Semantics(Protocol):
    """A model with a selection of its properties (the model interface; see the module
    docstring).

    * ``initial_states()``: the initial states (``initial``: the first of them);
    * ``successors(s)``: the enabled steps of ``s`` and the failures met (see
      :data:`~absmc.ir.steps.Expansion`); a step's label is a transition group (command) or a
      chain of them (:meth:`commands_of`);
    * ``step(ci, s)``: one transition group (never a chain), for replay: ``(successor or
      None, failures of that group)``; the successors of ``s`` are the chains of such steps;
    * ``properties``: the checked properties (name and kind); ``ok(s)``: every selected state
      property holds; ``violated(s)``: indices into ``properties`` of the violated state
      properties; ``state_checks`` is false when no state property is selected;
    * ``valid_end(s)``: ``s`` is a valid end state (not a deadlock when terminal);
    * ``describe_state(s)``: ``{name: value}`` of ``s`` for traces and pictures;
      ``describe_step(label)``: what a trace shows for a step label;
    * ``dependencies``: per transition group, in group order, its :class:`GroupDeps` (read
      and write sets, process, shared variables), or ``None`` when the model does not know
      them (then every two groups are to be taken as dependent).
    """

    @property
    def properties(self) -> tuple[PropertyInfo, ...]: ...

    @property
    def state_checks(self) -> bool: ...

    @property
    def initial(self) -> State: ...

    def initial_states(self) -> list[State]: ...

    @property
    def successors(self) -> Callable[[State], Expansion]: ...

    @property
    def step(self) -> Callable[[int, State], tuple[State | None, Failures]]: ...

    @property
    def ok(self) -> Callable[[State], bool]: ...

    @property
    def violated(self) -> Callable[[State], list[int]]: ...

    @property
    def valid_end(self) -> Callable[[State], bool]: ...

    def commands_of(self, label: int) -> tuple[int, ...]: ...

    def describe_state(self, s: State) -> Mapping[str, object]: ...

    def describe_step(self, label: int) -> str: ...

    @property
    def dependencies(self) -> tuple[GroupDeps, ...] | None: ...


class ModelWrapper:
    """A model built on ``base`` (the LTL product, the fairness counter, a stutter step):
    every member of :class:`Semantics` delegates to ``base`` until a subclass overrides it.
    A wrapper that changes states or labels overrides what reads them."""

    def __init__(self, base: Semantics) -> None:
        self.base = base

    @property
    def properties(self) -> tuple[PropertyInfo, ...]:
        return self.base.properties

    @property
    def state_checks(self) -> bool:
        return self.base.state_checks

    @property
    def initial(self) -> State:
        return self.base.initial

    def initial_states(self) -> list[State]:
        return self.base.initial_states()

    def successors(self, s: State) -> Expansion:
        return self.base.successors(s)

    def step(self, label: int, s: State) -> tuple[State | None, Failures]:
        return self.base.step(label, s)

    def ok(self, s: State) -> bool:
        return self.base.ok(s)

    def violated(self, s: State) -> list[int]:
        return self.base.violated(s)

    def valid_end(self, s: State) -> bool:
        return self.base.valid_end(s)

    def commands_of(self, label: int) -> tuple[int, ...]:
        return self.base.commands_of(label)

    def describe_state(self, s: State) -> Mapping[str, object]:
        return self.base.describe_state(s)

    def describe_step(self, label: int) -> str:
        return self.base.describe_step(label)

    @property
    def dependencies(self) -> tuple[GroupDeps, ...] | None:
        return self.base.dependencies
