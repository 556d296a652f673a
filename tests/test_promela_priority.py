"""SPIN's process priorities (SPIN 6.2 and later; ``lang/promela/lower_prio.py``): a process
moves only when no process of a higher priority is enabled. Verdicts and state counts are
pan's (``spin -o1``, ``-DNOREDUCE``, against ``--no-reduce``; pan compiles models with
priorities with ``NOREDUCE`` anyway, and absmc keeps partial-order reduction off for them),
on both back ends; counterexamples replay."""

from __future__ import annotations

from pathlib import Path

import pytest

import absmc
from absmc.kernel.explore.por import POR, PRIORITY_NOTE
from absmc.kernel.run.result import Result, Verdict
from tests.conftest import run_cli
from tests.spin import compile_spin_ltl, run_pan_ltl, run_spin

# outcomes, not speed: the native back end compiles at -O0 (the semantics do not depend on it)
pytestmark = pytest.mark.usefixtures("native_fast_compile")

#: SPIN's Examples/priorities.pml: init's atomic sequence loses control to the higher-priority
#: processes it starts; only the one of priority 2 ever moves (SPIN: 3 states)
PRIORITIES = """\
int a[5];
proctype A() { do :: printf("%d\\n", _pid); a[_pid]++ od }
init {
  atomic {
    run A() priority 1;
    run A() priority 2;
    run A() priority 3;
    run A() priority 4;
} }
"""

#: SPIN's Examples/rtos1.pml: set_priority, get_priority and _priority (SPIN: 11 states)
RTOS1 = """\
byte cnt;
active proctype medium() priority 5 {
  set_priority(0, 8);
  printf("medium %d - pid %d pr %d pr1 %d\\n",
    _priority, _pid, get_priority(_pid), get_priority(0));
  cnt++
}
active proctype high() priority 10 { _priority = 9; printf("high %d\\n", _priority); cnt++ }
active proctype low() priority 1 {
  assert(_priority == 1 && cnt == 2); printf("low %d\\n", _priority)
}
"""

#: while ``high`` can move, ``low`` cannot: it never sees x == 1 (absmc used to report that)
SPURIOUS = """\
byte x;
active proctype high() priority 3 { x = 1; x = 2 }
active proctype low() { assert(x == 0 || x == 2) }
"""

#: priorities set while running, of other processes, and ``_priority`` stored modulo 256 (no
#: set_priority of a pid that is no process: pan's undo of one restores a stale priority)
SET_GET = """\
byte n, cnt;
proctype W(byte k) {
  do
  :: cnt < 4 -> cnt++; set_priority(_pid, k + get_priority(0))
  :: cnt >= 4 -> break
  od
}
init {
  atomic { run W(1) priority 2; run W(2) priority 3 };
  n = get_priority(1) + get_priority(2) + get_priority(9);
  _priority = 300;
  assert(_priority == 44)
}
"""

#: the same proctype run with different priorities: the slots' priorities are state
RUNS = """\
byte a[4];
proctype Q(byte i) { a[i]++; a[i] < 2 }
init {
  byte k;
  do
  :: k < 3 -> run Q(k) priority 3; k++
  :: k < 3 -> run Q(k) priority 2; k++
  :: k >= 3 -> break
  od
}
"""

#: init's atomic runs lose control to B (priority 4); the assertion fails (pan: 2 errors)
ATOMIC = """\
byte x;
proctype A() { x++ }
proctype B() { x = x * 2 }
init {
  atomic { run A() priority 2; run B() priority 4; run A() };
  x == 3 || x == 4 || x == 2 -> assert(x != 3)
}
"""

#: timeout: enabled only where no process can move; a timeout command obeys priorities too
TIMEOUTS = """\
byte x;
active proctype a() priority 2 { do :: x < 3 -> x++ :: timeout -> break od; x = 10 }
active proctype b() { do :: x > 5 -> break :: timeout -> x = 20; break od }
active proctype c() priority 3 { timeout; x = 30 }
"""

#: provided clauses, else, and _priority lowered while running
MIXED = """\
byte x, turn;
active proctype hi() priority 4 { x > 2; x = 0 }
active proctype lo() { do :: if :: x < 5 -> x++ :: else -> break fi od }
active proctype A() priority 2 provided (turn == 0) { do :: turn = 1 :: turn == 1 -> break od }
active proctype B() provided (turn == 1) { _priority = 5; turn = 0; _priority--; _priority = 1 }
"""

#: set_priority outside 1..255 is pan's error "priority is out of range"
OUT_OF_RANGE = """\
active proctype P() { byte k = 3; set_priority(_pid, k * 100) }
"""

#: pan asks whether hi is executable up to its d_step's first effect: once x > 0, lo waits
#: (its assertion holds) and hi's d_step blocks inside (pan's "block in d_step seq")
DSTEP_BLOCK = """\
byte x;
active proctype hi() priority 2 { d_step { x > 0; x++; x == 9 } }
active proctype lo() { x = 1; x = 3; assert(x != 3) }
"""

#: P ends, and init's run reuses its pid with priority 1, not P's 2: the assertion can fail
PID_REUSE = """\
byte x;
init { x == 1; run P(); assert(x == 2) }
active proctype P() priority 2 { x++ }
"""

MODELS = {
    "priorities": PRIORITIES,
    "rtos1": RTOS1,
    "spurious": SPURIOUS,
    "set_get": SET_GET,
    "runs": RUNS,
    "atomic": ATOMIC,
    "timeouts": TIMEOUTS,
    "mixed": MIXED,
    "out_of_range": OUT_OF_RANGE,
    "dstep_block": DSTEP_BLOCK,
    "pid_reuse": PID_REUSE,
}


def _write(tmp_path: Path, name: str, text: str) -> Path:
    model = tmp_path / f"{name}.pml"
    model.write_text(text)
    return model


def _states(result: Result) -> int:
    counts = {r.stats.states for r in result.results}
    assert len(counts) == 1, counts
    return counts.pop()


@pytest.mark.parametrize("name", sorted(MODELS))
def test_states_and_verdicts_are_spins(tmp_path: Path, name: str) -> None:
    model = _write(tmp_path, name, MODELS[name])
    spin = run_spin(model, tmp_path)
    ours = absmc.check(str(model), reduce=False, keep_going=True)
    assert _states(ours) == spin.states
    assert (ours.verdict is Verdict.VIOLATED) == (spin.errors > 0), spin.output


@pytest.mark.parametrize("name", ["rtos1", "runs", "atomic", "mixed"])
def test_the_native_back_end_agrees(tmp_path: Path, name: str) -> None:
    model = _write(tmp_path, name, MODELS[name])
    python = absmc.check(str(model), reduce=False, keep_going=True, backend="python")
    native = absmc.check(str(model), reduce=False, keep_going=True, backend="native")
    assert all(r.stats.extra.get("backend") == "native" for r in native.results)
    assert _states(native) == _states(python)
    assert {r.property: r.verdict for r in native.results} == {
        r.property: r.verdict for r in python.results
    }


def test_ignoring_priorities_would_report_a_violation_spin_cannot_execute(
    tmp_path: Path,
) -> None:
    # the same model without the priority: low may run between high's two assignments
    flat = absmc.check(str(_write(tmp_path, "flat", SPURIOUS.replace(" priority 3", ""))))
    assert flat.verdict is Verdict.VIOLATED
    ours = absmc.check(str(_write(tmp_path, "spurious", SPURIOUS)))
    assert ours.verdict is Verdict.HOLDS


def test_set_priority_of_no_process_does_nothing(tmp_path: Path) -> None:
    # pan.b undoes a set_priority by restoring o_priority, which set_priority records only
    # for a running process: after one for no process pan restores a stale priority (SPIN
    # 6.5.2), so this is checked against SPIN's semantics, not against pan's counts
    text = """\
byte x;
active proctype P() { x == 1; set_priority(1, 3); assert(get_priority(1) == 0 && _priority == 1) }
active proctype Q() priority 2 { x = 1 }
"""
    ours = absmc.check(str(_write(tmp_path, "nobody", text)), keep_going=True)
    assert ours.verdict is Verdict.HOLDS
    wrong = absmc.check(
        str(_write(tmp_path, "wrong", text.replace("get_priority(1) == 0", "get_priority(1) == 3")))
    )
    assert wrong.verdict is Verdict.VIOLATED


def test_a_model_error_inside_a_higher_priority_process_holds_the_others_back(
    tmp_path: Path,
) -> None:
    ours = absmc.check(str(_write(tmp_path, "dstep", DSTEP_BLOCK)), keep_going=True)
    verdicts = {r.property: r.verdict for r in ours.results}
    assert verdicts["assert@3"] is Verdict.HOLDS
    assert verdicts["no-model-error"] is Verdict.VIOLATED


def test_defaults_keep_partial_order_reduction_off_and_say_so(tmp_path: Path) -> None:
    model = _write(tmp_path, "runs", RUNS)
    spin = run_spin(model, tmp_path, spin_options=())  # spin -a: pan's defaults (NOREDUCE)
    ours = absmc.check(str(model), keep_going=True)
    assert _states(ours) == spin.states
    assert PRIORITY_NOTE in ours.notes
    assert all(POR not in r.stats.extra.get("reductions", []) for r in ours.results)


def test_equal_priorities_change_nothing(tmp_path: Path) -> None:
    # a proctype's own priority is not a run's (pan: addproc gets the run's, else 1)
    same = "byte x;\nproctype P() priority 3 { x = 1 }\ninit { run P(); assert(x == 1) }\n"
    ours = absmc.check(str(_write(tmp_path, "same", same)))
    assert ours.verdict is Verdict.VIOLATED
    assert PRIORITY_NOTE not in ours.notes
    system = absmc.load(str(tmp_path / "same.pml"))
    assert not any("priority" in c.flags for c in system.commands)


@pytest.mark.parametrize(
    ("name", "last"),
    [
        ("atomic", "assertion violated: x != 3"),
        ("out_of_range", "priority is out of range"),
    ],
)
def test_counterexamples_replay(tmp_path: Path, name: str, last: str) -> None:
    model = _write(tmp_path, name, MODELS[name])
    trail = tmp_path / f"{name}.trail.json"
    r = run_cli("check", str(model), "--trail", str(trail))
    assert r.code == 1, r.out + r.err
    assert "replayed on the concrete semantics" in r.out
    again = run_cli("replay", str(model), str(trail))
    assert again.code == 1, again.out + again.err
    assert again.out.strip().endswith(last), again.out


LTL = """\
byte x;
active proctype hi() priority 2 { do :: x = 1 :: x == 1 -> x = 3 od }
active proctype lo() { x = 2 }
ltl p { [] (x != 2) }
ltl q { <> (x == 3) }
"""


def test_ltl_verdicts_are_spins(tmp_path: Path) -> None:
    model = _write(tmp_path, "ltl", LTL)
    compile_spin_ltl(model, tmp_path)
    for name in ("p", "q"):
        spin = run_pan_ltl(tmp_path, name, depth=10_000, log2_table=16)
        ours = absmc.check(str(model), properties=name)
        assert (ours.verdict is Verdict.VIOLATED) == (spin.errors > 0), (name, spin.output)
    # p holds only because lo never moves while hi can
    assert absmc.check(str(model), properties="p").verdict is Verdict.HOLDS
