"""``--method symbolic`` inside the shared limits and signal handling (issue 23): SIGTERM ends
the check with exit 3, JSON and statistics; a ``--timeout`` met inside an isl operation is the
time limit, never an internal error (exit 4)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import islpy as isl
import pytest

from absmc.engines.symbolic.budget import Deadline, IslBudget, quota_spent
from benchmarks.symbolic_timeouts import arguments, main, run_once, run_time

from .conftest import EXAMPLES, ROOT

SYMBOLIC_EXAMPLES = EXAMPLES / "symbolic"


def test_sigterm_ends_a_symbolic_check_with_exit_3_json_and_statistics() -> None:
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "absmc.cli", "check",
            str(SYMBOLIC_EXAMPLES / "bakery4.gcl"), "--method", "symbolic", "--json",
            "--progress",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert proc.stderr is not None
    proc.stderr.readline()  # the first progress line: the fixpoints are being computed
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 3, out
    res = json.loads(out)
    assert res["verdict"] == "unknown"
    reasons = {r["reason"] for r in res["results"]}
    assert "interrupted by the user" in reasons
    first = next(r for r in res["results"] if r["reason"] == "interrupted by the user")
    assert first["stats"]["time_s"] > 0 and "fixpoint" in first["stats"]


def test_an_error_while_the_quota_is_spent_is_the_time_limit() -> None:
    """After isl's quota error islpy may fail in other ways (``int(None)``, a set that does
    not parse): with the quota spent, any error is the time limit; without it, a bug."""
    ctx = isl.DEFAULT_CONTEXT
    budget = IslBudget(deadline=1e12)  # far away: only the quota can explain an error
    try:
        ctx.reset_operations()
        ctx.set_max_operations(1)
        with pytest.raises(isl.Error):
            isl.Set("{ [x, y] : 0 <= x <= 10 and 0 <= y <= x or x = 20 }").convex_hull()
        assert quota_spent()
        assert budget.explains(TypeError("int() argument must be ... not 'NoneType'"))
    finally:
        ctx.set_max_operations(0)
        ctx.reset_operations()
    assert not quota_spent()
    assert not budget.explains(TypeError("a bug"))
    assert budget.explains(Deadline())
    assert not IslBudget(None).explains(TypeError("a bug"))


def test_random_symbolic_runs_with_a_timeout_never_end_in_an_internal_error() -> None:
    import random

    # the two- and three-process examples keep this CI sample short; the slow 500-run test
    # and benchmarks/symbolic_timeouts.py cover every model (the 4-process ones once overran
    # by up to 232 s inside one isl operation; now the child process is ended at the deadline)
    models = [SYMBOLIC_EXAMPLES / f"{n}.gcl" for n in ("bakery2", "ticket2", "ticket3", "chardrv2")]
    rng = random.Random(5)
    for _ in range(3):
        timeout, args = arguments(rng, models)
        code, out, err = run_once(args, fresh=False)
        assert code in (0, 1, 3), (args, err)
        spent = run_time(out)
        assert spent is not None
        # the check's own time: within the limit plus one isl operation (generous)
        assert spent < 5 * timeout + 5, (args, spent)


@pytest.mark.slow
def test_five_hundred_random_symbolic_runs_never_end_in_an_internal_error() -> None:
    assert main(["--runs", "500", "--seed", "1"]) == 0


def test_an_abstraction_built_after_a_disarmed_quota_still_ends_at_the_deadline() -> None:
    """bakery4's CEGAAR seed abstraction: its α (in ``Split``'s constructor, before any
    ``tick``) ran with no quota when the previous property's statistics had disarmed it, and
    one run with ``--timeout 2.26`` went on for 427 s; a budget arms the quota when made."""
    import time

    from absmc.engines.symbolic.cegaar import abstraction_of, default_seeds
    from absmc.engines.symbolic.check import negation_of
    from absmc.engines.symbolic.encode import Encoding
    from absmc.lang.gcl import parse_gcl_file

    system = parse_gcl_file(SYMBOLIC_EXAMPLES / "bakery4.gcl")
    negf = negation_of(system, "mutex", "ctl")
    seeds = tuple(system.predicates or default_seeds(system, negf))
    enc = Encoding(system)
    isl.DEFAULT_CONTEXT.set_max_operations(0)  # as the statistics' count leaves it
    t0, cpu0 = time.monotonic(), time.process_time()
    budget = IslBudget(t0 + 0.5)
    try:
        abstraction_of(enc, seeds, deadline=t0 + 0.5)
    except Exception as err:
        assert budget.explains(err), err
    finally:
        budget.disarm()
    # the work done, in CPU seconds (at any load): without the quota the α alone takes minutes
    assert time.process_time() - cpu0 < 30
