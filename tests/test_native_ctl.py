"""CTL on the graph the C search builds (``--backend native``, :mod:`absmc.native.graph`):
the same verdicts, state and transition counts as the Python back end's graph, replayed
witnesses, and limits ending the run with ``unknown``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .native_helpers import cli_json, needs_native
from .test_explicit_ctl import MODEL

pytestmark = [needs_native, pytest.mark.usefixtures("native_fast_compile")]  # outcomes, not speed

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "gcl"

#: test_explicit_ctl's counter and an atom that divides by zero in some states
COUNTER = MODEL + "ctl divides: EF(6 / (x - 3) == 3);\n"

PETERSON_CTL = """
ctl mutex_ctl: AG !(pc0 == 3 && pc1 == 3);
ctl entry: AG(pc0 == 2 => AF(pc0 == 3));
ctl reset: AG(EF(pc0 == 0 && pc1 == 0));
ctl starve: EG(pc0 != 3);
ctl eu: E[!flag1 U pc0 == 3];
ctl ax: AX(flag0 || flag1);
"""

PHILOSOPHERS_CTL = """
ctl eat0: AG(p0 == 1 => AF(p0 == 2));
ctl may_eat: AG(EF(p0 == 2));
ctl forks: AG(fork0 || !fork0);
ctl stuck: EF(AG(fork0 && fork1 && fork2));
"""


def _models(tmp_path: Path) -> list[Path]:
    out = []
    for name, text in (
        ("counter.gcl", COUNTER),
        ("peterson.gcl", (EXAMPLES / "peterson.gcl").read_text() + PETERSON_CTL),
        ("philosophers.gcl", (EXAMPLES / "philosophers.gcl").read_text() + PHILOSOPHERS_CTL),
    ):
        path = tmp_path / name
        path.write_text(text)
        out.append(path)
    return out


def _ctl_rows(doc: dict[str, Any]) -> dict[str, tuple[str, int, int]]:
    return {
        r["property"]: (r["verdict"], r["stats"]["states"], r["stats"]["transitions"])
        for r in doc["results"]
        if r["kind"] == "ctl"
    }


def test_native_graph_gives_the_python_verdicts_and_sizes(tmp_path: Path) -> None:
    seen = set()
    for model in _models(tmp_path):
        _, py = cli_json("check", str(model), "--backend", "python", "--no-trail")
        _, c = cli_json("check", str(model), "--backend", "native", "--no-trail")
        want, got = _ctl_rows(py), _ctl_rows(c)
        assert want and got == want, model.name
        assert all(
            r["stats"].get("backend") == "native" for r in c["results"] if r["kind"] == "ctl"
        )
        # the safety rows (searched by the C safety search) agree as well
        safety = {r["property"]: r["verdict"] for r in py["results"] if r["kind"] != "ctl"}
        assert {r["property"]: r["verdict"] for r in c["results"] if r["kind"] != "ctl"} == safety
        seen |= {v for v, _, _ in got.values()}
    assert seen == {"holds", "violated"}


def test_counter_verdicts_on_the_c_graph(tmp_path: Path) -> None:
    model = _models(tmp_path)[0]
    _, c = cli_json("check", str(model), "--backend", "native", "--no-trail")
    rows = _ctl_rows(c)
    assert rows["ag"] == ("violated", 11, 14)
    assert rows["eg_dead"][0] == "violated"
    assert rows["af_fails"][0] == "holds"
    assert rows["divides"][0] == "holds"  # x == 5: 6 / 2 == 3 (x == 3 divides by zero: false)


def test_witness_from_the_c_graph_is_replayed(tmp_path: Path) -> None:
    model = _models(tmp_path)[0]
    _, c = cli_json("check", str(model), "--backend", "native", "--no-trail")
    ag = next(r for r in c["results"] if r["property"] == "ag")
    # the witness's states were looked up in the C graph; the trace is the replayed one
    assert ag["verdict"] == "violated" and "witness" in ag["trace_note"]
    assert [s["state"]["x"] for s in ag["trace"]] == [0, 1, 2, 3, 4, 5]


@pytest.mark.parametrize("backend", ["python", "native"])
def test_state_limit_gives_unknown_with_partial_statistics(tmp_path: Path, backend: str) -> None:
    model = _models(tmp_path)[1]
    code, doc = cli_json(
        "check", str(model), "--backend", backend, "--no-trail", "--max-states", "7"
    )
    rows = _ctl_rows(doc)
    assert code == 3
    assert {v for v, _, _ in rows.values()} == {"unknown"}
    assert {s for _, s, _ in rows.values()} == {7}
    assert all("state limit" in r["reason"] for r in doc["results"] if r["kind"] == "ctl")


def _agree_with_symbolic(tmp_path: Path, seeds: range) -> int:
    """CTL verdicts on the C-built graph against the symbolic method (isl, no graph: an
    independent computation) on test_symbolic_agreement's generated systems (with an ``init:``
    constraint: one C graph per initial state); returns the number of formulas both decided."""
    from .test_symbolic_agreement import _verdicts, random_system

    decided = 0
    for seed in seeds:
        text = random_system(seed)
        path = tmp_path / f"gen{seed}.gcl"
        path.write_text(text)
        _, doc = cli_json("check", str(path), "--backend", "native", "--keep-going")
        rows = [r for r in doc["results"] if r["kind"] == "ctl"]
        assert all(r["stats"].get("backend") == "native" for r in rows), (seed, doc)
        native = {r["property"]: r["verdict"] for r in rows}
        assert len(native) == 3 and "unknown" not in native.values(), (seed, doc)
        for name, v in _verdicts("symbolic", text).items():
            if name in native and v.value != "unknown":
                assert v.value == native[name], (seed, name, text)
                decided += 1
    return decided


def test_c_graph_ctl_agrees_with_the_symbolic_method_on_generated_systems(
    tmp_path: Path, native_fast_compile: None
) -> None:
    assert _agree_with_symbolic(tmp_path, range(4)) >= 4


@pytest.mark.slow
def test_c_graph_ctl_agrees_with_the_symbolic_method_many(
    tmp_path: Path, native_fast_compile: None
) -> None:
    assert _agree_with_symbolic(tmp_path, range(100, 140)) >= 60
