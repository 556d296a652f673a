"""Four-valued abstraction (paper 004, Bonsai): partial abstraction, the Lamport and Fischer
demonstrations of §4 at growing bounds, bugs found by the must-abstraction, too-weak
predicates, model errors, and exact agreement when nothing is abstracted."""

from __future__ import annotations

import pytest

from absmc.engines.explicit import check_explicit
from absmc.engines.fourvalued import check_fourvalued
from absmc.engines.fourvalued.build import build_abstraction
from absmc.ir import Command, ModelError, Process, Property, RangeSort, System, Var, Variable
from absmc.ir.expr import conj, const, op
from absmc.kernel.run.options import CheckOptions, Limits
from absmc.kernel.run.result import Result, Verdict
from absmc.lang.gcl import parse_gcl, parse_gcl_expr, parse_gcl_file
from absmc.logic import Prover

from .conftest import GCL_EXAMPLES
from .fourvalued_helpers import reexecute, with_initial

#: the (bound, model) pairs CI runs of the bound sweep of §4: lamport at the extreme bounds;
#: fischer's value t (~25 s of a loaded 2-core machine at any bound) is in CI at bound 8
#: (test_exact_search_agrees_at_a_small_bound) and at 2**12 in Promela
#: (test_fourvalued_promela.py), its abstract state counts at every bound under -m slow
CI_BOUNDS = {(12, "lamport"), (24, "lamport")}


def values(result: Result) -> dict[str, str]:
    return {r.property: r.extra["value"] for r in result.results}


def scaled(name: str, log2: int) -> System:
    return with_initial(parse_gcl_file(GCL_EXAMPLES / f"{name}.gcl"), "MAX", 2**log2)


def preds(system: System, *texts: str) -> list:
    return [parse_gcl_expr(t, system) for t in texts]


# -- partial abstraction -------------------------------------------------------------------
def test_lamport_abstracts_tickets_and_bound_and_keeps_control() -> None:
    s = parse_gcl_file(GCL_EXAMPLES / "lamport.gcl")
    a = build_abstraction(s, s.properties, deadlock=True)
    roles = {r.name: r for r in a.partition.roles}
    assert a.partition.abstracted == {"n1", "n2", "MAX"}
    assert roles["c1"].reason == "no predicate mentions it"
    assert "mentioned by predicate" in roles["n1"].reason
    # the abstract Systems hold the concrete variables and one variable per predicate
    names = [v.name for v in a.may.system.variables]
    assert names[:4] == ["c1", "c2", "pc1", "pc2"] and len(names) == 4 + 8
    assert "p4_n1_lt_n2" in names
    assert [v.sort.hi for v in a.must.system.variables[4:]] == [2] * 8  # 0, 1, unknown


def test_taint_keeps_variables_that_flow_into_concrete_ones() -> None:
    s = parse_gcl(
        """
        var x, y, z : int; var pc : 0..1;
        process P {
          pc == 0 -> y := x + 1, z := z + 1, pc := 1;
          pc == 1 && x < 3 -> x := x + 1, pc := 0;
        }
        predicate x > 0; predicate z > 0;
        invariant ok: z >= 0;
        """,
        "taint.gcl",
    )
    a = build_abstraction(s, s.properties, deadlock=True)
    roles = {r.name: r for r in a.partition.roles}
    assert a.partition.abstracted == {"z"}
    assert roles["x"].reason == "flows into concrete variable y (taint.gcl:4)"
    assert roles["y"].reason == "no predicate mentions it"
    # the untracked predicate is reported; the property atom became a tracked predicate
    assert [p.text for p in a.partition.predicates] == ["z > 0", "z >= 0"]
    assert a.partition.predicates[1].origin == "atom of property ok"
    assert "not tracked" in a.partition.report()[-1]
    r = check_fourvalued(s, CheckOptions())
    assert values(r)["ok"] == "t"


def test_unbounded_concrete_variables_are_not_mixed_with_abstract_ones() -> None:
    s = parse_gcl(
        """
        var x, y : int; var pc : 0..1;
        process P { pc == 0 && x < y -> x := x + 1; }
        predicate x > 0;
        """,
        "mix.gcl",
    )
    a = build_abstraction(s, s.properties, deadlock=True)
    assert a.partition.abstracted == frozenset()
    reason = {r.name: r.reason for r in a.partition.roles}["x"]
    assert reason == "occurs with unbounded concrete variable y in x < y (mix.gcl:3)"


def test_bounded_concrete_variables_next_to_abstract_ones_are_enumerated() -> None:
    # the "array index" case of §3.3: i stays concrete, its values are enumerated
    s = parse_gcl(
        """
        var x : int = 0; var i : 0..3;
        process P {
          i < 3 -> i := i + 1;
          x < i -> x := x + 1;
          i == 3 -> skip;
        }
        predicate x < i; predicate x <= 3;
        invariant bounded: x <= 3;
        """,
        "index.gcl",
    )
    a = build_abstraction(s, s.properties, deadlock=True)
    assert a.partition.abstracted == {"x"}
    assert {r.name: r.reason for r in a.partition.roles}["i"].startswith("bounded (range 0..3)")
    incr = a.tables[0]
    assert incr is not None and [str(t) for t in incr.ctx] == [f"i == {k}" for k in range(4)]
    r = check_fourvalued(s, CheckOptions())
    assert values(r) == {"bounded": "t", "no-deadlock": "t", "no-model-error": "t"}


def test_a_predicate_that_can_divide_by_zero_is_rejected_with_its_location() -> None:
    s = parse_gcl("var x, y : int;\nprocess P { true -> skip; }\npredicate x / y > 1;\n", "d.gcl")
    with pytest.raises(ModelError) as err:
        build_abstraction(s, s.properties, deadlock=True)
    assert err.value.render().startswith("d.gcl:3:11: error: predicate x / y > 1 may divide")


def test_one_enumeration_per_abstracted_command_shared_by_both_abstractions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[int] = []
    real = Prover.all_models

    def counting(self: Prover, *args: object, **kw: object) -> object:
        calls.append(1)
        return real(self, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(Prover, "all_models", counting)
    s = parse_gcl_file(GCL_EXAMPLES / "lamport.gcl")
    a = build_abstraction(s, s.properties, deadlock=True)
    assert a.stats.abstracted_commands == 8 and a.stats.copied_commands == 8
    assert len(calls) == a.stats.enumerations == 8
    assert a.stats.checks == a.stats.models + a.stats.enumerations  # one final unsat each
    # every abstracted command has may commands and at most one must command
    for ci, table in enumerate(a.tables):
        if table is None:
            continue
        assert a.may.origin.count(ci) >= 1
        assert a.must.origin.count(ci) <= 1


# -- §4: value t at every bound, same abstract state counts, flat time -------------------------
@pytest.mark.parametrize(
    ("name", "log2"),
    [
        # lamport at the extreme bounds in CI, the ones between under -m slow; fischer (~25-40 s
        # each on a loaded 2-core machine) under -m slow
        *(
            pytest.param(name, b, marks=[] if (b, name) in CI_BOUNDS else pytest.mark.slow)
            for name in ("lamport", "fischer")
            for b in (12, 16, 20, 24)
        ),
    ],
)
def test_mutual_exclusion_is_t_at_every_bound(name: str, log2: int) -> None:
    r = check_fourvalued(scaled(name, log2), CheckOptions())
    assert values(r) == {"mutex": "t", "no-deadlock": "t", "no-model-error": "t"}
    assert r.verdict is Verdict.HOLDS
    extra = r.results[0].stats.extra
    expected = {"lamport": (96, 20), "fischer": (192, 81)}[name]
    assert (extra["may_states"], extra["must_states"]) == expected


@pytest.mark.parametrize("name", ["lamport", "fischer"])
def test_exact_search_agrees_at_a_small_bound(name: str) -> None:
    small = scaled(name, 3)
    exact = check_explicit(small, CheckOptions(keep_going=True))
    assert exact.verdict is Verdict.HOLDS
    assert values(check_fourvalued(small, CheckOptions()))["mutex"] == "t"


@pytest.mark.parametrize("log2", [12, pytest.param(24, marks=pytest.mark.slow)])
def test_buggy_fischer_is_f_with_a_concrete_replayed_trace(log2: int) -> None:
    s = scaled("fischer_buggy", log2)
    r = check_fourvalued(s, CheckOptions())
    mutex = r.results[0]
    assert mutex.property == "mutex" and mutex.verdict is Verdict.VIOLATED
    assert mutex.extra == {"may": "violated", "must": "violated", "value": "f",
                           "confirmed_by": "must-system"}  # fmt: skip
    assert mutex.trace is not None and mutex.trace.replayed
    assert len(mutex.trace.steps) == 9
    last = mutex.trace.steps[-1].state
    assert (last["pc1"], last["pc2"], last["now"]) == (3, 3, 2)
    reexecute(s, mutex.trace, "mutex")
    assert values(r)["no-deadlock"] == "t"
    # exact search of a small instance agrees
    small = check_explicit(scaled("fischer_buggy", 3), CheckOptions())
    assert small.results[0].verdict is Verdict.VIOLATED


@pytest.mark.parametrize(
    ("name", "weak", "steps"),
    [
        ("lamport", ["n1 == 0", "n2 == 0", "0 < n1", "0 < n2", "n1 < MAX", "n2 < MAX"], 10),
        ("fischer", ["0 <= now", "now < d1", "now < d2", "now < MAX"], 8),
    ],
)
def test_too_weak_predicates_give_bottom_with_the_unconfirmed_may_trace(
    name: str, weak: list[str], steps: int
) -> None:
    s = scaled(name, 12)
    r = check_fourvalued(s, CheckOptions(), predicates=preds(s, *weak))
    mutex = r.results[0]
    assert mutex.verdict is Verdict.UNKNOWN
    assert {k: mutex.extra[k] for k in ("may", "must", "value")} == {
        "may": "violated",
        "must": "holds",
        "value": "⊥",
    }
    assert mutex.extra["unconfirmed"].endswith("is not enabled")
    trace = mutex.trace
    assert trace is not None and not trace.replayed and len(trace.steps) == steps + 1
    assert trace.note is not None and trace.note.startswith("unconfirmed")
    # the trace is over abstract states: concrete variables and predicate values
    last = trace.steps[-1].state
    cs = 5 if name == "lamport" else 3
    assert (last["pc1"], last["pc2"]) == (cs, cs)
    assert f"[{weak[1]}]" in last and "n1" not in last and "now" not in last


def test_infinite_state_bakery_is_proved_with_two_order_predicates() -> None:
    s = parse_gcl_file(GCL_EXAMPLES / "bakery.gcl")
    assert check_explicit(s, CheckOptions(limits=Limits(max_states=2000))).verdict is (
        Verdict.UNKNOWN
    )
    r = check_fourvalued(s, CheckOptions(), predicates=preds(s, "x < y", "y < x"))
    assert values(r) == {"mutex": "t", "no-deadlock": "t", "no-model-error": "t"}


# -- model errors ----------------------------------------------------------------------------
DIVISION = """
var x : int = 1; var pc : 0..3;
process P {
  pc == 0 -> x := x - 1, pc := 1;
  pc == 1 -> x := 10 / x, pc := 2;
  pc == 2 && x > 0 -> pc := pc + 2;
  pc == 2 -> skip;
}
"""


def test_division_by_an_abstracted_zero_is_f_with_the_failing_step() -> None:
    s = parse_gcl(DIVISION, "div.gcl")
    r = check_fourvalued(s, CheckOptions(), predicates=preds(s, "x == 0", "x == 1"))
    err = {x.property: x for x in r.results}["no-model-error"]
    assert err.extra["value"] == "f" and err.extra["confirmed_by"] == "must-system"
    assert err.trace is not None and len(err.trace.steps) == 2
    assert err.trace.note is not None and "division by zero" in err.trace.note
    reexecute(s, err.trace, "no-model-error")
    # with a predicate that cannot tell whether x is 0 the error stays possible only
    weak = check_fourvalued(s, CheckOptions(), predicates=preds(s, "x > 5"))
    bottom = {x.property: x for x in weak.results}["no-model-error"]
    assert bottom.extra["value"] in ("⊥", "f")
    assert bottom.extra["may"] == "violated" and bottom.extra["must"] == "holds"


def test_range_error_of_a_concrete_variable_in_an_abstracted_command() -> None:
    s = parse_gcl(DIVISION.replace("x := 10 / x", "x := x + 5"), "range.gcl")
    r = check_fourvalued(s, CheckOptions(), predicates=preds(s, "x > 0", "x == 0", "x == 1"))
    err = {x.property: x for x in r.results}["no-model-error"]
    assert err.extra["value"] == "f" and err.extra["confirmed_by"] == "must-system"
    assert err.trace is not None and "outside 0..3" in (err.trace.note or "")
    # with x > 0 alone the must-abstraction loses x after x := x - 1; the may-trace replays
    r = check_fourvalued(s, CheckOptions(), predicates=preds(s, "x > 0"))
    err = {x.property: x for x in r.results}["no-model-error"]
    assert err.extra == {"may": "violated", "must": "holds", "value": "f",
                         "confirmed_by": "may-trace"}  # fmt: skip
    reexecute(s, err.trace, "no-model-error")


# -- predicates = none: exact search -----------------------------------------------------------
EXAMPLES = ["peterson", "philosophers", "nonterminating", "rax", "bakery", "lamport", "fischer"]


@pytest.mark.parametrize("name", [*EXAMPLES, "fischer_buggy"])
def test_without_predicates_the_verdicts_are_those_of_exact_search(name: str) -> None:
    s = parse_gcl_file(GCL_EXAMPLES / f"{name}.gcl")
    if "MAX" in s.index_of:
        s = with_initial(s, "MAX", 6)
    limits = Limits(max_states=3000)
    exact = check_explicit(s, CheckOptions(keep_going=True, limits=limits))
    r = check_fourvalued(s, CheckOptions(limits=limits), predicates=())
    assert r.results[0].stats.extra["abstracted_variables"] == 0
    want = {"holds": "t", "violated": "f", "unknown": "⊥"}
    assert values(r) == {x.property: want[x.verdict.value] for x in exact.results}
    for x in r.results:
        if x.trace is not None:
            assert x.trace.replayed
            reexecute(s, x.trace, x.property)


@pytest.mark.parametrize(
    ("overflow", "expected"),
    [
        ("wrap", {"neg": "f", "no-deadlock": "t", "no-model-error": "t"}),
        ("error", {"neg": "t", "no-deadlock": "t", "no-model-error": "f"}),
    ],
)
def test_wide_ranges_are_abstracted_with_their_overflow_semantics(
    overflow: str, expected: dict[str, str]
) -> None:
    # Promela's int: a 32-bit range that wraps (or, here also, whose overflow is an error)
    wide = RangeSort(-(2**31), 2**31 - 1, overflow)  # type: ignore[arg-type]
    x, pc = Var("x", wide), Var("pc", RangeSort(0, 1))
    system = System(
        (Variable("x", wide, 2**31 - 1), Variable("pc", pc.var_sort, 0)),
        (Process("P"),),
        (
            Command("P", op("==", pc, const(0)), (("x", op("+", x, const(1))), ("pc", const(1)))),
            Command("P", op("==", pc, const(1)), ()),
        ),
        (Property("neg", "unreachable", conj([op("==", pc, const(1)), op("<", x, const(0))])),),
        (op("<", x, const(0)), op("==", x, const(2**31 - 1))),
        "wide",
    )
    r = check_fourvalued(system, CheckOptions())
    assert r.notes[0] == "abstracted: x (mentioned by predicate x < 0)"
    assert values(r) == expected
    exact = check_explicit(system, CheckOptions(keep_going=True))
    want = {"holds": "t", "violated": "f"}
    assert values(r) == {e.property: want[e.verdict.value] for e in exact.results}
    for res in r.results:
        if res.trace is not None:
            reexecute(system, res.trace, res.property)


GUARD_DIVISION = """
var x : int = 1; var y : 0..2 = Y; var pc : 0..2;
process P {
  pc == 0 && GUARD -> x := x - 1, pc := 1;
  pc == 0 && y < 2 -> y := y + 1;
  pc == 1 -> skip;
}
predicate x > 0;
"""


@pytest.mark.parametrize(
    ("guard", "y", "value"),
    [
        ("x > 0 && 10 / y > 1", 0, "f"),
        ("10 / y > 1 && x > 0", 0, "f"),
        ("x > 0 && 10 / y > 1", 1, "t"),
    ],
)
def test_a_guard_dividing_by_a_concrete_zero_keeps_its_evaluation_order(
    guard: str, y: int, value: str
) -> None:
    s = parse_gcl(GUARD_DIVISION.replace("GUARD", guard).replace("Y", str(y)), "g.gcl")
    r = check_fourvalued(s, CheckOptions())
    assert r.notes[0] == "abstracted: x (mentioned by predicate x > 0)"
    assert values(r)["no-model-error"] == value
    exact = check_explicit(s, CheckOptions(keep_going=True))
    assert exact.results[-1].verdict is (Verdict.VIOLATED if value == "f" else Verdict.HOLDS)
    err = r.results[-1]
    if err.trace is not None:
        reexecute(s, err.trace, "no-model-error")
