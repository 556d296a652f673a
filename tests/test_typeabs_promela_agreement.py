"""Type-based abstraction stays sound on the command fields of Promela-derived Systems
(exclusive control, ``timeout``, transition assertions, error conditions): on random finite
systems decorated with them, the abstraction of every state the concrete search stores is an
abstract state, ``holds`` is never contradicted by exact search, and every ``violated`` carries
a replayed concrete trace (paper 001, §3.2 and §7)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest
from hypothesis import strategies as st

from absmc.codegen.python import compile_system
from absmc.engines.explicit import check_explicit
from absmc.engines.typeabs import OperatorLibrary, TypesOptions, build_abstraction, check_types
from absmc.ir import TRUE, Property, System
from absmc.ir.evaluate import env_of, evaluate
from absmc.ir.expr import Var, op, substitute
from absmc.ir.sorts import RangeSort
from absmc.kernel.explore.search import search
from absmc.kernel.explore.store import ExactStore
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import Verdict
from absmc.lang.domains import parse_bindings

from .conftest import run_examples
from .strategies import _atom, finite_systems

DOMAINS = ["signs", "range(0,1)", "range(-1,1)", "modulo(2)", "set(0)", "set(-1,1)"]
LIBRARY = OperatorLibrary()


def _wrapping(system: System, name: str, sort: RangeSort) -> System:
    """``system`` with variable ``name`` of ``sort`` (references renamed accordingly)."""
    ren = {name: Var(name, sort)}
    variables = tuple(replace(v, sort=sort) if v.name == name else v for v in system.variables)
    commands = tuple(
        replace(
            c,
            guard=substitute(c.guard, ren),
            updates=tuple((n, substitute(e, ren)) for n, e in c.updates),
        )
        for c in system.commands
    )
    props = tuple(replace(p, expr=substitute(p.expr, ren)) for p in system.properties)
    return system.with_(variables=variables, commands=commands, properties=props)


@st.composite
def promela_like(draw: st.DrawFn) -> tuple[System, TypesOptions]:
    """A random finite System whose commands use ``exclusive``, ``timeout``, ``asserts`` and
    ``errors`` (and, half of the time, whose ``d0`` is a wrap-around range, as Promela's
    integers), with one or two data variables bound to a library domain."""
    base = draw(finite_systems())
    if draw(st.booleans()):  # a Promela-like wrap-around integer (values may wrap)
        base = _wrapping(base, "d0", RangeSort(-2, 2, "wrap"))
    data = [Var(v.name, v.sort) for v in base.variables if v.name.startswith("d")]
    procs = [p.name for p in base.processes]
    cmds = []
    asserted = False
    for c in base.commands:
        excl = draw(st.sampled_from([None, None, c.process, *procs]))
        flags = frozenset({"timeout"}) if draw(st.integers(0, 5)) == 0 else c.flags
        asserts = ()
        if draw(st.integers(0, 3)) == 0:
            asserts = (("a", _atom(draw, data)),)
            asserted = True
        errors = ()
        if draw(st.integers(0, 5)) == 0:
            errors = ((op("==", draw(st.sampled_from(data)), draw(st.sampled_from(data))), "boom"),)
        cmds.append(replace(c, exclusive=excl, flags=flags, asserts=asserts, errors=errors))
    props = list(base.properties)
    if asserted:
        props.append(Property("a", "assert", TRUE))
    system = base.with_(commands=tuple(cmds), properties=tuple(props))
    domain = draw(st.sampled_from(DOMAINS))
    names = [v.name for v in data]
    chosen = draw(st.lists(st.sampled_from(names), min_size=1, max_size=2, unique=True))
    return system, TypesOptions(parse_bindings([f"{v}={domain}" for v in chosen]))


def test_abstraction_of_promela_fields_never_contradicts_exact_search() -> None:
    """5 random systems in CI (60 under ``-m slow``); among the answers are proofs and
    replayed violations (the run cannot pass vacuously)."""
    SEEN.clear()
    run_examples(_never_contradicts, promela_like(), 5)
    assert SEEN[Verdict.HOLDS] >= 3 and SEEN[Verdict.VIOLATED] >= 3, SEEN


@pytest.mark.slow
def test_abstraction_of_promela_fields_never_contradicts_exact_search_60() -> None:
    SEEN.clear()
    run_examples(_never_contradicts, promela_like(), 60)
    assert SEEN[Verdict.HOLDS] >= 10 and SEEN[Verdict.VIOLATED] >= 10, SEEN


#: the verdicts the agreement runs gave (checked at their end)
SEEN: Counter[Verdict] = Counter()


def _never_contradicts(case: tuple[System, TypesOptions]) -> None:
    system, types = case
    exact = {
        r.property: r.verdict for r in check_explicit(system, CheckOptions(keep_going=True)).results
    }
    assert Verdict.UNKNOWN not in exact.values()
    # over-approximation: the abstraction of every stored concrete state is an abstract state
    abstraction = build_abstraction(system, types, LIBRARY)
    concrete, abstract = ExactStore(), ExactStore()
    search(compile_system(system, ()), concrete, keep_going=True, check_deadlock=False)
    search(compile_system(abstraction.system, ()), abstract, keep_going=True, check_deadlock=False)
    for state in concrete.states:
        assert abstraction.abstract_state(state) in abstract.states
    result = check_types(system, CheckOptions(), types, LIBRARY)
    for r in result.results:
        SEEN[r.verdict] += 1
        if r.verdict is Verdict.HOLDS:
            assert exact[r.property] is Verdict.HOLDS, (r.property, types)
        elif r.verdict is Verdict.VIOLATED:
            assert exact[r.property] is Verdict.VIOLATED, (r.property, types)
            assert r.trace is not None and r.trace.replayed
            last = r.trace.steps[-1].state
            if r.property == "bad":
                state = tuple(int(last[v.name]) for v in system.variables)
                assert evaluate(system.get_property("bad").expr, env_of(system, state))
            elif r.property in ("a", "no-model-error"):
                assert r.trace.note is not None  # the failing command comes next
        else:
            assert r.reason
