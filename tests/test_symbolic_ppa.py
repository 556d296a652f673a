"""Partial predicate abstraction without refinement (paper 002 §3, Table 3): the verdicts of
the predicate sets of ``benchmarks/symbolic_paper.py --table 3`` on our four-plane airport
controller, cross-checked against the concrete fixpoints (POLY), and a taxiway bug the
collapsed bits must not hide (docs/symbolic.md, *Partial predicate abstraction without
refinement, beside Table 3*)."""

from __future__ import annotations

import pytest

from absmc.engines import registry
from absmc.engines.symbolic.abstract import PartialAbstraction
from absmc.engines.symbolic.composite import _framed
from absmc.engines.symbolic.encode import Encoding
from absmc.ir.expr import Expr, free_vars
from absmc.ir.system import System
from absmc.kernel.run.options import CheckOptions, Limits
from absmc.kernel.run.result import PropertyResult, Verdict
from absmc.lang.gcl.parser import parse_gcl, parse_gcl_file
from tests.conftest import EXAMPLES

AIRPORT2 = EXAMPLES / "symbolic" / "airport_tic2.gcl"
AIRPORT_BK2 = EXAMPLES / "symbolic" / "airport_bk2.gcl"
AIRPORT4 = EXAMPLES / "symbolic" / "airport_tic4.gcl"


def _predicates(system: System, *texts: str) -> tuple[Expr, ...]:
    head = "".join(f"var {v.name} : int;\n" for v in system.variables)
    head += "process P { true -> skip; }\n"
    return tuple(parse_gcl(head + f"predicate {p};").predicates[0] for p in texts)


def _check(system: System, prop: str) -> PropertyResult:
    opts = CheckOptions(properties=[prop], limits=Limits(timeout=300))
    res = registry.run("symbolic", system, opts)
    return next(r for r in res.results if r.property == prop)


def test_framing_commands_get_the_composition_with_alpha() -> None:
    # airportSM-bk2 with Table 3's bakery predicates: the runway's commands mention neither
    # b1 nor b2 and assign no variable of a predicate; their relation, built without
    # projecting the tickets out of the bits' definitions, is still Alpha^-1 ; T ; Alpha,
    # and every kept control variable that may_correlate leaves untested is framed
    base = parse_gcl_file(AIRPORT_BK2)
    texts = ("b2 == 0", "b1 < b2", "b1 == 0", "b2 < b1", "b1 >= 0")
    for observed in (None, set[str]()):
        system = base.with_(predicates=_predicates(base, *texts))
        enc = Encoding(system)
        pa = PartialAbstraction(enc, system.predicates, observed=observed)
        alpha = pa.alpha_map
        framing = 0
        for ci, (c, conc) in enumerate(zip(system.commands, enc.relations, strict=True)):
            rel = pa.relation(ci)
            assert rel.is_equal(conc.apply_domain(alpha).apply_range(alpha)), c.label
            mentioned = set(free_vars(c.guard))
            for n, e in c.updates:
                mentioned |= {n, *free_vars(e)}
            framing += not mentioned & {"b1", "b2"}
            for pos, i in enumerate(pa.kept):
                v = system.variables[i]
                if v.is_control and not pa.may_correlate(pos) and v.name not in mentioned:
                    assert _framed(rel, pos, 0, 5), (c.label, v.name)
        assert framing >= 6  # the runway's: take a ticket, land, fly off (two planes)


def test_collapsed_bits_do_not_hide_a_taxiway_bug() -> None:
    # plane 1 enters the taxiway one ticket early (w1 <= ts + 1): the bits of w1 <= ts,
    # w2 <= ts (collapsed where the tickets are dead, framed by the other plane's commands)
    # prove nothing, the concrete levels find the replayed witness
    text = AIRPORT2.read_text().replace("apc1 == 3 && w1 <= ts ", "apc1 == 3 && w1 <= ts + 1 ")
    assert "w1 <= ts + 1" in text
    base = parse_gcl(text, str(AIRPORT2))
    system = base.with_(predicates=_predicates(base, "w1 <= ts", "w2 <= ts"))
    pa = PartialAbstraction(Encoding(system), system.predicates, observed=set())
    assert set(pa.collapsed) == {0, 1}
    r = _check(system, "taxiway")
    assert r.verdict is Verdict.VIOLATED and r.trace is not None, r.reason


@pytest.mark.slow
def test_four_planes_taxiway_is_proved_on_the_abstraction_and_concretely() -> None:
    # Table 3's airportSM-tic4-S: w1..w4 <= ts (the paper's kind of predicate, ai <= s)
    # abstract the four taxiway tickets; the proof is on the abstraction, and the concrete
    # fixpoints (POLY) agree
    base = parse_gcl_file(AIRPORT4)
    preds = _predicates(base, *(f"w{i} <= ts" for i in range(1, 5)))
    r = _check(base.with_(predicates=preds), "taxiway")
    assert r.verdict is Verdict.HOLDS, r.reason
    assert r.extra["proved_by"] == "abstraction"
    assert "partial predicate abstraction of w1, w2, w3, w4" in r.reason
    poly = _check(base, "taxiway")
    assert poly.verdict is Verdict.HOLDS and poly.extra["proved_by"] == "concrete", poly.reason


@pytest.mark.slow
def test_four_planes_runway_is_proved_on_the_abstraction_of_the_taxiway_tickets() -> None:
    # the runway exclusion of airport_tic4 with Table 3's tic4 set (w1..w4 <= ts): the runway
    # tickets r1..r4 stay concrete, so the proof is on the abstraction (docs/symbolic.md,
    # *The four-plane airport's two exclusions*)
    base = parse_gcl_file(AIRPORT4)
    preds = _predicates(base, *(f"w{i} <= ts" for i in range(1, 5)))
    r = _check(base.with_(predicates=preds), "runway")
    assert r.verdict is Verdict.HOLDS, r.reason
    assert r.extra["proved_by"] == "abstraction"
    assert "partial predicate abstraction of w1, w2, w3, w4" in r.reason
