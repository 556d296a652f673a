"""Promela's shift operators ``<<`` and ``>>`` (issue 9, item 5: the relational-operator token
used to win over the shift token, so SPIN-valid models did not parse)."""

from __future__ import annotations

import json
from pathlib import Path

from absmc.ir.expr import Const, Op, Var, conjuncts, subexpressions
from absmc.ir.sorts import RangeSort
from absmc.lang.promela.lower import lower_model
from absmc.lang.promela.parser import parse_promela

from .conftest import run_cli
from .spin import run_spin

MODEL = Path(__file__).resolve().parent / "promela_models" / "shifts.pml"

SOURCE = """
byte x = 3; byte y = 12;
active proctype P() {
  x = x << 2;
  y = y >> 1;
  (x << 1 > 20) -> y = (y >> 1) + 1
}
"""


def test_shifts_parse_with_their_precedence() -> None:
    system = lower_model(parse_promela(SOURCE, "shift.pml"), "shift")
    ops = {x.op for c in system.commands for x in subexpressions(c.guard) if isinstance(x, Op)}
    ops |= {
        x.op
        for c in system.commands
        for _, rhs in c.updates
        for x in subexpressions(rhs)
        if isinstance(x, Op)
    }
    assert {"<<", ">>"} <= ops
    # `x << 1 > 20` is `(x << 1) > 20`: the shift binds tighter than the comparison
    guards = [g for c in system.commands for g in conjuncts(c.guard)]
    x = Var("x", RangeSort(0, 255, "wrap"))
    assert Op(">", (Op("<<", (x, Const(1))), Const(20))) in guards, guards


def test_shift_model_agrees_with_spin(tmp_path: Path) -> None:
    spin = run_spin(MODEL, tmp_path)
    r = run_cli("check", str(MODEL), "--keep-going", "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert {res["stats"]["states"] for res in data["results"]} == {spin.states}
    assert data["verdict"] == ("violated" if spin.errors else "holds")
