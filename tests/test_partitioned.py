"""The hash-partitioned search (--workers N): same counts and verdicts as one worker, replayed
traces, limits with statistics, refused combinations, no orphan processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from absmc.engines.explicit import check_explicit
from absmc.kernel.explore.partitioned import owner_of
from absmc.kernel.run.options import CheckOptions, Limits
from absmc.kernel.run.result import Result, Verdict
from absmc.lang.loader import load_model

from .conftest import EXAMPLES, GCL_EXAMPLES, ROOT, run_cli


def _run(path: Path, workers: int, **kw: object) -> Result:
    return check_explicit(load_model(path), CheckOptions(**kw), workers=workers)  # type: ignore[arg-type]


def _summary(r: Result) -> list[tuple[str, Verdict, int]]:
    return [(p.property, p.verdict, p.violations) for p in r.results]


@pytest.mark.parametrize(
    "model",
    [
        GCL_EXAMPLES / "peterson.gcl",
        GCL_EXAMPLES / "philosophers.gcl",
        ROOT / "tests" / "promela_models" / "rendezvous.pml",
        EXAMPLES / "promela" / "lamport_buggy.pml",
    ],
)
def test_exhaustive_counts_and_verdicts_equal_one_worker(model: Path) -> None:
    one = _run(model, 1, keep_going=True)
    for n in (2, 3):
        many = _run(model, n, keep_going=True)
        s1, sn = one.results[0].stats, many.results[0].stats
        assert (sn.states, sn.transitions) == (s1.states, s1.transitions)
        assert _summary(many) == _summary(one)
        assert sum(sn.extra["states_per_worker"]) == sn.states
        assert all(k > 0 for k in sn.extra["states_per_worker"])
        for p in many.results:
            if p.verdict is Verdict.VIOLATED:
                assert p.trace is not None and p.trace.replayed


@pytest.mark.parametrize(
    ("model", "prop"),
    [
        (GCL_EXAMPLES / "fischer_buggy.gcl", "mutex"),
        (EXAMPLES / "promela" / "lamport_buggy.pml", "assert@44"),
    ],
)
def test_first_violation_is_replayed(model: Path, prop: str) -> None:
    r = _run(model, 2)
    (found,) = [p for p in r.results if p.verdict is Verdict.VIOLATED]
    assert found.property == prop
    assert found.trace is not None and found.trace.replayed and len(found.trace.steps) > 1


def test_state_limit_ends_with_unknown_and_partial_statistics() -> None:
    r = _run(EXAMPLES / "promela" / "lamport.pml", 2, limits=Limits(max_states=50))
    assert {p.verdict for p in r.results} == {Verdict.UNKNOWN}
    assert "state limit of 50 states" in r.results[0].reason
    assert r.results[0].stats.states >= 50


def test_owner_is_a_function_of_the_state() -> None:
    states = [(i, j, i * j) for i in range(40) for j in range(40)]
    owners = [owner_of(s, 3) for s in states]
    assert owners == [owner_of(tuple(s), 3) for s in states]
    assert {owners.count(k) for k in range(3)} and min(owners.count(k) for k in range(3)) > 400


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--order", "dfs"], "cannot be DFS"),
        (["--store", "bitstate"], "exact stores"),
        (["--max-depth", "3"], "depth bound"),
    ],
)
def test_unsupported_combinations_are_refused_in_one_line(extra: list[str], says: str) -> None:
    r = run_cli(
        "check", str(GCL_EXAMPLES / "peterson.gcl"), "--backend", "python", "--workers", "2", *extra
    )
    assert r.code == 2 and says in r.err and r.err.startswith("absmc: error: --workers")
    assert "Traceback" not in r.err


def test_workers_applies_to_explicit_only() -> None:
    r = run_cli("check", str(GCL_EXAMPLES / "peterson.gcl"), "--method", "under", "--workers", "2")
    assert r.code == 2 and "--workers applies to --method explicit" in r.err


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        out += [int(x) for x in task.read_text().split()]
    return out


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
def test_sigterm_ends_the_workers_with_unknown_statistics(tmp_path: Path) -> None:
    model = tmp_path / "long.gcl"
    model.write_text(
        "var x, y : 0..100000;\nprocess P { x < 100000 -> x := x + 1; }\n"
        "process Q { y < 100000 -> y := y + 1; }\n"
    )
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "absmc.cli", "check", str(model),
            "--json", "--no-deadlock", "--progress", "--backend", "python", "--workers", "2",
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert proc.stderr is not None
    proc.stderr.readline()  # the first progress line: the workers are searching
    workers = _children(proc.pid)
    assert len(workers) >= 2
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 3
    first = json.loads(out)["results"][0]
    assert first["verdict"] == "unknown" and "interrupted" in first["reason"]
    assert first["stats"]["states"] > 0
    # the workers end soon after the parent (later on a busy machine); an orphan never does
    deadline = time.monotonic() + 30
    alive = workers
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = [w for w in workers if Path(f"/proc/{w}").exists()]
    assert not alive, f"orphan worker processes {alive}"


def _has_ray() -> bool:
    import importlib.util

    return importlib.util.find_spec("ray") is not None


@pytest.mark.skipif(
    not _has_ray(), reason="Ray is not installed (pip install 'absmc[ray]'; CI: CI_RAY=1)"
)
def test_ray_local_cluster_gives_the_counts_and_trace_of_one_worker() -> None:
    model = EXAMPLES / "promela" / "lamport_buggy.pml"
    system = load_model(model)
    options = CheckOptions(keep_going=True)
    one = check_explicit(system, options)
    on_ray = check_explicit(system, options, workers=2, ray="auto")
    s1, sr = one.results[0].stats, on_ray.results[0].stats
    assert (sr.states, sr.transitions) == (s1.states, s1.transitions)
    assert sr.extra["transport"] == "ray" and len(sr.extra["states_per_worker"]) == 2
    assert _summary(on_ray) == _summary(one)
    (bad,) = [p for p in on_ray.results if p.verdict is Verdict.VIOLATED]
    assert bad.trace is not None and bad.trace.replayed


def test_time_limit_ends_with_unknown_and_statistics(tmp_path: Path) -> None:
    model = tmp_path / "long.gcl"
    model.write_text(
        "var x, y : 0..100000;\nprocess P { x < 100000 -> x := x + 1; }\n"
        "process Q { y < 100000 -> y := y + 1; }\n"
    )
    # in this process on the loaded model: on a loaded machine loading alone may take longer
    # than the limit (the CLI's --timeout bounds loading too)
    options = CheckOptions(limits=Limits(timeout=1))
    result = check_explicit(load_model(str(model)), options, "python", 2)
    assert result.exit_code == 3
    first = result.results[0]
    assert first.stats.time_s < 10  # the search's own time (10^10 states unlimited)
    assert first.verdict is Verdict.UNKNOWN and "time limit of 1 s" in first.reason
    assert first.stats.states > 0 and first.stats.extra["workers"] == 2


def test_spawned_or_remote_workers_compile_the_pickled_system() -> None:
    import pickle

    from absmc.codegen.python import compile_system
    from absmc.engines.explicit.parallel import CompiledFactory

    system = load_model(GCL_EXAMPLES / "peterson.gcl")
    here = compile_system(system)
    shipped = pickle.loads(pickle.dumps(CompiledFactory(system, system.properties, here)))
    assert shipped.compiled is None
    there = shipped()
    assert there is not here and there.successors(there.initial) == here.successors(here.initial)
