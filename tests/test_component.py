"""Python components checked inside their natively run environment (paper 003): verdicts of
the thesis's concurrency experiments, traces that re-execute, unsupported constructs, the CLI
and the emitted environment tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from absmc.component import ComponentOptions, Unsupported, check_file
from absmc.component.trace import replay
from absmc.kernel.replay.trace import ReplayError, replay_path
from absmc.kernel.run.result import Verdict

from .conftest import EXAMPLES, run_cli

PY = EXAMPLES / "python"


def verdicts(name: str, entry: str, component: list[str], **opts: object) -> dict[str, str]:
    result, _ = check_file(PY / name, entry, [], component, ComponentOptions(**opts))  # type: ignore[arg-type]
    return {r.property: r.verdict.value for r in result.results}


def test_philosophers_deadlock_every_philosopher_holds_one_fork() -> None:
    result, _ = check_file(
        PY / "philosophers.py", "dinner", [], ["philosopher"], ComponentOptions()
    )
    dead = next(r for r in result.results if r.property == "no-deadlock")
    assert dead.verdict is Verdict.VIOLATED
    assert dead.trace is not None and dead.trace.replayed
    last = dead.trace.steps[-1].state
    assert last["forks"] == "[<Lock held by T1>, <Lock held by T2>, <Lock held by T3>]"
    assert dead.trace.steps[-1].source is not None
    assert dead.trace.steps[-1].source.startswith(str(PY / "philosophers.py"))


def test_philosophers_ordered_forks_hold() -> None:
    v = verdicts("philosophers.py", "dinner_ordered", ["philosopher"])
    assert v == {"assert": "holds", "no-uncaught-exception": "holds", "no-deadlock": "holds"}


def test_race_found_only_at_access_granularity() -> None:
    assert verdicts("bank.py", "run", ["Account"])["assert"] == "holds"
    assert verdicts("bank.py", "run", ["Account"], granularity="access")["assert"] == "violated"
    locked = verdicts("bank.py", "run_locked", ["Account"], granularity="access")
    assert set(locked.values()) == {"holds"}


def test_producer_consumer() -> None:
    assert set(
        verdicts("producer_consumer.py", "run", ["Buffer", "producer", "consumer"]).values()
    ) == {"holds"}
    bad = verdicts("producer_consumer.py", "run_if", ["Buffer", "consumer_if"])
    assert bad["no-uncaught-exception"] == "violated"
    assert set(
        verdicts("producer_consumer.py", "run_queue", ["queue_producer", "queue_consumer"]).values()
    ) == {"holds"}


def test_lost_wakeup_is_a_deadlock() -> None:
    assert verdicts("lost_wakeup.py", "run", ["waiter", "signaller"])["no-deadlock"] == "violated"
    assert set(verdicts("lost_wakeup.py", "run_fixed", ["waiter_fixed", "signaller"]).values()) == {
        "holds"
    }


def test_reader_writer_with_sorting_environment() -> None:
    assert set(verdicts("reader_writer.py", "run", ["Store", "reader", "writer"]).values()) == {
        "holds"
    }
    bad = verdicts(
        "reader_writer.py", "run_unlocked", ["Store", "reader_unlocked", "writer_unlocked"]
    )
    assert bad["assert"] == "violated"


def test_trace_replays_to_the_same_violation() -> None:
    result, sem = check_file(
        PY / "bank.py", "run", [], ["Account"], ComponentOptions(granularity="access")
    )
    r = next(r for r in result.results if r.property == "assert")
    assert r.trace is not None
    labels = [s.command_index for s in r.trace.steps[1:]]
    again = replay(sem, "assert", [int(x) for x in labels if x is not None])
    assert again.note == r.trace.note
    assert "bank.py:33" in (again.note or "")


def test_the_kernels_one_replay_checks_a_components_trace() -> None:
    """The component's replay is the kernel's (``replay_path``, the model interface only): with
    its default rows the same states come back; a path cut before its failing step, or claimed
    as a deadlock, is refused."""
    result, sem = check_file(
        PY / "bank.py", "run", [], ["Account"], ComponentOptions(granularity="access")
    )
    r = next(r for r in result.results if r.property == "assert")
    assert r.trace is not None
    path = [int(s.command_index) for s in r.trace.steps[1:] if s.command_index is not None]
    plain = replay_path(sem, "assert", path)
    assert [s.state for s in plain.steps] == [s.state for s in r.trace.steps]
    assert plain.note == r.trace.note and plain.replayed
    with pytest.raises(ReplayError, match="does not violate 'assert'"):
        replay_path(sem, "assert", path[:-1])
    with pytest.raises(ReplayError, match="deadlock trace has a successor"):
        replay_path(sem, "no-deadlock", path[:-1])


def test_bitstate_store_never_proves() -> None:
    v = verdicts(
        "philosophers.py", "dinner_ordered", ["philosopher"], store="bitstate", bitstate_bits=20
    )
    assert set(v.values()) == {"unknown"}


def test_unsupported_construct_named_with_line(tmp_path: Path) -> None:
    prog = tmp_path / "gen.py"
    prog.write_text("def g():\n    yield 1\n\ndef main():\n    for x in g():\n        pass\n")
    with pytest.raises(Unsupported) as info:
        check_file(prog, "main", [], ["g"], ComponentOptions())
    assert "generator" in str(info.value) and f"{prog}:1" in str(info.value)
    code = run_cli("check", str(prog), "--entry", "main", "--component", "g")
    assert code.code == 2 and "unsupported in the component" in code.err


def test_cli_json_and_exit_codes() -> None:
    r = run_cli(
        "check",
        "examples/python/philosophers.py",
        "--entry",
        "dinner",
        "--component",
        "philosopher",
        "--json",
    )
    assert r.code == 1
    data = json.loads(r.out)
    assert data["method"] == "component" and data["verdict"] == "violated"
    ok = run_cli(
        "check",
        "examples/python/philosophers.py",
        "--entry",
        "dinner_ordered",
        "2",
        "--component",
        "philosopher",
    )
    assert ok.code == 0
    limit = run_cli(
        "check",
        "examples/python/philosophers.py",
        "--entry",
        "dinner_ordered",
        "--component",
        "philosopher",
        "--max-states",
        "10",
    )
    assert limit.code == 3 and "state limit" in limit.out
    usage = run_cli("check", "examples/python/philosophers.py", "--entry", "dinner")
    assert usage.code == 2 and "--component" in usage.err
    foreign = run_cli("check", "examples/gcl/rax.gcl", "--component", "x")
    assert foreign.code == 2


def test_environment_nondeterminism_is_not_a_proof(tmp_path: Path) -> None:
    prog = tmp_path / "nd.py"
    prog.write_text(
        "import itertools\n_c = itertools.count()\n\n"
        "def env():\n    return next(_c) % 2\n\n"
        "def main():\n    a = env()\n    b = env()\n    assert a + b < 3\n"
        "    a = env()\n    b = env()\n"
    )
    result, _ = check_file(prog, "main", [], ["main"], ComponentOptions())
    assert result.verdict is not Verdict.HOLDS
    assert any("not deterministic" in r.reason for r in result.results)


def test_emitted_tests_pass_on_original_and_fail_on_changed_environment(tmp_path: Path) -> None:
    out = tmp_path / "test_env.py"
    r = run_cli(
        "check",
        "examples/python/reader_writer.py",
        "--entry",
        "run",
        "--component",
        "Store,reader,writer",
        "--emit-tests",
        str(out),
    )
    assert r.code == 0 and out.is_file()
    text = out.read_text()
    assert "'normalize'" in text
    # the emitted file needs no pytest plugin: none is loaded (their start-up is most of
    # these runs' CPU)
    plain = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    passed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(out)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=plain,
    )
    assert passed.returncode == 0, passed.stdout
    changed = tmp_path / "changed.py"
    changed.write_text(
        (PY / "reader_writer.py")
        .read_text()
        .replace("return sorted(set(values))", "return sorted(values, reverse=True)")
    )
    failed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(out)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**plain, "ABSMC_ENV": str(changed)},
    )
    assert failed.returncode == 1, failed.stdout


def test_env_choices_enumerates_results(tmp_path: Path) -> None:
    prog = tmp_path / "sensor.py"
    prog.write_text(
        "def read_sensor():\n    return 0\n\n"
        "def main():\n    v = read_sensor()\n    assert v != 2, v\n"
    )
    from absmc.component.program import load_program

    module = load_program(prog)
    plain = check_file(prog, "main", [], ["main"], ComponentOptions())[0]
    assert plain.verdict is Verdict.HOLDS
    chosen = check_file(
        prog,
        "main",
        [],
        ["main"],
        ComponentOptions(env_choices={module.read_sensor: [0, 1, 2]}),
    )[0]
    # the module is loaded again by check_file: its function is another object
    assert chosen.verdict is Verdict.HOLDS
    import absmc.component

    api = absmc.component.check(
        module.main, component=["main"], env_choices={module.read_sensor: [0, 1, 2]}
    )
    r = next(r for r in api.results if r.property == "assert")
    assert r.verdict is Verdict.VIOLATED and r.trace is not None
    assert any("(choice 2)" in (st.command or "") for st in r.trace.steps)


def test_predicate_abstraction_finds_the_deadlock_and_never_proves() -> None:
    dead = verdicts("philosophers.py", "dinner", ["philosopher"], abstraction="predicates")
    assert dead["no-deadlock"] == "violated"
    ok = verdicts("bank.py", "run_locked", ["Account"], predicates=("acct.balance > 10",))
    assert set(ok.values()) == {"unknown"}


@pytest.mark.parametrize(
    ("file", "good", "bad", "component", "bad_component"),
    [
        ("matrix.py", "main", "main_bug", "multiply", "multiply_bug"),
        ("sorting.py", "main", "main_bug", "selection_sort", "selection_sort_bug"),
        ("allocator.py", "main", "main_bug", "Allocator", "Allocator"),
    ],
)
def test_data_examples_bitstate_finds_seeded_bug(
    file: str, good: str, bad: str, component: str, bad_component: str
) -> None:
    short = ["5"] if file != "allocator.py" else ["40"]
    ok = run_cli(
        "check",
        f"examples/python/{file}",
        "--entry",
        good,
        *short,
        "--component",
        component,
        "--json",
    )
    assert json.loads(ok.out)["verdict"] == "holds"
    err = run_cli(
        "check",
        f"examples/python/{file}",
        "--entry",
        bad,
        "--component",
        bad_component,
        "--store",
        "bitstate",
        "--json",
    )
    data = json.loads(err.out)
    assert data["verdict"] == "violated" and err.code == 1
    assert data["results"][0]["property"] == "assert"


def test_range_refinement_finds_race_and_proves_when_exact() -> None:
    race = verdicts("bank.py", "run", ["Account"], abstraction="range", granularity="access")
    assert race["assert"] == "violated"
    locked = verdicts(
        "bank.py", "run_locked", ["Account"], abstraction="range", granularity="access"
    )
    assert set(locked.values()) == {"holds"}
    r = run_cli(
        "check",
        "examples/python/matrix.py",
        "--entry",
        "main",
        "2",
        "--component",
        "multiply",
        "--store",
        "range",
        "--json",
    )
    data = json.loads(r.out)
    first = data["results"][0]
    assert first["verdict"] == "holds" and first["stats"]["merged"] == 0
    assert len(first["iterations"]) >= 2
