"""Where absmc's on-disk caches live and how their entries are written (one place for the model
cache, :mod:`absmc.lang.modelcache`; the analyses kept beside it, :mod:`absmc.ir.derived`;
the compiled generated Python, :mod:`absmc.codegen.codecache`)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_folder", "write_atomically"]


def cache_folder(name: str) -> Path:
    """``$ABSMC_CACHE_DIR/NAME``, else ``$XDG_CACHE_HOME/absmc/NAME``, else
    ``~/.cache/absmc/NAME``."""
    env = os.environ.get("ABSMC_CACHE_DIR")
    if env:
        return Path(env) / name
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "absmc" / name


def write_atomically(entry: Path, data: bytes) -> None:
    """Write ``data`` to ``entry`` through a temporary file beside it (a reader never sees a
    partial entry), making its folder if needed. Raises ``OSError`` (a read-only cache)."""
    entry.parent.mkdir(parents=True, exist_ok=True)
    tmp = entry.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, entry)
