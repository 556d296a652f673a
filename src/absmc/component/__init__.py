"""Model checking a Python component inside its natively executed environment (Bao, *Verifying
Abstract Components Within Concrete Software Environments*, 2009; paper 003): the component's
functions are translated into an explicit state machine (:mod:`.translate`,
:mod:`.machine`), the rest of the program runs natively, one atomic step per call, and the
kernel's search explores the interleavings of the component's threads (:mod:`.sync`).
Details: ``docs/component.md``.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from absmc.component.check import ComponentOptions, check, check_file
    from absmc.component.translate import Unsupported

__all__ = ["ComponentOptions", "Unsupported", "check", "check_file"]

#: the public names and the modules they come from: imported on first use (PEP 562), so that
#: the CLI can read :mod:`absmc.component.options` without loading the checker (z3, lark)
_WHERE = {
    "ComponentOptions": "absmc.component.check",
    "check": "absmc.component.check",
    "check_file": "absmc.component.check",
    "Unsupported": "absmc.component.translate",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


class _Package(types.ModuleType):
    """The package's module type: its attribute ``check`` stays the function
    (:func:`absmc.component.check.check`) when the import system binds the submodule of the
    same name to it (as it does on the submodule's first import)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "check" and isinstance(value, types.ModuleType):
            return  # the submodule: ``absmc.component.check`` stays the function
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
