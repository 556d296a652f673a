"""The GCL front end: the shipped examples parse into the expected Systems, malformed models
give `FILE:LINE:COL: error:` messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from absmc.ir import INT, ModelError, RangeSort, format_system
from absmc.lang.gcl import parse_gcl, parse_gcl_file
from absmc.lang.larkutil import read_source

from .conftest import FIXTURES, GCL_EXAMPLES

ERROR_FIXTURES = sorted((FIXTURES / "gcl_errors").glob("*.gcl"))


def test_rax_example_matches_fig6() -> None:
    s = parse_gcl_file(GCL_EXAMPLES / "rax.gcl")
    assert [v.name for v in s.data_vars] == ["c1", "c2", "e1", "e2"]
    assert {v.name: v.sort for v in s.control_vars} == {
        "w1": RangeSort(0, 1),
        "w2": RangeSort(0, 1),
        "pc1": RangeSort(1, 6),
        "pc2": RangeSort(1, 6),
    }
    assert s.state_dict(s.initial_state())["pc1"] == 1
    assert [len(s.commands_of(p.name)) for p in s.processes] == [7, 7]
    assert s.get_property("deadlock").kind == "unreachable"
    assert s.commands[1].text() == "pc1 == 2 && c1 == e1 -> pc1 := 3"


def test_labels_predicates_and_comments() -> None:
    s = parse_gcl(
        """
        /* block
           comment */
        var x, y : int; var ok : bool = true;
        process P { take: x <= y -> x := x + 1, ok := !ok; // trailing
                    x > y -> skip; }
        predicate x <= y;
        invariant x >= 0;
        invariant named: ok || !ok;
        """,
        "t.gcl",
    )
    assert s.commands[0].label == "take"
    assert s.commands[1].updates == ()
    assert [str(p) for p in s.predicates] == ["x <= y"]
    assert [p.name for p in s.properties] == ["invariant1", "named"]
    assert s.var("ok").init == 1
    assert s.var("x").sort == INT


def test_range_default_initial_value_is_lowest_when_zero_is_outside() -> None:
    s = parse_gcl("var p : 1..6; var q : -3..-1; process P { true -> skip; }")
    assert s.initial_state() == (1, -3)


def test_format_system_round_trips() -> None:
    for path in sorted(GCL_EXAMPLES.glob("*.gcl")):
        s = parse_gcl_file(path)
        again = parse_gcl(format_system(s), str(path))
        assert again.variables == s.variables
        assert [(c.process, c.guard, c.updates, c.label) for c in again.commands] == [
            (c.process, c.guard, c.updates, c.label) for c in s.commands
        ]
        assert again.properties == s.properties


@pytest.mark.parametrize("path", ERROR_FIXTURES, ids=lambda p: p.stem)
def test_malformed_model_is_located(path: Path) -> None:
    expected = read_source(path).splitlines()[0].removeprefix("// expect: ")
    where, _, message = expected.partition(": ")
    line, col = (int(v) for v in where.split(":"))
    with pytest.raises(ModelError) as info:
        parse_gcl_file(path)
    err = info.value
    assert err.span is not None
    assert (err.span.line, err.span.column) == (line, col)
    assert err.message.startswith(message)
    assert err.render().startswith(f"{path}:{line}:{col}: error: ")


def test_at_least_fifteen_kinds_of_malformed_models() -> None:
    assert len(ERROR_FIXTURES) >= 15
