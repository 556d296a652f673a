"""Multi-core LTL in C (``--workers N``, runtime_cndfs.c: CNDFS, Evangelista, Laarman, Petrucci,
van de Pol, ATVA 2012): the same verdicts as the one-thread nested DFS in C and as the Python
back end, on generated GCL systems, the shared LTL corpus, weak fairness and non-progress
cycles; violated properties with replayed lassos; a property that holds with all the product's
states stored; limits that stop every thread with partial statistics."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from absmc.engines.explicit.check import check_explicit
from absmc.ir.ltl import NON_PROGRESS
from absmc.ir.system import System
from absmc.kernel.run.options import CheckOptions, Limits
from absmc.kernel.run.result import PropertyResult, Verdict
from absmc.lang.gcl import parse_gcl
from absmc.lang.loader import load_model
from absmc.native import native_available
from absmc.native.ltl import POR

from .conftest import EXAMPLES, SHARED, needs_shared
from .test_ltl_abstraction import random_ltl_system
from .test_ltl_native import _RESPONSE, corpus_params  # _RESPONSE: inf3, stable, bounded

CORPUS = SHARED / "benchmarks" / "ltl"

pytestmark = [
    pytest.mark.skipif(not native_available(), reason="no C compiler"),
    pytest.mark.usefixtures("native_fast_compile"),  # outcomes, not speed
]


def _run(
    system: System, opts: CheckOptions, backend: str, workers: int = 1
) -> dict[str, PropertyResult]:
    result = check_explicit(system, opts, backend, workers)  # type: ignore[arg-type]
    return {r.property: r for r in result.results}


def _first_violation(r: PropertyResult) -> bool:
    return r.verdict is Verdict.UNKNOWN and "stopped at the first violation" in r.reason


def _assert_agree(
    system: System, opts: CheckOptions, workers: tuple[int, ...] = (2, 4)
) -> dict[int, dict[str, PropertyResult]]:
    """The Python back end, one C thread and CNDFS in each of ``workers`` threads agree on
    every verdict (without ``-N``; under it on the ltl ones); a property that holds has the
    whole product stored (the same states in every run); each violated one has a replayed
    lasso. A CNDFS search that reduced (the static proviso) stores at most as many states.
    Under ``-N`` (SPIN's: the first
    violation of any kind ends the run) a safety violation met first leaves the claim unknown
    in one run where another thread met the lasso first: then the other says violated.
    Returns the runs by thread count (1: one C thread, 0: Python)."""
    # the one-thread search unreduced (its reduction: test_ltl_por.py; CNDFS's: below)
    runs = {0: _run(system, opts, "python"), 1: _run(system, replace(opts, reduce=False), "native")}
    for w in workers:
        runs[w] = _run(system, opts, "native", w)
    ref = runs[1]
    for w, got in runs.items():
        assert set(got) == set(ref)
        for name, r in got.items():
            base = ref[name]
            if r.kind != "ltl":  # safety: decided alike unless -N's first violation ends a run
                assert opts.ltl is not None or r.verdict is base.verdict, (w, name)
                continue
            if r.verdict is not base.verdict:
                assert opts.ltl is not None, (w, name)  # only -N's first-violation rule
                pair = {r.verdict, base.verdict}
                assert pair == {Verdict.VIOLATED, Verdict.UNKNOWN}, (w, name)
                assert _first_violation(r) or _first_violation(base), (w, name)
                continue
            if r.verdict is Verdict.VIOLATED:
                assert r.trace is not None and r.trace.cycle_start is not None, (w, name)
            if r.verdict is Verdict.HOLDS and POR in r.stats.extra.get("reductions", []):
                assert 0 < r.stats.states <= base.stats.states, (w, name)
            elif r.verdict is Verdict.HOLDS:
                assert r.stats.states == base.stats.states, (w, name)
            native = "native_fallback" not in r.stats.extra and w > 0
            if native and w > 1 and r.verdict is not Verdict.UNKNOWN:
                assert r.stats.extra["workers"] == w, (w, name)
                blue = r.stats.extra["blue_per_worker"]
                assert len(blue) == w
                if r.verdict is Verdict.HOLDS:  # every state expanded by some thread's blue search
                    assert sum(blue) >= r.stats.states, (w, name)
    return runs


@pytest.mark.parametrize(
    "seed", [pytest.param(s, marks=[] if s < 2 else [pytest.mark.slow]) for s in range(40)]
)
def test_generated_gcl_systems(seed: int) -> None:
    system = parse_gcl(random_ltl_system(seed), f"gen{seed}.gcl")
    _assert_agree(system, CheckOptions())
    for name in ("l0", "l1", "l2"):  # SPIN's -N: C decides unless a safety violation comes first
        _assert_agree(system, CheckOptions(ltl=name))


_TEMPLATES = [
    "[]<> ({a})",
    "<>[] ({a})",
    "[] (({a}) -> <> ({b}))",
    "({a}) U ({b})",
    "[] ({a})",
    "<> ({a})",
    "[] (({a}) -> X ({b}))",
    "({a}) W ({b})",
    "[]<> ({a}) -> []<> ({b})",
]


def ring_ltl_system(seed: int, n: int, k: int) -> str:
    """A GCL ring of ``n`` processes, each with a counter ``c{i} : 0..k-1`` that steps up or
    resets under random conditions on its neighbour's (up to k^n states, with cycles), and 4
    LTL properties from response/persistence/until templates over random atoms (some hold,
    some are violated)."""
    rng = random.Random(seed)
    lines = [f"var c{i} : 0..{k - 1};" for i in range(n)]

    def atom() -> str:
        i, j = rng.sample(range(n), 2)
        return rng.choice([f"c{i} == {rng.randrange(k)}", f"c{i} < c{j}", f"c{i} != {k - 1}"])

    for i in range(n):
        j = (i + 1) % n
        cond = rng.choice([f"c{j} != {rng.randrange(k)}", f"c{i} <= c{j}", "true", f"c{j} > 0"])
        lines.append(f"process P{i} {{")
        lines.append(f"  c{i} < {k - 1} && ({cond}) -> c{i} := c{i} + 1;")
        lines.append(f"  c{i} == {k - 1} -> c{i} := {rng.choice(['0', '1'])};")
        if rng.random() < 0.3:
            lines.append(f"  c{i} > 0 && c{j} == 0 -> c{i} := c{i} - 1;")
        lines.append("}")
    for m in range(4):
        lines.append(f"ltl p{m}: " + rng.choice(_TEMPLATES).format(a=atom(), b=atom()) + ";")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "seed", [pytest.param(s, marks=[] if s < 1 else [pytest.mark.slow]) for s in range(30)]
)
def test_generated_rings(seed: int) -> None:
    """Rings of a few hundred (CI) to ~30,000 (slow) states, where the threads do meet."""
    n, k = (3, 5) if seed < 1 else (4 + seed % 2, 6 + seed % 3)
    system = parse_gcl(ring_ltl_system(seed, n, k), f"ring{seed}.gcl")
    runs = _assert_agree(system, CheckOptions(check_deadlock=False))
    verdicts = {r.verdict for r in runs[1].values() if r.kind == "ltl"}
    assert verdicts <= {Verdict.HOLDS, Verdict.VIOLATED}


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(12))
def test_generated_weakly_fair(seed: int) -> None:
    system = parse_gcl(ring_ltl_system(100 + seed, 4, 5), f"ringf{seed}.gcl")
    _assert_agree(system, CheckOptions(fairness="weak", check_deadlock=False))


def test_weak_fairness_with_threads() -> None:
    """SPIN's -f is a property of the product searched: CNDFS decides it as one thread does
    (P must move under weak fairness: inf3 holds; stable's lasso replays as weakly fair)."""
    system = parse_gcl(_RESPONSE, "response.gcl")
    runs = _assert_agree(system, CheckOptions(fairness="weak"))
    for w in (2, 4):
        got = runs[w]
        assert got["inf3"].verdict is Verdict.HOLDS
        assert got["stable"].verdict is Verdict.VIOLATED
        assert got["bounded"].verdict is Verdict.HOLDS
        assert got["inf3"].stats.extra["workers"] == w


@pytest.mark.parametrize(
    ("model", "verdict"), [("abp.pml", Verdict.VIOLATED), ("response.pml", Verdict.VIOLATED)]
)
def test_non_progress_cycles_with_threads(model: str, verdict: Verdict) -> None:
    system = load_model(EXAMPLES / "ltl" / model)
    runs = _assert_agree(system, CheckOptions(non_progress=True, check_deadlock=False))
    assert runs[2][NON_PROGRESS].verdict is verdict
    assert runs[2][NON_PROGRESS].stats.extra["workers"] == 2


_CHEAP = {"ltl_always_eventually.pml", "zune.pml"}


@needs_shared
@pytest.mark.parametrize("row", corpus_params(_CHEAP))
def test_corpus_verdicts_with_threads(row: dict[str, str]) -> None:
    """SPIN's verdict (the corpus's) at 2 and 4 threads; a property that holds stores the
    product states of the unreduced one-thread search, at most (CNDFS reduces with the static
    proviso)."""
    system = load_model(CORPUS / row["file"])
    name = row["ltl"] or next(p.name for p in system.ltl if p.name != NON_PROGRESS)
    fair = row["weak_fairness"] == "1"
    opts = CheckOptions(ltl=name, fairness="weak" if fair else "none")
    one = _run(system, replace(opts, reduce=False), "native", 1)[name]
    for w in (2, 4):
        got = _run(system, opts, "native", w)[name]
        assert got.verdict.value == row["verdict"] == one.verdict.value
        assert got.stats.extra["workers"] == w
        if got.verdict is Verdict.HOLDS and POR in got.stats.extra.get("reductions", []):
            assert got.stats.states <= one.stats.states
        elif got.verdict is Verdict.HOLDS:
            assert got.stats.states == one.stats.states
        else:
            assert got.trace is not None and got.trace.cycle_start is not None


def _grid(k: int) -> System:
    """Two independent counters 0..k-1 and a property that holds (k^2 states, no deadlock)."""
    src = f"""
var a : 0..{k - 1};
var b : 0..{k - 1};
process A {{ a < {k - 1} -> a := a + 1; a == {k - 1} -> a := 0; }}
process B {{ b < {k - 1} -> b := b + 1; b == {k - 1} -> b := 0; }}
ltl bounded: [] (a < {k} && b < {k});
"""
    return parse_gcl(src, "grid.gcl")


def test_state_limit_stops_every_thread_with_partial_statistics() -> None:
    system = _grid(200)
    opts = CheckOptions(ltl="bounded", limits=Limits(max_states=5_000))
    got = _run(system, opts, "native", 2)["bounded"]
    assert got.verdict is Verdict.UNKNOWN
    assert "state limit" in got.reason
    assert got.stats.states == 5_000 and got.stats.transitions > 0
    full = _run(system, CheckOptions(ltl="bounded"), "native", 2)["bounded"]
    assert (full.verdict, full.stats.states) == (Verdict.HOLDS, 200 * 200)


def test_time_limit_stops_every_thread_with_partial_statistics() -> None:
    system = _grid(4_000)  # 1.6 * 10^7 states: far more than 0.5 s of search
    opts = CheckOptions(ltl="bounded", limits=Limits(timeout=0.5))
    got = _run(system, opts, "native", 2)["bounded"]
    assert got.verdict is Verdict.UNKNOWN
    assert "time limit" in got.reason
    assert 0 < got.stats.states < 4_000 * 4_000


def test_depth_bound_runs_one_thread_with_a_note() -> None:
    system = parse_gcl(_RESPONSE, "response.gcl")
    opts = CheckOptions(ltl="inf3", limits=Limits(max_depth=50))
    got = _run(system, opts, "native", 2)["inf3"]
    assert got.verdict is Verdict.VIOLATED
    assert got.stats.extra["workers"] == 1
    assert "no depth bound" in got.stats.extra["workers_note"]


def test_default_workers_search_in_one_thread() -> None:
    """``--workers`` left at its default (0) keeps the one-thread nested DFS (SPIN's order:
    SPIN's lasso and state counts); CNDFS runs on request."""
    system = parse_gcl(_RESPONSE, "response.gcl")
    got = _run(system, CheckOptions(ltl="inf3"), "native", 0)["inf3"]
    assert got.stats.extra["workers"] == 1


def test_python_back_end_notes_its_one_process_product_search() -> None:
    system = parse_gcl(_RESPONSE, "response.gcl")
    got = _run(system, CheckOptions(ltl="inf3"), "python", 2)["inf3"]
    assert got.verdict is Verdict.VIOLATED
    assert "one process" in got.stats.extra["workers_note"]
