"""The engine registry: every checking method, by name, and the one place where a request an
engine cannot serve (a property kind, a model feature, a store) is refused.

A new engine joins by defining ``ENGINE`` in its package and being listed in :data:`ENGINES`;
the CLI's ``--method`` choices and the conformance tests iterate over this list. An engine that
reads its model files itself (``Engine.files``: the component checker reads ``.py`` programs) is
chosen by :func:`for_file` for a file of its suffixes; :func:`run` hands it the file's name.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Final

from absmc.engines.component import ENGINE as COMPONENT
from absmc.engines.engine import FEATURES, AnyEngine, checks_property, system_features
from absmc.engines.explicit import ENGINE as EXPLICIT
from absmc.engines.fourvalued import ENGINE as FOURVALUED
from absmc.engines.induction import ENGINE as PDR
from absmc.engines.induction import KIND_ENGINE as KIND
from absmc.engines.portfolio import portfolio_engine
from absmc.engines.symbolic import ENGINE as SYMBOLIC
from absmc.engines.typeabs import ENGINE as TYPES
from absmc.engines.under import ENGINE as UNDER
from absmc.errors import CapabilityError, UsageError
from absmc.ir.depth import deep_recursion
from absmc.ir.system import System
from absmc.kernel.model.initial import check_per_initial_state
from absmc.kernel.run.options import CheckOptions, Selection, property_kind, select_properties
from absmc.kernel.run.result import Result, Verdict

#: the engines a portfolio (``--method auto``) chooses from, by their capabilities
MEMBERS: Final[tuple[AnyEngine, ...]] = (EXPLICIT, UNDER, TYPES, FOURVALUED, SYMBOLIC, PDR, KIND)

#: every engine, in the order ``--help`` lists them
ENGINES: Final[tuple[AnyEngine, ...]] = (*MEMBERS, portfolio_engine(MEMBERS), COMPONENT)


def model_engines() -> list[AnyEngine]:
    """The engines that check a System (of the front ends), not files they read themselves."""
    return [e for e in ENGINES if not e.reads_files]


def names() -> list[str]:
    """The registered engine names."""
    return [e.name for e in ENGINES]


def get(name: str) -> AnyEngine:
    """The engine called ``name``. Raises ``UsageError`` for an unknown name."""
    for e in ENGINES:
        if e.name == name:
            return e
    raise UsageError(f"unknown method '{name}' (known: {', '.join(names())})")


def for_file(path: str, method: str | None = None) -> AnyEngine:
    """The engine that checks the model file ``path``: an engine that reads files with its
    suffix (e.g. the component checker for ``.py``), else ``method`` (default ``explicit``).
    Raises ``UsageError`` for an unknown method, or a method that does not read such a file
    (a model's method named for a program, the component checker for a model)."""
    readers = [e for e in ENGINES if path.endswith(e.files)]
    if readers:
        if method is not None and method != readers[0].name:
            raise UsageError(
                f"--method {method} applies to models; {readers[0].files_text} are checked by "
                f"--method {readers[0].name}"
            )
        return readers[0]
    engine = get(method or "explicit")
    if engine.reads_files:
        raise UsageError(f"--method {engine.name} applies to {engine.files_text} only")
    return engine


def refuse_unsupported(
    engine: AnyEngine, system: System, options: CheckOptions, selection: Selection
) -> None:
    """Raise ``CapabilityError`` when ``engine`` cannot check the selected property kinds,
    does not support a feature ``system`` uses, or cannot search with ``options.store``."""
    caps = engine.capabilities
    named = [(n, property_kind(system, n)) for n in selection.all_names()]
    named += [(p.name, "ctl") for p in selection.ctl]
    for feature in sorted(system_features(system)):
        if feature not in caps.features:
            others = [e.name for e in ENGINES if feature in e.capabilities.features]
            raise CapabilityError(engine.name, "feature", feature, FEATURES[feature], others)
    for name, kind in named:
        if kind == "ctl" and options.properties is None:
            continue  # not named: a method without CTL skips the model's ctl properties
        if kind not in caps.property_kinds:
            others = [e.name for e in ENGINES if kind in e.capabilities.property_kinds]
            raise CapabilityError(engine.name, "property kind", kind, f"{kind} properties", others)
        if not checks_property(caps, system, name, kind):
            others = [
                e.name for e in ENGINES if checks_property(e.capabilities, system, name, kind)
            ]
            span = next((p.span for p in system.ctl if p.name == name), None)
            at = f" at {span}" if span is not None else ""
            what = f"the CTL property '{name}'{at} (only AG of a state formula)"
            raise CapabilityError(engine.name, "property kind", kind, what, others)
    if options.store not in caps.stores:
        others = [e.name for e in ENGINES if options.store in e.capabilities.stores]
        usable = " or ".join(sorted(caps.stores))
        what = f"the {options.store} store (it searches with the {usable} store only)"
        raise CapabilityError(engine.name, "store", options.store, what, others)


def run(
    engine: AnyEngine | str,
    system: System | str,
    options: CheckOptions | None = None,
    engine_options: object | None = None,
) -> Result:
    """Check ``system`` with ``engine`` (or its name): resolve the property selection, refuse
    what the engine cannot do (``CapabilityError``), then call its ``check``. ``engine_options``
    default to the engine's defaults and must be of its ``options_type`` (else ``TypeError``).
    The result's statistics name the System's ``reductions``. For an engine that reads its
    models itself (``Engine.files``) ``system`` is the model file's name: the store is checked,
    the limits started, and the engine does the rest. Raises ``OptionError`` for unknown
    property names, ``UsageError`` for an unknown engine or a model of the wrong kind."""
    eng = get(engine) if isinstance(engine, str) else engine
    opts = options if options is not None else CheckOptions()
    eopts = engine_options if engine_options is not None else eng.default_options()
    if not isinstance(eopts, eng.options_type):
        raise TypeError(
            f"engine {eng.name} takes {eng.options_type.__name__}, not {type(eopts).__name__}"
        )
    if eng.reads_files or isinstance(system, str):
        if not (isinstance(system, str) and system.endswith(eng.files)):
            what = eng.files_text or "models (a System)"
            raise UsageError(f"--method {eng.name} checks {what}, not {system!r:.60}")
        if opts.store not in eng.capabilities.stores:
            others = [e.name for e in ENGINES if opts.store in e.capabilities.stores]
            raise CapabilityError(eng.name, "store", opts.store, f"the {opts.store} store", others)
        with deep_recursion():  # the component checker's walkers, as for models below
            return eng.check(system, replace(opts, limits=opts.limits.started()), eopts)
    selection = select_properties(system, opts)
    refuse_unsupported(eng, system, opts, selection)
    # the check's one deadline (kernel.run.limits): every initial state, property and round
    opts = replace(opts, limits=opts.limits.started())
    with deep_recursion():  # the recursive walkers take expressions MAX_EXPR_DEPTH deep
        if system.init_constraint is None or eng.capabilities.initial_sets:
            result = eng.check(system, opts, eopts)
        else:
            result = check_per_initial_state(eng.check, system, opts, eopts)
    return slots_exhausted(result).with_reductions(system.reductions)


#: the model error of a Promela ``run`` that finds every process slot absmc allocated taken,
#: below SPIN's limit (``lang/promela/lower_stmts.py``: the slots come from a dry run)
_ABSMC_SLOTS = re.compile(
    r"no free process slot for 'run \w+' \(absmc allocated (\d+); SPIN allows \d+\)"
)


#: a property result's field: the process slots a check that met them had (slots_exhausted)
SLOTS_MET: Final = "process_slots_met"


def slots_exhausted(result: Result) -> Result:
    """``result`` with every verdict ``unknown`` when a property was violated by running out
    of the process slots absmc allocated (fewer than SPIN's 255): SPIN would have created the
    process, so the states past that point were not explored and no verdict of the check
    stands (the reason says so); else ``result`` unchanged."""
    hit = next(
        (
            m
            for r in result.results
            if r.verdict is Verdict.VIOLATED and (m := _ABSMC_SLOTS.search(r.reason))
        ),
        None,
    )
    if hit is None:
        return result
    reason = (
        f"the check met absmc's own process-slot limit, {hit.group(0)}: SPIN would create the "
        "process, so the states past it were not explored"
    )
    met = {SLOTS_MET: int(hit.group(1))}
    rows = tuple(
        replace(
            r,
            verdict=Verdict.UNKNOWN,
            reason=reason,
            trace=None,
            violations=0,
            extra={**r.extra, **met},
        )
        for r in result.results
    )
    return replace(result, results=rows)


def _slots_met(result: Result) -> int | None:
    """The number of process slots absmc allocated when ``result`` is :func:`slots_exhausted`'s
    ``unknown`` for running out of them, else ``None``."""
    return next((int(r.extra[SLOTS_MET]) for r in result.results if SLOTS_MET in r.extra), None)


def run_growing(
    engine: AnyEngine | str,
    load: Callable[[int], System],
    options: CheckOptions | None = None,
    engine_options: object | None = None,
) -> Result:
    """:func:`run` on ``load(0)`` (the model as its front end lowers it) and, while the check
    meets the process slots the lowering allocated (fewer than SPIN's 255, which
    :func:`slots_exhausted` makes ``unknown``), again on ``load(k)``: the model with ``k``
    more slots, doubling the count each time, within the same limits (one deadline for all
    the checks). When slots were added, the result's notes say so and every property's
    statistics carry ``process_slots_added`` (``absmc replay`` reloads the model with them).
    Raises what ``load`` and :func:`run` raise."""
    opts = options if options is not None else CheckOptions()
    opts = replace(opts, limits=opts.limits.started())
    extra, last = 0, 0
    while True:
        result = run(engine, load(extra), opts, engine_options)
        met = _slots_met(result)
        if met is None or met <= last:
            break
        extra, last = extra + met, met
    if not extra:
        return result
    note = (
        f"the check was repeated with {extra} more process slots than the model's dry run "
        "allocated (a run statement had found them all taken)"
    )
    grown = result.map_stats(
        lambda st: replace(st, extra={**st.extra, "process_slots_added": extra})
    )
    return replace(grown, notes=(*grown.notes, note))


def forget_earlier_interrupts() -> None:
    """A check begins: a SIGINT/SIGTERM that ended an earlier check in this process no longer
    turns a solver error into ``KeyboardInterrupt`` (:func:`absmc.logic.interrupt.reset`;
    nothing to forget, and Z3 not imported, when no prover has run yet)."""
    watcher = sys.modules.get("absmc.logic.interrupt")
    if watcher is not None:
        watcher.reset()
