"""Dead predicate bits in the partial predicate abstraction (``engines/symbolic/liveness.py``,
``PartialAbstraction.collapsed``): where each variable a predicate abstracts is dead, the bit
has one value, the abstract relation is still ``Alpha⁻¹ ; T ; Alpha`` for that ``Alpha``, and
the abstraction proves with fewer locations what it proved before (docs/symbolic.md)."""

from __future__ import annotations

import islpy as isl

from absmc.engines import registry
from absmc.engines.symbolic.abstract import PartialAbstraction
from absmc.engines.symbolic.composite import Split
from absmc.engines.symbolic.encode import Encoding
from absmc.engines.symbolic.fixpoint import Fixpoints
from absmc.engines.symbolic.liveness import dead_locations
from absmc.ir.expr import Expr
from absmc.ir.system import System
from absmc.kernel.run.options import CheckOptions, Limits
from absmc.kernel.run.result import Verdict
from absmc.lang.gcl.parser import parse_gcl, parse_gcl_file
from tests.conftest import EXAMPLES

AIRPORT2 = EXAMPLES / "symbolic" / "airport_tic2.gcl"
TICKET2 = EXAMPLES / "symbolic" / "ticket2.gcl"
BUG = EXAMPLES / "symbolic" / "ticket2_bug.gcl"


def _with(path: object, *texts: str) -> System:
    system = parse_gcl_file(path)  # type: ignore[arg-type]
    head = "".join(f"var {v.name} : int;\n" for v in system.variables)
    head += "process P { true -> skip; }\n"
    preds: tuple[Expr, ...] = tuple(
        parse_gcl(head + f"predicate {p};").predicates[0] for p in texts
    )
    return system.with_(predicates=preds)


def test_a_ticket_is_dead_outside_its_waiting_location() -> None:
    # airport_tic2: w1 is assigned at apc1 = 2 and read at apc1 = 3 only
    system = parse_gcl_file(AIRPORT2)
    enc = Encoding(system)
    w1 = next(i for i, v in enumerate(system.variables) if v.name == "w1")
    ts = next(i for i, v in enumerate(system.variables) if v.name == "ts")
    got = dead_locations(enc, [w1], observed=set())
    assert got is not None
    space, dead = got
    # the space is the control variable of the commands that mention w1: apc1 (0..5)
    assert [system.variables[i].name for i, _, _ in space.dims] == ["apc1"]
    assert dead.is_equal(isl.Set("{ [p] : 0 <= p <= 5 and p != 3 }"))
    # ts is read by every waiting plane: never dead
    assert dead_locations(enc, [ts], observed=set()) is None
    # a variable a property reads is live everywhere
    assert dead_locations(enc, [w1], observed={"w1"}) is None
    # beyond the limit on the locations of that space: nothing is claimed
    assert dead_locations(enc, [w1], observed=set(), limit=5) is None


def test_collapsed_relation_is_the_existential_abstraction() -> None:
    # Def. 2.6 for the collapsing Alpha: on Alpha's image (the abstract states of some
    # concrete state, where every fixpoint stays) each command's relation is
    # Alpha^-1 ; T ; Alpha; off it, a bit the command only frames keeps its value
    cases = [
        _with(AIRPORT2, "w1 <= ts", "w2 <= ts"),
        _with(AIRPORT2, "w1 <= ts", "r1 <= rs", "w1 < tt"),
        _with(TICKET2, "a1 <= s", "a2 <= s", "a1 < t"),
    ]
    for system in cases:
        enc = Encoding(system)
        pa = PartialAbstraction(enc, system.predicates, observed=set())
        assert pa.collapsed, system.name
        alpha = pa.alpha_map
        image = alpha.range()
        loose = 0
        for ci, conc in enumerate(enc.relations):
            composed = conc.apply_domain(alpha).apply_range(alpha)
            rel = pa.relation(ci)
            assert rel.intersect_domain(image).is_equal(composed), (system.name, ci)
            # no pair leads from an image state out of the image
            assert rel.intersect_domain(image).range().is_subset(image), (system.name, ci)
            loose += not rel.is_equal(composed)
        if system is cases[0]:
            # w2 <= ts is only framed by plane 1's commands: not tied to apc2's dead
            # locations there
            assert loose > 0
        # alpha is total on the domain and a function
        assert alpha.domain().is_equal(enc.domain)
        assert alpha.is_single_valued()


def test_collapse_halves_the_locations_and_still_proves_mutual_exclusion() -> None:
    system = _with(AIRPORT2, "w1 <= ts", "w2 <= ts")
    sizes = []
    none: set[str] = set()
    for observed in (None, none):
        fix = Fixpoints(
            Split(PartialAbstraction(Encoding(system), system.predicates, observed=observed))
        )
        reach = fix.reachable().states
        sizes.append(len([p for p in reach.parts.values() if not p.is_empty()]))
    # the bit of w_i <= ts took both values wherever w_i is dead (77 locations); now one
    assert sizes[1] < sizes[0] * 0.6, sizes
    res = registry.run(
        "symbolic", system, CheckOptions(properties=["taxiway"], limits=Limits(timeout=120))
    )
    r = next(r for r in res.results if r.property == "taxiway")
    assert r.verdict is Verdict.HOLDS and "partial predicate abstraction" in r.reason, r.reason


def test_collapse_proves_no_bug() -> None:
    # the off-by-one ticket: mutual exclusion is violated; the abstraction with collapsed bits
    # proves nothing, the concrete levels find the replayed witness
    system = _with(BUG, "a1 <= s", "a2 <= s", "a1 <= s + 1")
    res = registry.run(
        "symbolic", system, CheckOptions(properties=["mutex"], limits=Limits(timeout=120))
    )
    r = next(r for r in res.results if r.property == "mutex")
    assert r.verdict is Verdict.VIOLATED and r.trace is not None
