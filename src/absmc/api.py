"""The Python API: ``absmc.load`` and ``absmc.check`` (what ``absmc check`` does, as
functions; README.md, *From Python*).

``check`` takes a model file (``.gcl``, ``.pml``; a ``.py`` program with ``entry=`` and
``component=``) or a model returned by ``load``, and returns the frozen
:class:`~absmc.kernel.run.result.Result`: ``result.verdict`` (a
:class:`~absmc.kernel.run.result.Verdict`, a string enum: ``"holds"``, ``"violated"``,
``"unknown"``), ``result.results`` (one :class:`~absmc.kernel.run.result.PropertyResult` per
property, with the replayed ``trace`` of a violation) and ``result.to_json()`` (the shape of
``check --json``). Errors are exceptions: ``ModelError`` (an error in the model, with its ``span``),
``UsageError`` (an unknown method, property or option), ``OSError`` (a file that cannot be read).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import Any

from absmc.errors import UsageError
from absmc.ir.system import System
from absmc.kernel.run.options import CheckOptions, Limits, reduces
from absmc.kernel.run.result import Result

__all__ = ["check", "load"]

#: ``check``'s keywords that are fields of :class:`~absmc.kernel.run.options.CheckOptions`
_COMMON = {f.name for f in dataclasses.fields(CheckOptions)} - {"properties", "limits"}
#: ``check``'s keywords that are limits (``timeout`` is its own parameter)
_LIMITS = {"max_states", "max_depth", "max_memory_mb"}


def load(
    path: str | os.PathLike[str],
    defines: Mapping[str, object] | Sequence[str] | None = None,
    reduce: bool = False,
    extra_slots: int = 0,
) -> System:
    """The model in file ``path`` (``.gcl`` or ``.pml``), read by the front end its extension
    names. ``defines``: Promela preprocessor definitions, as ``{"N": 3}`` or ``["N=3",
    "DEBUG"]`` (``spin -D``); ``reduce``: with the reductions the front end builds into the
    model (Promela: SPIN's dead-variable reset; :func:`check` of a file name applies them
    unless ``reduce=False``); ``extra_slots``: Promela process slots beyond those the
    lowering allocates. Raises ``ModelError`` (located), ``UsageError`` (an unknown
    extension, a ``.py`` program: see :func:`check`) and ``OSError``."""
    from absmc.lang.loader import load_model

    name = os.fspath(path)
    if name.endswith(".py"):
        raise UsageError(
            f"{name}: a Python program is checked as a component: "
            "absmc.check(path, entry=FUNC, component=NAMES)"
        )
    defs: dict[str, str] = {}
    if isinstance(defines, Mapping):
        defs = {str(k): str(v) for k, v in defines.items()}
    elif defines is not None:
        if isinstance(defines, str):
            defines = [defines]
        for d in defines:
            key, _, value = d.partition("=")
            if not key:
                raise UsageError(f"bad definition '{d}' (expected NAME or NAME=VALUE)")
            defs[key] = value or "1"
    return load_model(name, defs or None, reduce, extra_slots)


def _names(value: str | Sequence[str] | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return tuple(n.strip() for n in value.split(",") if n.strip())
    return tuple(value)


def check(
    model: str | os.PathLike[str] | System,
    method: str = "explicit",
    properties: str | Sequence[str] | None = None,
    timeout: float | None = None,
    defines: Mapping[str, object] | Sequence[str] | None = None,
    **options: Any,
) -> Result:
    """Check ``model`` (a file name or a :class:`~absmc.ir.system.System` from :func:`load`)
    with ``method`` (``explicit``, ``under``, ``types``, ``fourvalued``, ``symbolic``,
    ``auto``: README's *Methods*) and return the :class:`~absmc.kernel.run.result.Result`.

    ``properties``: a name or a list of names (default: every property of the model and the
    built-in ``no-deadlock`` and ``no-model-error``); ``timeout``: wall seconds, after which
    the remaining verdicts are ``unknown``; ``defines``: as in :func:`load`. Further keywords
    are the shared search options (fields of :class:`~absmc.kernel.run.options.CheckOptions`:
    ``order="dfs"``, ``store="bitstate"``, ``keep_going=True``, ``check_deadlock=False``,
    ``ltl="p"``, ``fairness="weak"``, ...), the limits ``max_states``, ``max_depth``,
    ``max_memory_mb``, ``predicates`` (a GCL expression or a list of them, as
    ``--predicate``: added to the model's seed predicates) and the fields of the method's own
    options dataclass (e.g. ``backend="python"`` for ``explicit``). A ``.py`` program takes
    ``entry`` (the function's name), ``component`` (a name, ``"A,B"`` or a list), ``args``
    (the entry's arguments) and the fields of
    :class:`~absmc.engines.component.ProgramOptions` (``granularity``, ``abstraction``,
    ``env_choices``, ...); it is checked by the component engine (``method`` ``component``).
    ``reduce`` (a model's file name only; default ``True``, as ``absmc check``): load it with
    the front end's reductions (:func:`load`).

    Raises ``UsageError`` for an unknown method, option or property, ``ModelError`` for an
    error in the model, ``OSError`` for a file that cannot be read."""
    from absmc.engines import registry

    registry.forget_earlier_interrupts()
    name = "<model>" if isinstance(model, System) else os.fspath(model)
    chosen_method = None if method == "explicit" else method
    engine = (
        registry.get(method)
        if isinstance(model, System)
        else registry.for_file(name, chosen_method)
    )
    # a System has its reductions built in; a program reduces only when asked
    reduce = reduces(options.pop("reduce", None), program=engine.reads_files)
    checked: System | str = name
    predicate_texts: list[str] = []
    if engine.reads_files:
        options = _program_options(options)
    else:
        system = model if isinstance(model, System) else load(model, defines, reduce)
        texts = options.get("predicates")
        if isinstance(texts, str) or (
            isinstance(texts, Sequence) and texts and all(isinstance(t, str) for t in texts)
        ):
            del options["predicates"]
            predicate_texts = [texts] if isinstance(texts, str) else [str(t) for t in texts]
            system = _with_predicates(system, predicate_texts)
        checked = system
    limits = Limits(timeout=timeout, **{k: options.pop(k) for k in _LIMITS & set(options)})
    common = {k: options.pop(k) for k in _COMMON & set(options)}
    common["reduce"] = reduce  # partial-order reduction with the front end's, as absmc check
    own_fields = {f.name for f in dataclasses.fields(engine.options_type)}
    unknown = sorted(set(options) - own_fields)
    if unknown:
        known = ", ".join(sorted(_COMMON | _LIMITS | own_fields))
        raise UsageError(f"check() got unknown options {', '.join(unknown)} (known: {known})")
    own = engine.options_type(**options)
    chosen = _names(properties)
    opts = CheckOptions(properties=list(chosen) if chosen else None, limits=limits, **common)
    if isinstance(checked, System) and not isinstance(model, System):
        first = checked

        def load_with(k: int) -> System:
            if k == 0:
                return first
            again = load(model, defines, reduce, extra_slots=k)
            texts = predicate_texts
            return _with_predicates(again, texts) if texts else again

        result = registry.run_growing(engine, load_with, opts, own)
    else:
        result = registry.run(engine, checked, opts, own)
    return dataclasses.replace(result, model=name)


def _with_predicates(system: System, texts: Sequence[str]) -> System:
    """``system`` with predicates (GCL expression syntax, as ``--predicate``) added to its
    seed predicates. Raises ``ModelError`` (located in ``predicates``) or ``UsageError`` for
    an expression that is not a condition."""
    from absmc.lang.gcl import parse_gcl_expr

    extra = tuple(parse_gcl_expr(t, system, "predicates") for t in texts)
    for text, e in zip(texts, extra, strict=True):
        if not e.is_bool:
            raise UsageError(f"predicate {text!r} is not a bool expression")
    return system.with_(predicates=system.predicates + extra)


def _program_options(options: dict[str, Any]) -> dict[str, Any]:
    """``check``'s keywords for a ``.py`` program in the component engine's terms: ``component``
    as a tuple of names, ``args`` as a tuple, ``predicates`` as a tuple of expressions."""
    out = dict(options)
    if "component" in out:
        out["component"] = _names(out["component"]) or ()
    if "args" in out:
        out["args"] = tuple(out["args"])
    if isinstance(out.get("predicates"), str):
        out["predicates"] = (out["predicates"],)
    elif "predicates" in out:
        out["predicates"] = tuple(out["predicates"])
    return out
