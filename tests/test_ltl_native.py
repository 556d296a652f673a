"""LTL in C (absmc.native.ltl, runtime_ltl.c): verdicts and product state counts equal to the
Python back end's (the same automata, step order and nested DFS), SPIN's verdicts on the LTL
corpus, lassos replayed, clean fallbacks to Python."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from absmc.engines.explicit.check import check_explicit
from absmc.errors import OptionError
from absmc.ir.ltl import NON_PROGRESS
from absmc.ir.system import System
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import PropertyResult, Verdict
from absmc.lang.gcl import parse_gcl
from absmc.lang.loader import load_model
from absmc.native import native_available
from absmc.native.ltl import POR

from .conftest import EXAMPLES, SHARED, needs_shared
from .test_ltl_abstraction import random_ltl_system

CORPUS = SHARED / "benchmarks" / "ltl"

pytestmark = [
    pytest.mark.skipif(not native_available(), reason="no C compiler"),
    pytest.mark.usefixtures("native_fast_compile"),  # outcomes, not speed
]


def _by_name(system: System, opts: CheckOptions, backend: str) -> dict[str, PropertyResult]:
    result = check_explicit(system, opts, backend)  # type: ignore[arg-type]
    return {r.property: r for r in result.results}


def _assert_same(
    system: System, opts: CheckOptions, safety_may_fail: bool = False
) -> dict[str, PropertyResult]:
    """C and Python agree on every property (verdict, and product states for ltl ones, both
    searches reduced or neither, unless only C reduces); each
    C lasso replays (a trace with a cycle). With ``safety_may_fail`` a C search may have met a
    safety violation (then Python searched: noted, and a safety property is violated).
    Returns the C results."""
    py = _by_name(system, opts, "python")
    c = _by_name(system, opts, "native")
    assert set(py) == set(c)
    fell_back = any("native_fallback" in r.stats.extra for r in c.values())
    if fell_back:
        assert safety_may_fail
        assert any(r.kind != "ltl" and r.verdict is Verdict.VIOLATED for r in c.values())
    for name, r in c.items():
        if fell_back:
            assert "met a safety violation" in r.stats.extra["native_fallback"]
        assert (name, r.verdict) == (name, py[name].verdict)
        if r.kind == "ltl" and not fell_back:
            assert r.stats.extra["backend"] == "native"
            reduced = [POR in x.stats.extra.get("reductions", []) for x in (r, py[name])]
            if reduced == [True, False]:  # only C reduced (test_ltl_por.py)
                assert r.stats.states <= py[name].stats.states, name
            else:  # the same search, reduced or not (kernel/ltl/por.py, runtime_ltl.c)
                assert reduced[0] == reduced[1], name
                assert (name, r.stats.states) == (name, py[name].stats.states)
            if r.verdict is Verdict.VIOLATED:
                assert r.trace is not None and r.trace.cycle_start is not None
    return c


def _corpus_rows() -> list[dict[str, str]]:
    with (CORPUS / "expected.csv").open() as f:
        return list(csv.DictReader(f))


_CHEAP = {"ltl_always_eventually.pml", "ltl_example.pml", "zune.pml", "diskhead.pml"}


def corpus_params(cheap: set[str], fair: bool = True) -> list[object]:
    """The LTL corpus's rows (``expected.csv``) as test parameters, named FILE-LTL[-fair]:
    the ``cheap`` files in CI, the others under ``-m slow``; without ``fair``, the rows with
    weak fairness are left out (none when the corpus is absent)."""
    rows = _corpus_rows() if CORPUS.is_dir() else []
    return [
        pytest.param(
            r,
            id=f"{r['file']}-{r['ltl'] or 'ltl'}{'-fair' if r['weak_fairness'] == '1' else ''}",
            marks=[] if r["file"] in cheap else [pytest.mark.slow],
        )
        for r in rows
        if fair or r["weak_fairness"] == "0"
    ]


@needs_shared
@pytest.mark.parametrize("row", corpus_params(_CHEAP))
def test_corpus_c_equals_python_equals_spin(row: dict[str, str]) -> None:
    system = load_model(CORPUS / row["file"])
    name = row["ltl"] or next(p.name for p in system.ltl if p.name != NON_PROGRESS)
    fair = row["weak_fairness"] == "1"
    c = _assert_same(system, CheckOptions(ltl=name, fairness="weak" if fair else "none"))
    assert c[name].verdict.value == row["verdict"]


@pytest.mark.parametrize(
    "seed", [pytest.param(s, marks=[] if s < 3 else [pytest.mark.slow]) for s in range(40)]
)
def test_generated_systems_c_equals_python(seed: int) -> None:
    system = parse_gcl(random_ltl_system(seed), f"gen{seed}.gcl")
    _assert_same(system, CheckOptions(), safety_may_fail=True)
    for name in ("l0", "l1", "l2"):  # SPIN's -N: no deadlock check, C decides
        _assert_same(system, CheckOptions(ltl=name), safety_may_fail=True)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(20))
def test_generated_systems_weakly_fair_c_equals_python(seed: int) -> None:
    system = parse_gcl(random_ltl_system(seed), f"gen{seed}.gcl")
    for name in ("l0", "l1", "l2"):
        _assert_same(system, CheckOptions(ltl=name, fairness="weak"), safety_may_fail=True)


_RESPONSE = """
var x : 0..3;
var y : bool;
process P {
  x < 3 -> x := x + 1;
  x == 3 -> x := 0;
}
process Q {
  !y -> y := true;
  y -> y := false;
}
ltl inf3: []<>(x == 3);
ltl stable: <>[](x == 0);
ltl bounded: [](x <= 3 && (x == 3 -> X (x == 3 || x == 0)));
"""


def test_other_stores_fall_back_to_python_noted() -> None:
    """The tree store is the safety search's only (the product search has the exact,
    hash-compact and bitstate ones: test_ltl_native_stores.py)."""
    system = parse_gcl(_RESPONSE, "response.gcl")
    for opts, why in [
        (CheckOptions(store="tree"), "tree store"),
    ]:
        with pytest.raises(OptionError, match=why):
            check_explicit(system, opts, "native")
        auto = _by_name(system, opts, "auto")
        py = _by_name(system, opts, "python")
        for name, r in auto.items():
            assert why in r.stats.extra["native_fallback"]
            assert r.verdict == py[name].verdict


def test_safety_violation_met_in_c_is_reported_by_python() -> None:
    system = parse_gcl(_RESPONSE + "invariant small: x < 3;\n", "response.gcl")
    c = _by_name(system, CheckOptions(ltl="inf3"), "native")
    assert c["small"].verdict is Verdict.VIOLATED and c["small"].trace is not None
    assert "met a safety violation" in c["inf3"].stats.extra["native_fallback"]


def test_response_verdicts_and_lasso_in_c() -> None:
    system = parse_gcl(_RESPONSE, "response.gcl")
    c = _assert_same(system, CheckOptions())
    assert c["bounded"].verdict is Verdict.HOLDS
    # without fairness Q may run forever: P's x stays put
    assert c["inf3"].verdict is Verdict.VIOLATED
    assert c["stable"].verdict is Verdict.VIOLATED


def test_weak_fairness_in_c() -> None:
    """SPIN's -f in C: with weak fairness P must move, so x reaches 3 infinitely often; the
    same verdicts and product states (with the counter copies) as Python, the lasso of
    ``stable`` replayed as a weakly fair one."""
    system = parse_gcl(_RESPONSE, "response.gcl")
    c = _assert_same(system, CheckOptions(fairness="weak"))
    assert c["inf3"].verdict is Verdict.HOLDS
    assert c["stable"].verdict is Verdict.VIOLATED
    assert c["bounded"].verdict is Verdict.HOLDS
    assert c["inf3"].stats.extra["backend"] == "native"


def test_auto_answers_a_small_product_in_python() -> None:
    system = parse_gcl(_RESPONSE, "response.gcl")
    auto = _by_name(system, CheckOptions(ltl="stable"), "auto")
    assert auto["stable"].verdict is Verdict.VIOLATED
    assert "backend" not in auto["stable"].stats.extra  # decided before the 50,000-state cap


def test_auto_makes_the_ltl_library_source_in_a_forked_child(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``auto``'s C build beside the Python product search makes its source in a forked child
    (no GIL taken from the search): past the (lowered) switch the C search answers from that
    library, with the Python back end's verdict."""
    import os

    import absmc.engines.explicit.native as nat
    from absmc.native import background

    monkeypatch.setenv("ABSMC_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(background.FORK_ENV, raising=False)
    calls: list[int] = []
    parent = os.getpid()

    def watched(make: object, on_child: object) -> str:
        calls.append(os.getpid())
        return background.run_forked(make, on_child)  # type: ignore[arg-type]

    monkeypatch.setattr(nat, "run_forked", watched)
    system = parse_gcl(_RESPONSE, "response.gcl")
    python = _by_name(system, CheckOptions(ltl="stable"), "python")
    monkeypatch.setattr(nat, "AUTO_SWITCH_STATES", 2)  # the product counts as large
    auto = _by_name(system, CheckOptions(ltl="stable"), "auto")
    assert calls == [parent]
    assert auto["stable"].stats.extra["backend"] == "native"
    assert auto["stable"].verdict is python["stable"].verdict is Verdict.VIOLATED


_LONG_CYCLE = """
var x : 0..19999;
process P {
  x < 19999 -> x := x + 1;
  x == 19999 -> x := 0;
}
ltl inf: []<>(x == 0);
"""


def test_auto_hands_the_product_search_to_c_once_its_library_is_built(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A product below the 50,000-state bound that Python would search to its end moves to C
    as soon as C's library is ready (here at once: the same library is in the cache), with
    C's states and verdict."""
    monkeypatch.setenv("ABSMC_CACHE_DIR", str(tmp_path))
    system = parse_gcl(_LONG_CYCLE, "cycle.gcl")
    native = _by_name(system, CheckOptions(ltl="inf"), "native")  # compiled and cached
    assert native["inf"].verdict is Verdict.HOLDS
    assert native["inf"].stats.states < 50_000
    auto = _by_name(system, CheckOptions(ltl="inf"), "auto")
    assert auto["inf"].stats.extra["backend"] == "native"
    assert (auto["inf"].verdict, auto["inf"].stats.states) == (
        Verdict.HOLDS,
        native["inf"].stats.states,
    )


def test_auto_searches_a_model_of_many_commands_in_c_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past AUTO_PYTHON_MAX_COMMANDS commands (here lowered to 1) ``auto`` does not make the
    Python search first: the small product that Python answers by default is C's, and so is
    the safety search, compiled at AUTO_OPT as after a Python search (then upgraded)."""
    import absmc.engines.explicit.native as nat
    from absmc.native.semantics import NativeSemantics

    monkeypatch.delenv("ABSMC_NATIVE_OPT", raising=False)  # auto's own levels
    levels: list[str | None] = []
    init = NativeSemantics.__init__

    def spy(
        self: NativeSemantics,
        system: System,
        props: object,
        opt: str | None = None,
        *args: object,
        **kwargs: object,
    ) -> None:
        levels.append(opt)
        init(self, system, props, opt, *args, **kwargs)  # type: ignore[arg-type]

    system = parse_gcl(_RESPONSE, "response.gcl")
    monkeypatch.setattr(nat, "AUTO_PYTHON_MAX_COMMANDS", 1)
    auto = _by_name(system, CheckOptions(ltl="stable"), "auto")
    assert auto["stable"].stats.extra["backend"] == "native"
    assert auto["stable"].verdict is Verdict.VIOLATED
    monkeypatch.setattr(NativeSemantics, "__init__", spy)
    safety = check_explicit(system, CheckOptions(), "auto")
    assert all(r.stats.extra.get("backend") == "native" for r in safety.results)
    assert levels == [nat.AUTO_OPT]


def test_auto_searches_a_weakly_fair_product_in_c_at_once() -> None:
    """Under weak fairness only the C product search reduces, so ``auto`` does not search the
    (unreduced) Python product first, even for a small one; without reductions it does."""
    system = parse_gcl(_RESPONSE, "response.gcl")
    fair = CheckOptions(ltl="stable", fairness="weak")
    auto = _by_name(system, fair, "auto")
    python = _by_name(system, fair, "python")
    assert auto["stable"].stats.extra["backend"] == "native"
    assert auto["stable"].verdict is python["stable"].verdict
    plain = _by_name(system, CheckOptions(ltl="stable", fairness="weak", reduce=False), "auto")
    assert "backend" not in plain["stable"].stats.extra  # Python answered first
    assert plain["stable"].verdict is python["stable"].verdict


@needs_shared
@pytest.mark.slow
def test_auto_moves_a_large_product_to_c() -> None:
    system = load_model(CORPUS / "train.pml")
    auto = _by_name(system, CheckOptions(ltl="c1"), "auto")
    assert auto["c1"].verdict is Verdict.HOLDS
    assert auto["c1"].stats.extra["backend"] == "native"
    assert auto["c1"].stats.states == 101_561


_TERMINATES = """
var x : 0..3;
process P {
  x < 3 -> x := x + 1;
}
"""


@pytest.mark.parametrize(
    ("model", "verdict"),
    [("abp.pml", Verdict.VIOLATED), ("response.pml", Verdict.VIOLATED), (None, Verdict.HOLDS)],
)
def test_non_progress_cycles_in_c(model: str | None, verdict: Verdict) -> None:
    """SPIN's -l in C: the same verdicts and product states as Python; a terminal state does
    not stutter (a model that stops has no non-progress cycle)."""
    from pathlib import Path

    if model is None:
        system = parse_gcl(_TERMINATES, "stops.gcl")
    else:
        system = load_model(Path(__file__).parent.parent / "examples" / "ltl" / model)
    c = _assert_same(system, CheckOptions(non_progress=True, check_deadlock=False))
    assert c[NON_PROGRESS].verdict is verdict
    assert c[NON_PROGRESS].stats.extra["backend"] == "native"


@needs_shared
def test_non_progress_in_c_equals_spin_on_diskhead() -> None:
    """diskhead.pml has progress labels: SPIN 6.5.2's ``pan -l`` (-DNP -DNOREDUCE) finds no
    non-progress cycle in 403 stored states; C stores the same (a never claim-free product of
    the same size)."""
    c = _assert_same(load_model(CORPUS / "diskhead.pml"), CheckOptions(non_progress=True))
    assert (c[NON_PROGRESS].verdict, c[NON_PROGRESS].stats.states) == (Verdict.HOLDS, 403)


def test_claim_only_library_has_no_reduction_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """``-N NAME`` builds the product library without the safety search's partial-order
    reduction tables (no safety search runs beside the product search, which has tables of its
    own, ``m_lpor_*``): ``POR_ROWS 0`` where the model's full library has rows, and the verdict
    equals Python's."""
    import absmc.native.ltl as native_ltl
    from absmc.native.build import runtime_sources
    from absmc.native.cgen import CGen

    built: list[native_ltl.NativeLtl] = []
    init = native_ltl.NativeLtl.__init__

    def spy(self: native_ltl.NativeLtl, *args: object, **kwargs: object) -> None:
        init(self, *args, **kwargs)  # type: ignore[arg-type]
        built.append(self)

    monkeypatch.setattr(native_ltl.NativeLtl, "__init__", spy)
    system = load_model(EXAMPLES / "ltl" / "abp.pml")
    head, tail = runtime_sources()
    assert "#define POR_ROWS 0" not in CGen(system, system.properties).source(head, tail)
    c = _assert_same(system, CheckOptions(ltl="delivers"))
    assert c["delivers"].stats.extra["backend"] == "native"
    assert len(built) == 1 and "#define POR_ROWS 0" in built[0].sem.source
    built.clear()
    _by_name(system, CheckOptions(), "native")  # without -N a safety search may need them
    assert len(built) == 1 and "#define POR_ROWS 0" not in built[0].sem.source


_GRID = """
var a : 0..299;
var b : 0..299;
process P {
  a < 299 -> a := a + 1;
}
process Q {
  b < 299 -> b := b + 1;
}
ltl nonneg: [](a >= 0);
ltl reach: <>(a == 299 && b == 299);
"""


def test_c_store_grows_past_its_first_table_with_exact_counts() -> None:
    """The C store (runtime_ltl.c: hash tags and ids in a table of 2^16 entries at first, grown
    by doubling at half full) keeps every product state apart: ``nonneg`` holds on all
    300 * 300 states, each once with the claim's initial state (its accepting state needs a
    negative ``a``); ``reach`` holds too (every maximal path ends at (299, 299))."""
    system = parse_gcl(_GRID, "grid.gcl")
    c = _by_name(system, CheckOptions(ltl="nonneg"), "native")["nonneg"]
    assert (c.verdict, c.stats.extra["backend"]) == (Verdict.HOLDS, "native")
    assert c.stats.states == 300 * 300
    r = _by_name(system, CheckOptions(ltl="reach"), "native")["reach"]
    assert (r.verdict, r.stats.extra["backend"]) == (Verdict.HOLDS, "native")
    assert r.stats.states >= 300 * 300


def _upgrade_at_first_poll(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """``auto``'s own levels (-O0, then the upgrade, here to -O1) with the upgrade started at
    once and waited for, so that the product search hands over at its first poll (its slices
    made short); returns the twins (``BackgroundRecompile``) as they start."""
    import absmc.engines.explicit.native as nat
    import absmc.native.ltl as nltl
    from absmc.native.background import BackgroundRecompile

    builds: list[Any] = []

    class Waited(BackgroundRecompile[Any]):
        def start(self) -> None:
            builds.append(self)
            super().start()

        def ready(self) -> bool:  # the search waits for the twin: a handover at its first poll
            return self.result() is not None

    monkeypatch.setattr(nat, "BackgroundRecompile", Waited)
    monkeypatch.setattr(nat, "UPGRADE_AFTER_S", 0.0)
    monkeypatch.setattr(nat, "UPGRADE_RATIO", 0.0)
    monkeypatch.setattr(nat, "UPGRADE_OPT", "-O1")
    monkeypatch.setattr(nltl, "SLICE_S", 0.0005)  # the search spans many slices
    monkeypatch.delenv("ABSMC_NATIVE_OPT")  # auto's own levels: -O0, then the upgrade
    return builds


def test_a_long_c_product_search_in_auto_moves_to_better_compiled_code(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``auto`` compiles the product library at -O0; a search still running once the twin
    compiled at UPGRADE_OPT is ready starts again there (the same outcome), and the twin serves
    the next property without another build."""
    import json

    from .conftest import run_cli

    model = tmp_path / "grid.gcl"
    model.write_text(
        "var x : 0..199; var y : 0..199;\n"
        "process P { x < 199 -> x := x + 1; x == 199 -> x := 0; }\n"
        "process Q { y < 199 -> y := y + 1; y == 199 -> y := 0; }\n"
        "ltl xzero: [] <> (x == 0);\n"
        "ltl yzero: [] <> (y == 0);\n"
    )
    args = ("check", str(model), "--fairness", "weak", "--json")
    ref = run_cli(*args, "--backend", "native")  # at -O0 (native_fast_compile), no upgrade
    builds = _upgrade_at_first_poll(monkeypatch)
    got = run_cli(*args, "--backend", "auto")
    assert ref.code == got.code == 0, got.err
    want = {r["property"]: r for r in json.loads(ref.out)["results"]}
    have = {r["property"]: r for r in json.loads(got.out)["results"] if r["kind"] == "ltl"}
    assert set(have) == {"xzero", "yzero"}
    for name, r in have.items():
        assert r["verdict"] == want[name]["verdict"] == "holds"
        assert r["stats"]["backend"] == "native"
        assert r["stats"]["states"] == want[name]["stats"]["states"] > 40_000
    # one twin, compiled at -O1 for the first property's search and kept for the second
    assert [b._opt for b in builds] == ["-O1"] and builds[0]._product.opt == "-O1"


def test_ctrl_c_between_the_product_search_and_its_upgrade_keeps_the_first_ones_statistics(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Ctrl-C (or SIGTERM) landing after the -O0 product search handed over and before the
    upgraded one runs ends the check with the first search's statistics and "interrupted"
    (the rule of the safety search's upgrade, tests/test_native.py)."""
    import json

    import absmc.native.ltl as nltl

    from .conftest import run_cli

    model = tmp_path / "grid.gcl"
    model.write_text(
        "var x : 0..199; var y : 0..199;\n"
        "process P { x < 199 -> x := x + 1; x == 199 -> x := 0; }\n"
        "process Q { y < 199 -> y := y + 1; y == 199 -> y := 0; }\n"
        "ltl xzero: [] <> (x == 0);\n"
    )

    _upgrade_at_first_poll(monkeypatch)
    calls: list[str] = []
    real = nltl.NativeLtl.search

    def search(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(self.opt)
        if len(calls) == 2:  # the upgraded search, before it starts
            raise KeyboardInterrupt
        return real(self, *args, **kwargs)

    monkeypatch.setattr(nltl.NativeLtl, "search", search)
    got = run_cli("check", str(model), "--fairness", "weak", "--json", "--backend", "auto")
    assert got.code == 3, got.err
    (r,) = [r for r in json.loads(got.out)["results"] if r["kind"] == "ltl"]
    assert r["verdict"] == "unknown" and "interrupted" in r["reason"]
    assert r["stats"]["backend"] == "native" and r["stats"]["states"] > 0
    assert calls == ["-O0", "-O1"]  # the -O0 search handed over, then the upgraded one
