"""How ``--method auto`` shares few cores among its members (issue 29, item 2): as many
member processes at once as ``--workers`` (default ``os.cpu_count()``), started cheap first
(k-induction and PDR before the searches on unbounded models, the exhaustive search first on
finite ones), and time slices so that a member that never ends does not keep the others from
running."""

from __future__ import annotations

import json
import time

import pytest

from absmc.engines import registry
from absmc.engines.engine import AnyEngine, Capabilities, Engine
from absmc.engines.portfolio import PortfolioOptions, check_portfolio, slices
from absmc.engines.portfolio.members import plan, start_order
from absmc.ir.system import System
from absmc.kernel.run.options import CheckOptions, Limits, select_properties
from absmc.kernel.run.result import PropertyResult, Result, Stats, Verdict
from absmc.lang.gcl.parser import parse_gcl
from absmc.lang.loader import load_model
from tests.conftest import EXAMPLES, run_cli
from tests.test_portfolio import _no_children

COUNTER = """
var x : 0..3;
process P { x < 3 -> x := x + 1; x == 3 -> x := 0; }
invariant small: x <= 3;
"""


def _order(system: System) -> list[str]:
    selection = select_properties(system, CheckOptions())
    names = [*selection.all_names(), *(p.name for p in selection.ctl)]
    members = plan(system, CheckOptions(), names, registry.MEMBERS, {})
    return [m.engine.name for m in start_order([m for m in members if m.runs], system)]


def test_cheap_members_start_first() -> None:
    unbounded = load_model(EXAMPLES / "symbolic" / "bakery4.gcl")
    order = _order(unbounded)
    assert order[:2] == ["kind", "pdr"] and order[-1] == "explicit"
    finite = parse_gcl(COUNTER, "counter.gcl")
    assert _order(finite)[0] == "explicit"


def _answer(system: System, options: CheckOptions, verdict: Verdict, who: str) -> Result:
    names = options.properties or []
    results = [
        PropertyResult(n, "invariant", who, verdict, f"{who} says so", Stats(time_s=0.0))
        for n in names
    ]
    return Result(system.name, who, results)


def _hog(system: System, options: CheckOptions, _own: object) -> Result:
    """Never ends by itself (it ignores its deadline): only the portfolio can stop it."""
    time.sleep(3600)
    return _answer(system, options, Verdict.UNKNOWN, "hog")


def _prover(system: System, options: CheckOptions, _own: object) -> Result:
    # a fake, but a truthful one: every property of COUNTER holds
    return _answer(system, options, Verdict.HOLDS, "prover")


def test_a_member_that_never_ends_does_not_keep_the_others_from_running(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(slices, "MIN_SLICE_S", 0.5)
    monkeypatch.setattr(slices, "SLICE_GRACE_S", 0.5)
    caps = Capabilities(property_kinds=frozenset({"invariant", "deadlock", "model-error"}))
    hog: AnyEngine = Engine("hog", PortfolioOptions, Capabilities(start_rank=0), "never ends", _hog)
    prover: AnyEngine = Engine("prover", PortfolioOptions, caps, "proves", _prover)
    system = parse_gcl(COUNTER, "counter.gcl")
    # one process at a time, the hog first: its slice is half of the 8 s, it is stopped
    # there and the prover runs
    opts = CheckOptions(limits=Limits(timeout=8))
    result = check_portfolio(system, opts, PortfolioOptions(workers=1), [hog, prover])
    assert [r.verdict for r in result.results] == [Verdict.HOLDS] * len(result.results)
    assert {r.extra["decided_by"] for r in result.results} == {"prover"}
    small = next(r for r in result.results if r.property == "small")
    assert small.extra["methods"]["hog"]["reason"] == "stopped at the end of its time slice"
    assert any("started in the order hog, prover" in n for n in result.notes)
    assert _no_children() == []


def test_workers_bounds_the_member_processes_and_is_reported() -> None:
    r = run_cli(
        "check",
        str(EXAMPLES / "gcl" / "peterson.gcl"),
        "--method",
        "auto",
        "--workers",
        "1",
        "--json",
    )
    assert r.code == 0, r.err
    data = json.loads(r.out)
    note = next(n for n in data["notes"] if n.startswith("portfolio:"))
    assert note.startswith("portfolio: 1 worker process at once, started in the order explicit")
    # one at a time, the exhaustive search first on this finite model: it decides everything
    # and the others never start
    for res in data["results"]:
        assert res["decided_by"] == "explicit"
        assert res["methods"]["kind"]["reason"] == "not started: every property was decided first"


def _early_then_hang(system: System, options: CheckOptions, _own: object) -> Result:
    """Decides every property at once (CheckOptions.decided), then never ends."""
    assert options.decided is not None
    for r in _answer(system, options, Verdict.HOLDS, "early").results:
        options.decided(r)
    time.sleep(3600)
    return _answer(system, options, Verdict.UNKNOWN, "early")


def test_a_member_s_early_answers_decide_before_it_ends() -> None:
    caps = Capabilities(
        property_kinds=frozenset({"invariant", "deadlock", "model-error"}), initial_sets=True
    )
    eng: AnyEngine = Engine("early", PortfolioOptions, caps, "answers early", _early_then_hang)
    system = parse_gcl(COUNTER, "counter.gcl")
    result = check_portfolio(
        system, CheckOptions(limits=Limits(timeout=600)), PortfolioOptions(workers=1), [eng]
    )
    # decided long before the time limit: the member's process is stopped once all are in
    assert [r.verdict for r in result.results] == [Verdict.HOLDS] * len(result.results)
    assert {r.extra["decided_by"] for r in result.results} == {"early"}
    assert any(n.startswith("early: stopped: every property was decided") for n in result.notes)
    assert _no_children() == []


def test_kind_reports_each_decided_property_early() -> None:
    seen: list[str] = []
    system = load_model(EXAMPLES / "symbolic" / "bakery2.gcl")
    opts = CheckOptions(decided=lambda r: seen.append(r.property), limits=Limits(timeout=60))
    res = registry.run("kind", system, opts)
    holds = [r.property for r in res.results if r.verdict is Verdict.HOLDS]
    assert holds == ["no-deadlock", "no-model-error", "mutex"]  # the model's order
    # each reported once, as decided; no-deadlock (seldom inductive) is checked last
    assert seen == ["no-model-error", "mutex", "no-deadlock"]
