"""``--backend native|auto`` for explicit search: the search loop in C (:mod:`absmc.native`).

``native`` compiles the model to C and searches there (refusing what the C loop lacks: depth-
first order); ``auto`` starts in Python and compiles the model in the background once the Python
search has run :data:`AUTO_COMPILE_AFTER_S` seconds (:class:`~absmc.native.background.
BackgroundBuild`: the C compiler runs on another core meanwhile); the search moves to C (from
the start) once it has stored :data:`AUTO_SWITCH_STATES` states *and* the C module is ready, so
small models keep their quick verdicts and pay no compilation, and a Python search that ends
before the compiler does is not delayed by it (the compiler is killed). ``auto`` stays in Python
wherever ``native`` would refuse. Either way the paths of violations are replayed on the
generated-Python back end, so traces are the Python back end's; a search whose values leave the
C code's widest type (unbounded data; :mod:`absmc.native.wide`) is run again in Python.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from absmc.errors import OptionError

if TYPE_CHECKING:
    from absmc.engines.explicit.check import Backend
    from absmc.native.ltl import LtlStore
from absmc.codegen.python import CompiledSystem
from absmc.ir.ltl import NON_PROGRESS, LtlProperty
from absmc.ir.system import System
from absmc.kernel.explore.por import POR
from absmc.kernel.explore.search import HANDED_OVER, SearchOutcome
from absmc.kernel.explore.store import bitstate_stats, not_a_proof
from absmc.kernel.ltl.ltl import LtlOutcome
from absmc.kernel.replay.outcome import results_from_outcome
from absmc.kernel.run.limits import INTERRUPTED
from absmc.kernel.run.options import CheckOptions, Limits, Selection
from absmc.kernel.run.result import PropertyResult, Result, Stats
from absmc.native import CompilerError, NativeSemantics, Unsupported, native_available
from absmc.native.background import (
    Background,
    BackgroundBuild,
    BackgroundRecompile,
    can_fork,
    kill_child,
    run_forked,
)
from absmc.native.build import OPT_ENV, OPT_LEVELS, available_cpus, kill_compiler
from absmc.native.search import (
    NativeOverflow,
    NativeRun,
    native_search,
    omission_probability,
    relabel,
)

#: ``auto`` moves from the Python back end to C past this many states (once C is ready)
AUTO_SWITCH_STATES = 50_000

#: ``auto`` goes to C at once, without the Python search first, for a model of more commands
#: than this: making its Python successor function alone costs ~0.55 ms per command before the
#: first state is searched (SPIN's mobile1, 3,090 commands from channel variables: 1.7 s), and
#: runs beside the C build, which needs the CPUs (mobile1 ``-N ltl_0`` from a cold cache on 2
#: CPUs: 5.7 s with the Python search first, which ended before C was ready, against 4.1 s in
#: C alone). The models of SPIN's Examples/LTL have 2-364 commands but for mobile1 and mobile2
#: (2,588)
AUTO_PYTHON_MAX_COMMANDS = 1_000

#: ``auto`` starts generating and compiling C after the Python search has run this long (wall
#: seconds): the models whose search ends sooner (most of the corpus) never start the compiler
AUTO_COMPILE_AFTER_S = 0.05

#: ... and, on a machine with one CPU or none spare (:func:`spare_cpus`: the load average
#: leaves no CPU beside the search's own), starts the compiler once the search has run this
#: fraction of the compiler's estimated time (``BackgroundBuild``'s ski-rental rule): sort.pml's
#: source (340 KB) waits 0.55 s there. With a spare CPU the compiler starts at once: it
#: runs on a CPU the Python search does not use, the source is generated either way, and a
#: search that ends first kills it (measured with the wait on 2 CPUs: gcc started 0.16 s into
#: frogs.3's Python search and 0.6 s into sort.pml's, whose C was not ready before its
#: Python search ended at 1.2 s)
AUTO_COMPILE_RATIO = 0.5

#: ``auto`` compiles at this level first (``$ABSMC_NATIVE_OPT`` overrides it and the upgrade
#: below): gcc takes a quarter of ``-O2``'s time and the search runs half as fast (fischer.pml
#: MAXT=8192, 2 threads: 0.24 s + 0.20 s against 0.62 s + 0.07 s at ``-O1``), which pays off
#: below ~2*10^6 states, where the compiler's time counts
AUTO_OPT = "-O0"

#: when ``auto``'s C search (at :data:`AUTO_OPT`) runs longer than this (seconds), the model's
#: source is generated again for :data:`UPGRADE_OPT`, compiled in the background once the
#: search has run :data:`UPGRADE_RATIO` times the compiler's estimated time (ski rental; at once
#: when that build is cached), and the search starts again there once it is ready (the faster
#: code redoes the states so far in half their time). Measured from a cold cache on 2 cores,
#: ratio 0 against 1: szymanski.4 (2.3*10^6 states, 180 KB of C; its -O0 search shared the
#: cores with gcc -O2, then started again) 3.9-4.3 against 3.2-3.5 s (SPIN: 3.7-3.8 s);
#: fischer.pml MAXT=2^15 3.05 against 2.39 s (SPIN 2.55 s); the searches that pay for the
#: upgrade start it later: bakery2.pml N=2^20 5.8 against 6.8 s, lamport.pml MAXT=2^18 7.3
#: against 8.6 s (SPIN: 21 and 27 s)
UPGRADE_AFTER_S = 0.5
UPGRADE_OPT = "-O2"
UPGRADE_RATIO = 1.0

#: with the default ``--workers`` (0) the C search starts its threads past this many states
#: (below it one thread is as fast: starting threads and sharing work would cost more than
#: they save); an explicit ``--workers N`` starts them at once
PARALLEL_AFTER = 50_000


def default_workers() -> int:
    """The C search's threads by default: the CPUs this process may run on
    (:func:`~absmc.native.build.available_cpus`)."""
    return available_cpus()


def spare_cpus() -> float:
    """CPUs beside the one this process searches on that no other work keeps busy: the CPUs it
    may run on (:func:`default_workers`) minus the system's 1-minute load average
    (``os.getloadavg``, which counts this process's own search), at most ``default_workers()
    - 1``; ``default_workers() - 1`` where the load average is unavailable. Negative on an
    overloaded machine."""
    cpus = default_workers()
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return float(cpus - 1)
    return min(float(cpus - 1), cpus - max(load, 1.0))


def native_refusal(options: CheckOptions) -> str | None:
    """Why the native search cannot run with ``options`` (``None`` when it can)."""
    if not native_available():
        return "no C compiler was found (set CC or install gcc)"
    if options.order != "bfs":
        return "the native back end searches breadth-first only"
    if options.store not in ("exact", "hash-compact", "bitstate", "tree"):
        return f"the native back end has no {options.store} store"
    return None


def _paths(run: NativeRun, sem: NativeSemantics) -> SearchOutcome:
    """The outcome with its paths as labels of the Python back end (``sem.python``)."""
    out = run.outcome
    if not out.violations:
        return out
    py = sem.python
    for name, v in out.violations.items():
        chains = run.paths[name]
        v.path = relabel(py, chains, name in run.failing)
    return out


def _hash_compact_paths(
    run: NativeRun, sem: NativeSemantics, options: CheckOptions, deadlock: bool
) -> None:
    """Paths for a hash-compact or bitstate run's violations: an exact native search to the
    deepest violation's depth (BFS found each at its shortest depth; those stores only omit
    states, so every violation they found lies on a path of at most that length)."""
    if not run.outcome.violations:
        return
    depth = run.outcome.max_depth
    again = native_search(
        sem,
        "exact",
        Limits(max_depth=depth, timeout=options.limits.timeout, deadline=options.limits.deadline),
        keep_going=True,
        check_deadlock=deadlock,
    )
    for name in list(run.outcome.violations):
        if name in again.paths:
            run.paths[name] = again.paths[name]
        else:  # not met again within the time left: reported without a trace
            del run.outcome.violations[name]


class _Searched(Protocol):
    """A search's run (:class:`NativeRun`, :class:`LtlOutcome`): its outcome."""

    outcome: SearchOutcome


L = TypeVar("L")
R = TypeVar("R", bound=_Searched)


def _upgraded(
    run: Callable[[L, Callable[[], bool] | None], R], lib: L, better: Background[L]
) -> tuple[L, R]:
    """``auto``'s upgrade of a C search: ``run(lib, ready)`` with ``better`` (the library
    compiled at :data:`UPGRADE_OPT`) built beside it, started here; ``ready()``, asked between
    slices, hands the search over once ``better`` is built, and ``run(better's library, None)``
    searches again from the start; a search that ends first cancels ``better``. Ctrl-C (or
    SIGTERM) between the two searches gives the first one, stopped ``INTERRUPTED`` with its
    statistics. Returns the library and the run that count."""
    better.start()
    try:
        first = run(lib, better.ready)
    except BaseException:
        better.cancel()
        raise
    if first.outcome.stopped != HANDED_OVER:
        better.cancel()
        return lib, first
    try:
        twin = better.result()
        return twin, run(twin, None)
    except KeyboardInterrupt:
        first.outcome.stopped = INTERRUPTED
        first.outcome.limit_hit = True
        return lib, first


def check_native(
    system: System,
    options: CheckOptions,
    selection: Selection,
    deadline: float | None = None,
    workers: int = 0,
    sem: NativeSemantics | None = None,
    upgrade: bool = False,
) -> Result:
    """Explicit search of ``system`` in C (``sem``: its semantics when already built), in
    ``workers`` threads (0: :func:`default_workers`, started past :data:`PARALLEL_AFTER` states;
    threads serve the exact store without a depth bound, the other searches run in one). With
    ``upgrade`` a search still running after :data:`UPGRADE_AFTER_S` has the model compiled at
    :data:`UPGRADE_OPT` beside it and starts again in that code once it is ready. Raises
    ``Unsupported``, ``CompilerError`` (the model cannot be compiled) or ``NativeOverflow``
    (values beyond the C code's widest type); the caller decides whether to fall back."""
    store: Any = options.store
    threads = workers if workers > 0 else default_workers()
    lib = sem if sem is not None else NativeSemantics(system, selection.user)

    def run_on(sem: NativeSemantics, ready: Callable[[], bool] | None = None) -> NativeRun:
        return native_search(
            sem,
            store,
            options.limits,
            keep_going=options.keep_going,
            check_deadlock=selection.deadlock,
            progress=options.progress,
            deadline=deadline,
            bitstate_bits=options.bitstate_bits,
            hash_functions=options.hash_functions,
            workers=threads,
            parallel_after=PARALLEL_AFTER if workers <= 0 else 0,
            hand_over=None if ready is None else lambda _states: ready(),
            reduce=options.reduce,
        )

    if not upgrade:
        run = run_on(lib)
    else:
        better = BackgroundBuild(
            system, selection.user, UPGRADE_AFTER_S, UPGRADE_OPT, UPGRADE_RATIO
        )
        lib, run = _upgraded(run_on, lib, better)
    if store != "exact":
        _hash_compact_paths(run, lib, options, selection.deadlock)
    outcome = _paths(run, lib)
    extra: dict[str, Any] = {
        "store": options.store,
        "backend": "native",
        "bytes_per_state": round(run.bytes_per_state, 1),
        "state_vector_bytes": run.state_bytes,
        "workers": run.threads,
    }
    if run.tree_nodes:  # the tree store's distinct pairs per inner node (pre-order)
        extra["tree_nodes"] = run.tree_nodes
    if run.reduced is not None:  # absent when no reduction ran
        extra["reductions"] = [POR]
        extra["reduced_states"] = run.reduced
    detail = ""
    if run.coverage is not None:
        extra = {
            **bitstate_stats(
                run.coverage, options.bitstate_bits, options.hash_functions, outcome.stopped
            ),
            **extra,
        }
    elif store == "hash-compact":
        p = omission_probability(outcome.states)
        extra["omission_probability"] = float(f"{p:.3g}")
        detail = f"probability of an omitted state {p:.2g}"
    reason = not_a_proof(outcome.states, extra, detail)
    stats = Stats(
        outcome.states, outcome.transitions, outcome.max_depth, outcome.time_s, extra=extra
    )
    semantics = lib.python if outcome.violations else lib
    results = results_from_outcome(
        semantics, selection, outcome, "explicit", stats, store in ("exact", "tree"), reason
    )
    return Result(system.file or system.name, "explicit", tuple(results))


def check_with_backend(
    system: System,
    options: CheckOptions,
    selection: Selection,
    backend: Backend,
    python: Any,
    workers: int = 0,
) -> Result:
    """Explicit search on ``backend`` (``workers``: :func:`check_native`'s); ``python(options,
    workers=1)`` runs the Python back end (``workers`` > 1: its hash-partitioned search, which
    ``auto`` runs when the native search cannot serve the options, e.g. ``--order dfs``, or the
    model, e.g. expressions nested past 2,000 levels). Raises
    ``OptionError`` (option ``backend``) when ``native`` cannot serve the options or model."""
    start = time.monotonic()
    if selection.ltl and not selection.ctl and not options.graph_bound:
        return check_ltl_with_backend(system, options, selection, backend, python, workers)
    if selection.ctl and not selection.ltl and not options.graph_bound:
        from absmc.engines.explicit.native_ctl import check_ctl_with_backend

        return check_ctl_with_backend(system, options, selection, backend, python, workers)
    why = native_refusal(options)
    if why is None and (selection.ltl or selection.ctl):
        why = "the native back end checks no ctl properties beside ltl ones"
    if why is None and options.graph_bound:
        why = "the native back end draws no state graph (--html, --dot)"
    if why is not None:
        if backend == "native":
            raise OptionError(why, "backend")
        return python(options, workers)  # type: ignore[no-any-return]
    lim = options.limits
    sem: NativeSemantics | None = None
    first: Result | None = None
    if backend == "auto" and python_first_pays(system):
        if lim.max_states is not None and lim.max_states <= AUTO_SWITCH_STATES:
            return python(options)  # type: ignore[no-any-return]
        first, built = _python_then_built(system, options, selection, python)
        if isinstance(built, Exception):
            return _noted(first, f"searched in Python: {built}")
        if built is None:
            return first
        sem = built
    deadline = lim.end(start)
    upgrade = backend == "auto" and _own_levels()
    try:
        if sem is None and upgrade:  # a model too large for Python first: -O0, then upgrade
            sem = NativeSemantics(system, selection.user, AUTO_OPT)
        return check_native(system, options, selection, deadline, workers, sem, upgrade)
    except KeyboardInterrupt:
        if first is None:
            raise
        # Ctrl-C or SIGTERM after Python handed over and before the C search took it (setting
        # up its store): the Python search's statistics, as an interrupted search
        return _interrupted(first)
    except (Unsupported, CompilerError) as e:
        why = str(e)
    except NativeOverflow as e:
        why = str(e)  # the Python back end computes with unbounded integers
    result: Result = python(replace(options, limits=lim.started(start)), workers)
    return _noted(result, f"searched in Python: {why}")


def ltl_refusal(options: CheckOptions, selection: Selection) -> str | None:
    """Why the linear-time properties of ``selection`` cannot be searched in C with
    ``options`` (``None`` when they can): the C product search (:mod:`absmc.native.ltl`: one
    thread, or CNDFS in ``--workers`` >= 2 threads with the exact store) has the exact,
    hash-compact and bitstate stores, not the tree store."""
    if not native_available():
        return "no C compiler was found (set CC or install gcc)"
    if options.store not in ("exact", "hash-compact", "bitstate"):
        return f"the native LTL search has no {options.store} store"
    return None


def check_ltl_with_backend(
    system: System,
    options: CheckOptions,
    selection: Selection,
    backend: Backend,
    python: Any,
    workers: int = 0,
) -> Result:
    """The linear-time properties (and the safety properties beside them) with each product
    search in C (:class:`~absmc.native.ltl.NativeLtl`: the model with the automata of all its
    ltl blocks, one library for every ``-N NAME``), the rest of the check as the Python back
    end does it (``python(options, workers, ltl_search, safety_search)``; the safety search
    beside the product searches, where one runs, is :func:`check_native`'s). ``workers`` >= 2
    runs each product search as CNDFS in that many threads (0, the default, and 1: the
    one-thread nested DFS in SPIN's order). Where C cannot serve
    (:func:`ltl_refusal`, a model the generator does not translate, a value past 64 bits, a
    safety violation met in a product search, whose path the Python search reports) the whole
    check runs in Python, with the reason in each result's ``native_fallback``; ``native``
    raises ``OptionError`` for a refusal of the options. ``auto`` follows the safety rule: the
    Python check first, bounded by :data:`AUTO_SWITCH_STATES` states, with the C library
    compiled beside it; past the bound the check starts again with the searches in C (at once
    under weak fairness with reductions, which only the C search applies). ``auto``'s library
    is compiled at :data:`AUTO_OPT`, and a product search still running once it is compiled
    again at :data:`UPGRADE_OPT` beside it (the rule of :func:`check_native`'s upgrade) starts
    again there (SPIN's leader.pml ``-f``: gcc -O0 0.5 s against -O1's 1.1 s for a search of
    0.1 s)."""
    from absmc.native.ltl import NativeLtl, SafetyMet

    why = ltl_refusal(options, selection)
    if why is not None:
        if backend == "native":
            raise OptionError(why, "backend")
        return _noted(python(options, workers), f"searched in Python: {why}")
    start = time.monotonic()
    lim = options.limits
    # every ltl block of the model in one library (the same for each -N NAME), with -l the
    # non-progress property (the model's, or "no progress label: every cycle" without one)
    claims = [p for p in system.ltl if p.name != NON_PROGRESS]
    claims += [p for p in selection.ltl if p.name == NON_PROGRESS]
    # with -N no safety search runs beside the product search (docs/ltl.md): the library
    # needs no partial-order tables
    por = options.ltl is None
    # the weak-fairness tables only for a fair search (their analysis costs ~1 s on mobile1)
    fair_por = options.reduce and options.fairness == "weak"
    built: list[NativeLtl | Exception] = []
    # auto compiles at AUTO_OPT and moves a long product search to UPGRADE_OPT, as for safety
    upgrade = backend == "auto" and _own_levels()
    # under weak fairness only the one-thread C search reduces (native/fairpor.py; Python's
    # fair product search is unreduced: SPIN's leader.pml -f p0, 1.8 million states against
    # C's 12,113), so auto goes to C at once there
    if backend == "auto" and not (fair_por and workers <= 1) and python_first_pays(system):
        # as for safety: the Python back end first, C past AUTO_SWITCH_STATES product states
        got = python_first(
            options,
            workers,
            python,
            lambda opt, started, generate: NativeLtl(
                system,
                selection.user,
                claims,
                opt,
                started,
                por,
                options.reduce,
                workers > 1,
                fair_por,
                generate,
                options.store != "exact",
            ),
            hand_over=True,
        )
        if isinstance(got, Result):
            return got
        built = got
    try:
        if built and isinstance(built[0], Exception):
            raise built[0]
        native = (
            built[0]
            if built
            else NativeLtl(
                system,
                selection.user,
                claims,
                AUTO_OPT if upgrade else None,
                por=por,
                ltl_por=options.reduce,
                cndfs=workers > 1,
                fair_por=fair_por,
                compact=options.store != "exact",
            )
        )
        assert isinstance(native, NativeLtl)
        current: NativeLtl = native  # the library in use (the upgrade below replaces it)

        def ltl_search(
            compiled: CompiledSystem, prop: LtlProperty, limits: Limits, deadlock: bool
        ) -> LtlOutcome:
            nonlocal current
            limits = limits.started()  # one deadline for both searches below

            def run(lib: NativeLtl, ready: Callable[[], bool] | None = None) -> LtlOutcome:
                return lib.search(
                    compiled,
                    prop,
                    limits,
                    options.progress,
                    safety=True,
                    deadlock=deadlock,
                    weakly_fair=options.fairness == "weak",
                    workers=workers,
                    reduce=options.reduce,
                    hand_over=ready,
                    store=cast("LtlStore", options.store),
                    bitstate_bits=options.bitstate_bits,
                    hash_functions=options.hash_functions,
                )

            if not upgrade or current.opt == UPGRADE_OPT:
                return run(current)
            # as check_native's upgrade; the twin serves the properties checked after this one
            lib = current
            better = BackgroundRecompile(
                lib.source,
                UPGRADE_OPT,
                lambda on_compile: lib.recompiled(UPGRADE_OPT, on_compile),
                UPGRADE_AFTER_S,
                UPGRADE_RATIO,
            )
            current, found = _upgraded(run, lib, better)
            return found

        def safety_search(o: CheckOptions) -> list[PropertyResult] | None:
            if native_refusal(o) is not None or not por:
                return None
            return list(check_native(system, o, selection, None, workers, current.sem).results)

        return python(options, workers, ltl_search, safety_search)  # type: ignore[no-any-return]
    except (Unsupported, CompilerError, NativeOverflow, SafetyMet) as e:
        why = str(e)
    result: Result = python(replace(options, limits=lim.started(start)), workers)
    return _noted(result, f"searched in Python: {why}")


def _python_then_built(
    system: System, options: CheckOptions, selection: Selection, python: Any
) -> tuple[Result, NativeSemantics | Exception | None]:
    """``auto``'s Python part: the Python search with the C module built beside it (see the
    module docstring). Returns the Python result and the built semantics when the search handed
    over to C (the result is then to be discarded), the build's exception when it failed and
    the search passed :data:`AUTO_SWITCH_STATES` states (the result stands, with a note), else
    ``None`` (the Python result is the answer; the build is abandoned)."""
    opt = AUTO_OPT if _own_levels() else None
    # the compiler starts at once only where it gets a CPU of its own (see AUTO_COMPILE_RATIO)
    ratio = AUTO_COMPILE_RATIO if spare_cpus() < 1 else 0.0
    build = BackgroundBuild(system, selection.user, AUTO_COMPILE_AFTER_S, opt, ratio)
    handed = False

    def hand_over(states: int) -> bool:
        nonlocal handed
        handed = states >= AUTO_SWITCH_STATES and build.ready()
        return handed

    build.start()
    try:
        result: Result = python(replace(options, hand_over=hand_over))
    finally:
        if not handed:
            build.cancel()
    if handed:
        return result, build.result()
    failed = build.failed()
    if failed is not None and _hit_state_cap(result, AUTO_SWITCH_STATES):
        return result, failed
    return result, None


B = TypeVar("B")

#: where a C source generator runs: ``generate(make)`` returns ``make()``'s text
Generate = Callable[[Callable[[], str]], str]


def python_first(
    options: CheckOptions,
    workers: int,
    python: Any,
    build: Callable[[str | None, Callable[[subprocess.Popen[str]], None], Generate | None], B],
    hand_over: bool = False,
) -> Result | list[B | Exception]:
    """``auto``'s rule for the LTL and CTL checks: the Python check (``python(options,
    workers)``) first, bounded by :data:`AUTO_SWITCH_STATES` states, with ``build(opt,
    started, generate)`` compiling the C library beside it in a thread (at :data:`AUTO_OPT`
    unless ``$ABSMC_NATIVE_OPT`` sets a level; ``started`` receives each compiler process;
    ``generate(make)``, where the platform forks, runs the source generator ``make`` in a
    forked child, :func:`~absmc.native.background.run_forked`, so that the Python search keeps
    the GIL; each compiler and child is ended when Python decides, as is any started after).
    ``hand_over`` (a check whose searches take ``CheckOptions.hand_over``: the LTL product
    searches): the Python check also ends as soon as the library is built, below the bound
    (the C search redoes its states in a fraction of the time: on SPIN's mobile1 the Python
    search went on 1.4 s past the library's build to reach the bound). Returns the Python
    result when it decides (also when ``--max-states`` is within the bound), else a
    one-element list: the built library, or the exception its build raised (to be reported
    when C is needed)."""
    lim = options.limits
    if lim.max_states is not None and lim.max_states <= AUTO_SWITCH_STATES:
        return python(options, workers)  # type: ignore[no-any-return]
    procs: list[subprocess.Popen[str]] = []
    # the compiler's time counts most below ~10^6 states (as safety's auto)
    opt = AUTO_OPT if _own_levels() else None
    built: list[B | Exception] = []

    children: list[int] = []
    decided = threading.Event()

    def started(proc: subprocess.Popen[str]) -> None:
        procs.append(proc)
        if decided.is_set():  # Python decided before this compiler started
            kill_compiler(proc)

    def forked(pid: int) -> None:
        children.append(pid)
        if decided.is_set():  # ... or before this source generator started
            kill_child(pid)

    def generate(make: Callable[[], str]) -> str:
        return run_forked(make, forked)

    def run_build() -> None:
        try:
            built.append(build(opt, started, generate if can_fork() else None))
        except Exception as e:  # reported by the caller when C is needed
            built.append(e)

    builder = threading.Thread(target=run_build, daemon=True)
    builder.start()
    capped = replace(options, limits=replace(lim, max_states=AUTO_SWITCH_STATES))
    if hand_over:
        ready = lambda _states: bool(built) and not isinstance(built[0], Exception)  # noqa: E731
        capped = replace(capped, hand_over=ready)
    first: Result = python(capped, workers)
    # the cap is shared by the run's searches (Limits.less): any state limit is the cap's
    if (
        not _hit_state_cap(first, AUTO_SWITCH_STATES)
        and not any("state limit of" in r.reason for r in first.results)
        and not any(HANDED_OVER in r.reason for r in first.results)
    ):
        decided.set()
        for proc in list(procs):
            kill_compiler(proc)
        for pid in list(children):
            kill_child(pid)
        return first
    builder.join()
    return built


def _noted(result: Result, note: str) -> Result:
    """``result`` with ``note`` in every property's statistics (``native_fallback``)."""
    rows = []
    for r in result.results:
        stats = replace(r.stats, extra={**r.stats.extra, "native_fallback": note})
        rows.append(replace(r, stats=stats))
    return replace(result, results=tuple(rows))


def python_first_pays(system: System) -> bool:
    """Whether ``auto`` searches ``system`` in Python first, with C built beside it: a model of
    at most :data:`AUTO_PYTHON_MAX_COMMANDS` commands (safety, LTL and CTL alike)."""
    return len(system.commands) <= AUTO_PYTHON_MAX_COMMANDS


def _own_levels() -> bool:
    """Whether ``auto`` chooses the optimization levels (:data:`AUTO_OPT`, then the upgrade to
    :data:`UPGRADE_OPT`): ``$ABSMC_NATIVE_OPT`` sets none."""
    return os.environ.get(OPT_ENV, "") not in OPT_LEVELS


def _interrupted(result: Result) -> Result:
    """``result`` of a search that handed over, as one that Ctrl-C ended there: each property
    left unknown by the handover gets the reason :data:`~absmc.kernel.run.limits.INTERRUPTED`."""
    rows = [
        replace(r, reason=INTERRUPTED) if r.reason and HANDED_OVER in r.reason else r
        for r in result.results
    ]
    return replace(result, results=tuple(rows))


def _hit_state_cap(result: Result, cap: int) -> bool:
    return any(r.stats.states >= cap for r in result.results)


__all__ = [
    "AUTO_COMPILE_AFTER_S",
    "AUTO_PYTHON_MAX_COMMANDS",
    "AUTO_SWITCH_STATES",
    "PARALLEL_AFTER",
    "check_ltl_with_backend",
    "check_native",
    "check_with_backend",
    "default_workers",
    "ltl_refusal",
    "native_refusal",
    "python_first",
    "python_first_pays",
    "spare_cpus",
]
