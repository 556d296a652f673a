"""The bitstate store's coverage statement never overstates (issue 14, item 3).

Against exact search on models where bitstate loses states (small bit arrays): whenever states
were lost, the store's own bound on the probability of an omission is not small, the statement
says coverage is unknown, and a claim ("probability of any omission <= p") only
appears on searches that did find every state. False matches are observed directly on the
exact shadow sample.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from absmc.codegen.python import compile_system
from absmc.engines.explicit.check import check_explicit
from absmc.kernel.explore.search import search
from absmc.kernel.explore.store import BitStateStore, ExactStore
from absmc.kernel.run.options import CheckOptions, Limits
from absmc.kernel.run.result import Verdict
from absmc.lang.loader import load_model

ROOT = Path(__file__).resolve().parent.parent
MODELS = [
    ROOT / "benchmarks" / "models" / "array_dstep64.pml",  # 5,700 states
    ROOT / "tests" / "promela_models" / "provided_hidden.pml",  # 5,326 states
    ROOT / "examples" / "gcl" / "peterson.gcl",  # 20 states
]


@pytest.fixture(scope="module")
def compiled() -> dict[Path, tuple[object, int]]:
    out = {}
    for m in MODELS:
        c = compile_system(load_model(m))
        out[m] = (c, search(c, ExactStore(), keep_going=True).states)
    return out


@pytest.mark.parametrize("model", MODELS, ids=lambda p: p.stem)
@pytest.mark.parametrize(("log2_bits", "k"), [(6, 1), (10, 2), (12, 3), (14, 3), (22, 3)])
def test_statement_never_exceeds_what_was_found(
    compiled: dict[Path, tuple[object, int]], model: Path, log2_bits: int, k: int
) -> None:
    c, exact = compiled[model]
    store = BitStateStore(log2_bits, k)
    found = search(c, store, keep_going=True).states  # type: ignore[arg-type]
    cov = store.coverage()
    true_fraction = found / exact
    assert found <= exact
    text = cov.statement()
    assert "100" not in text.split(";")[1] and "expected coverage" not in text
    # what the statement claims: nothing omitted, with probability >= 1 - bound
    claimed = 1.0 - cov.omission_probability_bound if "any omission <=" in text else 0.0
    if found < exact:  # states were lost: nothing may be claimed
        assert cov.omission_probability_bound > 0.01
        assert "coverage unknown" in text
    assert claimed <= true_fraction or found == exact


def test_false_matches_are_observed_on_the_shadow_sample(
    compiled: dict[Path, tuple[object, int]],
) -> None:
    c, exact = compiled[MODELS[0]]
    store = BitStateStore(12, 3)
    found = search(c, store, keep_going=True).states  # type: ignore[arg-type]
    cov = store.coverage()
    assert found < exact
    assert cov.observed_false_matches > 0
    assert 0 < cov.false_match_rate <= 1
    assert cov.sampled >= cov.observed_false_matches
    # sampled states are stored exactly: each observed false match is a state never stored
    assert store.false_matched.isdisjoint(store.shadow)


def test_large_array_finds_everything_and_says_how_likely_that_is() -> None:
    system = load_model(MODELS[0])
    result = check_explicit(
        system, CheckOptions(store="bitstate", bitstate_bits=26, keep_going=True)
    )
    r = result.results[0]
    assert r.stats.states == 5700 and r.verdict is Verdict.UNKNOWN
    assert "probability of any omission <=" in r.reason and "not a proof" in r.reason
    assert r.stats.extra["observed_false_matches"] == 0
    assert r.stats.extra["omission_probability_bound"] < 0.01


def test_a_partial_search_claims_nothing() -> None:
    system = load_model(MODELS[0])
    options = CheckOptions(store="bitstate", bitstate_bits=26, keep_going=True)
    limited = replace(options, limits=Limits(max_states=100))
    r = check_explicit(system, limited).results[0]
    assert r.verdict is Verdict.UNKNOWN and r.stats.states <= 101
    assert "coverage unknown: a partial search" in r.stats.extra["coverage"]
    assert "probability of any omission" not in r.stats.extra["coverage"]


_NEGATIVE = """
var x : -2..1;
var y : -2..1;
process P {
  x > -2 -> x := x - 1;
  y > -2 -> y := y - 1;
}
invariant ok: x + y > -5;
"""


def test_compact_stores_keep_minus_one_and_minus_two_apart() -> None:
    """Python hashes -1 as -2, so its tuple hash makes (x, -1) and (x, -2) collide every time;
    the compact stores hash such states otherwise (``state_hash64``): the 9 states of x, y in
    {0, -1, -2} are all kept, as by the exact store."""
    from absmc.kernel.explore.store import HashCompactStore, state_hash64
    from absmc.lang.gcl import parse_gcl

    assert hash((0, -1)) == hash((0, -2))  # what the stores must not inherit
    assert state_hash64((0, -1)) != state_hash64((0, -2))
    hc = HashCompactStore()
    assert hc.insert((0, -1)) and hc.insert((0, -2)) and not hc.insert((0, -1))
    system = parse_gcl(_NEGATIVE, "negative.gcl")
    for store in ("exact", "hash-compact", "bitstate"):
        opts = CheckOptions(store=store, check_deadlock=False)
        ok = next(r for r in check_explicit(system, opts, "python").results if r.property == "ok")
        assert ok.stats.states == 9, store
