"""``assert`` inside a never claim (SPIN's Examples/werkplaats.pml): always executable, and a
false assertion is a match of the claim; absmc's verdict is SPIN's (``pan -a`` counts an
assertion violation), also where the assertion fails only in a terminal state."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import run_cli
from .spin import compile_spin_ltl, run_pan_ltl

PROC = "byte x;\nactive proctype P() { do :: x < 3 -> x++ :: x == 3 -> break od; x = 5 }\n"

CLAIMS = {
    # fails in a state in the middle of the run
    "middle": "never { do :: assert(x != 3) od }",
    # fails only in the terminal state (the claim still moves there)
    "terminal": "never { do :: assert(x != 5) od }",
    # never fails
    "holds": "never { do :: assert(x <= 5) od }",
    # an assertion after a condition, and an accepting cycle that needs both
    "after_condition": "never { T0: do :: x == 2 -> assert(x != 2) :: x != 2 -> goto T0 od }",
    "after_condition_holds": "never { do :: x == 2 -> assert(x < 3) :: else od }",
}


@pytest.mark.parametrize("name", sorted(CLAIMS))
def test_never_claim_assertion_has_spins_verdict(name: str, tmp_path: Path) -> None:
    model = tmp_path / f"{name}.pml"
    model.write_text(PROC + CLAIMS[name] + "\n")
    compile_spin_ltl(model, tmp_path)
    spin = run_pan_ltl(tmp_path, None, depth=1000, log2_table=10)
    r = run_cli("check", str(model), "--no-reduce", "-N", "never_0")
    assert "Traceback" not in r.err
    violated = "✗ never_0 (ltl): violated" in r.out
    assert violated or "✓ never_0 (ltl): holds" in r.out, r.out + r.err
    assert violated == (spin.errors > 0), spin.output
    assert violated == (name in ("middle", "terminal", "after_condition"))
