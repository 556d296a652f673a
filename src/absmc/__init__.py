"""absmc — a model checker that makes state spaces small by abstraction.

Layers (imports point down only): ``cli`` → ``report`` → ``engines`` → ``lang`` → ``logic`` →
``ir``. See ``docs/ARCHITECTURE.md``.

The Python API (:mod:`absmc.api`, README.md *From Python*): ``absmc.load(path,
defines=...)`` reads a model, ``absmc.check(path_or_model, method=..., properties=...,
timeout=..., **options)`` checks it and returns a :class:`Result`; ``Verdict``,
``PropertyResult``, ``Trace``, ``ModelError`` and ``UsageError`` are the types it uses. They
are imported on first use, so ``import absmc`` loads nothing else.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from absmc.api import check, load
    from absmc.errors import UsageError
    from absmc.ir.span import ModelError
    from absmc.kernel.run.result import PropertyResult, Result, Trace, Verdict

__all__ = [
    "ModelError",
    "PropertyResult",
    "Result",
    "Trace",
    "UsageError",
    "Verdict",
    "__version__",
    "check",
    "load",
]

#: each lazily exported name -> the module defining it
_LAZY = {
    "check": "absmc.api",
    "load": "absmc.api",
    "UsageError": "absmc.errors",
    "ModelError": "absmc.ir.span",
    "PropertyResult": "absmc.kernel.run.result",
    "Result": "absmc.kernel.run.result",
    "Trace": "absmc.kernel.run.result",
    "Verdict": "absmc.kernel.run.result",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'absmc' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
