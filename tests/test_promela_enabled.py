"""Promela's ``enabled(pid)`` (pan's ``enabled``: does the process with that pid have an
executable transition?) in statements and ``ltl`` formulas, against pan ``-DNOREDUCE`` (pan
refuses ``enabled()`` with its reduction on), and the uses absmc refuses with a located error."""

from __future__ import annotations

from pathlib import Path

import pytest

import absmc
from absmc.kernel.run.result import Verdict
from tests.conftest import run_cli
from tests.spin import compile_spin_ltl, run_pan_ltl, run_spin

# outcomes, not speed: the native back end compiles at -O0 (the semantics do not depend on it)
pytestmark = pytest.mark.usefixtures("native_fast_compile")

#: a watcher that counts the steps where a worker is enabled, and stops when it is not
WATCH = """\
byte x;
active proctype A() { do :: x < 3 -> x++ :: x == 3 -> break od }
active proctype B() {
  byte seen;
  do
  :: enabled(0) -> seen++; if :: seen > 5 -> break :: else fi
  :: !enabled(0) -> break
  od;
  assert(x == 3 || seen > 5)
}
"""

#: a receiver that waits until the sender is blocked on the full channel (pid 0 not enabled)
FULL = """\
chan c = [1] of { byte };
active proctype A() { c!1; c!2 }
active proctype B() { byte v; (!enabled(0)) -> c?v; assert(v == 2); c?v }
"""

#: enabled() of a process whose only step is a timeout
TIMEOUT = """\
byte x;
active proctype A() { timeout -> x = 1 }
active proctype B() { (x == 0) -> assert(enabled(0) == false); x = 2 }
"""

LTL = """\
byte x;
active proctype A() { do :: x < 3 -> x++ :: x == 3 -> break od }
active proctype B() { (x == 3) -> x = 0 }
ltl p { [] (enabled(1) -> <> (x == 0)) }
ltl q { <> [] !enabled(0) }
"""


@pytest.mark.parametrize("text", [WATCH, FULL, TIMEOUT], ids=["watch", "full", "timeout"])
def test_counts_and_verdicts_are_pans(tmp_path: Path, text: str) -> None:
    model = tmp_path / "m.pml"
    model.write_text(text)
    spin = run_spin(model, tmp_path)
    plain = absmc.check(str(model), reduce=False, keep_going=True)
    assert (plain.verdict is Verdict.VIOLATED) == (spin.errors > 0)
    if spin.errors == 0:
        assert {r.stats.states for r in plain.results} == {spin.states}
    for backend in ("python", "native"):
        reduced = absmc.check(str(model), backend=backend)
        assert reduced.verdict is plain.verdict


#: pan's enabled() does not ask priorities: B, held back while A can move, is still enabled
PRIORITIES = """\
byte x;
active proctype A() priority 2 { do :: x < 2 -> x++ :: x == 2 -> break od }
active proctype B() priority 1 { do :: x < 5 -> x = x + 3 :: else -> break od }
ltl p { [] (x < 2 -> enabled(1)) }
ltl q { [] enabled(1) }
"""


@pytest.mark.parametrize(
    ("text", "names"), [(LTL, "pq"), (PRIORITIES, "pq")], ids=["plain", "priorities"]
)
def test_ltl_verdicts_are_pans(tmp_path: Path, text: str, names: str) -> None:
    model = tmp_path / "m.pml"
    model.write_text(text)
    compile_spin_ltl(model, tmp_path)
    for name in names:
        pan = run_pan_ltl(tmp_path, name, depth=10_000, log2_table=16)
        ours = absmc.check(str(model), ltl=name)
        assert (ours.verdict is Verdict.VIOLATED) == (pan.errors > 0), name


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "chan r = [0] of { byte };\nactive proctype A() { r!1 }\n"
            "active proctype B() { enabled(0) -> r?_ }\n",
            "cannot be combined with rendezvous",
        ),
        (
            "active proctype A() { skip }\nactive proctype B() { byte i; enabled(i) -> skip }\n",
            "not a constant",
        ),
        ("active proctype A() { skip }\nactive proctype B() { enabled(1) -> skip }\n", "own pid"),
        (
            "active proctype A() { enabled(1) -> skip }\n"
            "active proctype B() { enabled(0) -> skip }\n",
            "itself uses enabled()",
        ),
        (  # B's enabled() sits in a model-error condition (an index), which A's enabled() asks
            "active proctype A() { enabled(1) -> skip }\n"
            "active proctype B() { byte b[1]; b[enabled(2)] = 1 }\nactive proctype C() { skip }\n",
            "itself uses enabled()",
        ),
    ],
    ids=["rendezvous", "variable", "own", "nested", "nested-in-an-error"],
)
def test_refused_uses_are_located_errors(tmp_path: Path, text: str, message: str) -> None:
    model = tmp_path / "m.pml"
    model.write_text(text)
    run = run_cli("check", str(model))
    assert run.code == 2 and message in run.err, run.err
    assert "m.pml:" in run.err and ": error:" in run.err and "Traceback" not in run.err
