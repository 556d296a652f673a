"""Type-based abstraction agrees with exact search on random finite models (paper 001, §3.2, §7):
the abstract System over-approximates the concrete one (the abstraction of every reachable
concrete state is a reachable abstract state), ``holds`` from the abstraction is never
contradicted, and every ``violated`` carries a choose-free counterexample that really executes
on the concrete model and ends in a state that violates the property."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import strategies as st

from absmc.codegen.python import compile_system
from absmc.engines.explicit import check_explicit
from absmc.engines.typeabs import OperatorLibrary, TypesOptions, build_abstraction, check_types
from absmc.ir import NO_DEADLOCK, NO_MODEL_ERROR, Command, Op, System
from absmc.ir.evaluate import env_of, evaluate
from absmc.ir.expr import Expr, transform
from absmc.kernel.explore.search import search
from absmc.kernel.explore.store import ExactStore
from absmc.kernel.replay.trace import run_path
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import Verdict
from absmc.lang.domains import parse_bindings

from .conftest import run_examples
from .reference import reference_explore
from .strategies import finite_systems

DOMAINS = ["signs", "range(0,1)", "range(-1,1)", "modulo(2)", "set(0)", "set(-1,1)", "point"]

#: one operator library for the whole module: tables are generated once per domain
LIBRARY = OperatorLibrary()


def _divide(e: Expr, o: str) -> Expr:
    """``e`` with every ``+`` replaced by ``o`` (``/`` or ``%``)."""
    return transform(e, lambda x: Op(o, x.args) if isinstance(x, Op) and x.op == "+" else None)


def with_division(system: System, index: int, o: str) -> System:
    """Command ``index`` computing ``/`` or ``%`` where it computed ``+`` (possible division by
    zero in its guard and updates: model errors to find)."""
    cmds = list(system.commands)
    c = cmds[index]
    cmds[index] = Command(
        c.process,
        _divide(c.guard, o),
        tuple((n, _divide(e, o)) for n, e in c.updates),
        c.label,
        c.span,
    )
    return system.with_(commands=tuple(cmds))


@st.composite
def bound_systems(draw: st.DrawFn) -> tuple[System, TypesOptions]:
    system = draw(finite_systems())
    if draw(st.integers(0, 3)) == 0:
        index = draw(st.integers(0, len(system.commands) - 1))
        system = with_division(system, index, draw(st.sampled_from(["/", "%"])))
    domain = draw(st.sampled_from(DOMAINS))
    data = [v.name for v in system.data_vars]
    if draw(st.integers(0, 4)) == 0:  # a program counter abstracted too
        data.append(draw(st.sampled_from([p.pc for p in system.processes if p.pc])))
    chosen = draw(st.lists(st.sampled_from(data), min_size=1, unique=True))
    rest = draw(st.sampled_from(["concrete", "point"]))
    return system, TypesOptions(parse_bindings([f"{v}={domain}" for v in chosen]), rest)  # type: ignore[arg-type]


def _final_state_violates(system: System, prop: str, state: tuple[int, ...]) -> bool:
    env = env_of(system, state)
    if prop == NO_DEADLOCK:
        compiled = compile_system(system)
        succ, errors = compiled.successors(state)
        return not succ and not errors
    return bool(evaluate(system.get_property(prop).bad, env))


def test_abstraction_never_contradicts_exact_search() -> None:
    """10 random bound systems in CI (220 under ``-m slow``); among the answers are proofs
    and replayed violations (the run cannot pass vacuously)."""
    SEEN.clear()
    run_examples(_never_contradicts, bound_systems(), 10)
    assert SEEN[Verdict.HOLDS] >= 5 and SEEN[Verdict.VIOLATED] >= 5, SEEN


@pytest.mark.slow
def test_abstraction_never_contradicts_exact_search_220() -> None:
    SEEN.clear()
    run_examples(_never_contradicts, bound_systems(), 220)
    assert SEEN[Verdict.HOLDS] >= 50 and SEEN[Verdict.VIOLATED] >= 50, SEEN


#: the verdicts the agreement runs gave (checked at their end)
SEEN: Counter[Verdict] = Counter()


def _never_contradicts(case: tuple[System, TypesOptions]) -> None:
    system, types = case
    exact = {
        r.property: r.verdict for r in check_explicit(system, CheckOptions(keep_going=True)).results
    }
    assert Verdict.UNKNOWN not in exact.values()
    # over-approximation: alpha of every concrete reachable state is abstractly reachable
    abstraction = build_abstraction(system, types, LIBRARY)
    store = ExactStore()
    search(compile_system(abstraction.system, ()), store, keep_going=True, check_deadlock=False)
    for state in reference_explore(system).states:
        assert abstraction.abstract_state(state) in store.states
    result = check_types(system, CheckOptions(), types, LIBRARY)
    assert result.method == "types"
    for r in result.results:
        SEEN[r.verdict] += 1
        if r.verdict is Verdict.HOLDS:
            assert exact[r.property] is Verdict.HOLDS, (r.property, types)
        elif r.verdict is Verdict.VIOLATED:
            assert exact[r.property] is Verdict.VIOLATED, (r.property, types)
            assert r.trace is not None and r.trace.replayed
            path = [s.command_index for s in r.trace.steps[1:]]
            assert all(i is not None for i in path)
            states = run_path(compile_system(system), path)  # type: ignore[arg-type]
            last = tuple(r.trace.steps[-1].state[v.name] for v in system.variables)
            assert states[-1] == last
            if r.property == NO_MODEL_ERROR:
                assert r.trace.note is not None
            else:
                assert _final_state_violates(system, r.property, states[-1])
        else:
            assert r.reason
