"""Partial-order reduction of the component's threads (absmc.component.reduction): the same
verdicts as the full interleaving search on the example programs and on generated threaded
programs, fewer states where threads are independent, counterexamples that replay, and the
statistics in ``--json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from absmc.component import ComponentOptions, check_file

from .component_threads_gen import component, program
from .conftest import EXAMPLES, run_cli

PY = EXAMPLES / "python"

#: (file, entry, component, options): the example programs, each run with and without
EXAMPLES_FAST: list[tuple[str, str, list[str], dict[str, Any]]] = [
    ("philosophers.py", "dinner", ["philosopher"], {}),
    ("bank.py", "run", ["Account"], {"granularity": "access"}),
    ("bank.py", "run_locked", ["Account"], {"granularity": "access"}),
    ("producer_consumer.py", "run_queue", ["queue_producer", "queue_consumer"], {}),
    ("lost_wakeup.py", "run", ["waiter", "signaller"], {}),
    ("lost_wakeup.py", "run_fixed", ["waiter_fixed", "signaller"], {}),
    ("reader_writer.py", "run_unlocked", ["Store", "reader_unlocked", "writer_unlocked"], {}),
]

EXAMPLES_SLOW: list[tuple[str, str, list[str], dict[str, Any]]] = [
    ("philosophers.py", "dinner_ordered", ["philosopher"], {}),
    ("producer_consumer.py", "run_if", ["Buffer", "consumer_if"], {}),
    ("producer_consumer.py", "run", ["Buffer", "producer", "consumer"], {}),
    ("reader_writer.py", "run", ["Store", "reader", "writer"], {}),
    ("allocator.py", "main_bug", ["Allocator"], {}),
    ("sorting.py", "main_bug", ["selection_sort_bug"], {}),
    ("por_jobqueue.py", "main_if", ["JobQueue", "submitter", "worker", "run"], {"order": "dfs"}),
]


#: the example pairs (file, entry, args, component, options, the violated property's kind or
#: None for a program that holds): small instances in CI, the rest under ``-m slow``
PAIRS_FAST: list[tuple[str, str, list[Any], list[str], dict[str, Any], str | None]] = [
    ("hit_counter.py", "serve", [2], ["Stats", "handle", "serve"], {"granularity": "access"},
     "assert"),
    ("hit_counter.py", "serve_locked", [2], ["Stats", "handle", "serve"],
     {"granularity": "access"}, None),
    ("transfer.py", "run", [], ["Account", "transfer", "_run"], {}, "deadlock"),
    ("transfer.py", "run_ordered", [], ["Account", "transfer_ordered", "_run"], {}, None),
]  # fmt: skip

PAIRS_SLOW: list[tuple[str, str, list[Any], list[str], dict[str, Any], str | None]] = [
    ("slot_buffer.py", "run_notify", [1, 2, 2], ["Slot", "producer", "consumer", "run"],
     {"order": "dfs"}, "deadlock"),
    ("slot_buffer.py", "run_notify_all", [1, 1, 2], ["Slot", "producer", "consumer", "run"],
     {}, None),
    ("cache.py", "run", [], ["Cache", "Reader", "run"], {"order": "dfs"}, "assert"),
    ("cache.py", "run_locked", [], ["Cache", "Reader", "run"], {}, None),
    ("job_queue.py", "run_if", [1, 2, 2], ["JobQueue", "submitter", "worker", "run"],
     {"order": "dfs"}, "assert"),
    ("job_queue.py", "run_while", [1, 1, 2], ["JobQueue", "submitter", "worker", "run"], {},
     None),
    ("por_buffer.py", "main_notify", [], ["Buffer", "producer", "consumer", "run"],
     {"order": "dfs"}, "deadlock"),
    ("por_jobqueue.py", "main_if", [], ["JobQueue", "submitter", "worker", "run"],
     {"order": "dfs"}, "exception"),
]  # fmt: skip


def _pair(
    file: str, entry: str, args: list[Any], comp: list[str], opts: dict[str, Any], kind: str | None
) -> None:
    """With and without the reduction: the same verdicts; a buggy program is violated (of
    ``kind``) with a trace re-executed on CPython, a fixed one holds."""
    runs = [
        check_file(PY / file, entry, args, comp, ComponentOptions(reduce=r, **opts))[0]
        for r in (False, True)
    ]
    full, reduced = runs
    assert verdicts(reduced) == verdicts(full), (file, entry)
    assert reduced.results[0].stats.extra["reduction"] == "persistent-sets"
    for result in runs:
        if kind is None:
            assert result.verdict.value == "holds", (file, entry)
            continue
        bad = [r for r in result.results if r.verdict.value == "violated"]
        assert [r.kind for r in bad] == [kind], (file, entry)
        assert bad[0].trace is not None and bad[0].extra["cpython"] == "confirmed"


def verdicts(result: Any) -> dict[str, str]:
    return {r.property: r.verdict.value for r in result.results}


@pytest.mark.parametrize(("file", "entry", "args", "comp", "opts", "kind"), PAIRS_FAST)
def test_reduction_keeps_the_verdicts_of_the_example_pairs(
    file: str, entry: str, args: list[Any], comp: list[str], opts: dict[str, Any], kind: str | None
) -> None:
    _pair(file, entry, args, comp, opts, kind)


@pytest.mark.slow
@pytest.mark.parametrize(("file", "entry", "args", "comp", "opts", "kind"), PAIRS_SLOW)
def test_reduction_keeps_the_verdicts_of_the_larger_example_pairs(
    file: str, entry: str, args: list[Any], comp: list[str], opts: dict[str, Any], kind: str | None
) -> None:
    _pair(file, entry, args, comp, opts, kind)


def _verdicts(path: Path, entry: str, comp: list[str], reduce: bool, **opts: Any) -> Any:
    result, _ = check_file(path, entry, [], comp, ComponentOptions(reduce=reduce, **opts))
    return result


def _same(path: Path, entry: str, comp: list[str], **opts: Any) -> tuple[Any, Any]:
    full = _verdicts(path, entry, comp, False, **opts)
    reduced = _verdicts(path, entry, comp, True, **opts)
    assert {r.property: r.verdict.value for r in reduced.results} == {
        r.property: r.verdict.value for r in full.results
    }, path
    assert reduced.results[0].stats.states <= full.results[0].stats.states
    for r in reduced.results:
        if r.trace is not None:
            # a violation's trace was re-executed on the concrete semantics
            assert "counterexample of" in r.reason
    return full, reduced


@pytest.mark.parametrize(("file", "entry", "comp", "opts"), EXAMPLES_FAST)
def test_reduction_keeps_the_verdicts_of_the_examples(
    file: str, entry: str, comp: list[str], opts: dict[str, Any]
) -> None:
    _same(PY / file, entry, comp, **opts)


@pytest.mark.slow
@pytest.mark.parametrize(("file", "entry", "comp", "opts"), EXAMPLES_SLOW)
def test_reduction_keeps_the_verdicts_of_the_larger_examples(
    file: str, entry: str, comp: list[str], opts: dict[str, Any]
) -> None:
    _same(PY / file, entry, comp, **opts)


def _generated(tmp_path: Path, seed: int, threads: int, ops: int) -> tuple[Any, Any]:
    """Program ``seed`` checked exhaustively (every property to its end, ``keep_going``)
    with and without the reduction."""
    path = tmp_path / f"gen_{seed}.py"
    path.write_text(program(seed, threads, ops))
    return _same(path, "main", component(seed, threads), keep_going=True)


# seeds 0-4 in CI, 5-9 (and the larger programs below) under -m slow
@pytest.mark.parametrize(
    "seed", [s if s < 5 else pytest.param(s, marks=pytest.mark.slow) for s in range(10)]
)
def test_reduction_keeps_the_verdicts_of_generated_programs(tmp_path: Path, seed: int) -> None:
    _generated(tmp_path, seed, 2, 2)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(10, 130))
def test_reduction_keeps_the_verdicts_of_more_generated_programs(tmp_path: Path, seed: int) -> None:
    _generated(tmp_path, seed, 2 + seed % 2, 2 + seed % 2)


def test_generated_programs_have_every_kind_of_verdict(tmp_path: Path) -> None:
    """The differential test above means something: its programs hold and fail."""
    kinds = {("assert", "violated"), ("assert", "holds"), ("no-deadlock", "violated")}
    seen: set[tuple[str, str]] = set()
    for seed in range(10):
        path = tmp_path / f"gen_{seed}.py"
        path.write_text(program(seed, 2, 2))
        result = _verdicts(path, "main", component(seed, 2), True, keep_going=True)
        for r in result.results:
            seen.add((r.property, r.verdict.value))
        if kinds <= seen:
            break  # (the programs after this one add nothing to the assertion)
    assert kinds <= seen, seen


INDEPENDENT = """
import threading


def work(k, out):
    mine = []
    mine.append(k)
    mine.append(k + 1)
    mine.append(k + 2)
    out.append(len(mine))


def main():
    a = []
    b = []
    t1 = threading.Thread(target=work, args=(1, a))
    t2 = threading.Thread(target=work, args=(2, b))
    t1.start()
    t2.start()
    t1.join()
    t2.join()
    assert a == [3] and b == [3]
"""


def test_reduction_stores_fewer_states_on_independent_threads(tmp_path: Path) -> None:
    path = tmp_path / "independent.py"
    path.write_text(INDEPENDENT)
    full, reduced = _same(path, "main", ["main", "work"])
    assert full.verdict.value == "holds"
    assert reduced.results[0].stats.states < full.results[0].stats.states
    assert reduced.results[0].stats.extra["reduced_expansions"] > 0
    assert full.results[0].stats.extra["reduction"] == "none"


def test_reduced_deadlock_trace_replays() -> None:
    """The two-philosopher deadlock is found with the reduction; its trace re-executes."""
    result = _verdicts(PY / "philosophers.py", "dinner", ["philosopher"], True)
    dead = next(r for r in result.results if r.property == "no-deadlock")
    assert dead.verdict.value == "violated"
    assert dead.trace is not None and len(dead.trace.steps) > 1


def test_json_says_the_reduction_ran(tmp_path: Path) -> None:
    path = tmp_path / "independent.py"
    path.write_text(INDEPENDENT)
    base = ["check", str(path), "--entry", "main", "--component", "main,work", "--json"]
    on = json.loads(run_cli(*base, "--reduce").out)
    off = json.loads(run_cli(*base).out)
    on_stats = on["results"][0]["stats"]
    off_stats = off["results"][0]["stats"]
    assert on_stats["reduction"] == "persistent-sets"
    assert off_stats["reduction"] == "none"
    assert on_stats["states"] < off_stats["states"]
    assert on["verdict"] == off["verdict"] == "holds"


def test_reduce_also_names_the_models_partial_order_reduction(tmp_path: Path) -> None:
    # --reduce/--no-reduce apply to models too (on by default there, docs/reductions.md)
    model = tmp_path / "m.pml"
    model.write_text(
        "byte g;\n"
        "active [3] proctype P() { byte l; do :: l < 4 -> l++ :: l >= 4 -> break od;"
        " g++; assert(g <= 3) }\n"
    )
    runs = {
        f: run_cli("check", str(model), *f, "--json") for f in ((), ("--reduce",), ("--no-reduce",))
    }
    stats = {f: json.loads(r.out)["results"][0]["stats"] for f, r in runs.items()}
    assert all(r.code == 0 for r in runs.values())
    assert stats[()]["states"] == stats[("--reduce",)]["states"] == 55  # SPIN's POR count
    assert stats[("--no-reduce",)]["states"] == 585
    assert "reductions" not in stats[("--no-reduce",)]


def test_models_take_reduce_and_no_reduce() -> None:
    """Models reduce by default (``--reduce`` is accepted there, ``--no-reduce`` turns the
    reductions off); a Python program's partial-order reduction stays opt-in."""
    assert run_cli("check", "examples/gcl/peterson.gcl", "--reduce").code == 0
    assert run_cli("check", "examples/gcl/peterson.gcl", "--no-reduce").code == 0


def test_python_programs_are_searched_depth_first_unless_bfs_is_asked() -> None:
    """The default order of a .py check is DFS (fewer states to the philosophers' deadlock
    than BFS, which --order bfs still gives)."""
    base = ["check", "examples/python/philosophers.py", "--entry", "dinner"]
    base += ["--component", "philosopher", "--json"]
    dfs = json.loads(run_cli(*base).out)
    bfs = json.loads(run_cli(*base, "--order", "bfs").out)
    assert dfs["verdict"] == bfs["verdict"] == "violated"
    dfs_states = dfs["results"][0]["stats"]["states"]
    assert (
        dfs_states
        == json.loads(run_cli(*base, "--order", "dfs").out)["results"][0]["stats"]["states"]
    )
    assert dfs_states < bfs["results"][0]["stats"]["states"]
