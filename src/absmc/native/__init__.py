"""The native back end: C generated from the IR, compiled with the system C compiler through
cffi and cached (see ``docs/internals.md``, section *Native back end*).

* :class:`NativeSemantics` — the kernel's ``Semantics`` protocol in C (same steps, failures,
  chains and timeout as :mod:`absmc.codegen.python`);
* :func:`absmc.native.search.native_search` — the breadth-first search loop in C with a packed
  open-addressing store (exact or hash-compact), paths back to Python for replay;
* :func:`native_available` — whether a C compiler is present.
"""

from __future__ import annotations

from absmc.native.build import CompilerError, find_compiler
from absmc.native.cgen import Unsupported
from absmc.native.semantics import NativeSemantics

__all__ = ["CompilerError", "NativeSemantics", "Unsupported", "native_available"]


def native_available() -> bool:
    """True when a C compiler is on the path (``$CC``, ``cc``, ``gcc`` or ``clang``)."""
    return find_compiler() is not None
