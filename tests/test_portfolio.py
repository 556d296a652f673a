"""``--method auto`` (issue 15, item 1): the portfolio of registered engines in processes, the
soundness rule (holds only from a prover, violated only with a trace replayed again in the
portfolio's process, a disagreement is an internal error), limits and Ctrl-C."""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import pickle
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from absmc.engines import registry
from absmc.engines.engine import AnyEngine, Capabilities, Engine
from absmc.engines.portfolio import Disagreement, PortfolioOptions, check_portfolio
from absmc.engines.portfolio import check as portfolio_check
from absmc.engines.portfolio.workers import Pool
from absmc.ir.system import System
from absmc.kernel.run.options import CheckOptions, Limits
from absmc.kernel.run.result import PropertyResult, Result, Stats, Verdict
from absmc.lang.loader import load_model
from tests.conftest import GCL_EXAMPLES, ROOT, GarbageCycle, run_cli

BUGGY = """
var x : 0..5;
process P { x < 5 -> x := x + 1; }
invariant small: x < 3;
"""


def _liar_check(system: System, options: CheckOptions, _own: object) -> Result:
    """A faulty engine: claims a proof of every user property (wrongly, for ``small``)."""
    stats = Stats(time_s=0.0)
    results = [
        PropertyResult(p.name, p.kind, "liar", Verdict.HOLDS, "trust me", stats)
        for p in system.properties
    ]
    return Result(system.name, "liar", results)


#: an infinite state space without a violation: only a limit or Ctrl-C ends a search of it
ENDLESS = """
var x, y : int;
process P { true -> y := y + 2 * x + 1, x := x + 1; }
// y == x*x: no linear invariant (pdr, kind, symbolic) proves y != 1000001
invariant not_hit: y != 1000001;
"""

#: starts before every registered engine when the portfolio runs one process at a time
LIAR: AnyEngine = Engine(
    "liar", PortfolioOptions, Capabilities(start_rank=-1), "a faulty engine", _liar_check
)


@pytest.fixture
def buggy(tmp_path: Path) -> Path:
    path = tmp_path / "buggy.gcl"
    path.write_text(BUGGY, encoding="utf-8")
    return path


@pytest.fixture
def endless(tmp_path: Path) -> Path:
    path = tmp_path / "endless.gcl"
    path.write_text(ENDLESS, encoding="utf-8")
    return path


def _no_children() -> list[int]:
    """Processes whose parent is this one (none should be left after a portfolio run)."""
    return _children_of(os.getpid())


def _children_of(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    me = str(pid)
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[1] == me:
                out.append(int(d.name))
    return out


def test_auto_proves_and_names_the_deciding_method() -> None:
    r = run_cli("check", str(GCL_EXAMPLES / "peterson.gcl"), "--method", "auto", "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert data["method"] == "auto" and data["verdict"] == "holds"
    for res in data["results"]:
        assert res["verdict"] == "holds"
        decider = res["decided_by"]
        assert registry.get(decider).capabilities.proves
        assert res["methods"][decider]["role"] == "decided"
        # types needs bindings: it sat out, and says why
        assert res["methods"]["types"]["reason"].startswith("sat out: no variable bindings")
    assert _no_children() == []


def test_auto_finds_the_bug_with_a_replayed_trace(buggy: Path) -> None:
    r = run_cli("check", str(buggy), "--method", "auto", "--json")
    assert r.code == 1, r.err
    res = {x["property"]: x for x in json.loads(r.out)["results"]}
    assert res["small"]["verdict"] == "violated"
    assert res["small"]["trace"][-1]["state"]["x"] == 3
    assert res["small"]["methods"][res["small"]["decided_by"]]["role"] == "decided"
    text = run_cli("check", str(buggy), "--method", "auto")
    assert "small (invariant): violated" in text.out
    assert "types: sat out: no variable bindings given" in text.out


def test_results_survive_pickling(buggy: Path) -> None:
    result = registry.run("explicit", load_model(buggy), CheckOptions())
    again = pickle.loads(pickle.dumps(result))
    assert again == result
    assert again.results[0].trace is not None
    assert [s.command_index for s in again.results[0].trace.steps][1:] == [0, 0, 0]


def test_a_faulty_engine_is_an_internal_error_never_a_vote(buggy: Path) -> None:
    system = load_model(buggy)
    with pytest.raises(Disagreement) as info:
        # one process at a time, the liar first: its "holds" is accepted, then explicit's
        # replayed counterexample contradicts it
        check_portfolio(
            system, CheckOptions(), PortfolioOptions(workers=1), [LIAR, registry.get("explicit")]
        )
    assert info.value.property == "small"
    assert info.value.holds.method == "liar" and info.value.violated.method == "explicit"
    assert _no_children() == []


def test_disagreement_exits_4_with_both_answers(
    buggy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = portfolio_check.check_portfolio

    def with_liar(
        system: System,
        options: CheckOptions,
        own: PortfolioOptions,
        members: Sequence[Engine[object]],
    ) -> Result:
        return real(system, options, dataclasses.replace(own, workers=1), [LIAR, *members])

    monkeypatch.setattr(portfolio_check, "check_portfolio", with_liar)
    r = run_cli("check", str(buggy), "--method", "auto")
    assert r.code == 4
    assert "engines disagree on 'small': liar proves it holds" in r.err
    assert "counterexample for 'small'" in r.err  # the other answer's trace is shown
    j = run_cli("check", str(buggy), "--method", "auto", "--json")
    error = json.loads(j.out)
    assert j.code == error["exit_code"] == 4 and "engines disagree" in error["error"]


def test_a_trace_that_does_not_replay_is_not_accepted(buggy: Path) -> None:
    system = load_model(buggy)
    good = registry.run("explicit", system, CheckOptions())
    bad = good.results[0]
    assert bad.trace is not None
    steps = list(bad.trace.steps)
    steps[-1] = dataclasses.replace(steps[-1], state={"x": 4})
    forged = dataclasses.replace(bad, trace=dataclasses.replace(bad.trace, steps=steps))

    def forger(system: System, options: CheckOptions, _own: object) -> Result:
        return Result(system.name, "explicit", [dataclasses.replace(forged, method="forger")])

    fake: AnyEngine = Engine("forger", PortfolioOptions, Capabilities(), "forges traces", forger)
    result = check_portfolio(system, CheckOptions(properties=["small"]), PortfolioOptions(), [fake])
    small = result.results[0]
    assert small.verdict is Verdict.UNKNOWN
    assert "does not replay" in small.extra["methods"]["forger"]["rejected"]


def test_timeout_ends_with_unknown_and_no_processes_left(endless: Path) -> None:
    t0 = time.monotonic()
    r = run_cli(
        "check",
        str(endless),
        "--method",
        "auto",
        "--timeout",
        "1",
        "--workers",  # every member at once: the exploring ones report partial statistics
        "8",
        "--json",
    )
    elapsed = time.monotonic() - t0
    assert r.code == 3, r.err
    data = json.loads(r.out)
    res = {x["property"]: x for x in data["results"]}
    assert res["not_hit"]["verdict"] == "unknown"
    assert res["not_hit"]["stats"]["states"] > 0  # partial statistics of a member
    # the members search forever without the limit; generous for a loaded machine
    assert elapsed < 1 + portfolio_check.GRACE_S + 30
    assert _no_children() == []


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_ctrl_c_ends_the_portfolio_without_orphans(endless: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "absmc.cli",
            "check",
            str(endless),
            "--method",
            "auto",
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    # wait until the members run (loading can take long on a busy machine)
    deadline = time.monotonic() + 60
    while not _children_of(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _children_of(proc.pid), "the portfolio started no member process"
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole process group
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    assert proc.returncode == 3, err
    data = json.loads(out)
    assert data["verdict"] == "unknown"
    assert any("interrupted" in n for n in data["notes"])
    # the members end soon after the portfolio (later on a busy machine); an orphan never does
    deadline = time.monotonic() + 30
    left = _group_members(proc.pid)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = _group_members(proc.pid)
    assert left == []


def _sleeping_member(*args: object) -> None:
    time.sleep(120)  # a member that never answers (ended by Pool.stop)


def test_a_ctrl_c_that_cuts_a_member_start_short_still_stops_that_member(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Pool.start blocks SIGINT only in its own thread: a Ctrl-C delivered to another thread
    raises KeyboardInterrupt in the main thread anywhere in ``Process.start()``, after the
    fork. Before, that member was missing from ``Pool.running``: ``stop()`` left it running
    and multiprocessing's exit handler waited for it forever (the portfolio never ended)."""
    import multiprocessing.process

    from absmc.engines.portfolio import workers

    monkeypatch.setattr(workers, "_member", _sleeping_member)
    start = multiprocessing.process.BaseProcess.start

    def start_then_ctrl_c(self: multiprocessing.process.BaseProcess) -> None:
        start(self)  # forked and registered with multiprocessing
        raise KeyboardInterrupt  # the Ctrl-C handled at the end of start()

    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", start_then_ctrl_c)
    model = tmp_path / "endless.gcl"
    model.write_text(ENDLESS, encoding="utf-8")
    system = load_model(model)
    engine = registry.get("explicit")
    forked = []
    try:
        with Pool() as pool, pytest.raises(KeyboardInterrupt):
            pool.start(engine, system, CheckOptions(), None)
        forked = [c for c in multiprocessing.active_children() if c.name == "absmc-explicit"]
        assert forked == []  # stopped and joined by the pool, not left to the exit handler
    finally:
        for c in multiprocessing.active_children():
            if c.name == "absmc-explicit":
                c.kill()
                c.join()


def _group_members(pgid: int) -> list[str]:
    """The processes of process group ``pgid`` (from /proc)."""
    left = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[2] == str(pgid):  # same process group
                left.append(d.name)
    return left


def test_members_start_from_every_state_of_an_init_constraint(tmp_path: Path) -> None:
    """A member that reads only declared initial values runs once per initial state, as the
    registry runs it (before: explicit searched from x = 0 only and claimed holds)."""
    model = tmp_path / "init.gcl"
    model.write_text(
        "var x : 0..3;\ninit: x >= 2;\n"
        "process P { x > 0 -> x := x - 1; }\ninvariant never3: x != 3;\n"
    )
    r = run_cli("check", str(model), "--method", "auto", "--timeout", "60", "--json")
    assert r.code == 1, r.err
    first = {x["property"]: x for x in json.loads(r.out)["results"]}["never3"]
    assert first["verdict"] == "violated"
    assert first["trace"][0]["state"]["x"] == 3


LTL_EXAMPLES = ROOT / "examples" / "ltl"


@pytest.mark.parametrize(
    "model", ["abs_counter.gcl", "naive_mutex.pml", "response.pml", "never_response.pml"]
)
def test_auto_checks_linear_time_properties_as_explicit_does(model: str) -> None:
    system = load_model(LTL_EXAMPLES / model)
    names = [p.name for p in system.ltl if p.name != "non-progress"]
    assert names
    for fair in ("none", "weak"):
        opts = CheckOptions(fairness=fair)
        exact = {r.property: r.verdict for r in registry.run("explicit", system, opts).results}
        auto = registry.run("auto", system, dataclasses.replace(opts, keep_going=True))
        mine = {r.property: r for r in auto.results}
        for name in names:
            assert (name, fair, mine[name].verdict) == (name, fair, exact[name])
            if mine[name].verdict is Verdict.VIOLATED:
                trace = mine[name].trace
                assert trace is not None and trace.replayed and trace.cycle_start is not None


def test_auto_checks_ctl_properties() -> None:
    system = load_model(ROOT / "examples" / "symbolic" / "ticket2_bug.gcl")
    names = [p.name for p in system.ctl]
    assert names
    # past the first violation: the members that start later (symbolic) answer the others
    opts = CheckOptions(keep_going=True, limits=Limits(timeout=60))
    auto = {r.property: r for r in registry.run("auto", system, opts).results}
    sym = registry.run("symbolic", system, CheckOptions()).results
    for r in sym:
        if r.property in names and r.verdict is not Verdict.UNKNOWN:
            assert auto[r.property].verdict is r.verdict


def test_a_lasso_the_negated_property_does_not_accept_is_not_accepted() -> None:
    """A real lasso of the model, offered as the counterexample of a property it does not
    violate, is rejected: the automaton of the negation accepts no run of it."""
    system = load_model(LTL_EXAMPLES / "abs_counter.gcl")
    good = registry.run("explicit", system, CheckOptions(properties=["back"]))
    back = next(r for r in good.results if r.property == "back")
    assert back.verdict is Verdict.VIOLATED and back.trace is not None
    forged = dataclasses.replace(back, property="range", method="forger")

    def forger(system: System, options: CheckOptions, _own: object) -> Result:
        return Result(system.name, "forger", [forged])

    caps = Capabilities(property_kinds=frozenset({"ltl"}))
    fake: AnyEngine = Engine("forger", PortfolioOptions, caps, "forges lassos", forger)
    opts = CheckOptions(properties=["range"])
    result = check_portfolio(system, opts, PortfolioOptions(), [fake])
    rng = next(r for r in result.results if r.property == "range")
    assert rng.verdict is Verdict.UNKNOWN
    assert "accepts no run" in rng.extra["methods"]["forger"]["rejected"]


def _collecting_check(system: System, options: CheckOptions, _own: object) -> Result:
    """An engine that runs a full collection of the cycle collector, then knows nothing."""
    gc.collect()
    stats = Stats(time_s=0.0)
    results = [
        PropertyResult(p.name, p.kind, "collector", Verdict.UNKNOWN, "collected", stats)
        for p in system.properties
    ]
    return Result(system.name, "collector", results)


COLLECTOR: AnyEngine = Engine(
    "collector", PortfolioOptions, Capabilities(), "collects garbage", _collecting_check
)


@pytest.mark.skipif(
    sys.platform == "win32" or sys.platform == "darwin", reason="members are forked on Linux"
)
def test_a_member_leaves_its_parents_garbage_to_the_parent(buggy: Path, tmp_path: Path) -> None:
    """A forked member never frees the objects it inherits (each member freed them again: a
    z3 context in a cycle, left by an earlier check, took seconds in every member)."""
    log = tmp_path / "deleted"
    system = load_model(buggy)
    gc.disable()  # the cycle is garbage, not yet collected, when the member forks
    try:
        GarbageCycle(log)
        with Pool() as pool:
            pool.start(COLLECTOR, system, CheckOptions(), PortfolioOptions())
            reports = list(pool.reports(time.monotonic() + 120))
        freed_before = log.exists()
    finally:
        gc.enable()
    assert [(r.engine, r.error) for r in reports] == [("collector", None)]
    assert not freed_before  # the member's full collection did not free it
    gc.collect()
    assert log.read_text().split() == [str(os.getpid())]
