"""GCL ``init:`` constraints and ``ctl`` properties (issue 11, language part)."""

from __future__ import annotations

import pytest

from absmc.engines import registry
from absmc.ir.ctl import And, Atom, Implies, Not, Temporal, Until, format_ctl, is_universal, to_enf
from absmc.ir.span import ModelError
from absmc.kernel.model.initial import initial_states
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import Verdict
from absmc.lang.gcl.parser import parse_gcl

HEAD = "var x : int; var y : 0..3; var b : bool;\nprocess P { x < 3 -> x := x + 1; }\n"


def test_ctl_formulas_parse_into_the_ast() -> None:
    s = parse_gcl(HEAD + "ctl live: AG(y == 1 => AF(x == 2));\nctl u: A[b U x > 0] && !AX b;\n")
    live, u = s.ctl
    assert live.name == "live"
    assert isinstance(live.formula, Temporal) and live.formula.op == "AG"
    inner = live.formula.arg
    assert isinstance(inner, Implies) and isinstance(inner.right, Temporal)
    assert isinstance(u.formula, And)
    assert isinstance(u.formula.left, Until) and u.formula.left.path == "A"
    assert isinstance(u.formula.right, Not)
    assert format_ctl(live.formula) == "AG((y == 1 => AF(x == 2)))"
    assert is_universal(live.formula) and not is_universal(u.formula)


def test_temporal_names_are_words_only_inside_formulas() -> None:
    s = parse_gcl(
        "var AGx, E : int;\nprocess P { AGx > 0 -> E := 1; }\n"
        "ctl c: EF(AGx > E) || E[E > 0 U AGx == 1];\n"
    )
    assert s.ctl[0].formula is not None


def test_temporal_operand_of_a_comparison_is_located_error() -> None:
    with pytest.raises(ModelError) as err:
        parse_gcl(HEAD + "ctl bad: AG x == 1;\n")
    assert err.value.span is not None and err.value.span.line == 3
    assert "temporal" in err.value.message


def test_ctl_state_formula_must_be_bool() -> None:
    with pytest.raises(ModelError) as err:
        parse_gcl(HEAD + "ctl bad: AG(x + 1);\n")
    assert "bool" in err.value.message


def test_duplicate_property_names_across_kinds() -> None:
    with pytest.raises(ModelError, match="duplicate property 'p'"):
        parse_gcl(HEAD + "invariant p: x >= 0;\nctl p: AG(x >= 0);\n")


def test_enf_uses_existential_operators_only() -> None:
    s = parse_gcl(HEAD + "ctl c: A[b U x > 0] && AF(x == 1) && AX(b) && AG(b);\n")
    from absmc.ir.ctl import subformulas

    enf = to_enf(s.ctl[0].formula)
    ops = {g.op for g in subformulas(enf) if isinstance(g, Temporal)}
    assert ops <= {"EX", "EG"}
    assert all(g.path == "E" for g in subformulas(enf) if isinstance(g, Until))
    assert any(isinstance(g, Atom) for g in subformulas(enf))


def test_init_clauses_are_conjoined_and_enumerated() -> None:
    s = parse_gcl(HEAD + "init: x >= 0 && x <= 2;\ninit: y != 1;\n")
    states = initial_states(s)
    # x in 0..2, y in {0,2,3}, b keeps its declared value false
    assert len(states) == 9
    assert all(st[2] == 0 and st[1] != 1 and 0 <= st[0] <= 2 for st in states)


def test_unbounded_init_is_refused_with_its_location() -> None:
    s = parse_gcl(HEAD + "init: x >= 0;\n")
    with pytest.raises(ModelError) as err:
        initial_states(s)
    assert err.value.span is not None and err.value.span.line == 3
    assert "unbounded" in err.value.message


def test_huge_init_is_refused_quickly() -> None:
    s = parse_gcl(HEAD + "init: x >= 0 && x <= 100000000;\n")
    with pytest.raises(ModelError, match="at most"):
        initial_states(s)


def test_explicit_runs_from_every_initial_state() -> None:
    s = parse_gcl(HEAD + "init: x >= 0 && x <= 2 && y <= 1;\ninvariant low: x <= 2 || y == 0;\n")
    res = registry.run("explicit", s, CheckOptions(check_deadlock=False))
    low = next(r for r in res.results if r.property == "low")
    assert low.verdict == Verdict.VIOLATED
    assert low.trace is not None and low.trace.steps[0].state["y"] == 1
    assert low.stats.extra["initial_states"] == 6


def test_cli_refuses_infinite_initial_set(tmp_path: object) -> None:
    from tests.conftest import run_cli

    r = run_cli("check", "--method", "explicit", "../shared/benchmarks/symbolic/ticket2.gcl")
    if r.code == 2 and "No such file" in r.err:
        pytest.skip("no shared corpus")
    assert r.code == 2
    assert "ticket2.gcl:11:7: error: the init constraint leaves 't' unbounded" in r.err


def test_gcl_export_round_trips_init_and_ctl() -> None:
    from absmc.ir.printer import format_system

    src = HEAD + "init: x >= 0 && y != 1;\nctl c: A[b U x > 0] && AG(y == 1 => AF(x == 2));\n"
    s = parse_gcl(src)
    again = parse_gcl(format_system(s))
    assert again.init_constraint == s.init_constraint
    assert again.ctl == s.ctl


def test_promela_export_refuses_an_init_constraint() -> None:
    from absmc.errors import ExportError
    from absmc.lang.promela.export import to_promela

    with pytest.raises(ExportError, match="init"):
        to_promela(parse_gcl(HEAD + "init: x == 1;\n"))
