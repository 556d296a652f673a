"""``-N NAME`` checks only that claim (SPIN's ``-N``), and without ``-N`` the product searches
decide the safety properties when one of them visited every reachable state (docs/ltl.md,
"What one product search checks")."""

from __future__ import annotations

from pathlib import Path

import pytest

from absmc.engines import registry
from absmc.ir.expr import Var, const, op
from absmc.ir.ltl import Ltl, LtlProperty, atom, mk_ltl
from absmc.ir.sorts import RangeSort
from absmc.ir.system import System
from absmc.kernel.ltl.ltl import automaton_of
from absmc.kernel.ltl.product import covers_every_state
from absmc.kernel.run.options import CheckOptions, Limits, select_properties
from absmc.kernel.run.result import PropertyResult, Result, Verdict
from absmc.lang.loader import load_model

from .conftest import ROOT
from .spin import compile_spin_ltl, run_pan_ltl

EXAMPLES = ROOT / "examples" / "ltl"

#: two counters up to TOP (a state space of about TOP^2 states), a process that fails an
#: assertion once a == TOP - 5 (if b == 7 then) and blocks for ever when a passes that value
#: (an invalid end state); ``eventually_done`` is violated by a short lasso (the DFS counts a up,
#: then b, then the counter ends and stutters), ``bounded`` holds
_COUNTERS = """
byte a, b;
bool done;
active proctype Count() {
  do
  :: a < TOP -> a++
  :: b < TOP -> b++
  :: a == TOP && b == TOP -> break
  od
}
active proctype Check() {
  (a == TOP - 5) -> assert(b != 7)
}
ltl eventually_done { <> done }
ltl bounded { [] (a <= TOP) }
"""


def _model(tmp_path: Path, top: int) -> Path:
    path = tmp_path / f"counters{top}.pml"
    path.write_text(_COUNTERS.replace("TOP", str(top)))
    return path


def _assertion(system: System) -> str:
    """The name of the model's one assertion."""
    (name,) = [p.name for p in system.properties if p.kind == "assert"]
    return name


def _by_name(result: Result) -> dict[str, PropertyResult]:
    return {r.property: r for r in result.results}


def test_claim_only_searches_the_product_not_the_whole_state_space(tmp_path: Path) -> None:
    system = load_model(_model(tmp_path, 255))
    result = registry.run("explicit", system, CheckOptions(ltl="eventually_done"))
    # only the claim: no safety result, though the model has an assertion and a deadlock
    assert [r.property for r in result.results] == ["eventually_done"]
    (r,) = result.results
    assert r.verdict is Verdict.VIOLATED and r.trace is not None and r.trace.replayed
    assert r.stats.states < 2_000
    # the safety search alone stores more than ten times as many states (it does not end here)
    names = select_properties(system, CheckOptions()).names()
    safety = registry.run(
        "explicit", system, CheckOptions(properties=names, limits=Limits(max_states=20_000))
    )
    assert all("state limit" in x.reason for x in safety.results)
    assert 10 * r.stats.states < 20_000


def test_claim_only_reports_assertions_met_in_the_product_as_spin_does(tmp_path: Path) -> None:
    model = _model(tmp_path, 15)
    system = load_model(model)
    assertion = _assertion(system)
    first = _by_name(registry.run("explicit", system, CheckOptions(ltl="bounded")))
    assert set(first) == {assertion, "bounded"}  # no deadlock check with a claim (SPIN's)
    failed = first[assertion]
    assert failed.verdict is Verdict.VIOLATED
    assert failed.trace is not None and failed.trace.replayed
    stopped = first["bounded"]
    assert stopped.verdict is Verdict.UNKNOWN
    assert f"first violation ({assertion})" in stopped.reason
    # SPIN's pan -a -N bounded stops at the same assertion
    compile_spin_ltl(model, tmp_path)
    spin = run_pan_ltl(tmp_path, "bounded", depth=100_000, log2_table=16)
    assert spin.errors == 1 and "assertion violated" in spin.output
    # --keep-going (SPIN's -e): the assertion and the claim's own verdict
    both = _by_name(registry.run("explicit", system, CheckOptions(ltl="bounded", keep_going=True)))
    assert both[assertion].verdict is Verdict.VIOLATED
    assert both["bounded"].verdict is Verdict.HOLDS
    fair = _by_name(
        registry.run(
            "explicit",
            system,
            CheckOptions(ltl="bounded", keep_going=True, fairness="weak"),
        )
    )
    assert fair[assertion].verdict is Verdict.VIOLATED
    assert fair["bounded"].verdict is Verdict.HOLDS


def test_default_run_decides_safety_in_a_product_that_covers_the_state_space(
    tmp_path: Path,
) -> None:
    system = load_model(_model(tmp_path, 15))
    assertion = _assertion(system)
    by = _by_name(registry.run("explicit", system))
    bounded = by["bounded"]
    assert bounded.verdict is Verdict.HOLDS
    assert by["eventually_done"].verdict is Verdict.VIOLATED
    for name in (assertion, "no-deadlock"):
        r = by[name]
        assert r.verdict is Verdict.VIOLATED
        assert r.trace is not None and r.trace.replayed
    error = by["no-model-error"]
    assert error.verdict is Verdict.HOLDS
    assert "ltl 'bounded'" in error.reason
    # decided by bounded's product search: no separate safety search ran
    assert error.stats.states == bounded.stats.states
    # the same verdicts as the safety search on its own
    names = select_properties(system, CheckOptions()).names()
    alone = registry.run("explicit", system, CheckOptions(properties=names, keep_going=True))
    assert {r.property: r.verdict for r in alone.results} == {n: by[n].verdict for n in names}


def test_default_run_without_a_covering_product_runs_the_safety_search(tmp_path: Path) -> None:
    path = tmp_path / "only_done.pml"
    path.write_text(_COUNTERS.replace("TOP", "15").replace("ltl bounded { [] (a <= 15) }", ""))
    system = load_model(path)
    by = _by_name(registry.run("explicit", system, CheckOptions(keep_going=True)))
    names = select_properties(system, CheckOptions()).names()
    alone = registry.run("explicit", system, CheckOptions(properties=names, keep_going=True))
    for r in alone.results:
        mine = by[r.property]
        assert mine.verdict is r.verdict
        assert mine.stats.states == r.stats.states


@pytest.mark.parametrize("model", sorted(EXAMPLES.glob("*.pml")), ids=lambda p: p.stem)
def test_default_run_safety_verdicts_equal_the_safety_search(model: Path) -> None:
    system = load_model(model)
    names = select_properties(system, CheckOptions()).names()
    by = _by_name(registry.run("explicit", system))
    alone = registry.run("explicit", system, CheckOptions(properties=names, keep_going=True))
    for r in alone.results:
        mine = by[r.property].verdict
        assert mine in (r.verdict, Verdict.UNKNOWN), r.property


def _x_is(v: int) -> Ltl:
    return atom(op("==", Var("x", RangeSort(0, 2)), const(v)))


@pytest.mark.parametrize(
    ("formula", "covers"),
    [
        (mk_ltl("[]", _x_is(0)), True),  # !G p: loops on true
        (mk_ltl("[]", mk_ltl("->", _x_is(0), mk_ltl("<>", _x_is(1)))), True),
        (mk_ltl("<>", _x_is(0)), False),  # !F p = G !p: follows only the states where !p
        (mk_ltl("->", _x_is(0), mk_ltl("<>", _x_is(1))), False),  # reads the first state
    ],
)
def test_which_automata_cover_every_state(formula: Ltl, covers: bool) -> None:
    aut = automaton_of(LtlProperty("p", formula))
    assert covers_every_state(aut) is covers


#: SPIN's Examples/LTL/petersonN.pml (Lynch's N-process Peterson), N = 4
_PETERSON_N = """
#define N 4
byte turn[N], flag[N];
byte ncrit;
active [N] proctype user()
{   byte j, k;
again:
    k = 0;
    do
    :: k < N-1 ->
        flag[_pid] = k;
        turn[k] = _pid;
        j = 0;
        do
        :: j == _pid -> j++
        :: j != _pid ->
            if
            :: j < N -> (flag[j] < k || turn[k] != _pid); j++
            :: j >= N -> break
            fi
        od;
        k++
    :: else -> break
    od;
    ncrit++;
cs: assert(ncrit == 1);
    ncrit--;
    flag[_pid] = 0;
    goto again
}
ltl bounded_bypass { user[1]@again -> <> user[1]@cs }
"""


def test_spins_step_order_finds_spins_short_lasso(tmp_path: Path) -> None:
    """SPIN's order (highest process first) and its early cycle check in the first search
    find petersonN's starvation lasso after a few hundred product states (pan: 172 for N = 4;
    lowest process first without the early check: 240,035)."""
    model = tmp_path / "petersonN.pml"
    model.write_text(_PETERSON_N)
    result = registry.run("explicit", load_model(model), CheckOptions(ltl="bounded_bypass"))
    (r,) = result.results
    assert r.verdict is Verdict.VIOLATED and r.trace is not None and r.trace.replayed
    assert r.stats.states < 2_000
    compile_spin_ltl(model, tmp_path)
    spin = run_pan_ltl(tmp_path, "bounded_bypass", depth=100_000, log2_table=18)
    assert spin.errors == 1 and spin.states < 2_000
