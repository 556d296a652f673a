"""The four-valued method on Promela models (paper 004 with SPIN's semantics in the IR): the
corpus of ../shared with predicates = none is exact search, the bakery and Fischer examples of
§4 in Promela (t at every bound, f for the buggy variants, ⊥ for too weak predicates), atomic
chains, timeout, assertions and model errors under abstraction, and refusals."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from absmc.codegen.python import compile_system
from absmc.engines.explicit import check_explicit
from absmc.engines.fourvalued import check_fourvalued
from absmc.engines.fourvalued.build import HELPER, build_abstraction
from absmc.engines.fourvalued.export import to_promela_models
from absmc.ir import System
from absmc.kernel.explore.search import search
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import Result, Verdict
from absmc.lang.loader import load_model

from .conftest import EXAMPLES, FIXTURES, SHARED, needs_shared, run_cli
from .fourvalued_helpers import reexecute
from .spin import run_spin

CORPUS = SHARED / "benchmarks" / "promela"
ROWS = list(csv.DictReader((CORPUS / "expected.csv").open())) if CORPUS.exists() else []
PROMELA = EXAMPLES / "promela"
FEATURES = FIXTURES / "fourvalued" / "features.pml"
WORD = {"t": Verdict.HOLDS, "f": Verdict.VIOLATED, "⊥": Verdict.UNKNOWN}


def values(result: Result) -> dict[str, str]:
    return {r.property: r.extra["value"] for r in result.results}


def verdicts(result: Result) -> dict[str, Verdict]:
    return {r.property: r.verdict for r in result.results}


def example(name: str, log2: int = 12, **defines: str) -> System:
    return load_model(PROMELA / f"{name}.pml", {"MAX": str(2**log2), **defines})


def mutex_of(result: Result) -> str:
    (name,) = [r.property for r in result.results if r.kind == "assert"]
    return name


# -- the corpus with predicates = none: exact search -------------------------------------------
#: the costliest rows (20-40 s each of one xdist worker on a loaded 2-core machine) run under
#: -m slow
SLOW_ROWS = {"sort.pml", "leader0.pml", "snoopy.pml", "gear.1.pm", "brp.1.pm"}


@pytest.mark.parametrize(
    "row",
    [pytest.param(r, marks=pytest.mark.slow) if r["file"] in SLOW_ROWS else r for r in ROWS],
    ids=[r["file"] for r in ROWS],
)
def test_corpus_without_predicates_gives_the_verdicts_and_states_of_exact_search(
    row: dict[str, str],
) -> None:
    system = load_model(CORPUS / row["file"])
    exact = check_explicit(system, CheckOptions(keep_going=True, reduce=False))
    states = exact.results[0].stats.states
    spin_violated = int(row["errors_c0"]) > 0
    assert exact.verdict is (Verdict.VIOLATED if spin_violated else Verdict.HOLDS)
    # nothing is abstracted: both abstractions are the concrete model, searched once
    r = check_fourvalued(system, CheckOptions())
    assert verdicts(r) == verdicts(exact)
    extra = r.results[0].stats.extra
    assert extra["abstracted_variables"] == 0
    assert extra["may_states"] == extra["must_states"] == states == int(row["spin_o1_states"])
    for x in r.results:
        assert x.extra["value"] == {"holds": "t", "violated": "f"}[x.verdict.value]
        if x.trace is not None:
            assert x.trace.replayed
    # the general construction (timeout in guards, deadlock as a property) agrees too
    general = check_fourvalued(system, CheckOptions(), shortcut=False)
    assert verdicts(general) == verdicts(exact)
    assert general.results[0].stats.extra["may_states"] == states


def test_atomic_chains_are_kept_and_assertions_are_transition_properties() -> None:
    if not ROWS:
        pytest.skip("../shared/benchmarks/promela is not available")
    # fischer.1.pm: init's atomic run sequence; with atomic ignored there were 735 states
    r = check_fourvalued(load_model(CORPUS / "fischer.1.pm"), CheckOptions(), shortcut=False)
    assert r.results[0].stats.extra["may_states"] == 636
    # peterson.pml: assert@8 is an assertion on transitions, not a state condition
    r = check_fourvalued(load_model(CORPUS / "peterson.pml"), CheckOptions(), shortcut=False)
    assert values(r) == {"assert@8": "t", "assert@15": "t", "no-deadlock": "t",
                         "no-model-error": "t"}  # fmt: skip


# -- the §4 examples in Promela ----------------------------------------------------------------
COUNTS = {"lamport": (276, 119), "fischer": (1084, 81)}
#: the (bound, model) pairs CI runs of the bound sweeps below
CI_BOUNDS = {(12, "lamport"), (24, "lamport"), (12, "fischer")}


# lamport at the extreme bounds in CI, the ones between under -m slow; fischer at the smallest
# bound in CI, the others (~35 s each on a loaded 2-core machine) under -m slow
@pytest.mark.parametrize(
    ("name", "log2"),
    [
        *(
            pytest.param(name, b, marks=[] if (b, name) in CI_BOUNDS else pytest.mark.slow)
            for name in ("lamport", "fischer")
            for b in (12, 16, 20, 24)
        )
    ],
)
def test_mutual_exclusion_is_t_with_the_same_abstraction_at_every_bound(
    name: str, log2: int
) -> None:
    system = example(name, log2)
    assert len(system.predicates) == {"lamport": 6, "fischer": 11}[name]  # pred declarations
    r = check_fourvalued(system, CheckOptions())
    assert set(values(r).values()) == {"t"}
    extra = r.results[0].stats.extra
    assert (extra["may_states"], extra["must_states"]) == COUNTS[name]
    assert extra["abstracted_variables"] == {"lamport": 2, "fischer": 3}[name]


@pytest.mark.parametrize("name", ["lamport", "fischer"])
def test_exact_search_agrees_at_a_small_bound(name: str) -> None:
    system = example(name, 4)
    exact = check_explicit(system, CheckOptions(keep_going=True, reduce=False))
    assert exact.verdict is Verdict.HOLDS
    assert exact.results[0].stats.states > COUNTS[name][0]


@pytest.mark.parametrize(
    ("name", "steps", "log2"),
    [
        *(
            pytest.param(
                name, steps, b, marks=[] if (b, name[:-6]) in CI_BOUNDS else pytest.mark.slow
            )
            for name, steps in (("lamport_buggy", 14), ("fischer_buggy", 10))
            for b in (12, 24)
        )
    ],
)
def test_buggy_variants_are_f_with_a_replayed_concrete_trace(
    name: str, steps: int, log2: int
) -> None:
    system = example(name, log2)
    r = check_fourvalued(system, CheckOptions())
    mutex = mutex_of(r)
    res = {x.property: x for x in r.results}[mutex]
    assert res.verdict is Verdict.VIOLATED
    assert (res.extra["value"], res.extra["confirmed_by"]) == ("f", "must-system")
    assert res.trace is not None and res.trace.replayed and len(res.trace.steps) - 1 == steps
    assert res.trace.note is not None and "assertion violated: ncrit == 1" in res.trace.note
    reexecute(system, res.trace, mutex)
    exact = check_explicit(example(name, 3), CheckOptions(keep_going=True))
    assert verdicts(exact)[mutex] is Verdict.VIOLATED


def test_too_weak_predicates_give_bottom_with_the_unconfirmed_may_trace() -> None:
    system = example("lamport", 12, WEAK="1")  # without the ticket order
    r = check_fourvalued(system, CheckOptions())
    res = {x.property: x for x in r.results}[mutex_of(r)]
    assert res.verdict is Verdict.UNKNOWN
    assert {k: res.extra[k] for k in ("may", "must", "value")} == {
        "may": "violated",
        "must": "holds",
        "value": "⊥",
    }
    assert res.trace is not None and not res.trace.replayed
    last = res.trace.steps[-1].state
    assert last["ncrit"] == 2 and last["[n[0] == 0]"] is False  # an abstract state
    assert res.extra["unconfirmed"].endswith("is not enabled")
    assert res.trace.note is not None and "may violate" in res.trace.note


# -- Promela features under abstraction --------------------------------------------------------
def test_features_model_chains_timeout_assertions_and_index_errors() -> None:
    system = load_model(FEATURES)
    a = build_abstraction(system, system.properties, deadlock=True)
    assert a.partition.abstracted == {"x", "y"}
    # A's atomic chain runs over abstracted data: release (may) / stall (must) helpers
    helpers = {m.kind: [m.system.commands[i] for i, o in enumerate(m.origin) if o == HELPER]
               for m in (a.may, a.must)}  # fmt: skip
    assert [c.label for c in helpers["may"]] == ["release"]
    assert [(c.label, c.exclusive) for c in helpers["must"]] == [("stall", "A(0)")]
    # the timeout command lost its flag and runs in a process of its own
    assert not any("timeout" in c.flags for c in a.may.system.commands)
    assert any(p.name == "A(0)~timeout" for p in a.may.system.processes)
    r = check_fourvalued(system, CheckOptions())
    exact = verdicts(check_explicit(system, CheckOptions(keep_going=True)))
    assert values(r) == {"assert@20": "t", "assert@30": "⊥", "no-deadlock": "t",
                         "no-model-error": "f"}  # fmt: skip
    for x in r.results:
        if x.extra["value"] != "⊥":
            assert x.verdict is exact[x.property]
        if x.extra["value"] == "f":
            assert x.trace is not None and x.trace.replayed
            reexecute(system, x.trace, x.property)
    err = {x.property: x for x in r.results}["no-model-error"]
    assert err.trace is not None and "array index out of bounds" in (err.trace.note or "")


@needs_shared
def test_an_assertion_that_cannot_be_abstracted_is_refused_at_its_location(
    tmp_path: Path,
) -> None:
    model = tmp_path / "div.pml"
    model.write_text(
        "int x = 5;\npred x > 0;\nactive proctype P() {\n  x = x - 5;\n  assert(10 / x > 1)\n}\n"
    )
    r = run_cli("check", str(model), "--method", "fourvalued")
    assert r.code == 2, r.err
    (line,) = r.err.strip().splitlines()
    assert line.startswith(f"{model}:5:") and "assertion that can divide by zero" in line
    # explicit search handles the model (the division by zero is a model error)
    assert run_cli("check", str(model)).code == 1


def test_cli_json_for_a_promela_example() -> None:
    r = run_cli(
        "check", "examples/promela/fischer_buggy.pml", "--method", "fourvalued", "--json",
        "-D", "MAX=65536",
    )  # fmt: skip
    assert r.code == 1, r.err
    out = json.loads(r.out)
    mutex = out["results"][0]
    assert (mutex["verdict"], mutex["value"], mutex["confirmed_by"]) == (
        "violated",
        "f",
        "must-system",
    )
    assert mutex["trace"][-1]["state"]["ncrit"] == 2
    assert mutex["stats"]["must_states"] == 257
    assert any(n.startswith("abstracted: now") for n in out["notes"])


# -- export: SPIN checks the abstract models -------------------------------------------------
EXPORTED = {
    "lamport": (PROMELA / "lamport.pml", False, False),
    "fischer_buggy": (PROMELA / "fischer_buggy.pml", True, True),
    "features": (FEATURES, True, True),
    "p117": (CORPUS / "p117.pml", True, True),
    "abp": (CORPUS / "abp.pml", False, False),
}


# p117, abp and fischer_buggy (30-35 s each on a loaded 2-core machine) under -m slow: the
# features model has atomic chains, timeout and assertions, and fails in both abstractions as
# fischer_buggy does; lamport holds in both
@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.slow) if n in ("p117", "abp", "fischer_buggy") else n
        for n in EXPORTED
    ],
)
def test_spin_accepts_the_exported_abstractions_and_agrees(name: str, tmp_path: Path) -> None:
    path, may_violated, must_violated = EXPORTED[name]
    if not path.exists():
        pytest.skip(f"{path} is not available")
    system = load_model(path)
    abstraction = build_abstraction(system, system.properties, deadlock=True, shortcut=False)
    texts = to_promela_models(abstraction)
    # Bonsai's encoding: if-statements and assignments, no conditional expressions
    for text in texts.values():
        assert not re.search(r"\([^()]* -> [^()]* : [^()]*\)", text)
    for kind, model in (("may", abstraction.may), ("must", abstraction.must)):
        d = tmp_path / kind
        d.mkdir()
        (d / "model.pml").write_text(texts[kind])
        spin = run_spin(d / "model.pml", d, claim=True, optimize="-O0")
        ours = search(compile_system(model.system), keep_going=True, check_deadlock=False)
        assert (spin.errors > 0) == bool(ours.violations), kind
        assert bool(ours.violations) == (may_violated if kind == "may" else must_violated)
        exclusive = any(c.exclusive for c in model.system.commands)
        assert ("byte _excl = 0;" in texts[kind]) == exclusive
        if not exclusive and not ours.violations:  # (SPIN also stores atomic intermediates)
            assert spin.states == ours.states, kind


def test_export_command_writes_both_promela_abstractions(tmp_path: Path) -> None:
    out = tmp_path / "features.pml"
    r = run_cli(
        "export", str(FEATURES), "--method", "fourvalued", "--to", "promela", "-o", str(out)
    )
    assert r.code == 0, r.err
    may = (tmp_path / "features.may.pml").read_text()
    must = (tmp_path / "features.must.pml").read_text()
    assert "bool p0_x_lt_3 = true;" in may and "byte p0_x_lt_3 = 1;" in must
    assert "byte A_0___p = 12;" in may  # A(0)._p as a Promela identifier
    assert "A(0) is blocked: it loses exclusive control" in may
    assert "assert(" in must and "never {" in must
