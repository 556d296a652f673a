"""Selection help (paper 001, §5.1-5.2, Fig. 2) and the cone-of-influence slice."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from absmc.engines.explicit import check_explicit
from absmc.engines.typeabs.select import dependence, slice_system, suggest
from absmc.ir import System
from absmc.kernel.run.options import CheckOptions
from absmc.lang.gcl import parse_gcl, parse_gcl_file

from .conftest import GCL_EXAMPLES, run_cli
from .strategies import finite_systems

# Fig. 2: conditional 1 tests y % 2, conditional 2 tests even && z > 0 and controls x := x + 1
FIG2 = """
var x, y, z, w : int;
var even : bool;
var pc : 0..3;
process P {
  c1:    pc == 0 && y % 2 == 0 -> even := true, pc := 1;
  c1n:   pc == 0 && y % 2 != 0 -> pc := 1;
  c2:    pc == 1 && even && z > 0 -> x := x + 1, pc := 2;
  c2n:   pc == 1 && !(even && z > 0) -> pc := 2;
  other: pc == 2 -> w := w + 1, y := y + 1, z := z - 1, pc := 0;
}
invariant positive: x >= 0;
"""


def test_fig2_suggestions_follow_the_controlling_conditionals() -> None:
    system = parse_gcl(FIG2, "fig2.gcl")
    sg = suggest(system, system.get_property("positive"))
    assert sg.dependence.roots == ("x",)
    assert set(sg.dependence.relevant) == {"x", "y", "z", "even", "pc"}  # not w
    by_name = {c.name: c for c in sg.candidates}
    assert set(by_name) == {"x", "y", "z"}  # even stays a bool, pc is control
    assert by_name["y"].domain == "modulo(2)"
    assert by_name["z"].domain == "signs"
    assert by_name["x"].domain == "signs"  # x >= 0, x := x + 1 from 0
    assert by_name["x"].role == "in the property"
    assert (by_name["y"].occurrences, by_name["z"].occurrences) == (2, 2)
    assert dict(sg.bindings) == {"x": "signs", "y": "modulo(2)", "z": "signs"}
    assert sg.slice.removed_variables == ("w",)


def test_deos_suggestion_traces_the_copies_back_to_period_id() -> None:
    system = parse_gcl_file(GCL_EXAMPLES / "deos.gcl")
    sg = suggest(system, system.get_property("time_partitioning"))
    assert [c.name for c in sg.candidates[:2]] == ["cp", "last_exec"]
    assert sg.candidates[0].occurrences == 2 and sg.candidates[0].sources == ["period_id"]
    assert sg.bindings == [("period_id", "signs")]
    assert sg.slice.removed_variables == ("last_compl",)
    r = run_cli("abstract", str(GCL_EXAMPLES / "deos.gcl"), "--suggest", "time_partitioning")
    assert r.code == 0, r.err
    assert "suggested: --abstract period_id=signs" in r.out
    assert "removes last_compl" in r.out


def test_cli_slice_prints_a_model_and_inference_report() -> None:
    path = str(GCL_EXAMPLES / "deos.gcl")
    r = run_cli("abstract", path, "--slice", "time_partitioning")
    assert r.code == 0, r.err
    sliced = parse_gcl(r.out, "slice.gcl")
    assert "last_compl" not in sliced.by_name and len(sliced.commands) == 11
    r = run_cli("abstract", path, "--abstract", "period_id=signs")
    assert r.code == 0 and "last_exec  │ signs" in r.out
    r = run_cli("abstract", path, "--suggest", "nope")
    assert r.code == 2 and "no property 'nope'" in r.err
    r = run_cli("abstract", path)
    assert r.code == 2 and "--suggest PROPERTY" in r.err


def test_slice_keeps_updates_that_may_fail() -> None:
    system = parse_gcl(
        """
        var x, d, q : int;
        var pc : 0..1;
        process P { pc == 0 -> x := x + 1, q := 10 / d, pc := 1; }
        invariant small: x <= 1;
        """,
        "fail.gcl",
    )
    dep = dependence(system, system.properties, for_slice=True)
    assert {"d", "q"} <= set(dep.relevant)
    assert slice_system(system, system.properties).removed_variables == ()


@settings(max_examples=30, deadline=None)
@given(finite_systems())
def test_slice_preserves_the_property_verdict(system: System) -> None:
    """30 random systems in CI; 100 under ``-m slow``."""
    _slice_preserves_the_verdict(system)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(finite_systems())
def test_slice_preserves_the_property_verdict_100(system: System) -> None:
    _slice_preserves_the_verdict(system)


def _slice_preserves_the_verdict(system: System) -> None:
    prop = system.get_property("bad")
    sl = slice_system(system, [prop])
    options = CheckOptions(properties=["bad"], check_deadlock=False, keep_going=True)
    full = {r.property: r.verdict for r in check_explicit(system, options).results}
    cut = {r.property: r.verdict for r in check_explicit(sl.system, options).results}
    assert cut["bad"] is full["bad"]
    assert len(sl.system.variables) + len(sl.removed_variables) == len(system.variables)


def test_domains_suggested_from_comparisons() -> None:
    system = parse_gcl(
        """
        var x, m, r : int;
        var pc : 0..2;
        process P {
          pc == 0 && x == 0 -> x := x + 1, pc := 1;
          pc == 0 && x > 0 && m == 3 -> pc := 2;
          pc == 0 && m == 5 && r < 4 -> pc := 2;
          pc == 1 && r >= 1 -> x := x - 1, r := r + 1, pc := 0;
        }
        unreachable done: pc == 2;
        """,
        "suggest.gcl",
    )
    sg = suggest(system, system.get_property("done"))
    domains = {c.name: c.domain for c in sg.candidates}
    assert domains == {"x": "signs", "m": "set(3,5)", "r": "range(0,4)"}
    # x and m appear in two conditionals each, r in two as well: ties by name
    assert [c.occurrences for c in sg.candidates] == [2, 2, 2]
