"""Explicit CTL labelling (finite systems) and its replayed witnesses."""

from __future__ import annotations

from absmc.engines import registry
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import Verdict
from absmc.lang.gcl.parser import parse_gcl

MODEL = """
var x : 0..5; var pc : 0..2;
process P {
  pc == 0 && x < 5 -> x := x + 1;
  pc == 0 && x >= 2 -> pc := 1;
  pc == 1 -> pc := 2, x := 0;
}
ctl reach2: AG(pc == 0 => AF(pc == 2));
ctl ef: EF(pc == 2 && x == 0);
ctl ag: AG(x <= 4);
ctl au: A[pc == 0 U x == 1];
ctl dead_stays: AG(pc == 2 => AX(pc == 2 && x == 0));
ctl eg_dead: EG(pc != 1) ;
ctl af_fails: AF(pc == 1);
ctl ex_two: EX(EX(x == 2));
ctl nested: AG(EF(pc == 2));
"""


def _results() -> dict[str, object]:
    s = parse_gcl(MODEL, "m.gcl")
    res = registry.run("explicit", s, CheckOptions(check_deadlock=False))
    return {r.property: r for r in res.results if r.kind == "ctl"}


def test_labelling_verdicts() -> None:
    got = _results()
    from absmc.kernel.run.result import PropertyResult

    verdicts = {n: r.verdict for n, r in got.items() if isinstance(r, PropertyResult)}
    assert verdicts == {
        "reach2": Verdict.HOLDS,
        "ef": Verdict.HOLDS,
        "ag": Verdict.VIOLATED,
        "au": Verdict.HOLDS,
        "dead_stays": Verdict.HOLDS,
        # pc stays 0 while x counts up, but at x == 5 only pc := 1 is enabled: EG fails ...
        "eg_dead": Verdict.VIOLATED,
        # ... and for the same reason every run reaches pc == 1
        "af_fails": Verdict.HOLDS,
        "ex_two": Verdict.HOLDS,
        "nested": Verdict.HOLDS,
    }


def test_violation_witness_is_replayed_and_ends_in_the_bad_state() -> None:
    from absmc.kernel.run.result import PropertyResult

    ag = _results()["ag"]
    assert isinstance(ag, PropertyResult) and ag.trace is not None and ag.trace.replayed
    assert ag.trace.steps[-1].state["x"] == 5
    assert len(ag.trace.steps) == 6


def test_lasso_witness_for_af() -> None:
    s = parse_gcl(
        "var x : 0..1; var pc : 0..1;\nprocess P { pc == 0 -> x := 1 - x; pc == 0 -> pc := 1; }\n"
        "ctl live: AF(pc == 1);\n",
        "l.gcl",
    )
    res = registry.run("explicit", s, CheckOptions(check_deadlock=False))
    live = next(r for r in res.results if r.property == "live")
    assert live.verdict == Verdict.VIOLATED
    assert live.trace is not None and live.trace.note is not None
    assert "repeats" in live.trace.note or "loops" in live.trace.note
    assert all(st.state["pc"] == 0 for st in live.trace.steps)


def test_dead_end_witness_for_af() -> None:
    s = parse_gcl(
        "var pc : 0..2;\nprocess P { pc == 0 -> pc := 1; pc == 0 -> pc := 2; }\n"
        "ctl live: AF(pc == 2);\n",
        "d.gcl",
    )
    res = registry.run("explicit", s, CheckOptions(check_deadlock=False))
    live = next(r for r in res.results if r.property == "live")
    assert live.verdict == Verdict.VIOLATED
    assert live.trace is not None and live.trace.note is not None
    assert "no successor" in live.trace.note
    assert live.trace.steps[-1].state["pc"] == 1


def test_other_methods_skip_ctl_unless_named() -> None:
    import pytest

    from absmc.errors import CapabilityError

    s = parse_gcl(MODEL, "m.gcl")
    res = registry.run("under", s, CheckOptions(check_deadlock=False))
    assert all(r.kind != "ctl" for r in res.results)
    with pytest.raises(CapabilityError):
        registry.run("under", s, CheckOptions(properties=["ag"]))


def test_a_lasso_witness_after_a_prefix_closes() -> None:
    """EF(EG f): a path to the loop, then the loop; the witness's loop index counts the
    prefix's states (it was one short: 'the lasso does not close', seed 1192 of the symbolic
    agreement test)."""
    text = """
var x : 0..4;
var f : bool;
process P {
  x < 3 -> x := x + 1;
  x == 3 -> x := 4, f := true;
  x == 4 -> x := 3;
}
ctl c: !(EF(EG(f)));
"""
    system = parse_gcl(text, "prefix_loop.gcl")
    res = registry.run("explicit", system, CheckOptions(properties=["c"]))
    (c,) = [r for r in res.results if r.property == "c"]
    assert c.verdict is Verdict.VIOLATED
    assert c.trace is not None and c.trace.replayed
    assert [st.state["x"] for st in c.trace.steps] == [0, 1, 2, 3, 4, 3, 4]
    assert "repeats steps 5..." in (c.trace.note or "")
