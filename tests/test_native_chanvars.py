"""Channel variables in the native back end. A rendezvous send on a channel variable is one joint
command per receive that may be on the same channel, so a model that passes channels around
has thousands of commands whose C differs only in constants; they share one function per shape
(:func:`absmc.native.shapes.share`, from :data:`~absmc.native.shapes.SHARE_MIN_COMMANDS`
commands on). Here sharing is forced on small models: the counts and verdicts stay SPIN's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import absmc.native.build as build
from absmc.engines.explicit.check import check_explicit
from absmc.kernel.run.options import CheckOptions
from absmc.lang.promela import load_promela
from absmc.native import cgen, shapes
from absmc.native.cgen import CGen
from absmc.native.shapes import ROWS_MACRO, tabulate

from .conftest import SHARED
from .native_helpers import assert_native_equals_python, cli_json, needs_native
from .spin import run_spin

pytestmark = [needs_native, pytest.mark.usefixtures("native_fast_compile")]

MODELS = Path(__file__).resolve().parent / "promela_models"

#: models whose channel variables are passed as parameters, over channels and by assignment
CHANNEL_VARIABLES = [
    "chan_passing.pml",
    "chan_reassigned.pml",
    "chan_local_reassigned.pml",
    "nested_run.pml",
]


@pytest.mark.parametrize("name", CHANNEL_VARIABLES)
def test_shared_command_code_gives_spins_counts_and_verdict(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = MODELS / name
    spin = run_spin(path, tmp_path)  # spin -o1: no dead-variable reset, as --no-reduce
    monkeypatch.setattr(cgen, "SHARE_MIN_COMMANDS", 1)
    code, res = cli_json("check", str(path), "--keep-going", "--backend", "native", "--no-reduce")
    assert res["results"][0]["stats"]["backend"] == "native"
    assert {p["stats"]["states"] for p in res["results"]} == {spin.states}
    # pan counts stored + matched states: every transition, plus the initial state
    assert {p["stats"]["transitions"] + 1 for p in res["results"]} == {spin.transitions}
    assert res["verdict"] == ("violated" if spin.errors else "holds")
    assert code == (1 if spin.errors else 0)


def test_joint_commands_of_one_shape_share_a_function(monkeypatch: pytest.MonkeyPatch) -> None:
    system = load_promela(MODELS / "chan_passing.pml")
    plain = CGen(system, ()).source("", "")
    monkeypatch.setattr(cgen, "SHARE_MIN_COMMANDS", 1)
    gen = CGen(system, ())
    shared = gen.source("", "")
    # every command's code is a call of a shape function; fewer shapes than commands
    assert 0 < len(gen.shapes) < len(system.commands)
    assert shared.count("static void S") == len(gen.shapes)
    assert sum(len(rows) for _, rows in gen.shapes.values()) == len(system.commands)
    assert "goto d" not in shared and "goto d" in plain
    # a command with a guard is called only where its guard or an error condition holds,
    # tested in place with its own literals
    calls = [x.strip() for x in shared.splitlines() if re.search(r"\bS\d+\(C, v, ", x)]
    assert any(x.startswith("if (") for x in calls)


@pytest.mark.parametrize(
    ("name", "ltl"),
    [(name, False) for name in CHANNEL_VARIABLES]
    # chan_local_reassigned's assertion fails in the product, which then goes to Python
    + [(name, True) for name in CHANNEL_VARIABLES if name != "chan_local_reassigned.pml"],
)
def test_guards_tested_from_tables_give_the_outcomes_of_guards_in_place(
    name: str, ltl: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At -O0 the runs of shared commands' guarded calls are tested from tables
    (shapes.tabulate): the same verdicts, states and transitions as the same source compiled
    with the guards in place (the macro left undefined), with partial-order reduction on (its
    counts depend on the order of the successors) and for a product search with an ltl block
    (its nested search is ordered too)."""
    model = tmp_path / name
    model.write_text((MODELS / name).read_text() + ("\nltl t { [] (_nr_pr > 1) }\n" if ltl else ""))
    system = load_promela(model)
    monkeypatch.setattr(cgen, "SHARE_MIN_COMMANDS", 1)
    source = CGen(system, ()).source("", "")
    assert f"#ifdef {ROWS_MACRO}" in source and "static const grow_t R[]" in source
    opts = CheckOptions(ltl="t" if ltl else None, keep_going=True)

    def outcomes(flags: tuple[str, ...]) -> list[tuple[str, str, int, int]]:
        monkeypatch.setitem(build.LEVEL_FLAGS, "-O0", flags)
        monkeypatch.setenv("ABSMC_CACHE_DIR", str(tmp_path / (flags[0] if flags else "plain")))
        result = check_explicit(system, opts, "native")
        searched = [r for r in result.results if not ltl or r.property == "t"]
        assert searched and {r.stats.extra.get("backend") for r in searched} == {"native"}
        return [
            (r.property, r.verdict.value, r.stats.states, r.stats.transitions)
            for r in result.results
        ]

    assert outcomes((f"-D{ROWS_MACRO}",)) == outcomes(())


def test_runs_of_guarded_calls_become_tables_in_their_order() -> None:
    """Three or more guarded calls at one indentation (their comments between) become one
    table and a loop, the calls kept under #else with their comments; a guard's literals go to
    its shape's table of literals, so two guards of one shape share a guard function; shorter
    runs, another indentation, an unguarded call and a guard that reads a local stay in place."""
    call = "            if ((v[{}] == {})) S{}(C, v, flags, K{}[{}]);"
    lines = [
        "        case 3: {",
        "            /* a */",
        call.format(5, 1, 2, 2, 0),
        "            /* b */",
        call.format(6, 2, 3, 3, 0),
        "            /* c */",
        "            if (((v[7] == 3) && (v[1] < 9))) S2(C, v, flags, NULL);",
        "            /* d */",
        "            S4(C, v, flags, K4[0]);",
        call.format(5, 1, 2, 2, 1),
        "                " + call.format(5, 4, 2, 2, 2).strip(),
        "            if ((t[0] == 1)) S2(C, v, flags, K2[3]);",
        "            break;",
    ]
    out, defs = tabulate(lines)
    assert out[:2] == ["        case 3: {", "            /* a */"]
    k = out.index("#else")
    table = out[2:k]
    assert table[0] == f"#ifdef {ROWS_MACRO}" and f"-D{ROWS_MACRO}" in build.compiler_flags("-O0")
    assert table[2:5] == [
        "                {G0, S2, K2[0], GP0[0]},",
        "                {G0, S3, K3[0], GP0[1]},",
        "                {G1, S2, NULL, GP1[0]},",
    ]
    assert table[6] == "            rows_run(C, v, flags, R, 3); }"
    assert out[k + 1 : k + 6] == [lines[2], lines[3], lines[4], lines[5], lines[6]]
    assert out[k + 6 :] == ["#endif", *lines[7:]]
    assert defs[0] == f"#ifdef {ROWS_MACRO}" and defs[-1] == "#endif"
    assert "static const int64_t GP0[][2] = {\n{5, 1},\n{6, 2}};" in defs
    assert "static int G0(ctx_t *C, const int64_t *v, const int64_t *q) ROWS_OPT;" in defs
    assert "return (v[q[0]] == q[1]);" in defs[3]
    assert "return ((v[q[0]] == q[1]) && (v[q[2]] < q[3]));" in defs[6]


#: a guard and an error condition that divide by zero (y is 0 at first): shared code tests
#: them in its function (the division flag), never in place
DIVIDING = """
byte x = 4; byte y = 0; byte n = 0;
active proctype p() {
  do
  :: n < 5 -> n++; y = n % 3
  :: x / y > 1 -> x--
  :: x > 0 && x / y == 0 -> x = 4
  od
}
"""


def test_shared_commands_that_may_divide_by_zero_keep_pythons_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tmp_path / "dividing.pml"
    model.write_text(DIVIDING)
    _, py = cli_json("check", str(model), "--backend", "python", "--keep-going")
    monkeypatch.setattr(cgen, "SHARE_MIN_COMMANDS", 1)
    gen = CGen(load_promela(model), ())
    lines = [x.strip() for x in gen.source("", "").splitlines()]
    # the call after each command's comment ("/* p(0): TEXT */"): tested in place where the
    # guard cannot divide by zero, called at once where it may (or is true)
    calls = {
        x.split(": ", 1)[1].removesuffix(" */"): lines[k + 1]
        for k, x in enumerate(lines)
        if x.startswith("/* p(0):")
    }
    assert calls["n < 5"] == "if ((v[2] < 5)) S0(C, v, flags, K0[0]);"
    assert calls["n++"].startswith("S")
    assert all(v.startswith("S") for k, v in calls.items() if "x / y" in k)
    code, nat = cli_json("check", str(model), "--backend", "native", "--keep-going")
    assert code == 1 and nat["verdict"] == py["verdict"] == "violated"
    assert_native_equals_python(nat, py)


@pytest.mark.slow
def test_mobile1_in_c_has_spins_states_and_ltl_verdict() -> None:
    """SPIN's Examples/LTL/mobile1.pml: 3,091 commands, most of them joint commands of
    rendezvous on channel variables; shared by shape by default."""
    model = SHARED / "benchmarks" / "ltl" / "mobile1.pml"
    if not model.exists():
        pytest.skip("../shared/benchmarks/ltl is not available")
    assert len(load_promela(model).commands) >= shapes.SHARE_MIN_COMMANDS
    _, res = cli_json("check", str(model), "--backend", "native", "--no-reduce", "--keep-going")
    safety = [r for r in res["results"] if r["kind"] != "ltl"]
    assert {r["stats"]["backend"] for r in safety} == {"native"}
    assert {r["stats"]["states"] for r in safety} == {30_652}  # SPIN's (spin -o1, pan -c0)
    code, res = cli_json("check", str(model), "-N", "ltl_0", "--backend", "native")
    r = next(x for x in res["results"] if x["property"] == "ltl_0")
    assert (code, r["verdict"], r["stats"]["backend"]) == (0, "holds", "native")
    assert r["stats"]["states"] == 59_442  # Spot's automaton: SPIN's product has 144,003
