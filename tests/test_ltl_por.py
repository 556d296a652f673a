"""Partial-order reduction of the LTL product search, in C (runtime_ltl.c ``l_ample``) and in
Python (kernel/ltl/por.py ``ReducedProduct``): visibility for the automaton's guards, the stack
proviso, the nested search on the outer search's ample sets (docs/reductions.md "LTL"). The
same verdicts as the unreduced search on generated cyclic Promela models and on the shared LTL
corpus (SPIN's verdicts), violated properties with lassos replayed on the concrete semantics,
strictly fewer product states on some models, the two back ends storing the same product states
and choosing the same ample sets (they visit the product in the same order), and the cases left
unreduced (``X``, never claims, weak fairness on the Python back end, CNDFS) saying so (weak
fairness in C: tests/test_ltl_fair_por.py)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from absmc.engines.explicit.check import check_explicit
from absmc.ir.ltl import NON_PROGRESS
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import PropertyResult, Verdict
from absmc.lang.loader import load_model
from absmc.native import native_available
from absmc.native.ltl import POR

from .conftest import SHARED, needs_shared
from .test_ltl_native import corpus_params

CORPUS = SHARED / "benchmarks" / "ltl"

pytestmark = pytest.mark.usefixtures("native_fast_compile")  # outcomes, not speed

#: the back ends compared (the Python one alone where no C compiler is installed)
BACKENDS = ("python", "native") if native_available() else ("python",)


_OPTIONS = [
    "l = (l + 1) % 3",
    "l > 0 -> l--; l = (l + 2) % 3",
    "l == 2 -> l = 0; l++",
    "l = 1; l = l + 1; g0 = (g0 + l) % 3; l = 0",
    "g1 == l -> l = (l + 2) % 3; l = l % 2",
    "l = 2; l = l - 1; c!l; l = 0",
    "c?l; l = l % 3; l++; l = 0",
    "l = 1; atomic { l = (l + 1) % 3; g1 = l }; l = 0",
    "g0 == 2 -> g0 = 0",
    "atomic { l < 2 -> l++; l++ }; l--",
]

_ATOMS = [
    "g0 == 0",
    "g1 > 0",
    "len(c) == 0",
    "g0 != 1",
    "g1 == 2",
    "len(c) < 2",
    "g0 < 3",
    "g1 < 3 && len(c) <= 2",
]

_TEMPLATES = [
    "[] <> ({a})",
    "<> [] ({a})",
    "[] (({a}) -> <> ({b}))",
    "({a}) U ({b})",
    "[] ({a})",
    "<> ({a})",
    "[] <> ({a}) -> [] <> ({b})",
]


def cyclic_promela(seed: int) -> str:
    """Two or three process types (one with two instances sometimes), each a ``do`` loop over
    2-4 options from local steps (safe locations: the reduction's ample sets), global writes
    and reads, sends and receives on a buffered channel and ``atomic`` blocks, and 3 next-free
    LTL properties over the globals and the channel's length (some hold, some are violated)."""
    rng = random.Random(seed)
    lines = ["byte g0, g1;", f"chan c = [{rng.choice([1, 2])}] of {{ byte }};"]
    for k in range(rng.choice([2, 3])):
        n = rng.choice(["", "", " [2]"])
        opts = rng.sample(_OPTIONS, rng.randint(2, 4))
        body = " ".join(f":: {o}" for o in opts)
        lines.append(f"active{n} proctype P{k}() {{ byte l; do {body} od }}")
    for m in range(3):
        a, b = rng.sample(_ATOMS, 2)
        lines.append(f"ltl f{m} {{ {rng.choice(_TEMPLATES).format(a=a, b=b)} }}")
    return "\n".join(lines) + "\n"


def _one(path: Path, name: str, reduce: bool, backend: str, **kw: object) -> PropertyResult:
    system = load_model(path)
    opts = CheckOptions(ltl=name, reduce=reduce, **kw)  # type: ignore[arg-type]
    result = check_explicit(system, opts, backend)  # type: ignore[arg-type]
    return next(r for r in result.results if r.property == name)


def _compare(
    path: Path, name: str, backend: str, **kw: object
) -> tuple[PropertyResult, PropertyResult]:
    """The property with and without reduction on ``backend``: the same verdict, a violation's
    lasso replayed (the check replays every lasso on the concrete semantics before it reports
    it), a reduced search that says so and stores no more product states than the full one
    when it holds."""
    red, full = _one(path, name, True, backend, **kw), _one(path, name, False, backend, **kw)
    assert red.verdict is full.verdict, (path.name, name, backend)
    for r in (red, full):
        if r.verdict is Verdict.VIOLATED:
            assert r.trace is not None and r.trace.cycle_start is not None, (path.name, name)
    assert POR not in full.stats.extra.get("reductions", [])
    if POR in red.stats.extra.get("reductions", []) and red.verdict is Verdict.HOLDS:
        assert red.stats.states <= full.stats.states, (path.name, name, backend)
    return red, full


def _same_search(a: PropertyResult, b: PropertyResult) -> None:
    """Two back ends' results of one property: the same verdict, product states, transitions,
    reductions and states reduced (the same search: same order, same ample sets)."""
    keys = ("reductions", "reduced_states", "reduction_note", "nested_states")
    got = [(r.verdict, r.stats.states, r.stats.transitions) for r in (a, b)]
    assert got[0] == got[1], (a.property, got)
    assert [a.stats.extra.get(k) for k in keys] == [b.stats.extra.get(k) for k in keys]


def _differential(tmp: Path, seeds: range) -> dict[str, tuple[int, int, int]]:
    """Every back end of :data:`BACKENDS` on each seed's 3 properties, with and without
    reduction (:func:`_compare`); with both back ends, their reduced and unreduced searches
    are the same (:func:`_same_search`). Returns per back end (properties compared, violated
    ones, ones with strictly fewer states)."""
    totals = dict.fromkeys(BACKENDS, (0, 0, 0))
    for seed in seeds:
        path = tmp / f"c{seed}.pml"
        path.write_text(cyclic_promela(seed))
        for name in ("f0", "f1", "f2"):
            runs = {b: _compare(path, name, b) for b in BACKENDS}
            for b, (red, full) in runs.items():
                compared, violated, fewer = totals[b]
                violated += red.verdict is Verdict.VIOLATED
                if red.verdict is Verdict.HOLDS and red.stats.states < full.stats.states:
                    assert POR in red.stats.extra["reductions"]
                    assert red.stats.extra["reduced_states"] > 0
                    fewer += 1
                totals[b] = (compared + 1, violated, fewer)
            if len(runs) == 2:
                for k in range(2):
                    _same_search(runs["python"][k], runs["native"][k])
    for b, (compared, violated, fewer) in totals.items():
        print(f"LTL POR differential ({b}): {compared} properties, {violated} violated,", end="")
        print(f" {fewer} fewer")
    return totals


def test_generated_cyclic_models_same_verdicts(tmp_path: Path) -> None:
    for compared, violated, fewer in _differential(tmp_path, range(4, 8)).values():
        assert compared == 12 and violated >= 2 and fewer >= 1


@pytest.mark.slow
def test_generated_cyclic_models_same_verdicts_many(tmp_path: Path) -> None:
    for compared, violated, fewer in _differential(tmp_path, range(8, 208)).values():
        assert compared == 600 and violated >= 100 and fewer >= 50


_LOCAL_LOOP = """
byte g;
active proctype A() { byte l; do :: l = 1; l = 2; l = 3; g = 1; l = 0 od }
active proctype B() { byte m; do :: m = 1; m = 2; m = 3; g = 0; m = 0 od }
ltl holds { [] (g < 2) }
ltl stays { <> [] (g == 1) }
ltl next { [] (g == 1 -> X (g < 2)) }
never { do :: g == 1 -> break :: true od; accept: do :: g == 1 od }
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_reduction_and_its_refusals(tmp_path: Path, backend: str) -> None:
    """Independent local loops: the reduced product is strictly smaller and the verdicts stay,
    also under weak fairness in C; ``X``, a never claim and weak fairness on the Python back
    end search unreduced and say why."""
    path = tmp_path / "loops.pml"
    path.write_text(_LOCAL_LOOP)
    red, full = _compare(path, "holds", backend)
    assert red.verdict is Verdict.HOLDS and red.stats.states < full.stats.states
    assert red.stats.extra["reduced_states"] > 0
    red, _ = _compare(path, "stays", backend)
    assert red.verdict is Verdict.VIOLATED
    for name, why in (("next", "with X"), ("never_0", "never claim")):
        red, full = _compare(path, name, backend)
        assert why in red.stats.extra["reduction_note"]
        assert red.stats.states == full.stats.states
    red, full = _compare(path, "holds", backend, fairness="weak")
    if backend == "native":  # the local steps leave the other process's enabledness
        assert red.verdict is Verdict.HOLDS and red.stats.states < full.stats.states
        assert red.stats.extra["reduced_states"] > 0
    else:
        assert "weak fairness" in red.stats.extra["reduction_note"]
        assert red.stats.states == full.stats.states


_NO_SAFE = """
byte g;
active proctype A() { do :: g = 1; g = 0 od }
active proctype B() { do :: g = 2; g = 0 od }
ltl small { [] (g < 3) }
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_safe_location_is_noted(tmp_path: Path, backend: str) -> None:
    """Every step writes the atom's variable: no location is safe, the search is the full
    one and says why."""
    path = tmp_path / "nosafe.pml"
    path.write_text(_NO_SAFE)
    red, full = _compare(path, "small", backend)
    assert red.verdict is Verdict.HOLDS and red.stats.states == full.stats.states == 7
    assert red.stats.extra["reduction_note"] == "no location is safe for the property"


def test_python_reduces_with_every_store(tmp_path: Path) -> None:
    """The Python product search reduces with the hash-compact and bitstate stores too (the
    stack proviso reads the outer stack, not the store): the reduced exact search's states on
    this small model, and the violation found and replayed."""
    path = tmp_path / "loops.pml"
    path.write_text(_LOCAL_LOOP)
    exact = _one(path, "holds", True, "python")
    for store in ("hash-compact", "bitstate"):
        red = _one(path, "holds", True, "python", store=store)
        assert POR in red.stats.extra["reductions"]
        assert red.verdict is Verdict.UNKNOWN  # not a proof
        assert (
            red.stats.states
            == exact.stats.states
            < _one(path, "holds", False, "python").stats.states
        )
        bad = _one(path, "stays", True, "python", store=store)
        assert bad.verdict is Verdict.VIOLATED and bad.trace is not None


_CHEAP = {"ltl_always_eventually.pml", "ltl_example.pml", "zune.pml", "diskhead.pml"}


@needs_shared
@pytest.mark.parametrize("row", corpus_params(_CHEAP, fair=False))
def test_corpus_verdicts_reduced_equal_spin(row: dict[str, str]) -> None:
    """Each back end's reduced verdict is SPIN's and its unreduced one; both back ends store
    the same product states and reduce the same states."""
    system = load_model(CORPUS / row["file"])
    name = row["ltl"] or next(p.name for p in system.ltl if p.name != NON_PROGRESS)
    runs = {b: _compare(CORPUS / row["file"], name, b)[0] for b in BACKENDS}
    for red in runs.values():
        assert red.verdict.value == row["verdict"]
    if len(runs) == 2:
        _same_search(runs["python"], runs["native"])
