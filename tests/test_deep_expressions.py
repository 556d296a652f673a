"""Deep expressions are a verdict or a located error on every method, never an internal error.

A model's expressions may nest up to ``ir.depth.MAX_EXPR_DEPTH`` levels (checked when the model
is loaded, before any method runs: ``FILE:LINE:COL: error: expression nested too deeply``);
Promela's front end stops earlier, at ``lang/promela/parser.MAX_NESTING`` syntax levels. Up to
the limit every method answers: the generated Python splits deep expressions into helper
functions (Python's parser refuses ~200 nested parentheses) and the recursive walkers of the
abstraction engines run under the recursion limit the loader sets.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from absmc.codegen.python import compile_system
from absmc.engines.registry import model_engines, names
from absmc.ir.depth import MAX_EXPR_DEPTH, system_depth
from absmc.lang.gcl import parse_gcl
from absmc.lang.loader import load_model
from absmc.lang.promela.parser import MAX_NESTING

from .conftest import run_cli
from .native_helpers import needs_native

#: what a method needs to run at all on these models, beyond ``--method NAME``
_EXTRA = {"types": ["--abstract", "y=signs"]}

#: every method of the registry that checks models (and the native back end of explicit);
#: the component checker, which reads Python programs, has its own tests below
METHODS = {
    **{e.name: ["--method", e.name, *_EXTRA.get(e.name, [])] for e in model_engines()},
    "native": ["--method", "explicit", "--backend", "native"],
}

LOCATED = re.compile(r"^(?P<file>.+):(?P<line>\d+):(?P<col>\d+): error: (?P<msg>.+)$")


def test_every_registered_method_is_covered() -> None:
    # a new engine joins these tests through the registry: none is left out by a copied list
    assert set(names()) - set(METHODS) == {"component"}
    assert {"explicit", "under", "types", "fourvalued", "symbolic", "pdr", "kind"} <= set(METHODS)


def _method_args(method: str) -> list[str]:
    return [*METHODS[method], "--timeout", "60"]


def _method_marks(method: str) -> list[pytest.MarkDecorator]:
    return [needs_native] if method == "native" else []


def _methods() -> list[object]:
    return [pytest.param(m, marks=_method_marks(m), id=m) for m in METHODS]


def _grid(cases: list[str], *every_method: str) -> list[object]:
    """(case, method) pairs for a too-deep error, which the loader raises before any method
    runs: in CI every case with ``explicit`` and every method with the cases ``every_method``;
    the other pairs under ``-m slow``."""
    return [
        pytest.param(
            case,
            m,
            marks=[
                *_method_marks(m),
                *([] if m == "explicit" or case in every_method else [pytest.mark.slow]),
            ],
            id=f"{case}-{m}",
        )
        for case in cases
        for m in METHODS
    ]


def _gcl(guard: str, update: str, invariant: str) -> str:
    """A counter 0..3 that wraps around (no deadlock), a data variable ``y``."""
    return (
        "var x : 0..3;\nvar y : int;\n"
        "process P {\n"
        f"  x < 3 && {guard} -> x := x + 1, y := {update};\n"
        "  x == 3 -> x := 0;\n"
        "}\n"
        f"invariant small: {invariant};\n"
    )


def _at_the_limit() -> str:
    # expressions about MAX_EXPR_DEPTH levels deep (a few levels left for what holds them)
    n = MAX_EXPR_DEPTH - 6
    nots = "!(" * (n - n % 2) + "x >= 0" + ")" * (n - n % 2)  # an even number: x >= 0
    # (a conditional chain this deep takes symbolic minutes to encode: case splits)
    chain = " ".join(f"(x == {i % 4}) ? {i} :" for i in range(60)) + " 7"
    minus = "-" * (n - n % 2) + "x"
    total = "x" + " + 0" * n
    return _gcl(nots, chain, f"{minus} <= 3 && {total} <= 3")


def test_the_model_at_the_limit_is_within_a_few_levels_of_it(tmp_path: Path) -> None:
    path = tmp_path / "deep.gcl"
    path.write_text(_at_the_limit())
    assert MAX_EXPR_DEPTH - 8 <= system_depth(load_model(path)) <= MAX_EXPR_DEPTH


@pytest.mark.parametrize("method", _methods())
def test_expressions_at_the_limit_get_a_verdict(
    method: str, tmp_path: Path, native_fast_compile: None
) -> None:
    path = tmp_path / "deep.gcl"
    path.write_text(_at_the_limit())
    limit = sys.getrecursionlimit()
    r = run_cli("check", str(path), *_method_args(method))
    assert sys.getrecursionlimit() == limit  # raised for the run only
    assert r.code in (0, 3), r.err  # the invariant holds: never violated, never an error
    assert "Traceback" not in r.err
    if method in ("explicit", "native"):
        assert r.code == 0 and "small (invariant): holds" in r.out, r.out


def _too_deep_gcl() -> dict[str, tuple[str, int]]:
    """GCL models deeper than the limit: the text and the line of the deep expression."""
    return {
        "neg-5000": (_gcl("true", "x", "-" * 5_000 + "x <= 3"), 7),
        "not-2000": (_gcl("!(" * 2_000 + "x >= 3" + ")" * 2_000, "x", "x <= 3"), 4),
        "sum-5000": (_gcl("true", "x" + " + 1" * 5_000, "x <= 3"), 4),
    }


@pytest.mark.parametrize(("case", "method"), _grid(list(_too_deep_gcl()), "not-2000"))
def test_gcl_too_deep_is_a_located_error(method: str, case: str, tmp_path: Path) -> None:
    text, line = _too_deep_gcl()[case]
    path = tmp_path / "deep.gcl"
    path.write_text(text)
    r = run_cli("check", str(path), *_method_args(method))
    assert r.code == 2, (r.code, r.err)
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r.err
    m = LOCATED.match(lines[0])
    assert m is not None and m["file"] == str(path) and int(m["line"]) == line, lines[0]
    assert re.fullmatch(
        rf"expression nested too deeply \(\d+ levels; the limit is {MAX_EXPR_DEPTH}\)", m["msg"]
    )


def test_deep_parentheses_add_no_depth(tmp_path: Path) -> None:
    path = tmp_path / "parens.gcl"
    path.write_text(_gcl("(" * 3_000 + "x >= 0" + ")" * 3_000, "x", "x <= 3"))
    r = run_cli("check", str(path))
    assert r.code == 0 and "small (invariant): holds" in r.out, r.err


def _promela(body: str) -> str:
    return "int y;\nbyte x;\nactive proctype P() {\n  do\n  :: " + body + "\n  od\n}\n"


#: Promela statements nested deeper than the front end's limit (line 5 holds them)
TOO_DEEP_PROMELA = {
    "neg-5000": "x = " + "-" * 5_000 + "x",
    "not-2000": "(" + "!(" * 2_000 + "x >= 3" + ")" * 2_000 + ") -> x = 0",
    "sum-5000": "y = " + " + ".join(["x"] * 5_000),
    "parens-300": "y = " + "(" * 300 + "x" + ")" * 300 + " + y",
}


@pytest.mark.parametrize(
    ("case", "method"), _grid(list(TOO_DEEP_PROMELA), "not-2000", "parens-300")
)
def test_promela_too_deep_is_a_located_error(method: str, case: str, tmp_path: Path) -> None:
    path = tmp_path / "deep.pml"
    path.write_text(_promela(TOO_DEEP_PROMELA[case]))
    r = run_cli("check", str(path), *_method_args(method))
    lines = r.err.strip().splitlines()
    if r.code in (0, 1, 3):  # parentheses the parser does not count: an ordinary verdict
        assert case.startswith("parens") and "Traceback" not in r.err
        return
    assert r.code == 2 and len(lines) == 1, (r.code, r.err)
    m = LOCATED.match(lines[0])
    assert m is not None and m["file"] == str(path) and m["line"] == "5", lines[0]
    assert m["msg"] == f"nesting deeper than {MAX_NESTING} (statements and expressions)"


@pytest.mark.parametrize("method", _methods())
def test_promela_at_its_limit_gets_a_verdict(
    method: str, tmp_path: Path, native_fast_compile: None
) -> None:
    n = (MAX_NESTING - 10) // 2 * 2  # even: the negations cancel out
    body = "x < 3 && y >= 0 && " + "!(" * n + "x >= 0" + ")" * n + " -> x = " + "-" * n + "x + 1"
    path = tmp_path / "deep.pml"
    path.write_text(_promela(body + "\n  :: x == 3 -> x = 0; y = " + " + ".join(["x"] * n)))
    r = run_cli("check", str(path), *_method_args(method))
    assert r.code in (0, 3), (r.code, r.err)
    assert "Traceback" not in r.err
    if method in ("explicit", "native"):
        assert r.code == 0, r.out


def test_the_generated_python_splits_deep_expressions_into_helpers() -> None:
    # the code generator itself takes any depth (the limit is the loader's): 2,001 negations in
    # a guard and 5,000 minus signs in an invariant compile and evaluate
    s = parse_gcl(_gcl("!(" * 2_001 + "x >= 3" + ")" * 2_001, "x", "-" * 5_000 + "x <= 3"))
    compiled = compile_system(s)
    assert compiled.source.count("\ndef _d") >= 2_000 // 40
    assert compiled.successors((0, 0)) == ([(0, (1, 0))], ())
    assert compiled.successors((3, 0)) == ([(1, (0, 0))], ())
    assert compiled.ok((2, 5)) and compiled.violated((2, 5)) == []


def _program(assertion: str, before: str = "") -> str:
    """A Python program: the entry ``f`` sets ``x = 3`` and asserts ``assertion``."""
    return f"def f(n=3):\n    x = n\n{before}    assert {assertion}\n"


#: Python programs deeper than the limit (line 3 holds the deep expression): Python's own
#: parser takes the 5,000 minus signs under the raised recursion limit; 2,000 parentheses are
#: its own syntax error
TOO_DEEP_PROGRAMS = {
    "neg-5000": (_program("-" * 5_000 + "x <= 3"), "expression nested too deeply"),
    "not-2000": (_program("not (" * 2_000 + "x >= 3" + ")" * 2_000), "too many nested"),
    "neg-1002": (_program("-" * 1_002 + "x <= 3"), "expression nested too deeply"),
}


@pytest.mark.parametrize("store", ["exact", "predicates"])
@pytest.mark.parametrize("case", list(TOO_DEEP_PROGRAMS))
def test_component_too_deep_is_a_located_error(case: str, store: str, tmp_path: Path) -> None:
    """The component checker used to end a 500-deep unary minus with a RecursionError
    (exit 4, in ``deepcopy`` of the program's syntax tree)."""
    text, msg = TOO_DEEP_PROGRAMS[case]
    path = tmp_path / "deep.py"
    path.write_text(text)
    r = run_cli("check", str(path), "--entry", "f", "--component", "f", "--store", store)
    assert r.code == 2, (r.code, r.err)
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r.err
    m = LOCATED.match(lines[0])
    assert m is not None and m["file"] == str(path) and m["line"] == "3", lines[0]
    assert msg in m["msg"]
    if "levels" in m["msg"]:
        assert m["msg"].endswith(f"the limit is {MAX_EXPR_DEPTH})")


@pytest.mark.parametrize("store", ["exact", "predicates"])
def test_component_at_the_limit_gets_a_verdict(store: str, tmp_path: Path) -> None:
    n = MAX_EXPR_DEPTH - 2  # even: the minus signs cancel out; ``<=`` and ``x`` make 1,000
    before = f"    y = {'not ' * (n - 1)}x >= 3\n    z = x{' + 0' * (n - 1)}\n"
    path = tmp_path / "deep.py"
    path.write_text(_program("-" * n + "x <= 3", before))
    limit = sys.getrecursionlimit()
    r = run_cli("check", str(path), "--entry", "f", "--component", "f", "--store", store)
    assert sys.getrecursionlimit() == limit  # raised for the run only
    assert r.code == 0 and "verdict: holds" in r.out, (r.code, r.err)
