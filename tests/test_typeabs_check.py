"""``--method types`` end to end: abstract type inference, the abstract System with choose,
choose-free search with concrete replay, and the DEOS-shaped example (paper 001, §§5-8)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from absmc.engines.explicit import check_explicit
from absmc.engines.typeabs import CHOOSE, TypesOptions, build_abstraction, check_types, infer
from absmc.engines.typeabs.domains import modulo, point, signs
from absmc.ir import TRUE, Command, Expr, Var
from absmc.ir.sorts import INT
from absmc.ir.span import ModelError
from absmc.kernel.run.options import CheckOptions, Limits, OptionError
from absmc.kernel.run.result import PropertyResult, Result, Verdict
from absmc.lang.domains import parse_bindings
from absmc.lang.gcl import parse_gcl, parse_gcl_file

from .conftest import FIXTURES, GCL_EXAMPLES, run_cli

CONFLICT = FIXTURES / "typeabs" / "conflict.gcl"
DEOS = GCL_EXAMPLES / "deos.gcl"
DEOS_FIXED = GCL_EXAMPLES / "deos_fixed.gcl"
BIND = TypesOptions(parse_bindings(["period_id=signs"]))


def _by_name(result: Result) -> dict[str, PropertyResult]:
    return {r.property: r for r in result.results}


def test_deos_inference_makes_the_copies_signs() -> None:
    system = parse_gcl_file(DEOS)
    typing = infer(system, {"period_id": signs()})
    assert {v: str(d) for v, d in typing.domains.items()} == {
        "period_id": "signs",
        "cp": "signs",
        "last_exec": "signs",
        "last_compl": "signs",
    }
    assert typing.inferred == ["cp", "last_exec", "last_compl"]
    assert "'cp := period_id'" in typing.reasons["cp"]
    assert "deos.gcl:48" in typing.reasons["cp"]
    assert "'last_exec := period_id'" in typing.reasons["last_exec"]


def test_deos_abstract_search_finishes_and_choose_free_search_finds_the_real_bug() -> None:
    system = parse_gcl_file(DEOS)
    result = check_types(system, CheckOptions(), BIND)
    r = _by_name(result)["time_partitioning"]
    assert r.verdict is Verdict.VIOLATED
    assert "choose-free counterexample" in r.reason
    trace = r.trace
    assert trace.replayed
    last = trace.steps[-1].state
    # a concrete state (integers, not tokens) that violates time partitioning
    assert last["t"] == 3 and last["after_reset"] is True and last["budget"] < 2
    assert last["period_id"] == 0 and last["cp"] == 0 and last["last_exec"] == 0
    assert any(s.command and s.command.startswith("restart:") for s in trace.steps)
    # the abstract search was exhaustive: the other properties are proved
    assert _by_name(result)["no-deadlock"].verdict is Verdict.HOLDS
    stats = r.stats
    assert stats.states < 20_000 and stats.extra["choose_commands"] > 0
    assert any("cp=signs" in n and "last_exec=signs" in n for n in result.notes)
    assert r.extra["abstracted"]["last_exec"] == "signs"


# deos_fixed (the same state space but for the bug) only under -m slow: 200,000 states each
@pytest.mark.parametrize("path", [DEOS, pytest.param(DEOS_FIXED, marks=pytest.mark.slow)])
def test_deos_exact_search_is_unknown_at_its_state_limit(path: Path) -> None:
    result = check_explicit(parse_gcl_file(path), CheckOptions(limits=Limits(max_states=200_000)))
    r = _by_name(result)["time_partitioning"]
    assert r.verdict is Verdict.UNKNOWN
    assert "state limit of 200000" in r.reason


def test_deos_fixed_holds_on_the_abstraction() -> None:
    result = check_types(parse_gcl_file(DEOS_FIXED), CheckOptions(), BIND)
    verdicts = {r.property: r.verdict for r in result.results}
    assert verdicts == {
        "time_partitioning": Verdict.HOLDS,
        "no-deadlock": Verdict.HOLDS,
        "no-model-error": Verdict.HOLDS,
    }
    assert result.results[0].stats.states < 20_000


def test_cli_json_for_deos_and_the_fixed_version() -> None:
    r = run_cli("check", str(DEOS), "--method", "types", "--abstract", "period_id=signs", "--json")
    assert r.code == 1, r.err
    data = json.loads(r.out)
    assert data["method"] == "types" and data["verdict"] == "violated"
    first = data["results"][0]
    assert first["method"] == "types" and first["verdict"] == "violated"
    assert first["abstracted"] == {
        "period_id": "signs",
        "cp": "signs",
        "last_exec": "signs",
        "last_compl": "signs",
    }
    assert first["trace"][-1]["state"]["after_reset"] is True
    assert first["stats"]["choose_free_states"] > 0
    r = run_cli("check", str(DEOS_FIXED), "--method", "types", "--abstract", "period_id=signs")
    assert r.code == 0, r.err
    assert "time_partitioning (invariant): holds" in r.out
    assert "cp=signs" in r.out


SPURIOUS = """
var x : int = 1;
var pc : 0..1;
process P {
  pc == 0 -> x := x - 1, pc := 1;
  pc == 1 -> skip;
}
unreachable negative: x < 0;
"""


def test_counterexample_through_choose_is_unknown_with_the_abstract_trace() -> None:
    system = parse_gcl(SPURIOUS, "spurious.gcl")
    abstraction = build_abstraction(system, TypesOptions(parse_bindings(["x=signs"])))
    # POS - POS can be NEG, ZERO or POS: three commands, each resolving a choose; NEG - POS
    # and ZERO - POS are NEG for sure
    first = [c for c in abstraction.system.commands if abstraction.origin[c.index] == 0]
    chosen = [c for c in first if CHOOSE in c.flags]
    assert len(first) == 5 and len(chosen) == 3
    assert all("x == 2" in str(c.guard) for c in chosen)
    result = check_types(system, CheckOptions(), TypesOptions(parse_bindings(["x=signs"])))
    r = _by_name(result)["negative"]
    assert r.verdict is Verdict.UNKNOWN
    assert "uses choose and may be spurious" in r.reason
    trace = r.trace
    assert not trace.replayed
    assert trace.steps[0].state["x"] == "POS" and trace.steps[-1].state["x"] == "NEG"
    assert trace.steps[-1].command.endswith("[choose]")
    # the concrete model agrees that this was spurious
    exact = _by_name(check_explicit(system, CheckOptions()))["negative"]
    assert exact.verdict is Verdict.HOLDS


def test_choose_free_path_whose_end_state_is_fine_concretely_is_unknown() -> None:
    # x == 5 cannot be decided by signs: the abstract property flags every POS state
    system = parse_gcl(SPURIOUS.replace("x < 0", "x == 5"), "imprecise.gcl")
    r = _by_name(check_types(system, CheckOptions(), TypesOptions(parse_bindings(["x=signs"]))))[
        "negative"
    ]
    assert r.verdict is Verdict.UNKNOWN
    assert "does not violate the concrete property" in r.reason


def test_division_by_an_abstract_zero_is_a_replayed_model_error() -> None:
    system = parse_gcl(
        """
        var x, y : int;
        var pc : 0..2;
        process P {
          pc == 0 -> x := 0, pc := 1;
          pc == 1 -> y := 10 / x, pc := 2;
        }
        """,
        "div.gcl",
    )
    result = check_types(
        system, CheckOptions(check_deadlock=False), TypesOptions(parse_bindings(["x=signs"]))
    )
    r = _by_name(result)["no-model-error"]
    assert r.verdict is Verdict.VIOLATED
    assert r.trace.replayed and "division by zero" in r.trace.note
    assert [str(d) for d in infer(system, {"x": signs()}).domains.values()] == ["signs", "signs"]


def test_concrete_operands_are_coerced_and_constants_abstracted() -> None:
    system = parse_gcl(
        """
        var x : int = -3;
        var y : int = 4;
        var pc : 0..1;
        process P { pc == 0 && x + y > 0 -> x := x + y + 2, pc := 1; }
        invariant positive: pc == 1 => x > 0;
        """,
        "coerce.gcl",
    )
    abstraction = build_abstraction(system, TypesOptions(parse_bindings(["x=signs"])))
    assert list(abstraction.domains) == ["x"]  # y stays concrete (coerced where it meets x)
    assert abstraction.system.var("x").init == 0  # NEG
    guards = " ".join(str(c.guard) for c in abstraction.system.commands)
    assert "y < 0" in guards and "y > 0" in guards  # abstract(y), split by token
    result = check_types(
        system, CheckOptions(check_deadlock=False), TypesOptions(parse_bindings(["x=signs"]))
    )
    # NEG + POS is any sign: the invariant cannot be proved, and no choose-free path breaks it
    assert _by_name(result)["positive"].verdict is Verdict.UNKNOWN


def test_conflicts_are_model_errors_at_their_source() -> None:
    system = parse_gcl_file(CONFLICT)
    with pytest.raises(ModelError, match="abstract type conflict") as err:
        infer(system, {"y": modulo(2), "z": signs()})
    assert err.value.span is not None
    assert (err.value.span.line, err.value.span.column) == (7, 19)
    # a variable fed by two domains: no coercion between them
    both = system.with_(commands=(system.commands[0], Command("P", TRUE, (("v", Var("y", INT)),))))
    with pytest.raises(ModelError, match="to 'v', which is signs"):
        infer(both, {"y": modulo(2), "z": signs()})
    # two domains meeting in one expression
    mixed = parse_gcl("var a, b, c : int; process P { true -> c := a + b; }", "mixed.gcl")
    with pytest.raises(ModelError, match="'a' is signs but 'b' is modulo") as err:
        infer(mixed, {"a": signs(), "b": modulo(2)})
    assert err.value.span is not None and err.value.span.column == 45
    # the one-token domain takes anything
    typing = infer(system, {"y": point(), "z": signs()})
    assert str(typing.of("v")) == "signs" and str(typing.of("y")) == "point"


def test_cli_conflict_and_usage_errors_are_one_line() -> None:
    r = run_cli(
        "check",
        str(CONFLICT),
        "--method",
        "types",
        "--abstract",
        "y=modulo(2)",
        "--abstract",
        "z=signs",
    )
    assert r.code == 2 and r.out == ""
    assert r.err.startswith(f"{CONFLICT}:7:19: error: abstract type conflict")
    for args, message in [
        ([], "--abstract: needs at least one VAR=DOMAIN binding"),
        (["--abstract", "nope=signs"], "no variable 'nope'"),
        (["--abstract", "period_id=intervals"], "unknown abstraction 'intervals'"),
        (["--abstract", "reset_pending=signs"], "only integers can be abstracted"),
        (["--abstract", "period_id"], "expected VAR=DOMAIN"),
    ]:
        r = run_cli("check", str(DEOS), "--method", "types", *args)
        assert r.code == 2, (args, r.err)
        assert message in r.err and len(r.err.strip().splitlines()) == 1
    r = run_cli("check", str(DEOS), "--abstract", "period_id=signs")
    assert r.code == 2 and "--abstract applies to --method types" in r.err


def test_rest_point_abstracts_the_unreached_integers() -> None:
    system = parse_gcl(
        """
        var x, n, m : int;
        var pc : 0..2;
        process P {
          pc == 0 -> n := n + 1, pc := 1;
          pc == 1 -> x := x + n, m := m + 1, pc := 2;
          pc == 2 -> pc := 0;
        }
        invariant small: pc <= 2;
        """,
        "rest.gcl",
    )
    typing = infer(system, {"x": signs()}, "point")
    # n flows into the signs variable x: it stays concrete to be coerced; m becomes point
    assert {v: str(d) for v, d in typing.domains.items()} == {"x": "signs", "m": "point"}
    with pytest.raises(OptionError, match="no variable 'q'"):
        infer(system, {"q": signs()})


def test_cli_shows_the_unconfirmed_abstract_trace_with_tokens() -> None:
    r = run_cli(
        "check",
        str(FIXTURES / "typeabs" / "spurious.gcl"),
        "--method",
        "types",
        "--abstract",
        "x=signs",
    )
    assert r.code == 3, r.err
    assert "unconfirmed trace for 'negative' (1 step)" in r.out
    assert "pc == 0 -> x := x - 1, pc := 1 [choose]" in r.out
    assert "x=NEG pc=1" in r.out


def _reachable_abstractions_cover_concrete(system: object, types: TypesOptions) -> None:
    from absmc.codegen.python import compile_system
    from absmc.kernel.explore.search import search
    from absmc.kernel.explore.store import ExactStore

    from .reference import reference_explore

    abstraction = build_abstraction(system, types)  # type: ignore[arg-type]
    store = ExactStore()
    search(compile_system(abstraction.system, ()), store, keep_going=True, check_deadlock=False)
    concrete = reference_explore(system)  # type: ignore[arg-type]
    assert concrete.complete
    for state in concrete.states:
        assert abstraction.abstract_state(state) in store.states


def test_abstracted_finite_ranges_wrap_or_fail_like_the_concrete_ones() -> None:
    from absmc.ir import Process, Property, RangeSort, System, Variable
    from absmc.ir.expr import const, op

    byte = RangeSort(-128, 127, "wrap")  # Promela-like two's complement
    small = RangeSort(0, 3)  # GCL-like: leaving the range is a model error
    b, s, pc = Var("b", byte), Var("s", small), Var("pc", RangeSort(0, 1))
    system = System(
        (Variable("b", byte, 100), Variable("s", small, 0), Variable("pc", RangeSort(0, 1), 0)),
        (Process("P"),),
        (
            Command("P", op("==", pc, const(0)), (("b", op("+", b, const(100))), ("pc", const(1)))),
            Command("P", op("==", pc, const(1)), (("s", op("+", s, const(2))), ("pc", const(0)))),
        ),
        (Property("nonneg", "invariant", op(">=", b, const(0))),),
    )
    types = TypesOptions(parse_bindings(["b=signs", "s=signs"]))
    _reachable_abstractions_cover_concrete(system, types)
    result = _by_name(check_types(system, CheckOptions(check_deadlock=False), types))
    # 100 + 100 wraps to -56: a real, choose-free violation? No: POS + POS stored into a byte
    # may be any sign (a choice), so the abstraction cannot confirm it
    assert result["nonneg"].verdict is Verdict.UNKNOWN
    # s: 0 -> 2 -> 4 is outside 0..3, a model error; POS + POS may or may not fit (a choice)
    assert result["no-model-error"].verdict is Verdict.UNKNOWN
    exact = _by_name(check_explicit(system, CheckOptions(check_deadlock=False, keep_going=True)))
    assert exact["nonneg"].verdict is Verdict.VIOLATED
    assert exact["no-model-error"].verdict is Verdict.VIOLATED
    # a constant that does not fit is a certain model error, found choose-free and replayed
    overflow = system.with_(
        commands=(Command("P", op("==", pc, const(0)), (("s", const(7)), ("pc", const(1)))),),
        properties=(),
    )
    r = _by_name(check_types(overflow, CheckOptions(check_deadlock=False), types))
    assert r["no-model-error"].verdict is Verdict.VIOLATED
    assert "outside 0..3" in r["no-model-error"].trace.note


def test_deos_with_promela_like_32_bit_integers() -> None:
    # the IR of a Promela model has wrap-around int variables: storing may overflow (a choice),
    # copies of in-range values do not; the choose-free search still finds the real defect
    from dataclasses import replace

    from absmc.ir import RangeSort
    from absmc.ir.expr import map_vars

    int32 = RangeSort(-(2**31), 2**31 - 1, "wrap")
    names = {"period_id", "cp", "last_exec", "last_compl"}
    system = parse_gcl_file(DEOS)

    def retype(e: Expr) -> Expr:
        return map_vars(e, lambda x: Var(x.name, int32) if x.name in names else x)

    system = system.with_(
        variables=tuple(replace(v, sort=int32) if v.name in names else v for v in system.variables),
        commands=tuple(
            replace(c, guard=retype(c.guard), updates=tuple((n, retype(e)) for n, e in c.updates))
            for c in system.commands
        ),
        properties=tuple(replace(p, expr=retype(p.expr)) for p in system.properties),
    )
    r = _by_name(check_types(system, CheckOptions(), BIND))["time_partitioning"]
    assert r.verdict is Verdict.VIOLATED and r.trace.replayed
