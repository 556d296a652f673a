"""Front ends on deep, long and oddly encoded input: no RecursionError, no traceback.

GCL builds expressions iteratively (any depth); Promela's front end takes nesting up to
``MAX_NESTING`` syntax-tree levels and reports deeper input as a located error. Latin-1 bytes in
comments and a UTF-8 byte-order mark are legal (SPIN reads bytes).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from absmc.ir import ModelError, format_system
from absmc.ir.expr import Expr, Op
from absmc.lang.gcl import parse_gcl, parse_gcl_file
from absmc.lang.promela import load_promela
from absmc.lang.promela.parser import MAX_NESTING

from .conftest import EXAMPLES, GCL_EXAMPLES, run_cli
from .test_mutants import problem, run_check


def _depth(e: Expr, op: str) -> int:
    """How many ``op`` nodes are nested along the first argument (iteratively)."""
    n = 0
    while isinstance(e, Op) and e.op == op:
        n += 1
        e = e.args[0]
    return n


def test_gcl_sum_of_10000_terms_parses() -> None:
    s = parse_gcl("var x : int; process P { true -> x := " + " + ".join(["x"] * 10_000) + "; }")
    assert _depth(s.commands[0].updates[0][1], "+") == 9_999


@pytest.mark.parametrize(("prefix", "sort", "op"), [("-", "int", "neg"), ("!", "bool", "!")])
def test_gcl_5000_nested_unary_operators_parse(prefix: str, sort: str, op: str) -> None:
    body = prefix * 5_000 + "x"
    guard = body if sort == "bool" else f"{body} > 0"
    s = parse_gcl(f"var x : {sort}; process P {{ {guard} -> skip; }}")
    g = s.commands[0].guard
    assert _depth(g if sort == "bool" else g.args[0], op) == 5_000


def test_gcl_long_conjunction_is_one_flat_node() -> None:
    s = parse_gcl("var b : bool; process P { " + " && ".join(["b"] * 10_000) + " -> skip; }")
    g = s.commands[0].guard
    assert isinstance(g, Op) and g.op == "&&" and len(g.args) == 10_000


def test_gcl_type_error_deep_inside_is_located() -> None:
    src = "var x : int;\nprocess P { true -> x := " + "-" * 3000 + "(x > 0); }"
    with pytest.raises(ModelError) as info:
        parse_gcl(src, "deep.gcl")
    assert info.value.render().startswith("deep.gcl:2:")
    assert "operand of unary '-' must be int" in info.value.message


def _promela(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "deep.pml"
    path.write_text(text)
    return path


def _nested_ifs(n: int) -> str:
    return "byte x;\nactive proctype P() {\n" + "if :: x < 9 -> " * n + "x = 1" + " fi" * n + "\n}"


def _negations(n: int) -> str:
    return "byte x;\nactive proctype P() {\n  x = " + "- " * n + "x\n}"


@pytest.mark.parametrize(
    ("make", "per_level"), [(_nested_ifs, 3), (_negations, 1)], ids=["if", "neg"]
)
def test_promela_nesting_up_to_the_limit_loads_and_beyond_is_located(
    tmp_path: Path, make: object, per_level: int
) -> None:
    assert callable(make)
    fits = (MAX_NESTING - 3) // per_level  # a few levels for the statement around it
    system = load_promela(_promela(tmp_path, make(fits)))
    assert len(system.commands) >= 1
    for n in (MAX_NESTING // per_level + 1, 250, 500, 5_000):
        with pytest.raises(ModelError) as info:
            load_promela(_promela(tmp_path, make(n)))
        err = info.value
        assert err.span is not None and err.span.line == 3
        assert err.message == f"nesting deeper than {MAX_NESTING} (statements and expressions)"


@pytest.mark.parametrize(
    "body",
    [
        "if :: x < 9 -> " * 250 + "x = 1" + " fi" * 250,
        "do :: x < 9 -> " * 250 + "x++" + " od" * 250,
        "atomic { x++; " * 250 + "x = 1" + " }" * 250,
        "x = " + "-" * 500 + "x",
        "x = " + "!" * 500 + "x",
        "x = " + "(x > 0 -> 1 : " * 300 + "2" + ")" * 300,
        "x = " + " + ".join(["x"] * 10_000),
    ],
    ids=["if", "do", "atomic", "neg", "not", "cond", "sum"],
)
def test_deep_promela_through_the_cli_is_a_located_error(tmp_path: Path, body: str) -> None:
    path = _promela(tmp_path, "byte x;\nactive proctype P() {\n" + body + "\n}\n")
    # the error comes from loading: the mutation limits' 5 s, which bound loading too, ran
    # out on a busy machine before the 10,000-term sum was parsed
    out = run_check(path, ("--max-states", "2000", "--timeout", "100"))
    assert out.code == 2
    assert problem(out) is None, out.err
    assert f"{path}:3:" in out.err and "nesting deeper than" in out.err


def test_latin1_comment_and_byte_order_mark_are_accepted(tmp_path: Path) -> None:
    source = EXAMPLES / "promela" / "fischer.pml"
    plain = load_promela(source)
    path = tmp_path / "fischer.pml"
    path.write_bytes(
        b"\xef\xbb\xbf/* r\xe9sum\xe9: Latin-1 in a comment */\n" + source.read_bytes()
    )
    odd = load_promela(path)
    assert format_system(odd) == format_system(plain)
    gcl = tmp_path / "peterson.gcl"
    gcl.write_bytes(b"\xef\xbb\xbf// caf\xe9\n" + (GCL_EXAMPLES / "peterson.gcl").read_bytes())
    assert format_system(parse_gcl_file(gcl)) == format_system(
        parse_gcl_file(GCL_EXAMPLES / "peterson.gcl")
    )


@pytest.mark.parametrize(
    ("stmt", "code"),
    [("x = 1 / y", 1), ("x = (y < 5 -> 7 % y : 0)", 1), ("x = (y == 0 || 1 / y > 0)", 0)],
)
def test_division_by_zero_into_an_unread_variable_is_a_model_error(
    tmp_path: Path, stmt: str, code: int
) -> None:
    # x is never read, so it is not part of the state (SPIN's rule): computing its value
    # still divides by zero in the initial state (pan dies with a floating point exception);
    # `||` does not evaluate 1 / y when y == 0
    path = tmp_path / "div.pml"
    path.write_text(f"byte x; byte y;\nactive proctype P() {{ {stmt}; y = 1 }}\n")
    r = run_cli("check", str(path))
    assert r.code == code, r.out + r.err
    assert ("division by zero" in r.out) == (code == 1)
