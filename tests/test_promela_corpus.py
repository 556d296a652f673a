"""The Promela corpus of ../shared: absmc reports SPIN 6.5.2's numbers for every model.

``absmc check MODEL --keep-going --json`` must report the same number of reachable states as
plain ``spin -a`` (``spin_default_states`` in expected.csv: SPIN's dead-variable reset, on in
both), with ``--no-reduce`` the same as ``spin -o1`` (``spin_o1_states``), and a ``violated``
verdict exactly when SPIN counts errors (``errors_c0 > 0``).
"""

from __future__ import annotations

import csv
import json

import pytest

import absmc

from .conftest import SHARED, run_cli

CORPUS = SHARED / "benchmarks" / "promela"
ROWS = list(csv.DictReader((CORPUS / "expected.csv").open())) if CORPUS.exists() else []


def test_the_corpus_has_23_models() -> None:
    if not ROWS:
        pytest.skip("../shared/benchmarks/promela is not available")
    assert len(ROWS) == 23


@pytest.mark.parametrize("row", ROWS, ids=[r["file"] for r in ROWS])
def test_same_states_and_verdict_as_spin_o1(row: dict[str, str]) -> None:
    r = run_cli("check", str(CORPUS / row["file"]), "--keep-going", "--json", "--no-reduce")
    assert r.code in (0, 1), r.err
    result = json.loads(r.out)
    states = {p["stats"]["states"] for p in result["results"]}
    assert states == {int(row["spin_o1_states"])}
    expected = "violated" if int(row["errors_c0"]) > 0 else "holds"
    assert result["verdict"] == expected
    assert r.code == (1 if expected == "violated" else 0)


#: the default run of the larger models (over 50,000 states) is left to the slow tests
_DEFAULT_ROWS = [
    pytest.param(r, marks=[pytest.mark.slow] if int(r["spin_default_states"]) > 50_000 else [])
    for r in ROWS
]


@pytest.mark.parametrize("row", _DEFAULT_ROWS, ids=[r["file"] for r in ROWS])
def test_default_states_and_verdict_are_plain_spins(row: dict[str, str]) -> None:
    # the dead-variable reset without partial-order reduction (a System loaded with its
    # reductions, searched without POR): plain spin -a with -DNOREDUCE
    system = absmc.load(CORPUS / row["file"], reduce=True)
    result = absmc.check(system, keep_going=True, reduce=False).to_json()
    assert {p["stats"]["states"] for p in result["results"]} == {int(row["spin_default_states"])}
    expected = "violated" if int(row["errors_c0"]) > 0 else "holds"
    assert result["verdict"] == expected
