"""The model interface of a System: :class:`~absmc.kernel.model.semantics.Semantics` plus the
System it was made from, for the code that needs the IR (traces with source locations and
failure messages, ``--trail`` and witness replay, abstraction engines, the LTL product's edge
guards). Explorers take a :class:`~absmc.kernel.model.semantics.Semantics` and never ask for it.
"""

from __future__ import annotations

from typing import Protocol

from absmc.ir.system import Property, System
from absmc.kernel.model.semantics import Semantics

__all__ = ["IRSemantics"]


class IRSemantics(Semantics, Protocol):
    """A model of ``system`` whose checked ``properties`` are the IR's (implemented by
    :class:`~absmc.codegen.python.CompiledSystem`,
    :class:`~absmc.codegen.reference.ReferenceSemantics` and
    :class:`~absmc.native.semantics.NativeSemantics`)."""

    @property
    def system(self) -> System: ...

    @property
    def properties(self) -> tuple[Property, ...]: ...
