"""``fourvalued --refine`` (issue 15, item 2): predicates without the user, from the first step
of an unconfirmed may-trace that has no concrete run (weakest preconditions, shared with
``under`` in ``logic/wp.py``)."""

from __future__ import annotations

import json

from absmc.engines import registry
from absmc.engines.fourvalued import FourValuedOptions
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import Verdict
from absmc.lang.loader import load_model
from absmc.logic.wp import chain_condition, predicate_atoms
from tests.conftest import EXAMPLES, run_cli

LAMPORT = EXAMPLES / "promela" / "lamport.pml"


def test_lamport_without_its_predicates_reaches_t_by_itself() -> None:
    system = load_model(LAMPORT, {"NOPRED": ""})
    assert system.predicates == ()  # the pred declarations are gone
    r = run_cli(
        "check", str(LAMPORT), "-D", "NOPRED", "--method", "fourvalued", "--refine", "--json"
    )
    assert r.code == 0, r.err
    data = json.loads(r.out)
    res = {x["property"]: x for x in data["results"]}
    assert res["assert@46"]["value"] == "t"
    rows = res["assert@46"]["iterations"]
    assert len(rows) >= 2
    assert rows[0]["values"]["assert@46"] == "⊥"  # the first abstraction cannot decide
    assert rows[-1]["values"]["assert@46"] == "t"
    assert rows[0]["predicates_added"] == ["n[0] == 0", "n[1] == 0"]  # the start
    assert "n[0] <= n[1]" in rows[1]["predicates_added"]  # from the waiting guard
    assert all(r["may_states"] > 0 and r["must_states"] > 0 for r in rows)


def test_one_round_stays_bottom_and_says_why() -> None:
    system = load_model(LAMPORT, {"NOPRED": ""})
    eng = registry.get("fourvalued")
    opts = CheckOptions(properties=["assert@46"])
    first = registry.run(eng, system, opts, FourValuedOptions(refine=True, max_iterations=1))
    assert first.results[0].verdict is Verdict.UNKNOWN
    assert first.results[0].extra["value"] == "⊥"
    assert "refinement stopped" in first.results[0].reason


def test_refinement_atoms_lift_conditionals() -> None:
    system = load_model(LAMPORT, {"NOPRED": ""})
    guard = chain_condition([system.commands[1]])
    names = frozenset({"n[0]", "n[1]"})
    atoms = [str(a) for a in predicate_atoms(guard, names, system.index_of, True)]
    assert atoms == ["n[0] <= n[1]", "4096 <= n[0]", "4096 <= n[1]"]
    plain = [str(a) for a in predicate_atoms(guard, names, system.index_of)]
    assert len(plain) == 1 and "?" in plain[0]
