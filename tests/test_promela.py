"""The Promela front end: predicates, traces, preprocessing, names and values as SPIN has them."""

from __future__ import annotations

import json
from pathlib import Path

from absmc.codegen.python import compile_system
from absmc.engines.explicit import check_explicit
from absmc.ir.expr import free_vars
from absmc.kernel.explore.search import search
from absmc.kernel.run.options import CheckOptions
from absmc.lang.promela import load_promela
from absmc.lang.promela.lower import Lowerer, lower_model
from absmc.lang.promela.parser import parse_promela
from absmc.lang.promela.preprocess import preprocess

from .conftest import SHARED, needs_shared, run_cli


def _load(tmp_path: Path, text: str, name: str = "m.pml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_pred_declarations_become_predicates(tmp_path: Path) -> None:
    system = load_promela(
        _load(
            tmp_path,
            """
            byte x, y;
            pred x < 4;
            active [2] proctype P() { byte k; pred k > x; do :: x < 9 -> x++; k = x :: y = x od }
            """,
        )
    )
    # one global predicate, one per instance of P
    assert len(system.predicates) == 3
    assert free_vars(system.predicates[0]) == {"x"}
    assert free_vars(system.predicates[1]) == {"x", "P(0).k"}
    assert free_vars(system.predicates[2]) == {"x", "P(1).k"}


def test_assertion_trail_names_process_line_and_statement(tmp_path: Path) -> None:
    model = _load(
        tmp_path,
        "byte x;\n"
        "active proctype A() {\n"
        "  atomic { x == 0 -> x = 1; x > 0; x = x + 1 };\n"
        "  assert(x == 1)\n"
        "}\n"
        "active proctype B() { x = 3 }\n",
    )
    r = run_cli("check", str(model), "--json")
    assert r.code == 1, r.err
    res = {p["property"]: p for p in json.loads(r.out)["results"]}
    bad = res["assert@4"]
    assert bad["verdict"] == "violated"
    steps = bad["trace"]
    # the atomic sequence is one step of the search but one row per statement in the trail
    assert [s["command"] for s in steps[1:]] == ["x == 0; x = 1", "x > 0; x = x + 1"]
    assert all(s["process"] == "A(0)" for s in steps[1:])
    assert steps[1]["source"] == f"{model}:3"
    assert steps[-1]["state"]["x"] == 2


@needs_shared
def test_python_preprocessor_agrees_with_cpp() -> None:
    model = SHARED / "benchmarks" / "scaling" / "fischer.pml"
    text = model.read_text()
    a, _ = preprocess(text, model, {"MAXT": "16"})
    b, lines = preprocess(text, model, {"MAXT": "16"}, use_system=False)
    assert " ".join(a.split()) == " ".join(b.split())
    out_line = next(i for i, ln in enumerate(b.splitlines(), 1) if "proctype Tick" in ln)
    src_line = next(i for i, ln in enumerate(text.splitlines(), 1) if "proctype Tick" in ln)
    assert lines.locate(out_line)[1] == src_line


def test_mtype_values_follow_spin() -> None:
    # SPIN numbers the names of one declaration from the last (c = 1), later ones after
    model = parse_promela("mtype = { a, b, c }; mtype = { d };\ninit { skip }\n", "m.pml")
    assert Lowerer(model, "m").mtypes == {"c": 1, "b": 2, "a": 3, "d": 4}


def test_write_only_globals_are_not_state() -> None:
    system = lower_model(
        parse_promela("byte used, unused; active proctype P() { unused = used + 1 }", "m.pml")
    )
    names = {v.name for v in system.variables}
    assert "used" in names and "unused" not in names


def test_valid_end_states_and_deadlock(tmp_path: Path) -> None:
    ok = _load(tmp_path, "chan c = [0] of {bit}; active proctype P() { end: c?1 }", "ok.pml")
    bad = _load(tmp_path, "chan c = [0] of {bit}; active proctype P() { c?1 }", "bad.pml")
    assert check_explicit(load_promela(ok), CheckOptions()).verdict.value == "holds"
    res = check_explicit(load_promela(bad), CheckOptions())
    assert res.verdict.value == "violated"
    assert res.results[0].property == "no-deadlock"


def test_out_of_bounds_index_is_a_model_error(tmp_path: Path) -> None:
    system = load_promela(
        _load(tmp_path, "byte a[2], i; active proctype P() { do :: i < 3 -> a[i] = 1; i++ od }")
    )
    out = search(compile_system(system), keep_going=True)
    v = out.violations["no-model-error"]
    assert "out of bounds" in v.message


@needs_shared
def test_simulate_runs_a_promela_model() -> None:
    r = run_cli(
        "simulate", str(SHARED / "benchmarks" / "promela" / "p117.pml"), "--seed", "3", "--json"
    )
    run = json.loads(r.out)
    assert r.code == (1 if run["violated"] else 0), r.err
    assert run["trace"][1]["process"] == "init(0)"


def test_relational_operator_after_a_struct_field(tmp_path: Path) -> None:
    # `t.f > 0` once lexed '>' as recv_copy's closing bracket (an LALR state shared with
    # `c?<t.f>`): the model was refused; SPIN accepts it, and `c?<x>` must still parse
    src = (
        "typedef T { byte f };\nT t; byte x; chan c = [1] of { byte };\n"
        "active proctype P() {\n  t.f = 1; c!3; c?<x>;\n"
        "  assert((t.f > 0) && t.f < 2 && t.f >= 1 && x == 3);\n"
        "  assert(t.f > 1)\n}\n"
    )
    path = tmp_path / "field.pml"
    path.write_text(src)
    res = check_explicit(load_promela(path), CheckOptions())
    assert res.verdict.value == "violated"
    (bad,) = [r for r in res.results if r.verdict.value == "violated"]
    assert bad.trace is not None and "t.f > 1" in json.dumps(res.to_json())
