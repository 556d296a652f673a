"""LTL in the abstraction methods (issue 10, item 7): ``fourvalued`` (may/must lassos, paper 004
§2.4) and ``types`` (the abstract program, choose-free lassos, paper 001) never contradict
explicit LTL (``unknown`` allowed and counted), every ``violated`` carries a lasso replayed on
the concrete model, each method proves and refutes a property of examples/ltl/abs_counter.gcl,
and the other methods refuse LTL naming the ones that accept it."""

from __future__ import annotations

import random

import pytest

from absmc.codegen.python import compile_system
from absmc.engines import registry
from absmc.engines.fourvalued import FourValuedOptions
from absmc.engines.typeabs import TypesOptions
from absmc.ir.ltl import NON_PROGRESS
from absmc.ir.system import System
from absmc.kernel.replay.trace import replay_saved
from absmc.kernel.run.options import CheckOptions, Limits
from absmc.kernel.run.result import PropertyResult, Verdict
from absmc.lang.domains import parse_bindings
from absmc.lang.gcl.parser import parse_gcl
from absmc.lang.loader import load_model

from .conftest import ROOT, SHARED, needs_shared, run_cli
from .test_symbolic_agreement import ATOMS_VARS, _state, random_processes

EXAMPLES = ROOT / "examples" / "ltl"
COUNTER = EXAMPLES / "abs_counter.gcl"


def _types(*bindings: str, rest: str = "concrete") -> TypesOptions:
    return TypesOptions(bindings=tuple(parse_bindings(list(bindings))), rest=rest)  # type: ignore[arg-type]


def _ltl(method: str, system: System, eopts: object, **kw: object) -> dict[str, PropertyResult]:
    names = [p.name for p in system.ltl if p.name != NON_PROGRESS]
    opts = CheckOptions(properties=names, limits=Limits(timeout=60), **kw)  # type: ignore[arg-type]
    res = registry.run(method, system, opts, eopts)
    return {r.property: r for r in res.results if r.kind == "ltl"}


def _replays(system: System, r: PropertyResult) -> None:
    """A violated LTL result carries a lasso that replays on the concrete semantics."""
    assert r.trace is not None and r.trace.replayed and r.trace.cycle_start is not None
    rows = [s.to_json() for s in r.trace.steps]
    replay_saved(compile_system(system), rows, r.trace.cycle_start)


@pytest.mark.parametrize(
    ("method", "eopts"),
    [("fourvalued", FourValuedOptions()), ("types", None)],
)
def test_each_method_proves_and_refutes_ltl_on_the_abstraction(method: str, eopts: object) -> None:
    system = load_model(COUNTER)
    if method == "types":
        eopts = _types("x=set(0,1)")
    got = _ltl(method, system, eopts)
    verdicts = {n: r.verdict for n, r in got.items()}
    assert verdicts == {
        "range": Verdict.HOLDS,
        "req": Verdict.HOLDS,
        "back": Verdict.VIOLATED,
        "stays": Verdict.VIOLATED,
    }
    for name in ("back", "stays"):
        _replays(system, got[name])
    if method == "fourvalued":  # something was really abstracted
        assert got["range"].extra["value"] == "t" and got["back"].extra["value"] == "f"
        assert got["range"].stats.extra["may_states"] > 0


def test_types_without_precision_stays_unknown_never_wrong() -> None:
    # signs cannot tell 1 - 1 from 1 + 0: every lasso uses choose
    system = load_model(COUNTER)
    got = _ltl("types", system, _types("x=signs"))
    assert {r.verdict for r in got.values()} == {Verdict.UNKNOWN}
    assert "choose" in got["range"].reason
    shown = got["range"].trace  # the abstract lasso, with token names, not replayed
    assert shown is not None and not shown.replayed and shown.cycle_start is not None
    assert shown.steps[1].state["x"] == "POS"


def test_an_abstract_cycle_that_does_not_close_concretely_is_unknown() -> None:
    # x grows forever: the abstract lasso (x > 0 stays) has no concrete lasso
    text = (
        "var x : int = 0;\nprocess P {\n  true -> x := x + 1;\n}\n"
        "predicate x > 0;\nltl zero: <> [] (x == 0);\nltl pos: [] (x >= 0);\n"
    )
    system = parse_gcl(text, "grow.gcl")
    four = _ltl("fourvalued", system, FourValuedOptions())
    assert four["pos"].verdict is Verdict.HOLDS  # infinite-state, proved on 2 abstract states
    assert four["zero"].verdict is Verdict.UNKNOWN
    assert "does not close concretely" in four["zero"].reason
    shown = four["zero"].trace  # the may-lasso over predicate values, not replayed
    assert shown is not None and not shown.replayed and shown.steps[-1].state["[x > 0]"]
    types = _ltl("types", system, _types("x=signs"))
    assert types["pos"].verdict is Verdict.HOLDS
    assert types["zero"].verdict is Verdict.UNKNOWN
    assert "does not close concretely" in types["zero"].reason


def test_the_abstraction_stutters_where_a_concrete_state_may_be_terminal() -> None:
    # x = 3 is terminal: the run stutters there with b fixed, violating "b toggles forever";
    # its abstract state (x > 0) also has steps (x = 1, 2), so without a stutter step the
    # abstraction would have no violating run and claim holds
    text = (
        "var x : int = 0;\nvar b : bool = false;\nprocess P {\n"
        "  x < 3 -> x := x + 1, b := !b;\n}\npredicate x > 0;\npredicate x == 0;\n"
        "ltl toggles: [] <> b && [] <> !b;\nltl grows: <> (x > 0);\n"
    )
    system = parse_gcl(text, "stop.gcl")
    assert _ltl("explicit", system, None)["toggles"].verdict is Verdict.VIOLATED
    four = _ltl("fourvalued", system, FourValuedOptions())
    types = _ltl("types", system, _types("x=signs"))
    for got in (four, types):
        assert got["toggles"].verdict is not Verdict.HOLDS
        assert got["grows"].verdict is Verdict.HOLDS
        if got["toggles"].verdict is Verdict.VIOLATED:
            _replays(system, got["toggles"])


def test_refinement_finds_the_predicate_an_ltl_proof_needs() -> None:
    # no predicates: --refine starts from the LTL atoms (x == 0, x >= 0); the may-lasso of
    # 'back' runs concretely but leaves the automaton where x - 1 == 0 -> x == 1 is added
    text = (
        "var x : int = 0;\nvar b : bool = false;\nprocess P {\n"
        "  !b -> x := x + 1, b := true;\n  b -> x := x - 1, b := false;\n}\n"
        "ltl back: [] <> (x == 0);\nltl pos: [] (x >= 0);\nltl two: <> (x == 2);\n"
    )
    system = parse_gcl(text, "flip.gcl")
    got = _ltl("fourvalued", system, FourValuedOptions(refine=True))
    assert got["back"].verdict is Verdict.HOLDS and got["pos"].verdict is Verdict.HOLDS
    assert got["two"].verdict is Verdict.VIOLATED
    _replays(system, got["two"])
    rounds = got["back"].iterations
    assert rounds is not None and len(rounds) == 2
    assert rounds[0]["values"]["back"] == "⊥" and "x == 1" in rounds[1]["predicates_added"]


def test_cli_refusals_name_the_methods_that_accept_ltl() -> None:
    run = run_cli("check", str(EXAMPLES / "terminate.pml"), "--method", "under")
    assert run.code == 2
    for name in ("explicit", "fourvalued", "types"):
        assert name in run.err
    fair = run_cli("check", str(COUNTER), "--method", "fourvalued", "--fairness", "weak")
    assert fair.code == 2 and "weak fairness" in fair.err and "Traceback" not in fair.err
    ok = run_cli("check", str(COUNTER), "--method", "types", "--abstract", "x=set(0,1)")
    assert ok.code == 1 and "back (ltl): violated" in ok.out


def _compare(system: System, methods: list[tuple[str, object]]) -> tuple[int, int]:
    """Run explicit and each abstraction method on every LTL property of ``system``: no
    contradiction, every violation replays. Returns (unknown, total) over the methods."""
    exact = _ltl("explicit", system, None)
    unknown = total = 0
    for method, eopts in methods:
        got = _ltl(method, system, eopts)
        for name, r in got.items():
            total += 1
            want = exact[name].verdict
            if r.verdict is Verdict.UNKNOWN:
                unknown += 1
                continue
            assert r.verdict is want, (system.file, method, name, r.reason)
            if r.verdict is Verdict.VIOLATED:
                _replays(system, r)
    return unknown, total


#: every model of examples/ltl; fourvalued builds its Systems the general way (no shortcut),
#: types abstracts every integer it reaches to one token (``--rest point``)
_OWN = [
    "abp.pml",
    "channel_order.pml",
    "counter_response.gcl",
    "deadlock.pml",
    "leader.pml",
    "lost_response.pml",
    "naive_mutex.pml",
    "never_mutex.pml",
    "never_response.pml",
    "peterson.pml",
    "remote_counter.pml",
    "response.pml",
    "terminate.pml",
    "traffic.pml",
    "abs_counter.gcl",
]


@pytest.mark.parametrize("name", _OWN)
def test_own_ltl_models_agree_with_explicit(name: str) -> None:
    system = load_model(EXAMPLES / name)
    methods: list[tuple[str, object]] = [
        ("fourvalued", FourValuedOptions(shortcut=False)),
        ("types", _types(rest="point")),
    ]
    unknown, total = _compare(system, methods)
    print(f"{name}: {total} answers, {unknown} unknown, 0 contradictions")


def _formula(rng: random.Random, depth: int) -> str:
    if depth <= 0 or rng.random() < 0.25:
        return f"({_state(rng, list(ATOMS_VARS), 0)})"
    a = _formula(rng, depth - 1)
    k = rng.randrange(9)
    if k < 4:
        return f"{rng.choice(['[]', '<>', 'X', '!'])} {a}"
    b = _formula(rng, depth - 1)
    return f"({a} {rng.choice(['U', 'W', '&&', '||', '->'])} {b})"


def random_ltl_system(seed: int) -> str:
    """A finite GCL system (``r, s : 0..3``, ``f : bool``, ``x : int`` kept in -2..3 by the
    guards), two seed predicates over ``x`` and 3 random LTL properties."""
    rng = random.Random(seed)
    lines = ["var r, s : 0..3;", "var f : bool;", "var x : int;"]
    lines += random_processes(rng, ["s", "r + 1", "3 - r"])
    for pred in rng.sample(["x > 0", "x == 0", "x < 0", "x >= 2", "x == 1"], 2):
        lines.append(f"predicate {pred};")
    for k in range(3):
        lines.append(f"ltl l{k}: {_formula(rng, 3)};")
    return "\n".join(lines) + "\n"


def _generated(seeds: range) -> tuple[int, int]:
    unknown = total = 0
    for seed in seeds:
        system = parse_gcl(random_ltl_system(seed), f"gen{seed}.gcl")
        methods: list[tuple[str, object]] = [
            ("fourvalued", FourValuedOptions()),
            ("types", _types("x=signs")),
        ]
        u, t = _compare(system, methods)
        unknown, total = unknown + u, total + t
    return unknown, total


def test_generated_systems_agree_with_explicit_ltl() -> None:
    unknown, total = _generated(range(3))  # seeds 0-2 in CI, 3-204 under -m slow
    print(f"abstraction vs explicit LTL: {total} answers, {unknown} unknown, 0 contradictions")
    assert total == 3 * 3 * 2 and unknown < total


@pytest.mark.slow
def test_generated_systems_agree_with_explicit_ltl_many() -> None:
    unknown, total = _generated(range(3, 205))
    print(f"abstraction vs explicit LTL: {total} answers, {unknown} unknown, 0 contradictions")


_CORPUS_SMALL = ["ltl_example.pml", "ltl_always_eventually.pml", "zune.pml", "diskhead.pml"]


@needs_shared
@pytest.mark.parametrize("name", _CORPUS_SMALL)
def test_shared_corpus_small_models_agree_with_explicit(name: str) -> None:
    system = load_model(SHARED / "benchmarks" / "ltl" / name)
    methods: list[tuple[str, object]] = [
        ("fourvalued", FourValuedOptions(shortcut=False)),
        ("types", _types(rest="point")),
    ]
    unknown, total = _compare(system, methods)
    print(f"{name}: {total} answers, {unknown} unknown, 0 contradictions")
