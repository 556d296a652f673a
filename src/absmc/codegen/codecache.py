"""A cache of compiled generated Python: the code object of a long generated source, marshalled,
keyed by the source (issue 25 item 6, the fixed cost of a run).

Python's ``compile`` of the generated successor functions is a large share of a run's fixed
cost on wide models (SPIN's pftp: 660 KB of source, ~0.4 s of CPU to compile), and the same
model yields the same source on every run. Sources of :data:`MIN_CHARS` characters or more are
looked up by the SHA-256 of the Python version, the code's file name and the source text, so a
hit is exactly the code ``compile`` would return (a changed model, a changed absmc generator or
another Python is another key). Entries live in ``$ABSMC_CACHE_DIR/python`` (else
``$XDG_CACHE_HOME/absmc/python``, else ``~/.cache/absmc/python``), written atomically; an
unreadable or corrupt entry is a miss, an unwritable cache is no cache. ``ABSMC_CODE_CACHE=0``
turns it off.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import CodeType

from absmc.ir.cachefile import cache_folder, write_atomically

__all__ = ["ENV", "MIN_CHARS", "cached_compile", "code_cache_dir"]

#: ``0`` turns the cache off
ENV = "ABSMC_CODE_CACHE"

#: shorter sources are compiled every time (a lookup costs about what compiling them does)
MIN_CHARS = 50_000


def code_cache_dir() -> Path:
    """``$ABSMC_CACHE_DIR/python``, else ``$XDG_CACHE_HOME/absmc/python``, else
    ``~/.cache/absmc/python``."""
    return cache_folder("python")


def cached_compile(source: str, name: str, build: Callable[[], CodeType]) -> CodeType:
    """The code object ``build()`` compiles from ``source`` (module code named ``name``), from
    the cache for a source of :data:`MIN_CHARS` or more characters compiled before (else built
    and stored). Raises what ``build`` raises (``SyntaxError``, ``RecursionError``; nothing is
    stored then)."""
    if len(source) < MIN_CHARS or os.environ.get(ENV, "") == "0":
        return build()
    h = hashlib.sha256(sys.version.encode() + b"\0" + name.encode() + b"\0")
    h.update(source.encode("utf-8", "surrogatepass"))
    entry = code_cache_dir() / f"{h.hexdigest()}.marshal"
    try:
        code = marshal.loads(entry.read_bytes())
        if isinstance(code, CodeType):
            return code
    except Exception:  # missing, unreadable or corrupt: a miss
        pass
    code = build()
    with contextlib.suppress(OSError, ValueError):  # a read-only cache: compiled afresh
        write_atomically(entry, marshal.dumps(code))
    return code
