"""Model checking a Python component inside its natively executed environment (Bao, *Verifying
Abstract Components Within Concrete Software Environments*, 2009; paper 003): the component's
functions are translated into an explicit state machine (:mod:`.translate`,
:mod:`.machine`), the rest of the program runs natively, one atomic step per call, and the
kernel's search explores the interleavings of the component's threads (:mod:`.sync`).
Details: ``docs/component.md``.
"""

from absmc.component.check import ComponentOptions, check, check_file
from absmc.component.translate import Unsupported

__all__ = ["ComponentOptions", "Unsupported", "check", "check_file"]
