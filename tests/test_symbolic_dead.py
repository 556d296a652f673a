"""The dead states per control location (``Encoding.dead_at``, ``composite.DeadLoops``) and
the predicates' consistent bit valuations built cell by cell
(``PartialAbstraction.consistent``, ``.domain``): the same sets as the whole-domain
constructions they replace, and the verdicts on the fuller airport controller
(``examples/symbolic/airport_full_tic2.gcl``, docs/symbolic.md)."""

from __future__ import annotations

import itertools

import islpy as isl
import pytest

from absmc.cli.common import add_predicates
from absmc.engines import registry
from absmc.engines.symbolic.abstract import PartialAbstraction
from absmc.engines.symbolic.composite import Split
from absmc.engines.symbolic.encode import Encoding
from absmc.engines.symbolic.fixpoint import Fixpoints
from absmc.ir.expr import Expr
from absmc.ir.system import System
from absmc.kernel.run.options import CheckOptions, Limits
from absmc.kernel.run.result import PropertyResult, Verdict
from absmc.lang.gcl.parser import parse_gcl, parse_gcl_file
from tests.conftest import EXAMPLES

SYMBOLIC = EXAMPLES / "symbolic"

#: a model with counters and dead states: a plane may take a gate only while its counter is
#: 0; the second gate is never freed, so both planes can get stuck
_COUNTERS = """
var g1, g2, n : int;
var p1, p2 : 0..2;
init: g1 == 0 && g2 == 0;
process A {
  p1 == 0 && g1 == 0 -> g1 := g1 + 1, p1 := 1;
  p1 == 0 && g2 == 0 -> g2 := g2 + 1, n := n + 1, p1 := 2;
  p1 == 1 -> g1 := g1 - 1, p1 := 0;
}
process B {
  p2 == 0 && g1 == 0 -> g1 := g1 + 1, p2 := 1;
  p2 == 0 && g2 == 0 -> g2 := g2 + 1, n := n + 1, p2 := 2;
  p2 == 1 -> g1 := g1 - 1, p2 := 0;
}
ctl live: AG(p1 == 0 => AF(p1 == 1));
ctl safe: AG !(p1 == 1 && p2 == 1);
"""


def _check(system: System, prop: str) -> PropertyResult:
    opts = CheckOptions(properties=[prop], limits=Limits(timeout=300))
    res = registry.run("symbolic", system, opts)
    return next(r for r in res.results if r.property == prop)


@pytest.mark.parametrize("name", ["airport_tic2", "airport_bk2", "chardrv2", "counters"])
def test_dead_states_per_location_are_the_whole_dead_set_there(name: str) -> None:
    system = (
        parse_gcl(_COUNTERS) if name == "counters" else parse_gcl_file(SYMBOLIC / f"{name}.gcl")
    )
    enc = Encoding(system)
    ctrl = enc.control()
    found = 0
    for values in itertools.product(*(range(lo, hi + 1) for _, lo, hi in ctrl)):
        fixed = {i: v for (i, _, _), v in zip(ctrl, values, strict=True)}
        here = enc.domain
        for i, v in fixed.items():
            here = here.fix_val(isl.dim_type.set, i, v)
        got = enc.dead_at(fixed)
        assert got.is_equal(enc.dead.intersect(here)), values
        found += not got.is_empty()
    if name == "counters":
        assert found > 0  # the stuck planes


def test_lazy_self_loops_give_the_flat_totalized_relation() -> None:
    # every location's edges under the totalized relation (lazy dead loops) are the flat
    # total relation restricted to that location, on the concrete encoding and on an
    # abstraction of the counters model
    system = parse_gcl(_COUNTERS)
    enc = Encoding(system)
    for base in (enc, PartialAbstraction(enc, _preds(system, "g2 == 0", "n <= 0"))):
        sp = Split(base)
        flat = base.total
        for k, part in sp.domain.parts.items():
            edges = sp.total.edges_from(k)
            got = isl.Map.empty(flat.get_space())
            for _, m in edges:
                got = got.union(m)
            assert got.intersect_domain(part).is_equal(flat.intersect_domain(part)), k


def _preds(system: System, *texts: str) -> tuple[Expr, ...]:
    head = "".join(f"var {v.name} : int;\n" for v in system.variables)
    head += "process P { true -> skip; }\n"
    return tuple(parse_gcl(head + f"predicate {p};").predicates[0] for p in texts)


@pytest.mark.parametrize(
    ("name", "preds"),
    [
        ("ticket2", ("a1 <= s", "a2 <= s", "a1 < t")),
        ("bakery2", ("a2 == 0", "a1 < a2", "a1 == 0", "a2 < a1", "a1 >= 0")),
        ("airport_bk2", ("b2 == 0", "b1 < b2", "b1 == 0", "b2 < b1", "b1 >= 0")),
        ("airport_tic2", ("w1 <= ts", "r2 <= rs")),
    ],
)
def test_consistent_bits_and_abstract_domain_built_by_cells(
    name: str, preds: tuple[str, ...]
) -> None:
    # the cell-by-cell construction equals the projection of the product of the bits'
    # definitions, and the domain equals α of the concrete domain
    system = add_predicates(parse_gcl_file(SYMBOLIC / f"{name}.gcl"), preds)
    enc = Encoding(system)
    pa = PartialAbstraction(enc, tuple(system.predicates))
    product = isl.Set.universe(pa.definitions[0].get_space())
    for d in pa.definitions:
        product = product.intersect(d)
    for i in reversed(pa.abstracted):
        product = product.project_out(isl.dim_type.set, i, 1)
    assert pa.consistent.is_equal(product)
    assert pa.domain.is_equal(pa.alpha(enc.domain))
    assert not pa.consistent.is_empty()


def test_counters_model_verdicts_agree_with_and_without_predicates() -> None:
    system = parse_gcl(_COUNTERS)
    safe = _check(system, "safe")
    assert safe.verdict is Verdict.HOLDS
    live = _check(system, "live")  # plane 1 may take gate 2 and stay there
    assert live.verdict is Verdict.VIOLATED
    abstract = _check(system.with_(predicates=_preds(system, "g2 == 0", "n <= 0")), "safe")
    assert abstract.verdict is Verdict.HOLDS


def test_fuller_airport_two_planes_runway_exclusion_poly_and_ppa() -> None:
    # the fuller AGNTC arrival model: POLY proves the runway exclusion, and so does the
    # abstraction with the paper's kind of predicate (ai <= s), on the abstraction
    base = parse_gcl_file(SYMBOLIC / "airport_full_tic2.gcl")
    poly = _check(base, "runway")
    assert poly.verdict is Verdict.HOLDS and poly.extra["proved_by"] == "concrete", poly.reason
    ppa = _check(add_predicates(base, ("a1 <= s", "a2 <= s")), "runway")
    assert ppa.verdict is Verdict.HOLDS, ppa.reason
    assert ppa.extra["proved_by"] == "abstraction"


def test_fixpoints_on_the_counters_model_reach_the_stuck_states() -> None:
    enc = Encoding(parse_gcl(_COUNTERS))
    fix = Fixpoints(Split(enc))
    reach = fix.reachable().states
    # both planes at gate 2 would need g2 == 0 twice: unreachable; one at gate 2 is reached
    assert any(k == (2, 0) or k == (2, 1) for k in reach.parts)
    assert (2, 2) not in reach.parts
