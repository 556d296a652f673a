"""The four-valued method against exact search on random finite systems (paper 004's soundness
claims): ``t`` only for properties that hold, ``f`` only with a trace that replays; with no
predicates (nothing abstracted) exactly the verdicts of exact search. The same for random
systems with Promela's semantics (atomic chains, timeout, assertions, error conditions) and for
corpus models with random predicates."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import absmc.engines.fourvalued.partition as partition_module
from absmc.engines.explicit import check_explicit
from absmc.engines.fourvalued import check_fourvalued
from absmc.engines.fourvalued.partition import abstractable
from absmc.ir import INT, Expr, Property, System
from absmc.ir.expr import TRUE, conj, conjuncts, const, op
from absmc.kernel.run.options import CheckOptions, Limits
from absmc.kernel.run.result import Verdict
from absmc.lang.loader import load_model

from .conftest import SHARED, run_examples
from .fourvalued_helpers import reexecute
from .strategies import _atom, finite_systems

SETTINGS = {
    "deadline": None,
    "derandomize": True,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}
#: outcomes seen by the agreement run (checked at its end so that it cannot pass vacuously)
SEEN: Counter[str] = Counter()


@st.composite
def systems_with_predicates(draw: st.DrawFn) -> tuple[System, list[Expr]]:
    system = draw(finite_systems())
    data = [v.ref() for v in system.variables if v.sort == INT]
    predicates = [_atom(draw, data) for _ in range(draw(st.integers(1, 4)))]
    return system, predicates


def _exact(system: System) -> dict[str, Verdict]:
    result = check_explicit(system, CheckOptions(keep_going=True))
    verdicts = {r.property: r.verdict for r in result.results}
    assert Verdict.UNKNOWN not in verdicts.values()  # the systems are finite
    return verdicts


def _agreement(case: tuple[System, list[Expr]]) -> None:
    system, predicates = case
    exact = _exact(system)
    result = check_fourvalued(system, CheckOptions(), predicates=predicates)
    abstracted = result.results[0].stats.extra["abstracted_variables"] > 0
    for r in result.results:
        value = r.extra["value"]
        SEEN[value] += 1
        if abstracted:
            SEEN[f"{value} with abstraction"] += 1
        if value == "t":
            assert exact[r.property] is Verdict.HOLDS, r.property
            assert r.verdict is Verdict.HOLDS
        elif value == "f":
            assert exact[r.property] is Verdict.VIOLATED, r.property
            assert r.verdict is Verdict.VIOLATED
            assert r.trace is not None and r.trace.replayed
            reexecute(system, r.trace, r.property)
            SEEN[f"f by {r.extra['confirmed_by']}"] += 1
            if abstracted:
                SEEN[f"f by {r.extra['confirmed_by']} with abstraction"] += 1
        else:
            assert value == "⊥" and r.verdict is Verdict.UNKNOWN
            # ⊥ comes with the may-trace, which does not replay
            assert r.extra["may"] == "violated" and r.trace is not None
            assert not r.trace.replayed


def test_t_is_never_wrong_and_f_always_replays() -> None:
    """15 random finite systems (200 under ``-m slow``), each with 1-4 random predicates over
    its data variables (derandomized: 22 t, 5 f by the must-system and 10 ⊥ with abstraction
    among them)."""
    SEEN.clear()
    run_examples(_agreement, systems_with_predicates(), 15)
    for key in ["t with abstraction", "f by must-system with abstraction", "⊥"]:
        assert SEEN[key] >= 3, SEEN


@pytest.mark.slow
def test_t_is_never_wrong_and_f_always_replays_200() -> None:
    SEEN.clear()
    run_examples(_agreement, systems_with_predicates(), 200)
    for key in ["t with abstraction", "f by must-system with abstraction", "⊥"]:
        assert SEEN[key] >= 10, SEEN


@settings(max_examples=60, **SETTINGS)  # type: ignore[call-overload]
@given(finite_systems())
def test_without_predicates_the_method_is_exact_search(system: System) -> None:
    exact = _exact(system)
    result = check_fourvalued(system, CheckOptions(), predicates=())
    want = {Verdict.HOLDS: "t", Verdict.VIOLATED: "f"}
    assert {r.property: r.extra["value"] for r in result.results} == {
        name: want[v] for name, v in exact.items()
    }
    assert all(r.extra.get("confirmed_by", "must-system") == "must-system" for r in result.results)


# -- Promela's semantics: exclusive chains, timeout, assertions, model-error conditions --------
@st.composite
def featured_systems(draw: st.DrawFn) -> tuple[System, list[Expr]]:
    """A random finite system whose commands may start atomic chains (``exclusive``), wait
    for ``timeout``, assert a condition over the data (property ``a``) or fail on an error
    condition tested before the guard, with 1-4 random predicates over the data."""
    system = draw(finite_systems())
    data = [v.ref() for v in system.variables if v.sort == INT]
    commands = []
    for c in system.commands:
        change: dict[str, object] = {}
        if draw(st.integers(0, 3)) == 0:
            change["exclusive"] = c.process
        if draw(st.integers(0, 5)) == 0:
            change["flags"] = frozenset({"timeout"})
        if draw(st.integers(0, 4)) == 0:
            change["asserts"] = (("a", _atom(draw, data)),)
        if draw(st.integers(0, 5)) == 0:
            at = conjuncts(c.guard)[0]  # the program counter test
            change["errors"] = ((conj([at, _atom(draw, data)]), "error"),)
        commands.append(replace(c, **change))  # type: ignore[arg-type]
    props = system.properties
    if any(c.asserts for c in commands):
        props += (Property("a", "assert", TRUE),)
    predicates = [_atom(draw, data) for _ in range(draw(st.integers(1, 4)))]
    return system.with_(commands=tuple(commands), properties=props), predicates


def _promela_agreement(case: tuple[System, list[Expr]]) -> None:
    system, predicates = case
    exact = _exact(system)
    result = check_fourvalued(system, CheckOptions(), predicates=predicates)
    abstracted = result.results[0].stats.extra["abstracted_variables"] > 0
    for r in result.results:
        value = r.extra["value"]
        SEEN[f"{value} with abstraction" if abstracted else value] += 1
        if value == "t":
            assert exact[r.property] is Verdict.HOLDS, r.property
        elif value == "f":
            assert exact[r.property] is Verdict.VIOLATED, r.property
            assert r.trace is not None and r.trace.replayed
            reexecute(system, r.trace, r.property)
    # without predicates, the general construction (timeout in the guards, deadlock as a
    # property, chains kept) is exact search; an atomic chain that loops forever leaves its
    # state without successor, a deadlock that only the built-in check sees (⊥ then)
    general = check_fourvalued(system, CheckOptions(), predicates=(), shortcut=False)
    for r in general.results:
        if r.extra["value"] == "⊥":
            assert r.property == "no-deadlock" and r.extra["undecided"] == "looping atomic chain"
            SEEN["looping chain"] += 1
        else:
            assert r.verdict is exact[r.property], r.property


def test_promela_features_t_is_never_wrong_and_f_always_replays() -> None:
    """6 random finite systems (120 under ``-m slow``) with atomic chains, timeout,
    assertions and error conditions; each kind of answer with abstraction among them."""
    SEEN.clear()
    run_examples(_promela_agreement, featured_systems(), 6)
    for key in ["t with abstraction", "f with abstraction", "⊥ with abstraction"]:
        assert SEEN[key] >= 3, SEEN


@pytest.mark.slow
def test_promela_features_t_is_never_wrong_and_f_always_replays_120() -> None:
    SEEN.clear()
    run_examples(_promela_agreement, featured_systems(), 120)
    for key in ["t with abstraction", "f with abstraction", "⊥ with abstraction"]:
        assert SEEN[key] >= 10, SEEN


CORPUS = SHARED / "benchmarks" / "promela"
#: small corpus models whose byte variables, taken as data, get random predicates
SMALL = ["abp.pml", "protocols.1.pm", "p117.pml", "peterson.pml", "phils.2.pm", "loops.pml",
         "telephony.1.pm", "test-04-gcd.sumo", "lamport.1.pm", "at.1.pm"]  # fmt: skip
SLOW_CORPUS = ("at.1.pm", "lamport.1.pm", "telephony.1.pm", "abp.pml")


@pytest.mark.parametrize(
    "name",
    # the four slowest (at, lamport; telephony and abp: 25-30 s each on a loaded 2-core
    # machine) only under -m slow
    [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_CORPUS else n for n in SMALL],
)
def test_corpus_models_with_a_random_data_predicate(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Byte variables count as data here (the enumeration limit is lowered to 4 values) and
    get random predicates: t never contradicts exact search, f always replays."""
    if not CORPUS.exists():
        pytest.skip("../shared/benchmarks/promela is not available")
    monkeypatch.setattr(partition_module, "ENUM_LIMIT", 4)
    system = load_model(CORPUS / name)
    exact = _exact(system)
    pcs = {p.pc for p in system.processes}
    data = [v.ref() for v in system.variables if v.name not in pcs and abstractable(v)]
    rng = random.Random(name)
    abstracted = 0
    for _ in range(5):
        predicates = [
            op(rng.choice(["<", "==", "<="]), rng.choice(data), const(rng.randint(0, 3)))
            if rng.random() < 0.6
            else op(rng.choice(["<", "=="]), rng.choice(data), rng.choice(data))
            for _ in range(rng.randint(1, 3))
        ]
        limits = Limits(max_states=100_000)
        result = check_fourvalued(system, CheckOptions(limits=limits), predicates=predicates)
        abstracted += result.results[0].stats.extra["abstracted_variables"]
        for r in result.results:
            if r.extra["value"] == "t":
                assert exact[r.property] is Verdict.HOLDS, (r.property, predicates)
            elif r.extra["value"] == "f":
                assert exact[r.property] is Verdict.VIOLATED, (r.property, predicates)
                assert r.trace is not None
                reexecute(system, r.trace, r.property)
    assert abstracted > 0  # some predicate set did abstract a variable
