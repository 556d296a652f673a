"""Analyses of a System kept on disk beside the model cache (issue 25 item 6, the fixed cost of
a run).

A System the model cache gave out (:mod:`absmc.lang.modelcache`, which calls :func:`remember`
with its entry's key: a hash of the model's bytes or preprocessed text, the loader's options,
the Python version and absmc's own source files) is the same System on every run, so an
analysis of it that is a function of the System and its arguments alone can be kept too: a
function decorated with :func:`on_disk` looks its result up by that key, its own name and its
arguments. Only the very object the cache gave out has a key (a System derived from it by
``with_``/``replace`` is another object and is analysed afresh), so no result is ever taken
for a System it was not computed for. Entries live in the model cache's directory (``$ABSMC_
CACHE_DIR/models``, ...) as ``KEY-NAME-ARGS.derived``, written atomically; a missing, corrupt
or unwritable entry means computing it. ``ABSMC_MODEL_CACHE=0`` turns it off with the model
cache (no key is remembered).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from absmc.ir.cachefile import write_atomically

__all__ = ["on_disk", "remember"]

F = TypeVar("F", bound=Callable[..., Any])

#: id(System) -> (the System, its model-cache key, the cache directory)
_KEYS: dict[int, tuple[object, str, Path]] = {}


def remember(system: object, key: str, directory: Path) -> None:
    """Record that ``system`` is the model cache's entry ``key`` in ``directory`` (called by
    :func:`absmc.lang.modelcache.cached_system` on a hit and on a store)."""
    _KEYS[id(system)] = (system, key, directory)


def _canonical(x: object) -> str:
    """A text of ``x`` that is the same in every process (sets sorted)."""
    if isinstance(x, (set, frozenset)):
        return "{" + ",".join(sorted(_canonical(v) for v in x)) + "}"
    if isinstance(x, (tuple, list)):
        return "(" + ",".join(_canonical(v) for v in x) + ")"
    if isinstance(x, (str, int, bool)) or x is None:
        return repr(x)
    raise TypeError(f"no canonical text for {type(x).__name__}")


def on_disk(name: str) -> Callable[[F], F]:
    """Decorate ``fn(system, *args, **kwargs)`` (arguments: strings, integers, booleans, ``None``
    and sets/tuples of them; a result that pickles) to keep its results for Systems from the
    model cache on disk (module docstring). Raises what ``fn`` raises (nothing is stored)."""

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(system: object, *args: Any, **kwargs: Any) -> Any:
            known = _KEYS.get(id(system))
            if known is None or known[0] is not system:
                return fn(system, *args, **kwargs)
            params = _canonical((args, tuple(sorted(kwargs.items()))))
            tag = hashlib.sha256(params.encode()).hexdigest()[:16]
            entry = known[2] / f"{known[1]}-{name}-{tag}.derived"
            try:
                return pickle.loads(entry.read_bytes())
            except Exception:  # missing, unreadable or corrupt: computed
                pass
            result = fn(system, *args, **kwargs)
            with contextlib.suppress(  # a read-only cache: computed again next time
                OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError
            ):
                write_atomically(entry, pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
            return result

        return wrapper  # type: ignore[return-value]

    return decorate
