"""The shapes of one execution step, shared by every implementation of the concrete semantics.

* ``State``: a tuple of ints, one slot per variable of the System in declaration order (bools
  as 0/1).
* a *label* (``int``) names a step: a command index, or — when commands with ``exclusive`` set
  chain several commands into one step (Promela's ``atomic``) — a *chain label*
  ``>= len(commands)`` that the semantics maps back to its command indices.
* :class:`Failure`: a model error or a failed assertion met while computing a step: the label of
  the failing step (for a chain: the chain up to and including the failing command), a message,
  and the property it violates (``no-model-error`` or an ``assert`` property's name).
* ``Expansion``: what ``successors(state)`` returns — the enabled steps as ``(label, target)``
  pairs in command order, and the failures met (a command that is a model error yields no
  step; one whose assertion fails still yields its step).
* :class:`GroupDeps`: the dependency information of one transition group (a command), as the
  model interface (:mod:`absmc.kernel.model.semantics`) hands it out: LTSmin's PINS dependency
  matrix row, by variable name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, NamedTuple

#: Built-in properties every search checks unless told not to (SV-COMP style names; not valid
#: GCL identifiers, so they never clash with a user's property names): a terminal state that is
#: no valid end state; a failure of a step that is no assertion (``Failure.property``).
NO_DEADLOCK: Final = "no-deadlock"
NO_MODEL_ERROR: Final = "no-model-error"

State = tuple[int, ...]
Successors = list[tuple[int, State]]


class Failure(NamedTuple):
    """A model error or failed assertion: ``label`` of the failing step, ``message`` for the
    user, ``property`` violated (``no-model-error`` or an ``assert`` property)."""

    label: int
    message: str
    property: str


Failures = tuple[Failure, ...]
Expansion = tuple[Successors, Failures]

#: the empty failure tuple (most steps meet none)
NO_FAILURES: Failures = ()


@dataclass(frozen=True, slots=True)
class GroupDeps:
    """Dependency information of one transition group (command ``index``): the ``process`` it
    belongs to, its ``location`` (the value its guard pins the process's program counter to;
    ``None``: not pinned, or no program counter), the state variables it may ``read`` (guard,
    right-hand sides, assertions, model-error conditions) and ``write``, and ``shared``: those
    of them another process's group also reads or writes (globals, and channels, which the
    front ends encode as variables). After the dependency matrix of LTSmin's PINS interface
    (Blom, van de Pol, Weber, "LTSmin: Distributed and Symbolic Reachability", CAV 2010)."""

    index: int
    process: str
    location: int | None
    reads: frozenset[str]
    writes: frozenset[str]
    shared: frozenset[str]
