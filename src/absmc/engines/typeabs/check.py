"""``absmc check --method types``: model checking with type-based data abstraction and
choose-free search for feasible counterexamples (paper 001, §§3-7, Fig. 4).

1. Resolve the bindings (``--abstract x=signs``, BASL domains), infer abstract types (§5.3),
   generate the abstract System (§6).
2. Search the whole abstract System exhaustively. A property without an abstract violation
   ``holds`` for the concrete System (the abstraction over-approximates its behaviours and the
   abstract property under-approximates the concrete one, §3.2).
3. For each property with an abstract violation, search again along *choose-free* paths only
   (§7, Fig. 4: commands marked ``choose`` lead to dead states,
   :meth:`~absmc.engines.typeabs.generate.Abstraction.choose_free`). A violation found there
   follows deterministic abstract steps: its commands are mapped back to the concrete ones
   (a chain of exclusive commands to the concrete chain label,
   :func:`absmc.kernel.replay.trace.concretize`) and
   **replayed** on the concrete System; when the replay executes and the concrete final state
   (or last command) violates the property, the verdict is ``violated`` with that concrete
   trace. A sure violation (every concretization violates) is tried first, then a possible
   one.
4. Otherwise the verdict is ``unknown``: the abstract counterexample uses ``choose`` and may be
   spurious; it is reported (with token names) for the user to inspect.

Linear-time properties: :mod:`absmc.engines.typeabs.ltl` (accepting lassos of the abstract
program; a violation needs a choose-free lasso that closes and replays concretely).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from absmc.codegen.python import CompiledSystem, State, compile_system
from absmc.engines.typeabs.absexpr import GenerationTimeout
from absmc.engines.typeabs.basl import basl_domains
from absmc.engines.typeabs.domains import Domain, DomainError, resolve_domain
from absmc.engines.typeabs.generate import MAY, Abstraction, abstract_system, domains_note
from absmc.engines.typeabs.infer import Typing, infer
from absmc.engines.typeabs.ltl import check_ltl
from absmc.engines.typeabs.operators import OperatorLibrary
from absmc.engines.typeabs.options import METHOD, TypesOptions
from absmc.ir.arrays import expand_system
from absmc.ir.system import NO_DEADLOCK, NO_MODEL_ERROR, Property, System
from absmc.kernel.explore.search import SearchOutcome, Violation, search
from absmc.kernel.explore.store import ExactStore
from absmc.kernel.ltl.lasso import refuse_ltl_options
from absmc.kernel.replay.trace import (
    ReplayError,
    Unconfirmed,
    chain_rows,
    command_source,
    command_text,
    concretize,
    is_failing_property,
    replay,
    run_path,
)
from absmc.kernel.run.limits import time_limit
from absmc.kernel.run.options import (
    CheckOptions,
    OptionError,
    Selection,
    property_kind,
    select_properties,
)
from absmc.kernel.run.result import PropertyResult, Result, Stats, Trace, TraceStep, Verdict
from absmc.lang.basl import BaslAbstraction
from absmc.lang.domains import Binding


def user_domains(specs: Sequence[BaslAbstraction], library: OperatorLibrary) -> dict[str, Domain]:
    """The domains of the BASL abstractions ``specs`` (later ones win on equal names). Raises
    ``ModelError`` for an abstraction function that misses some integer or some token."""
    return basl_domains(specs, library)


def resolve_bindings(
    bindings: Sequence[Binding], user: dict[str, Domain] | None = None
) -> dict[str, Domain]:
    """Bindings as variable -> domain. Raises ``OptionError`` (option ``"bindings"``) for an
    unknown domain, bad parameters, or a variable bound twice."""
    out: dict[str, Domain] = {}
    for name, spec in bindings:
        if name in out:
            raise OptionError(f"'{name}' is bound twice", "bindings")
        try:
            out[name] = resolve_domain(spec, user)
        except DomainError as err:
            raise OptionError(f"{name}={spec.text}: {err}", "bindings") from None
    return out


def build_abstraction(
    system: System,
    types: TypesOptions,
    library: OperatorLibrary | None = None,
    deadline: float | None = None,
) -> Abstraction:
    """Bindings, inference and abstract System generation in one step. Raises
    ``OptionError`` (bad bindings, or none while ``rest`` is ``concrete``: option
    ``"bindings"``), ``ModelError`` (type conflicts, BASL errors) and ``GenerationTimeout``
    past ``deadline`` (a ``time.monotonic()`` instant)."""
    lib = library or OperatorLibrary()
    lib.prover.deadline = deadline
    bindings = resolve_bindings(types.bindings, user_domains(types.basl, lib))
    if not bindings and types.rest != "point":
        raise OptionError("needs at least one VAR=DOMAIN binding (nothing to abstract)", "bindings")
    system = expand_system(system)  # array reads as case splits (ir.arrays)
    typing = infer(system, bindings, types.rest)
    return abstract_system(system, typing, lib, deadline)


def _search_properties(abstraction: Abstraction, selection: Selection) -> list[Property]:
    by_name = {p.name: p for p in abstraction.system.properties}
    props = [by_name[p.name] for p in selection.user]
    if selection.deadlock:
        props.append(Property(NO_DEADLOCK, "unreachable", abstraction.deadlock))
    return props


def abstract_trace(
    abstraction: Abstraction,
    compiled: CompiledSystem,
    path: Sequence[int],
    index: Sequence[int],
    prop: str,
) -> Trace:
    """The trace of an abstract path (successor labels of ``compiled``, whose System is the
    abstract one or the choose-free one; ``index`` maps its commands to abstract command
    indices): abstract states with token names, one row per command of a chain, each showing
    the concrete command it abstracts (``[choose]`` when the step resolved a choice)."""
    concrete = abstraction.concrete
    failing = is_failing_property(concrete, prop) and bool(path)
    steps_path = list(path[:-1]) if failing else list(path)
    states = run_path(compiled, steps_path)
    steps = [TraceStep(0, abstraction.show(states[0]))]

    def rows(state: State, cmds: Sequence[int]) -> State:
        for ci, nxt in chain_rows(compiled, state, cmds):
            state = nxt
            ai = index[ci]
            oi = abstraction.origin[ai]
            if oi < 0:  # a release command: exclusive control ends, nothing changes
                continue
            mark = " [choose]" if abstraction.is_choose(ai) else ""
            cmd = concrete.commands[oi]
            steps.append(
                TraceStep(
                    len(steps),
                    abstraction.show(state),
                    process=cmd.process,
                    command=command_text(concrete, oi) + mark,
                    source=command_source(concrete, oi),
                    command_index=oi,
                )
            )
        return state

    for k, label in enumerate(steps_path):
        rows(states[k], compiled.commands_of(label))
    note: str | None = None
    if failing:
        chain = compiled.commands_of(path[-1])
        rows(states[-1], chain[:-1])
        ai = index[chain[-1]]
        oi = abstraction.origin[ai]
        what = abstraction.errors.get(ai, "a model error")
        if prop != NO_MODEL_ERROR:
            what = f"assertion {prop} may fail"
        note = (
            f"next, {concrete.commands[oi].process} may execute "
            f"'{command_text(concrete, oi)}': {what}"
        )
    elif prop == NO_DEADLOCK:
        note = "every guard may be false in the last abstract state: possible deadlock"
    return Trace(tuple(steps), replayed=False, note=note)


def _concrete_steps(
    abstraction: Abstraction, compiled: CompiledSystem, index: Sequence[int], path: Sequence[int]
) -> list[tuple[int, ...]]:
    """The concrete commands of each step of an abstract path (release commands dropped)."""
    out = []
    for label in path:
        cmds = (abstraction.origin[index[ci]] for ci in compiled.commands_of(label))
        out.append(tuple(oi for oi in cmds if oi >= 0))
    return out


def _steps(n: int) -> str:
    return f"{n} step{'s' if n != 1 else ''}"


def _confirm(
    abstraction: Abstraction,
    concrete: CompiledSystem,
    cf_compiled: CompiledSystem,
    cf_index: Sequence[int],
    name: str,
    cfv: Violation,
) -> tuple[Verdict, str, Trace]:
    """Map a choose-free counterexample back to the concrete commands (chains included) and
    replay it (§7): ``violated`` with the concrete trace when it executes and violates
    ``name``; otherwise ``unknown`` with the abstract trace and why."""
    steps = _concrete_steps(abstraction, cf_compiled, cf_index, cfv.path)
    failing = name if is_failing_property(abstraction.concrete, name) else None
    n = sum(len(s) for s in steps)
    try:
        path, failure = concretize(concrete, steps, failing)
    except Unconfirmed as err:
        why = (
            f"the choose-free abstract counterexample of {_steps(n)} is not a run of the "
            f"concrete model ({err}: an overflow, or a step the concrete model takes "
            "differently)"
        )
    else:
        try:
            trace = replay(concrete, name, path)
            if failing is not None:
                message = failure
            elif name == NO_DEADLOCK:
                message = "deadlock: no command is enabled"
            else:
                message = f"{property_kind(abstraction.concrete, name)} '{name}' violated"
            return (  # steps as the trace shows them (a failing assertion is not a row)
                Verdict.VIOLATED,
                f"{message}; choose-free counterexample of {_steps(len(trace.steps) - 1)}, "
                "replayed on the concrete model",
                trace,
            )
        except ReplayError as err:
            why = (
                f"the choose-free abstract counterexample of {_steps(n)} does not violate the "
                f"concrete property ({err}): the abstract property is weaker"
            )
    return Verdict.UNKNOWN, why, abstract_trace(abstraction, cf_compiled, cfv.path, cf_index, name)


def _result(
    name: str,
    kind: str,
    verdict: Verdict,
    reason: str,
    stats: Stats,
    trace: Trace | None,
    abstracted: dict[str, str],
) -> PropertyResult:
    return PropertyResult(
        name, kind, METHOD, verdict, reason, stats, trace, extra={"abstracted": abstracted}
    )


def check_types(
    system: System,
    options: CheckOptions,
    types: TypesOptions,
    library: OperatorLibrary | None = None,
) -> Result:
    """Check ``system`` with type-based abstraction (module docstring). The abstract search is
    always exhaustive (``keep_going``) within ``options.limits``, with the exact store (the
    registry refuses others). Raises ``OptionError`` for bad options and ``ModelError`` for
    abstract type conflicts and errors in BASL abstractions."""
    system = expand_system(system)  # array reads as case splits (ir.arrays)
    selection = select_properties(system, options)
    if selection.ltl:
        refuse_ltl_options(options, METHOD)
    lib = library or OperatorLibrary()
    start = time.monotonic()
    # one deadline for generation, the searches and the ltl product searches
    limits = options.limits.started(start)
    try:
        abstraction = build_abstraction(system, types, lib, limits.deadline)
    except GenerationTimeout as err:
        stats = Stats(0, 0, 0, time.monotonic() - start, extra={"store": "exact"})
        # "time limit reached while ...", worded with the user's --timeout
        why = time_limit(limits, str(err).removeprefix("time limit reached").strip())
        unknown = [
            _result(n, property_kind(system, n), Verdict.UNKNOWN, why, stats, None, {})
            for n in selection.all_names()
        ]
        return Result(system.file or system.name, METHOD, unknown, [])
    props = _search_properties(abstraction, selection)
    compiled = compile_system(abstraction.system, props)
    outcome = search(
        compiled,
        ExactStore(),
        order=options.order,
        limits=limits,
        keep_going=True,
        check_deadlock=False,
        progress=options.progress,
    )
    names = selection.names()
    pending = [n for n in names if n in outcome.violations or outcome.stopped is not None]
    cf_outcome: SearchOutcome | None = None
    cf_compiled: CompiledSystem | None = None
    cf_index: tuple[int, ...] = ()
    if pending:
        cf_system, cf_index, cf_props = abstraction.choose_free(props)
        cf_compiled = compile_system(cf_system, cf_props)
        cf_outcome = search(
            cf_compiled,
            ExactStore(),
            order=options.order,
            limits=limits,
            keep_going=True,
            check_deadlock=False,
        )
    concrete = compile_system(system, selection.user)
    identity = tuple(range(len(abstraction.system.commands)))
    extra = {
        "store": "exact",
        "abstract_commands": len(abstraction.system.commands),
        "choose_commands": abstraction.choose_count,
        "implication_checks": lib.checks,
        "prover_calls": lib.prover.stats.calls,
    }
    if cf_outcome is not None:
        extra["choose_free_states"] = cf_outcome.states
    stats = Stats(
        outcome.states, outcome.transitions, outcome.max_depth, outcome.time_s, extra=extra
    )
    abstracted = {v: str(d) for v, d in abstraction.domains.items()}
    results: list[PropertyResult] = []
    for name in names:
        kind = property_kind(system, name)
        v = outcome.violations.get(name)
        found = cf_outcome.violations if cf_outcome is not None else {}
        cfvs = [x for x in (found.get(name), found.get(name + MAY)) if x is not None]
        verdict, trace = Verdict.UNKNOWN, None
        if v is None and outcome.stopped is None:
            verdict = Verdict.HOLDS
            reason = (
                f"holds on the abstraction: no violation in the {outcome.states:,} reachable "
                "abstract states (exhaustive search)"
            )
        elif cfvs:
            assert cf_compiled is not None
            for cfv in cfvs:  # a sure violation first, then a possible one
                verdict, reason, trace = _confirm(
                    abstraction, concrete, cf_compiled, cf_index, name, cfv
                )
                if verdict is Verdict.VIOLATED:
                    break
        elif v is not None:
            trace = abstract_trace(abstraction, compiled, v.path, identity, name)
            n = (
                len(trace.steps)
                - 1
                + (1 if trace.note and is_failing_property(system, name) else 0)
            )
            reason = (
                f"abstract counterexample of {_steps(n)} uses choose and may be spurious; "
                "no choose-free counterexample exists"
                + (f" ({cf_outcome.stopped})" if cf_outcome and cf_outcome.stopped else "")
            )
        else:
            reason = outcome.stopped or "abstract search incomplete"
        results.append(_result(name, kind, verdict, reason, stats, trace, abstracted))
    if selection.ltl:
        ltl_limits = limits
        more = {k: v for k, v in extra.items() if k != "choose_free_states"}
        for r in check_ltl(abstraction, concrete, selection.ltl, ltl_limits, more):
            results.append(replace(r, extra={"abstracted": abstracted}))
    notes = [
        domains_note(abstraction.typing),
        f"abstract System: {len(abstraction.system.commands)} commands "
        f"({abstraction.choose_count} with choose), {lib.checks} implication checks",
    ]
    return Result(system.file or system.name, METHOD, tuple(results), tuple(notes))


def typing_of(system: System, types: TypesOptions) -> Typing:
    """Only the inference step (for ``absmc abstract``-style reports)."""
    lib = OperatorLibrary()
    bindings = resolve_bindings(types.bindings, user_domains(types.basl, lib))
    return infer(expand_system(system), bindings, types.rest)
