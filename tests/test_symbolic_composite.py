"""The symbolic method's composite sets (one isl set per control location,
``engines/symbolic/composite.py``) and the partial predicate abstraction of ticket2 on them:
what the abstraction removes, what it proves, and the abstract lasso that keeps it from
proving liveness with ``a1 <= s, a2 <= s`` alone (docs/symbolic.md)."""

from __future__ import annotations

import islpy as isl
import pytest

from absmc.engines import registry
from absmc.engines.symbolic.abstract import PartialAbstraction
from absmc.engines.symbolic.check import negation_of
from absmc.engines.symbolic.composite import CSet, Split
from absmc.engines.symbolic.encode import Encoding
from absmc.engines.symbolic.fixpoint import Fixpoints
from absmc.ir.ctl import Formula, Temporal
from absmc.ir.expr import Expr
from absmc.ir.system import System
from absmc.kernel.run.options import CheckOptions, Limits
from absmc.kernel.run.result import Verdict
from absmc.lang.gcl.parser import parse_gcl, parse_gcl_file
from tests.conftest import EXAMPLES

TICKET2 = EXAMPLES / "symbolic" / "ticket2.gcl"


def _preds(*texts: str) -> tuple[Expr, ...]:
    head = "var t, s, a1, a2 : int;\nprocess P { true -> skip; }\n"
    return tuple(parse_gcl(head + f"predicate {p};").predicates[0] for p in texts)


def _ticket2(*preds: str) -> System:
    return parse_gcl_file(TICKET2).with_(predicates=_preds(*preds))


def _fix(system: System) -> Fixpoints:
    enc = Encoding(system)
    base = PartialAbstraction(enc, system.predicates) if system.predicates else enc
    fix = Fixpoints(Split(base))
    fix.disjunctive_rounds = 0  # the first (convex) level
    return fix


def _free_dims(part: isl.Set) -> int:
    """Dimensions of a part that its location does not fix (the integer dimensions)."""
    n = part.dim(isl.dim_type.set)
    return sum(1 for i in range(n) if part.plain_get_val_if_fixed(isl.dim_type.set, i).is_nan())


def test_composite_sets_keep_one_part_per_control_location() -> None:
    fix = _fix(_ticket2())
    reach = fix.reachable().states
    ctrl = fix.enc.ctrl
    assert ctrl == [4, 5]  # pc1, pc2 of t, s, a1, a2, pc1, pc2
    for key, part in reach.parts.items():
        loc = isl.Set(f"{{ [t, s, a1, a2, p1, p2] : p1 = {key[0]} and p2 = {key[1]} }}")
        assert part.is_subset(loc)
    # the flat set is the union of the parts, and splitting it again gives the same parts
    again = fix.enc.cut(reach.flat())
    assert set(again.parts) == set(reach.parts)
    assert all(again.parts[k].is_equal(p) for k, p in reach.parts.items())
    # both processes never in the critical section together
    assert (2, 2) not in reach.parts


def test_predicates_leave_two_integer_dimensions_per_abstract_state() -> None:
    concrete = _fix(_ticket2())
    abstract = _fix(_ticket2("a1 <= s", "a2 <= s"))
    c_reach = concrete.reachable().states
    a_reach = abstract.reachable().states
    # concretely t, s, a1 and a2 are integers; abstractly t and s (a1, a2 became bits)
    assert {_free_dims(p) for p in c_reach.parts.values()} == {4}
    assert {_free_dims(p) for p in a_reach.parts.values()} <= {1, 2}
    assert max(_free_dims(p) for p in a_reach.parts.values()) == 2
    # locations: (pc1, pc2) concretely, (pc1, pc2, [a1 <= s], [a2 <= s]) abstractly
    assert len(c_reach.parts) == 8
    assert len(a_reach.parts) == 19
    assert all(len(k) == 4 for k in a_reach.parts)
    # mutual exclusion on the abstraction: no reachable abstract state at pc1 = pc2 = 2
    assert not any(k[:2] == (2, 2) for k in a_reach.parts)


def _eg(f: Formula) -> Temporal:
    if isinstance(f, Temporal) and f.op == "EG":
        return f
    for name in ("arg", "left", "right"):
        sub = getattr(f, name, None)
        if sub is not None:
            try:
                return _eg(sub)
            except LookupError:
                pass
    raise LookupError("no EG")


def test_the_abstract_lasso_that_defeats_liveness_with_two_predicates() -> None:
    system = _ticket2("a1 <= s", "a2 <= s")
    fix = _fix(system)
    negf = negation_of(system, "progress", "ctl")
    sol = fix.solve(negf, over=True)
    assert not fix.enc.initial.intersect(sol.states).is_empty()  # not provable abstractly
    eg = fix.solve(_eg(negf), over=True).states
    # both processes waiting with tickets above s (b0 = b1 = 0): the abstraction forgot that
    # a ticket lies below the dispenser t, so this abstract state is a dead end (a self-loop)
    stuck = (1, 1, 0, 0)
    assert stuck in eg.parts
    assert not fix.enc.dead.intersect(_cset(eg, stuck)).is_empty()
    # it is reached from P1 waiting after P2 left (b0 still 0) and drew its next ticket
    before = (1, 0, 0, 1)
    assert before in eg.parts
    step = _cset(eg, before).apply(fix.enc.transition).intersect(_cset(eg, stuck))
    assert not step.is_empty()
    # concretely no such state is reachable: one of the two tickets is the one served
    conc = _fix(parse_gcl_file(TICKET2)).reachable().states
    both_above = isl.Set("{ [t, s, a1, a2, p1, p2] : p1 = 1 and p2 = 1 and a1 > s and a2 > s }")
    assert conc.parts[(1, 1)].intersect(both_above).is_empty()


def _cset(s: CSet, key: tuple[int, ...]) -> CSet:
    return CSet({key: s.parts[key]}, s.empty)


def test_ticket_below_the_dispenser_predicates_prove_liveness_abstractly() -> None:
    for preds, abstract in (
        (("a1 <= s", "a2 <= s"), False),
        (("a1 <= s", "a2 <= s", "a1 < t", "a2 < t"), True),
    ):
        res = registry.run(
            "symbolic",
            _ticket2(*preds),
            CheckOptions(properties=["progress"], limits=Limits(timeout=120)),
        )
        r = next(r for r in res.results if r.property == "progress")
        assert r.verdict is Verdict.HOLDS, r.reason
        assert ("partial predicate abstraction" in r.reason) is abstract, r.reason


def test_abstract_relation_equals_the_composition_with_alpha() -> None:
    # Eq. 3: the relation built from the predicate definitions (frame bits equated, the
    # abstracted dimensions projected out) is exactly Alpha^-1 ; T ; Alpha
    bakery = parse_gcl_file(EXAMPLES / "symbolic" / "bakery2.gcl")
    cases = [
        _ticket2("a1 <= s", "a2 <= s"),
        _ticket2("a1 <= s", "a2 <= s", "a1 < t", "a2 < t"),
        bakery.with_(predicates=_preds("a1 < a2", "a1 == 0", "a1 + a2 == 3")),
    ]
    for system in cases:
        enc = Encoding(system)
        pa = PartialAbstraction(enc, system.predicates)
        alpha = pa.alpha_map
        for ci, conc in enumerate(enc.relations):
            composed = conc.apply_domain(alpha).apply_range(alpha)
            assert pa.relation(ci).is_equal(composed), (system.commands[ci].label, ci)
    # enter1 (pc1 := 2) assigns no variable of a1 <= s: its bit keeps its value
    system = cases[0]
    pa = PartialAbstraction(Encoding(system), system.predicates)
    enter1 = next(i for i, c in enumerate(system.commands) if c.label == "enter1")
    rel = pa.relation(enter1)
    # abstract dims: t, s, pc1, pc2, b0, b1
    assert rel.is_subset(isl.Map("{ [t, s, p, q, b0, b1] -> [t, s, p2, q, b0, b1] }"))
    # and its guard a1 <= s is the predicate itself: only b0 = 1 enters
    assert rel.domain().is_subset(isl.Set("{ [t, s, p, q, b0, b1] : b0 = 1 and p = 1 }"))


def test_many_bit_valuations_keep_the_bits_as_dimensions() -> None:
    # beyond bit_limit valuations the predicate bits are not control: the locations are the
    # model's own (pc1, pc2), as concretely, and every widened part keeps its bits in 0..1
    system = _ticket2("a1 <= s", "a2 <= s")
    split = Split(PartialAbstraction(Encoding(system), system.predicates), bit_limit=8)
    assert split.loose_bits and split.ctrl == [2, 3]  # pc1, pc2 of t, s, pc1, pc2, b0, b1
    fix = Fixpoints(split)
    fix.disjunctive_rounds = 0
    reach = fix.reachable().states
    assert fix.stats.widenings > 0
    assert len(reach.parts) == 8 and all(len(k) == 2 for k in reach.parts)
    bits = isl.Set("{ [t, s, p, q, b0, b1] : 0 <= b0 <= 1 and 0 <= b1 <= 1 }")
    assert all(p.is_subset(bits) for p in reach.parts.values())
    # mutual exclusion still holds on the abstraction
    assert (2, 2) not in reach.parts
    # below the limit the bits are control, as before
    assert not Split(PartialAbstraction(Encoding(system), system.predicates)).loose_bits


def test_chunked_coalescing_keeps_the_set_and_checks_the_limit_between_chunks() -> None:

    from absmc.engines.symbolic.coalesce import coalesce_chunked

    # 40 boxes side by side with a gap after every fourth: 10 runs of 4 adjacent boxes
    boxes = [
        isl.Set(f"{{ [x, y] : {3 * i} <= x <= {3 * i + 1 + 2 * (i % 4 < 3)} and 0 <= y <= 1 }}")
        for i in range(40)
    ]
    u = boxes[0]
    for b in boxes[1:]:
        u = u.union(b)
    calls: list[int] = []
    out = coalesce_chunked(u, lambda: calls.append(1), chunk=8)
    assert out.is_equal(u)
    assert u.n_basic_set() == 40 and out.n_basic_set() == 10  # one box per run
    assert len(calls) == 5 + 1  # five chunks of 8, then one group of their five results
    stop = iter(range(3))

    def tick() -> None:
        if next(stop, None) is None:
            raise TimeoutError

    with pytest.raises(TimeoutError):
        coalesce_chunked(u, tick, chunk=8)


@pytest.mark.parametrize("name", ["chardrv2", "airport_bk2", "ticket2"])
def test_dead_states_are_the_complement_of_every_commands_enabled_states(name: str) -> None:
    """``Encoding.dead`` subtracts the commands' enabled states one by one (isl's negation of
    the whole disjunction took chardrv4 292 s); the set is the same as the negation's."""
    enc = Encoding(parse_gcl_file(EXAMPLES / "symbolic" / f"{name}.gcl"))
    enabled = " or ".join(f"({enc.enabled(c)})" for c in enc.system.commands)
    negated = enc.set_of(f"not ({enabled})").intersect(enc.domain)
    assert enc.dead.is_equal(negated)
    # and no dead state has a successor under any command
    for r in enc.relations:
        assert r.intersect_domain(enc.dead).is_empty()


def test_a_framed_bit_without_its_definition_gives_the_same_abstract_relation() -> None:
    """airportSM-tic2 with ``w1 <= ts, w2 <= ts, r1 <= rs, r2 <= rs``: every definition
    vanishes once its abstracted variable is projected out, so a command that mentions none
    of a predicate's variables only frames its bit; each relation equals the one built with
    every definition."""
    from absmc.cli.common import add_predicates

    system = add_predicates(
        parse_gcl_file(EXAMPLES / "symbolic" / "airport_tic2.gcl"),
        ("w1 <= ts", "w2 <= ts", "r1 <= rs", "r2 <= rs"),
    )
    absn = PartialAbstraction(Encoding(system), system.predicates)
    assert absn.unconstraining == {0, 1, 2, 3}
    full = PartialAbstraction(Encoding(system), system.predicates)
    full.__dict__["unconstraining"] = set()  # every definition taken
    for ci in range(len(system.commands)):
        assert absn.relation(ci).is_equal(full.relation(ci)), system.commands[ci]
    # a definition that constrains the kept variables is never left out (bakery2: a1, a2
    # are shared between predicates)
    bakery = add_predicates(
        parse_gcl_file(EXAMPLES / "symbolic" / "bakery2.gcl"), ("a1 < a2", "a2 < a1")
    )
    assert PartialAbstraction(Encoding(bakery), bakery.predicates).unconstraining == set()
