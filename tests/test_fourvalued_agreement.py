"""The four-valued method against exact search on random finite systems (paper 004's soundness
claims): ``t`` only for properties that hold, ``f`` only with a trace that replays; with no
predicates (nothing abstracted) exactly the verdicts of exact search."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from absmc.engines.explicit import check_explicit
from absmc.engines.fourvalued import check_fourvalued
from absmc.engines.options import CheckOptions
from absmc.engines.result import Verdict
from absmc.ir import INT, Expr, System

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


@settings(max_examples=200, **SETTINGS)  # type: ignore[call-overload]
@given(systems_with_predicates())
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
    """200 random finite systems, each with 1-4 random predicates over its data variables."""
    SEEN.clear()
    _agreement()
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
