"""Less C for the compiler (issue 25): a shared command's in-place test weakens its error
conditions and factors common conjuncts (:func:`absmc.native.shapes.weaken`,
:func:`~absmc.native.shapes.factored`), the instances of a proctype share one process function
(:func:`~absmc.native.shapes.share_processes`) and ``-O1`` leaves out two costly passes
(:data:`absmc.native.build.LEVEL_FLAGS`). The conditions are checked against the reference
evaluator, the generated code against the Python back end's counts."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from absmc.codegen.plan import may_raise
from absmc.ir.evaluate import evaluate
from absmc.ir.expr import disj
from absmc.ir.sorts import RangeSort
from absmc.ir.system import System
from absmc.lang.promela import load_promela
from absmc.native import build, cgen
from absmc.native.cgen import CGen
from absmc.native.shapes import factored, weaken

from .conftest import SHARED
from .native_helpers import assert_native_equals_python, cli_json, needs_native

MODELS = Path(__file__).resolve().parent / "promela_models"
LEADER0 = SHARED / "benchmarks" / "promela" / "leader0.pml"


def _random_env(system: System, rng: random.Random) -> dict[str, int]:
    env: dict[str, int] = {}
    for v in system.variables:
        sort = v.sort
        if isinstance(sort, RangeSort) and sort.hi - sort.lo <= 16:
            env[v.name] = rng.randint(sort.lo, sort.hi)
        else:  # small values make the equalities of the conditions hold now and then
            env[v.name] = rng.choice((0, 1, 2, 3, 5, v.init))
    return env


@pytest.mark.parametrize("path", [LEADER0, MODELS / "chan_local_reassigned.pml"])
def test_weakened_and_factored_tests_are_implied_and_equal(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"{path} not present")
    system = load_promela(path)
    rng = random.Random(25)
    changed = grouped = 0
    for c in system.commands:
        errors = [e for e, _ in c.errors if not may_raise(e)]
        if not errors or may_raise(c.guard):
            continue
        weak = [weaken(e) for e in errors]
        tests = [*weak, c.guard]
        both = factored(tests)
        changed += weak != errors
        grouped += both != disj(tests)
        for _ in range(60):
            env = _random_env(system, rng)
            for e, w in zip(errors, weak, strict=True):
                # a weakened condition holds wherever the condition does
                assert not evaluate(e, env) or evaluate(w, env), (c.text(), e)
            assert bool(evaluate(both, env)) == bool(evaluate(disj(tests), env))
    assert changed > 0 and grouped > 0  # the models have conditions to weaken and factor


@needs_native
def test_instances_of_a_proctype_share_a_function_and_keep_the_counts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(cgen, "SHARE_MIN_COMMANDS", 1)
    if LEADER0.exists():
        src = CGen(load_promela(LEADER0), ()).source("", "")
        # leader0's five node processes: all but the last (whose end needs no later process
        # to have ended) share one function, each calling it with its row of the literals
        assert src.count("static void P0(") == 1
        assert sum(f"P0(C, v, flags, PK0[{r}]);" in src for r in range(6)) == 4
    model = MODELS / "chan_local_reassigned.pml"
    assert "static void P0(" in CGen(load_promela(model), ()).source("", "")
    monkeypatch.setenv("ABSMC_NATIVE_OPT", "-O1")  # with LEVEL_FLAGS
    args = ("check", str(model), "--keep-going", "--no-reduce")
    _, nat = cli_json(*args, "--backend", "native", "--workers", "1")
    _, py = cli_json(*args, "--backend", "python")
    assert_native_equals_python(nat, py)


def test_o1_leaves_out_dominator_opts_and_jump_threading() -> None:
    assert build.compiler_flags("-O1")[:3] == (
        "-O1",
        "-fno-tree-dominator-opts",
        "-fno-thread-jumps",
    )
    assert build.compiler_flags("-O2")[0] == "-O2"
    assert "-fno-thread-jumps" not in build.compiler_flags("-O2")
