"""ALV's composite representation (``--composite bdd``, ``engines/symbolic/composite_bdd.py``)
against the split one (``--composite split``, one isl set per control location): the same
sets at every control valuation (exact reachable sets, set operations, dead states) and the
same verdicts, on the example models with and without predicates and on generated systems
(6 in CI, 200 more under ``-m slow``)."""

from __future__ import annotations

import islpy as isl
import pytest

from absmc.cli.common import add_predicates
from absmc.engines import registry
from absmc.engines.symbolic.abstract import PartialAbstraction
from absmc.engines.symbolic.composite import Split
from absmc.engines.symbolic.composite_bdd import BddSplit, BSet
from absmc.engines.symbolic.encode import Encoding
from absmc.engines.symbolic.fixpoint import Fixpoints
from absmc.engines.symbolic.options import SymbolicOptions
from absmc.ir.system import System
from absmc.kernel.run.options import CheckOptions, Limits
from absmc.kernel.run.result import Verdict
from absmc.lang.gcl.parser import parse_gcl, parse_gcl_file
from tests.conftest import EXAMPLES
from tests.test_symbolic_agreement import random_system

SYMBOLIC = EXAMPLES / "symbolic"

_SLOW = pytest.mark.slow

#: example models and predicate sets (the paper's kind: ``ai <= s``, bakery atoms); the
#: larger ones under ``-m slow``
MODELS = [
    ("ticket2", ()),
    ("ticket2", ("a1 <= s", "a2 <= s")),
    ("ticket2_bug", ()),
    ("bakery2", ()),
    pytest.param("bakery2", ("a2 == 0", "a1 < a2", "a1 == 0", "a2 < a1"), marks=_SLOW),
    pytest.param("airport_tic2", (), marks=_SLOW),
    pytest.param("airport_tic2", ("w1 <= ts", "w2 <= ts"), marks=_SLOW),
    pytest.param("airport_bk2", (), marks=_SLOW),
    pytest.param("airport_bk2", ("b2 == 0", "b1 < b2", "b1 == 0", "b2 < b1"), marks=_SLOW),
    pytest.param("chardrv2", (), marks=_SLOW),
    pytest.param("chardrv2", ("lock == 1", "excl == 1"), marks=_SLOW),
    pytest.param("ticket3", (), marks=_SLOW),
    pytest.param("bakery3", (), marks=_SLOW),
]


def _verdicts(system: System, composite: str) -> dict[str, tuple[Verdict, object]]:
    opts = CheckOptions(limits=Limits(timeout=120))
    res = registry.run("symbolic", system, opts, SymbolicOptions(composite=composite))
    return {r.property: (r.verdict, r.extra.get("proved_by")) for r in res.results}


def _model(name: str, preds: tuple[str, ...]) -> System:
    system = parse_gcl_file(SYMBOLIC / f"{name}.gcl")
    return add_predicates(system, preds) if preds else system


@pytest.mark.parametrize(("name", "preds"), MODELS, ids=lambda x: str(x) if x else "-")
def test_bdd_and_split_give_the_same_verdicts_on_the_examples(
    name: str, preds: tuple[str, ...]
) -> None:
    system = _model(name, preds)
    split, bdd = _verdicts(system, "split"), _verdicts(system, "bdd")
    assert bdd == split
    assert any(v is not Verdict.UNKNOWN for v, _ in bdd.values())
    if name == "ticket2_bug":
        assert bdd["mutex"][0] is Verdict.VIOLATED
    if preds and name != "chardrv2":
        assert "abstraction" in {how for _, how in bdd.values()}


def _both(system: System) -> tuple[Fixpoints, Fixpoints]:
    enc = Encoding(system)
    base = PartialAbstraction(enc, system.predicates) if system.predicates else enc
    out = []
    for rep in (Split, BddSplit):
        fix = Fixpoints(rep(base))
        fix.disjunctive_rounds = 0
        out.append(fix)
    return out[0], out[1]


def _flat(s: object) -> isl.Set:
    assert hasattr(s, "flat")
    return s.flat()


def _same_reach(system: System) -> bool:
    """Both representations compute the same reachable set (point for point in the flat
    space, with the convex widening); returns whether it was exact."""
    split, bdd = _both(system)
    a, b = split.reachable(), bdd.reachable()
    assert a.exact == b.exact
    # widened too: the convex widening per location does not depend on the representation
    assert _flat(a.states).is_equal(_flat(b.states))
    return a.exact


def test_exact_reachable_sets_are_equal_and_pairs_merge_equal_polyhedra() -> None:
    system = _model("ticket2", ("a1 <= s", "a2 <= s"))
    split, bdd = _both(system)
    r1, r2 = split.reachable().states, bdd.reachable().states
    assert isinstance(r2, BSet)
    # widened: the same iterations; the pairs hold the 19 locations in 4 polyhedra
    assert split.stats.reach_iterations == bdd.stats.reach_iterations
    assert len(r1.parts) == 19  # type: ignore[union-attr]
    assert sum(bdd.enc.ctl.count(b) for b, _ in r2.pairs.values()) == 19  # type: ignore[union-attr]
    assert len(r2.pairs) == 4
    # the same polyhedron at every location
    assert _flat(r1).is_equal(_flat(r2))
    # the pairs' BDDs are disjoint and their polyhedra distinct
    ctl = bdd.enc.ctl  # type: ignore[union-attr]
    items = list(r2.pairs.values())
    for i, (b, p) in enumerate(items):
        for c, q in items[i + 1 :]:
            assert b & c == ctl.bdd.false
            assert not p.is_equal(q)


def test_set_operations_agree_with_the_split_sets() -> None:
    system = parse_gcl(random_system(3))
    enc = Encoding(system)
    sp, bd = Split(enc), BddSplit(enc)
    flats = [
        enc.domain,
        enc.initial,
        isl.Set("{ [r, s, f, x] : r <= s and x >= 0 }"),
        isl.Set("{ [r, s, f, x] : r + x = 2 or (f = 1 and s = 3) }"),
    ]
    flats = [a.intersect(enc.domain).coalesce() for a in flats]  # control within its range
    for a in flats:
        for b in flats:
            ca, cb = sp.cut(a), sp.cut(b)
            ba, bb = bd.cut(a), bd.cut(b)
            assert ba.flat().is_equal(a.coalesce())
            assert ba.union(bb).flat().is_equal(ca.union(cb).flat())
            assert ba.intersect(bb).flat().is_equal(ca.intersect(cb).flat())
            assert ba.subtract(bb).flat().is_equal(ca.subtract(cb).coalesce().flat())
            assert ba.is_subset(bb) == ca.is_subset(cb) == a.is_subset(b)
            assert ba.subtract(bb).is_empty() == a.is_subset(b)


@pytest.mark.parametrize("preds", [(), ("a1 <= s", "a2 <= s")], ids=["concrete", "abstract"])
def test_dead_states_and_images_agree_with_the_split_relation(preds: tuple[str, ...]) -> None:
    system = _model("ticket2", preds)
    split, bdd = _both(system)
    reach = split.reachable().states
    r2 = bdd.reachable().states
    assert _flat(reach).is_equal(_flat(r2))
    assert isinstance(bdd.enc, BddSplit)
    dead = bdd.enc.dead_within(bdd.enc.domain)
    base = bdd.enc.base
    assert dead.flat().is_equal(base.dead.coalesce())
    # pre and post of the reachable set through the totalized relations
    assert _flat(split.pre(reach)).is_equal(_flat(bdd.pre(r2)))
    assert _flat(split.post(reach)).is_equal(_flat(bdd.post(r2)))


def _differential(seeds: range | list[int]) -> tuple[int, int]:
    exact = total = 0
    for seed in seeds:
        system = parse_gcl(random_system(seed), "gen.gcl")
        exact += _same_reach(system)
        split, bdd = _verdicts(system, "split"), _verdicts(system, "bdd")
        assert {k: v for k, (v, _) in bdd.items()} == {k: v for k, (v, _) in split.items()}, seed
        total += len(bdd)
    return exact, total


def test_bdd_and_split_agree_on_generated_systems() -> None:
    exact, total = _differential(range(6))
    assert total == 30  # 3 ctl properties, no-deadlock and no-model-error per system
    assert 0 < exact < 6  # some reached without widening, some widened


@pytest.mark.slow
def test_bdd_and_split_agree_on_many_generated_systems() -> None:
    exact, total = _differential(range(1000, 1200))
    assert total == 1000
    assert 0 < exact < 200


def test_framing_commands_without_the_consistency_restriction_give_the_same_sets() -> None:
    """airportSM-bk2 under the taxiway's bakery atoms: the runway's commands frame every bit
    (``PartialAbstraction.frames``); the BDD sets build them without ``consistent`` and
    still reach the same states, with the same pre-images."""
    system = _model("airport_bk2", ("b2 == 0", "b1 < b2", "b1 == 0", "b2 < b1"))
    base = PartialAbstraction(Encoding(system), system.predicates)
    assert any(base.frames(ci) for ci in range(len(system.commands)))
    split, bdd = _both(system)
    a, b = split.reachable().states, bdd.reachable().states
    assert _flat(a).is_equal(_flat(b))
    assert _flat(split.pre(a)).is_equal(_flat(bdd.pre(b)))
