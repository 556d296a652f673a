"""Choose the front end for a model file by its extension and load it into an ``ir.System``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from absmc.errors import UsageError
from absmc.ir.depth import check_depth
from absmc.ir.system import System

GCL_SUFFIXES = (".gcl",)
PROMELA_SUFFIXES = (".pml", ".pm", ".prom", ".promela", ".sumo")


def load_model(
    path: str | Path,
    defines: Mapping[str, str] | None = None,
    reduce: bool = False,
    extra_slots: int = 0,
) -> System:
    """Parse the model at ``path`` (``.gcl``: guarded commands; ``.pml``/``.pm``/...: Promela).

    ``defines`` are preprocessor definitions (``-D NAME=VALUE``) for front ends that have a
    preprocessor. ``reduce``: with the reductions the front end builds into the model (Promela:
    SPIN's dead-variable reset, :mod:`absmc.lang.promela.deadvars`; listed in the System's
    ``reductions``); ``absmc check`` asks for them unless ``--no-reduce``. ``extra_slots``:
    Promela process slots beyond those the lowering allocates (other languages have no
    process creation and ignore it). Raises
    ``ModelError`` for errors in the model, ``OSError`` when the file cannot be read,
    ``UsageError`` for an unknown extension or options the front end does not take. A model
    whose expressions nest deeper than :data:`absmc.ir.depth.MAX_EXPR_DEPTH` is a located
    ``ModelError`` (:func:`absmc.ir.depth.check_depth`); every method takes that depth
    (``engines.registry.run`` runs it under :func:`absmc.ir.depth.deep_recursion`). A model
    loaded before from the same bytes by the same absmc (a Promela model with directives or
    ``defines``: the same preprocessed text) comes from the model cache
    (:mod:`absmc.lang.modelcache`).
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix in PROMELA_SUFFIXES or (suffix in GCL_SUFFIXES and not defines):
        from absmc.lang.modelcache import cached_system

        options = f"reduce={reduce} extra_slots={extra_slots}"
        # the depth is checked before a System is stored, so a cached one has passed it
        return cached_system(
            p,
            suffix in PROMELA_SUFFIXES,
            options,
            lambda: _checked(_load(p, defines, reduce, extra_slots)),
            defines,
        )
    return _checked(_load(p, defines, reduce, extra_slots))


def _checked(system: System) -> System:
    check_depth(system)
    return system


def _load(p: Path, defines: Mapping[str, str] | None, reduce: bool, extra_slots: int = 0) -> System:
    """The front end's System for ``p``."""
    path = p
    suffix = p.suffix.lower()
    if suffix in GCL_SUFFIXES:
        if defines:
            raise UsageError(
                "-D definitions apply to Promela models only (GCL has no preprocessor)"
            )
        from absmc.lang.gcl import parse_gcl_file

        return parse_gcl_file(p)
    if suffix in PROMELA_SUFFIXES:
        from absmc.lang.promela import load_promela

        return load_promela(p, dict(defines or {}), dead_variables=reduce, extra_slots=extra_slots)
    known = ", ".join(GCL_SUFFIXES + PROMELA_SUFFIXES)
    raise UsageError(
        f"cannot tell the language of '{path}' from its extension (known: {known}; and .py "
        "for a Python program, checked with --entry FUNC --component NAME)"
    )
