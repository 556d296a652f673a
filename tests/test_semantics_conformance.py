"""One conformance suite for every implementation of the kernel's ``Semantics`` protocol.

Each test is parametrized over the back ends (``BACKENDS``; a native back end joins by adding
one entry). They are checked against the independent oracles of ``absmc.ir.evaluate``
(``reference_steps``: stored successor states and failures of one search step, with timeout
and exclusive chains) and ``tests/reference.py`` (a naive reachability), and against each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from absmc.codegen.python import compile_system
from absmc.codegen.reference import ReferenceSemantics
from absmc.ir.evaluate import reference_steps
from absmc.ir.system import Property, System
from absmc.kernel.explore.search import search
from absmc.kernel.model.semantics import Semantics
from absmc.kernel.replay.trace import replay
from absmc.lang.gcl import parse_gcl_file
from absmc.native import NativeSemantics, native_available

from .conftest import GCL_EXAMPLES
from .reference import reference_explore
from .strategies import finite_systems

Backend = Callable[[System, "tuple[Property, ...] | None"], Semantics]

BACKENDS: dict[str, Backend] = {
    "compiled": lambda s, p: compile_system(s, p),
    "reference": lambda s, p: ReferenceSemantics(s, p),
}
if native_available():  # the C back end joins when a C compiler is present
    # -O0: a model compiles in ~0.3 s instead of ~0.8 s (the semantics are the same)
    BACKENDS["native"] = lambda s, p: NativeSemantics(s, p, opt="-O0")

#: back ends that cost a C compilation per random System: the property tests below run them on
#: fewer examples in CI (``NATIVE_EXAMPLES``) and on all under ``-m slow``
COMPILING = {"native"}
FAST = {k: v for k, v in BACKENDS.items() if k not in COMPILING}
SLOW = {k: v for k, v in BACKENDS.items() if k in COMPILING}


needs_native = pytest.mark.skipif(not SLOW, reason="no C compiler: no native back end")


@pytest.fixture(params=sorted(BACKENDS))
def backend(request: pytest.FixtureRequest) -> Backend:
    return BACKENDS[request.param]


def _with_chains_and_timeouts(base: System, data: st.DataObject) -> System:
    procs = [p.name for p in base.processes]
    cmds = []
    for c in base.commands:
        excl = data.draw(st.sampled_from([None, None, c.process, *procs]))
        tmo = data.draw(st.integers(0, 5)) == 0
        cmds.append(replace(c, exclusive=excl, flags=frozenset({"timeout"}) if tmo else c.flags))
    return base.with_(commands=tuple(cmds))


def _agree_with_oracle(backends: dict[str, Backend], base: System, data: st.DataObject) -> None:
    s = _with_chains_and_timeouts(base, data)
    ref = reference_explore(base, max_states=60)
    for make in backends.values():
        sem = make(s, None)
        for state in ref.states:
            steps, failures = sem.successors(state)
            want, want_failures = reference_steps(s, state)
            assert {t for _, t in steps} == want
            assert {(sem.commands_of(f.label)[0], f.property) for f in failures} == want_failures
            for label, t in steps:  # every step replays command by command
                cur = state
                for ci in sem.commands_of(label):
                    nxt, _ = sem.step(ci, cur)
                    assert nxt is not None
                    cur = nxt
                assert cur == t


# the Python back ends: a third of the examples in CI, all of them under -m slow
@settings(max_examples=40, deadline=None)
@given(finite_systems(), st.data())
def test_steps_and_failures_agree_with_the_reference_oracle(
    base: System, data: st.DataObject
) -> None:
    _agree_with_oracle(FAST, base, data)


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(finite_systems(), st.data())
def test_steps_and_failures_agree_with_the_reference_oracle_all(
    base: System, data: st.DataObject
) -> None:
    _agree_with_oracle(FAST, base, data)


def _agree_step_by_step(backends: dict[str, Backend], base: System, data: st.DataObject) -> None:
    """Same steps in the same order (as command sequences), same failures, same answers of
    ``ok``/``violated``/``valid_end`` in every reachable state."""
    s = _with_chains_and_timeouts(base, data)
    sems = [make(s, None) for make in {**FAST, **backends}.values()]
    ref = reference_explore(base, max_states=60)
    for state in ref.states:
        seen = []
        for sem in sems:
            steps, failures = sem.successors(state)
            seen.append(
                (
                    [(sem.commands_of(lab), t) for lab, t in steps],
                    sorted((sem.commands_of(f.label), f.property) for f in failures),
                    sem.ok(state),
                    sorted(sem.violated(state)),
                    sem.valid_end(state),
                )
            )
        assert all(x == seen[0] for x in seen[1:])


@settings(max_examples=20, deadline=None)
@given(finite_systems(), st.data())
def test_back_ends_agree_step_by_step(base: System, data: st.DataObject) -> None:
    _agree_step_by_step({}, base, data)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(finite_systems(), st.data())
def test_back_ends_agree_step_by_step_all(base: System, data: st.DataObject) -> None:
    _agree_step_by_step({}, base, data)


def _search_matches(backends: dict[str, Backend], system: System, _data: object) -> None:
    ref = reference_explore(system, max_states=300)
    if not ref.complete:
        return
    for make in backends.values():
        out = search(make(system, None), keep_going=True)
        assert out.states == len(ref.states)
        assert out.transitions == ref.transitions
        assert set(out.violations) == ref.violated | (
            {"no-deadlock"} if ref.deadlock else set()
        ) | ({"no-model-error"} if ref.model_error else set())


@settings(max_examples=40, deadline=None)
@given(finite_systems())
def test_search_over_each_back_end_matches_naive_reachability(system: System) -> None:
    _search_matches(FAST, system, None)


# the compiling back ends: a tenth of the examples in CI, all of them under -m slow
@needs_native
@settings(max_examples=12, deadline=None)
@given(finite_systems(), st.data())
def test_native_steps_and_failures_agree_with_the_reference_oracle(
    base: System, data: st.DataObject
) -> None:
    _agree_with_oracle(SLOW, base, data)


@needs_native
@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(finite_systems(), st.data())
def test_native_steps_and_failures_agree_with_the_reference_oracle_all(
    base: System, data: st.DataObject
) -> None:
    _agree_with_oracle(SLOW, base, data)


@needs_native
@settings(max_examples=8, deadline=None)
@given(finite_systems(), st.data())
def test_native_agrees_with_the_other_back_ends_step_by_step(
    base: System, data: st.DataObject
) -> None:
    _agree_step_by_step(SLOW, base, data)


@needs_native
@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(finite_systems(), st.data())
def test_native_agrees_with_the_other_back_ends_step_by_step_all(
    base: System, data: st.DataObject
) -> None:
    _agree_step_by_step(SLOW, base, data)


@needs_native
@settings(max_examples=6, deadline=None)
@given(finite_systems())
def test_search_over_native_matches_naive_reachability(system: System) -> None:
    _search_matches(SLOW, system, None)


@needs_native
@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(finite_systems())
def test_search_over_native_matches_naive_reachability_all(system: System) -> None:
    _search_matches(SLOW, system, None)


@pytest.mark.parametrize(("name", "states"), [("peterson", 20), ("philosophers", 35)])
def test_examples_state_counts_and_replayed_traces(
    backend: Backend, name: str, states: int
) -> None:
    system = parse_gcl_file(GCL_EXAMPLES / f"{name}.gcl")
    sem = backend(system, None)
    out = search(sem, keep_going=True)
    assert out.states == states
    for prop, v in out.violations.items():  # every first violation replays on this back end
        trace = replay(sem, prop, v.path)
        assert trace.replayed and len(trace.steps) == len(v.path) + 1


def test_a_property_selection_restricts_the_checks(backend: Backend) -> None:
    system = parse_gcl_file(GCL_EXAMPLES / "philosophers.gcl")
    chosen = system.properties[:1]
    sem = backend(system, chosen)
    assert [p.name for p in sem.properties] == [chosen[0].name]
    out = search(sem, keep_going=True, check_deadlock=False)
    assert set(out.violations) <= {chosen[0].name, "no-model-error"}
