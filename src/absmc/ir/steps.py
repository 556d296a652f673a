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
"""

from __future__ import annotations

from typing import NamedTuple

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
