"""Ctrl-C and SIGTERM reach a running Z3 call (absmc.logic.interrupt; issue: robustness)."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from absmc.ir.expr import Const, Expr, Op, Var
from absmc.ir.sorts import INT
from absmc.logic.prover import Prover

from .conftest import GCL_EXAMPLES, ROOT


def _cube(v: Expr) -> Expr:
    return Op("*", (v, Op("*", (v, v))))


def _fermat_cubes() -> Expr:
    """x³ + y³ = z³ with x, y > 1: Z3 searches without end (no timeout set below)."""
    x, y, z = (Var(n, INT) for n in "xyz")
    return Op(
        "&&",
        (
            Op("==", (Op("+", (_cube(x), _cube(y))), _cube(z))),
            Op("&&", (Op(">", (x, Const(1))), Op(">", (y, Const(1))))),
        ),
    )


@pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(),
    reason="signal handlers run in the main thread only",
)
def test_sigint_interrupts_a_running_solver_call() -> None:
    prover = Prover(timeout_ms=0, incremental=False)
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            prover.satisfiable(_fermat_cubes())
    finally:
        timer.cancel()
    # Z3's own Ctrl-C handler used to cancel the call and swallow the signal: no
    # KeyboardInterrupt at all; without the watcher the call would never return
    assert time.monotonic() - start < 60  # never returns without the watcher


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) process ``pid`` has used (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


#: CPU seconds after which ``under`` on nonterminating.gcl is refining (loading, z3's import and
#: the first iterations take about 1.5 s of CPU): CPU time, unlike wall time, does not stretch
#: on a busy machine
REFINING_CPU_S = 4.0


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_ctrl_c_ends_under_inside_the_prover_with_statistics() -> None:
    """`absmc check nonterminating.gcl --method under --max-iterations 1000` spends its time in
    Z3; Ctrl-C used to cancel one solver call and the refinement went on."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "absmc.cli",
            "check",
            str(GCL_EXAMPLES / "nonterminating.gcl"),
            "--method",
            "under",
            "--max-iterations",
            "1000",
            "--json",
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # past loading, refining with its prover calls (a fixed sleep was too short on a loaded
    # machine: Ctrl-C arrived before loading; the first progress line came after ~30 s)
    deadline = time.monotonic() + 300
    while proc.poll() is None and _cpu_s(proc.pid) < REFINING_CPU_S:
        assert time.monotonic() < deadline, "under did not start refining"
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()
    cpu_at_signal = _cpu_s(proc.pid)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    # a solver call runs up to 10 s (under's prover timeout): below that, Ctrl-C reached it
    # (CPU time the run spent after the signal: unlike wall time, it does not stretch with load)
    assert cpu - cpu_at_signal < 9, "Ctrl-C took effect only after the solver call"
    assert proc.returncode == 3, err
    res = json.loads(out)
    first = res["results"][0]  # past loading: the results and statistics
    assert first["verdict"] == "unknown" and "interrupted" in first["reason"]
    assert first["iterations"], first  # the refinement's rows so far


def test_a_solver_call_canceled_by_ctrl_c_between_calls_ends_as_interrupted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl-C that reaches Z3 between two calls makes the next one fail ("push canceled"),
    and CPython may swallow the KeyboardInterrupt in Z3's ``AstRef.__del__``; the prover's
    calls turn that failure back into KeyboardInterrupt (the run ends as interrupted, exit 3,
    not as an internal error, exit 4). Without the signal, Z3's error stays an error."""
    import z3

    from absmc.logic import interrupt
    from absmc.logic.prover import Prover

    def canceled(*args: object) -> None:
        raise z3.Z3Exception(b"push canceled")

    prover = Prover()
    monkeypatch.setattr(prover._solver, "push", canceled)
    flag = threading.Event()  # this process's own flag is set by the SIGINT test above
    monkeypatch.setattr(interrupt, "_received", flag)
    with pytest.raises(z3.Z3Exception):
        prover.satisfiable(Const(True))
    flag.set()
    with pytest.raises(KeyboardInterrupt):
        prover.satisfiable(Const(True))
    with pytest.raises(KeyboardInterrupt):
        prover.model(Const(True))


def test_a_ctrl_c_whose_keyboard_interrupt_was_swallowed_still_ends_under(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl-C reaches the listening thread, which cancels the running Z3 call (it answers
    unknown), but CPython swallowed the ``KeyboardInterrupt`` in a ``__del__`` of Z3's: the
    refinement (which refines nonterminating.gcl for 1,000 iterations) went on and Ctrl-C was
    lost — the flaky failure of the subprocess test above. Between prover calls ``under`` polls
    the signal count, so the next call ends the run as interrupted, with its statistics."""
    from absmc.engines import registry
    from absmc.engines.under import UnderOptions
    from absmc.kernel.run.options import CheckOptions
    from absmc.kernel.run.result import Verdict
    from absmc.lang.loader import load_model
    from absmc.logic import interrupt

    real = Prover.implies
    calls: list[int] = []

    def implies(self: Prover, premise: Expr, conclusion: Expr) -> bool:
        calls.append(1)
        if len(calls) == 5:  # what the listening thread does on SIGINT; nothing is raised
            monkeypatch.setattr(interrupt, "_count", interrupt.count() + 1)
        return real(self, premise, conclusion)

    monkeypatch.setattr(Prover, "implies", implies)
    system = load_model(GCL_EXAMPLES / "nonterminating.gcl")
    result = registry.run("under", system, CheckOptions(), UnderOptions(max_iterations=1000))
    assert len(calls) == 5  # no prover call after the signal
    for r in result.results:
        assert r.verdict is Verdict.UNKNOWN and "interrupted" in r.reason, r.reason
    assert result.results[0].iterations  # the refinement's rows so far


def test_a_signal_that_ended_an_earlier_check_does_not_interrupt_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The flag a SIGINT set stays set in a long-lived process (tests, a notebook): a later
    check's solver error (a canceled call) must be that error, not ``KeyboardInterrupt``."""
    import z3

    from absmc.engines import registry
    from absmc.logic import interrupt
    from absmc.logic.prover import Prover

    def canceled(*args: object) -> None:
        raise z3.Z3Exception(b"canceled")

    prover = Prover()
    monkeypatch.setattr(prover._solver, "push", canceled)
    flag = threading.Event()
    monkeypatch.setattr(interrupt, "_received", flag)
    flag.set()  # an earlier check was interrupted
    with pytest.raises(KeyboardInterrupt):
        prover.satisfiable(Const(True))
    registry.forget_earlier_interrupts()  # what absmc.check and absmc check do first
    assert not interrupt.received()
    with pytest.raises(z3.Z3Exception):
        prover.satisfiable(Const(True))
