"""The C product search's compact stores (runtime_ltl.c, ``l_set_store``): hash-compact and
bitstate, as SPIN's ``-DHC`` and ``-DBITSTATE``. With no collision they visit the exact
store's product states in the same order (the same states, transitions, nested states and
lasso, and the Python back end's searches with each store store them too); they never prove
a property; their lassos replay."""

from __future__ import annotations

from pathlib import Path

import pytest

from absmc.engines.explicit.check import check_explicit
from absmc.ir.system import System
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import PropertyResult, Verdict
from absmc.lang.gcl import parse_gcl
from absmc.lang.loader import load_model
from absmc.native import native_available
from absmc.native.ltl import POR

from .test_ltl_abstraction import random_ltl_system
from .test_ltl_native import _GRID  # a, b in 0..299: nonneg holds on 90,000 states
from .test_ltl_por import cyclic_promela

pytestmark = [
    pytest.mark.skipif(not native_available(), reason="no C compiler"),
    pytest.mark.usefixtures("native_fast_compile"),  # outcomes, not speed
]

COMPACT = ("hash-compact", "bitstate")

#: the bitstate size of the comparisons: 2^24 bits, so that no collision is expected on these
#: models (each of at most a few thousand product states)
BITS = 24


def _one(system: System, name: str, backend: str, **kw: object) -> PropertyResult:
    opts = CheckOptions(ltl=name, **{"bitstate_bits": BITS, **kw})  # type: ignore[arg-type]
    result = check_explicit(system, opts, backend)  # type: ignore[arg-type]
    return next(r for r in result.results if r.property == name)


def _search(r: PropertyResult) -> tuple[object, ...]:
    """What two searches of one product in the same order share: states, transitions, nested
    states, states reduced and, for a violation, the lasso's length and cycle start."""
    lasso = (len(r.trace.steps), r.trace.cycle_start) if r.trace is not None else None
    extra = r.stats.extra
    return (
        r.stats.states,
        r.stats.transitions,
        extra.get("nested_states"),
        extra.get("reduced_states"),
        lasso,
    )


def _compare_stores(system: System, name: str, **kw: object) -> dict[str, PropertyResult]:
    """``name`` in C with each store and in Python with each compact store: every C search
    ran in C (unless it met a safety violation, which Python then reports); a compact store
    never proves (``holds`` becomes ``unknown``, not a proof), finds the exact store's
    violations with a replayed lasso and searches as the exact store does; under weak fairness
    (where the compact stores run unreduced) as the unreduced exact search. The Python back
    end's searches with each store store the same states. Returns the C results by store."""
    fair = kw.get("fairness") == "weak"
    c = {s: _one(system, name, "native", store=s, **kw) for s in ("exact", *COMPACT)}
    if any("native_fallback" in r.stats.extra for r in c.values()):
        assert all("met a safety violation" in r.stats.extra["native_fallback"] for r in c.values())
        return c
    exact = c["exact"]
    if fair and kw.get("reduce", True):
        exact = _one(system, name, "native", store="exact", **{**kw, "reduce": False})
    for store in COMPACT:
        r = c[store]
        assert r.stats.extra["backend"] == "native" and r.stats.extra["store"] == store
        if exact.verdict is Verdict.HOLDS:
            assert r.verdict is Verdict.UNKNOWN and "not a proof" in r.reason, (name, store)
        else:
            assert r.verdict is exact.verdict, (name, store)
        if r.verdict is Verdict.VIOLATED:
            assert r.trace is not None and r.trace.cycle_start is not None
        assert _search(r) == _search(exact), (name, store)
        if fair and kw.get("reduce", True):
            assert "exact store" in r.stats.extra["reduction_note"]
    # the Python back end's searches (its own code and stores) store the same product states
    got = {(c[s].stats.states, c[s].stats.transitions) for s in COMPACT}
    for store in ("exact", *COMPACT):
        py = _one(system, name, "python", store=store, **kw)
        got.add((py.stats.states, py.stats.transitions))
    assert len(got) == 1, (name, got)
    return c


@pytest.mark.parametrize(
    "seed", [pytest.param(s, marks=[] if s < 6 else [pytest.mark.slow]) for s in range(4, 60)]
)
def test_generated_promela_compact_stores_search_as_the_exact_one(
    tmp_path: Path, seed: int
) -> None:
    """Processes with local steps (ample sets in the product), channels and ``atomic``
    blocks: with and without partial-order reduction, and under weak fairness."""
    path = tmp_path / f"c{seed}.pml"
    path.write_text(cyclic_promela(seed))
    system = load_model(path)
    reduced = 0
    for name in ("f0", "f1", "f2"):
        for reduce in (True, False):
            c = _compare_stores(system, name, reduce=reduce)
            reduced += POR in c["bitstate"].stats.extra.get("reductions", [])
        _compare_stores(system, name, fairness="weak")
    if seed in (4, 5):  # models whose product searches reduce (test_ltl_por.py)
        assert reduced >= 1


@pytest.mark.parametrize(
    "seed", [pytest.param(s, marks=[] if s < 2 else [pytest.mark.slow]) for s in range(30)]
)
def test_generated_gcl_compact_stores_search_as_the_exact_one(seed: int) -> None:
    system = parse_gcl(random_ltl_system(seed), f"gen{seed}.gcl")
    for name in ("l0", "l1", "l2"):
        _compare_stores(system, name)


#: a cycle of 3,001 states: the violation's lasso goes round all of it, so the outer stack
#: holds 3,001 states (its table of buckets grows from 512 several times)
_RING = """
var x : 0..3000;
process P {
  x < 3000 -> x := x + 1;
  x == 3000 -> x := 0;
}
ltl low: <>[](x < 2000);
ltl bounded: [](x <= 3000);
"""


def test_a_deep_outer_stack_and_its_lasso_with_compact_stores() -> None:
    system = parse_gcl(_RING, "ring.gcl")
    c = _compare_stores(system, "low")
    assert c["hash-compact"].verdict is Verdict.VIOLATED
    assert c["hash-compact"].trace is not None
    assert len(c["hash-compact"].trace.steps) > 3000
    h = _compare_stores(system, "bounded")
    assert h["exact"].verdict is Verdict.HOLDS and h["exact"].stats.states == 3001
    assert h["bitstate"].verdict is Verdict.UNKNOWN


def test_compact_stores_keep_less_than_the_exact_one() -> None:
    """90,000 product states (unreduced): the hash-compact store keeps 8-byte keys (its table
    at most half full) where the exact one keeps each state and its table entry."""
    system = parse_gcl(_GRID, "grid.gcl")
    exact = _one(system, "nonneg", "native", store="exact", reduce=False)
    hc = _one(system, "nonneg", "native", store="hash-compact", reduce=False)
    assert exact.stats.states == hc.stats.states == 300 * 300
    assert hc.stats.extra["store_bytes"] <= 16 * 2 * 300 * 300
    assert hc.stats.extra["store_bytes"] * 2 < exact.stats.extra["store_bytes"]
    assert 0 < hc.stats.extra["omission_probability"] < 1e-6


def test_a_tiny_bit_array_omits_states_and_says_so() -> None:
    """2^6 bits with 3 hash functions fill up within a few states: later states are falsely
    matched (omitted). The search ends ``unknown``, stores fewer states than exist and says
    that its coverage is unknown."""
    system = parse_gcl(_GRID, "grid.gcl")
    r = _one(system, "nonneg", "native", store="bitstate", bitstate_bits=6, reduce=False)
    extra = r.stats.extra
    assert r.verdict is Verdict.UNKNOWN and "not a proof" in r.reason
    assert r.stats.states < 300 * 300
    assert extra["bitstate_bits"] == 6 and extra["store_bytes"] == 8
    assert extra["bits_set"] > 0.9
    assert extra["omission_probability_bound"] == 1.0
    assert "coverage unknown" in extra["coverage"]


def test_compact_stores_with_workers_search_in_one_thread_noted() -> None:
    """CNDFS (``--workers`` >= 2) shares one exact store between its threads: with a compact
    store the one-thread nested DFS runs, and says why."""
    system = parse_gcl(_RING, "ring.gcl")
    opts = CheckOptions(ltl="low", store="hash-compact")
    r = next(
        x for x in check_explicit(system, opts, "native", workers=2).results if x.property == "low"
    )
    assert r.verdict is Verdict.VIOLATED and r.trace is not None
    assert r.stats.extra["workers"] == 1
    assert "CNDFS" in r.stats.extra["workers_note"]


def test_the_compact_stores_are_compiled_only_where_asked_for() -> None:
    """runtime_ltl_compact.c is in a library built with ``compact`` only (less C for gcc on
    every exact-store run); a library without it refuses a compact store."""
    from absmc.native.ltl import NativeLtl

    system = parse_gcl(_RING, "ring.gcl")
    plain = NativeLtl(system, system.properties, system.ltl, por=False, cndfs=False)
    assert "lc_hc_probe" not in plain.source and "l_ample_static" not in plain.source
    with pytest.raises(ValueError, match="compact"):
        plain.search(plain.sem, system.ltl[0], store="hash-compact")
    both = NativeLtl(system, system.properties, system.ltl, por=False, cndfs=False, compact=True)
    assert "lc_hc_probe" in both.source
