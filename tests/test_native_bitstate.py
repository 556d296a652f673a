"""The native back end's bitstate store (``--store bitstate --backend native``, SPIN's
``-DBITSTATE``): it loses states where the Python bitstate store does, never claims a proof or
a coverage percentage, and its violations carry traces that replay."""

from __future__ import annotations

import pytest

from .conftest import SHARED
from .native_helpers import cli_json, needs_native

pytestmark = [needs_native, pytest.mark.usefixtures("native_fast_compile")]

CORPUS = SHARED / "benchmarks" / "promela"


def _needs_corpus() -> None:
    if not CORPUS.exists():
        pytest.skip("../shared/benchmarks/promela is not available")


def test_a_small_bit_array_loses_states_in_c_and_in_python_and_neither_claims_completeness() -> (
    None
):
    _needs_corpus()
    model = str(CORPUS / "at.1.pm")  # 39,356 states (SPIN)
    _, exact = cli_json("check", model, "--backend", "native")
    assert exact["results"][0]["stats"]["states"] == 39356
    for backend in ("python", "native"):
        code, res = cli_json(
            "check", model, "--store", "bitstate", "--bitstate-bits", "14", "--backend", backend
        )
        assert code == 3, backend  # unknown: no violation found, no proof
        assert res["verdict"] == "unknown"
        for r in res["results"]:
            stats = r["stats"]
            assert stats["store"] == "bitstate" and stats["bitstate_bits"] == 14
            assert stats["states"] < 39356, backend  # 2^14 bits cannot hold them all
            assert 0 < stats["hash_factor"] < 16384 / 1000
            assert stats["omission_probability_bound"] == 1.0
            assert "coverage unknown" in r["reason"] and "not a proof" in r["reason"]
            assert "100%" not in r["reason"]
        if backend == "native":
            assert res["results"][0]["stats"]["backend"] == "native"
            assert res["results"][0]["stats"]["bytes_per_state"] < 16


def test_a_large_bit_array_finds_every_state_and_still_proves_nothing() -> None:
    _needs_corpus()
    model = str(CORPUS / "at.1.pm")
    code, res = cli_json("check", model, "--store", "bitstate", "--backend", "native")
    _, exact = cli_json("check", model, "--backend", "native")
    stats, want = res["results"][0]["stats"], exact["results"][0]["stats"]
    assert code == 3 and res["verdict"] == "unknown"
    assert (stats["states"], stats["transitions"]) == (want["states"], want["transitions"])
    assert stats["states"] == 39356
    assert stats["hash_factor"] > 3000 and stats["observed_false_matches"] == 0
    assert stats["sampled_lookups"] > 0
    assert "probability of any omission <=" in res["results"][0]["reason"]


def test_bitstate_violations_in_c_carry_the_exact_searchs_traces() -> None:
    _needs_corpus()
    args = ("check", str(CORPUS / "brp.1.pm"), "--keep-going", "--backend", "native")
    code, bit = cli_json(*args, "--store", "bitstate")
    _, exact = cli_json(*args)
    assert code == 1 and bit["verdict"] == "violated"
    want = {r["property"]: r["trace"] for r in exact["results"] if r["verdict"] == "violated"}
    got = {r["property"]: r["trace"] for r in bit["results"] if r["verdict"] == "violated"}
    assert want and got == want
    assert {r["verdict"] for r in bit["results"]} == {"violated", "unknown"}  # never holds
