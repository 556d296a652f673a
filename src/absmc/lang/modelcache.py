"""A cache of loaded models: the ``System`` a front end built, pickled, keyed by everything it
was built from (issue 25 item 6, the fixed cost of a run).

A hit skips the front end's work and imports (lark, its grammar tables and lexers, parsing and
lowering: ~0.1 s of every run on a 10^3-state Promela model), as the native back end's
library cache skips the C compiler. The key is a SHA-256 of the model file's bytes, the path as
given (spans and the System's name come from it), the loader's options (``reduce``,
``extra_slots``), the Python version and a fingerprint of absmc's own source files (each
``.py``/``.lark`` file's path, size and modification time under the package: any edit of absmc
is a miss). A Promela model with ``-D`` definitions or any ``#`` directive (``#include`` reads
other files, the C preprocessor has its own predefined macros) is keyed by the preprocessor's
output instead of the file's bytes (the text the parser reads and the map of its lines back to
files and lines: everything the System is built from), so that the C preprocessor (~10 ms) runs
once more on a miss; SPIN's pftp, with ``#define``, loads in ~0.05 s instead of ~0.4 s. Models
that fail to load are not cached (their errors are reported as before).

Entries live in ``$ABSMC_CACHE_DIR/models`` (else ``$XDG_CACHE_HOME/absmc/models``, else
``~/.cache/absmc/models``), written atomically; an unreadable or corrupt entry is a miss.
``ABSMC_MODEL_CACHE=0`` turns the cache off.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import re
import sys
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path

from absmc.ir.cachefile import cache_folder, write_atomically
from absmc.ir.derived import remember
from absmc.ir.system import System

__all__ = ["ENV", "cached_system", "model_cache_dir"]

#: ``0`` turns the cache off
ENV = "ABSMC_MODEL_CACHE"

#: the entry format: raised when what is pickled changes shape in a way the fingerprint misses
_FORMAT = b"absmc-model-cache 1"

_DIRECTIVE = re.compile(rb"^[ \t]*#", re.M)


def model_cache_dir() -> Path:
    """``$ABSMC_CACHE_DIR/models``, else ``$XDG_CACHE_HOME/absmc/models``, else
    ``~/.cache/absmc/models`` (beside the native back end's libraries)."""
    return cache_folder("models")


@cache
def _source_fingerprint() -> bytes:
    """Path, size and modification time (ns) of every ``.py``/``.lark`` file of absmc."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".lark")):
                st = os.stat(os.path.join(folder, name))
                h.update(f"{folder}/{name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.digest()


def cached_system(
    path: Path,
    preprocessed: bool,
    options: str,
    build: Callable[[], System],
    defines: Mapping[str, str] | None = None,
) -> System:
    """The System ``build()`` makes of the model file ``path``, from the cache when an entry
    for the same inputs is there (else built and stored). ``preprocessed``: the front end runs
    the C preprocessor over the file (Promela), with ``defines`` (``-D``): a file with a ``#``
    directive, or any definitions, is keyed by the preprocessor's output; ``options``: the
    loader's options in words (part of the key). Raises what ``build`` raises (nothing is
    stored then)."""
    if os.environ.get(ENV, "") == "0":
        return build()
    try:
        data = path.read_bytes()
    except OSError:
        return build()  # the front end reports it
    if preprocessed and (defines or _DIRECTIVE.search(data)):
        keyed = _preprocessed(path, defines)
        if keyed is None:
            return build()  # the front end reports the preprocessor's error
        data = keyed
    h = hashlib.sha256(_FORMAT)
    for part in (sys.version.encode(), _source_fingerprint(), str(path).encode(), options.encode()):
        h.update(len(part).to_bytes(8, "little") + part)
    h.update(data)
    key = h.hexdigest()
    entry = model_cache_dir() / f"{key}.pickle"
    try:
        system = pickle.loads(entry.read_bytes())
        if isinstance(system, System):
            remember(system, key, entry.parent)  # its analyses are kept too (ir/derived.py)
            return system
    except Exception:  # missing, unreadable or corrupt: a miss
        pass
    system = build()
    try:
        write_atomically(entry, pickle.dumps(system, protocol=pickle.HIGHEST_PROTOCOL))
        remember(system, key, entry.parent)
    except (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError):
        pass  # a read-only cache, a model that does not pickle: loaded afresh next time
    return system


def _preprocessed(path: Path, defines: Mapping[str, str] | None) -> bytes | None:
    """What the Promela parser reads of ``path``: the C preprocessor's output and its map back
    to original files and lines (``None`` when preprocessing fails)."""
    from absmc.ir.span import ModelError
    from absmc.lang.larkutil import read_source
    from absmc.lang.promela.preprocess import preprocess

    try:
        text, lines = preprocess(read_source(path), str(path), dict(defines or {}))
    except (ModelError, OSError):
        return None
    origin = "\n".join(f"{f}\0{n}" for f, n in lines.origin)
    return b"preprocessed\0" + text.encode("utf-8", "surrogatepass") + b"\0" + origin.encode()
