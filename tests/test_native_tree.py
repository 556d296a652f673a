"""The native back end's tree-compressed store (``--store tree``, Laarman, van de Pol, Weber,
SPIN 2011): the exact store's states, transitions and verdicts in fewer bytes per state, a
proof where the exact store proves, and violations with replayed traces."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import SHARED
from .native_helpers import cli_json, needs_native

pytestmark = [needs_native, pytest.mark.usefixtures("native_fast_compile")]

CORPUS = SHARED / "benchmarks" / "promela"
SCALING = SHARED / "benchmarks" / "scaling"


def _summary(res: dict[str, Any]) -> list[tuple[str, str, int, int]]:
    return [
        (r["property"], r["verdict"], r["stats"]["states"], r["stats"]["transitions"])
        for r in res["results"]
    ]


@pytest.mark.parametrize("model", ["at.1.pm", "brp.1.pm", "snoopy.pml", "p117.pml"])
def test_tree_store_gives_the_exact_stores_counts_verdicts_and_traces(model: str) -> None:
    if not CORPUS.exists():
        pytest.skip("../shared/benchmarks/promela is not available")
    args = ("check", str(CORPUS / model), "--keep-going", "--backend", "native")
    code_e, exact = cli_json(*args, "--store", "exact")
    code_t, tree = cli_json(*args, "--store", "tree")
    assert code_t == code_e and _summary(tree) == _summary(exact)
    assert tree["results"][0]["stats"]["store"] == "tree"
    want = {r["property"]: r["trace"] for r in exact["results"] if r["verdict"] == "violated"}
    got = {r["property"]: r["trace"] for r in tree["results"] if r["verdict"] == "violated"}
    assert got == want  # the exact search bounded by the violation's depth


def test_tree_store_proves_and_uses_fewer_bytes_per_state_than_the_exact_store() -> None:
    if not SCALING.exists():
        pytest.skip("../shared/benchmarks/scaling is not available")
    args = ("check", str(SCALING / "lamport.pml"), "-D", "MAXT=4096", "--backend", "native")
    code_e, exact = cli_json(*args, "--store", "exact", "--workers", "1")
    code_t, tree = cli_json(*args, "--store", "tree", "--workers", "1")
    assert code_t == code_e == 0 and tree["verdict"] == "holds"
    assert _summary(tree) == _summary(exact)
    e, t = exact["results"][0]["stats"], tree["results"][0]["stats"]
    assert t["workers"] == 1  # the threads do not use the tree store
    # 393,177 states: past the root set's fixed ~5 MB (65,536 small tables)
    assert t["bytes_per_state"] < e["bytes_per_state"] / 2
    assert t["tree_nodes"] and sum(t["tree_nodes"]) < t["states"]
