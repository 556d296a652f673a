"""Both-mover steps joined to the thread's previous step (absmc.component.joined and
.stable): returns into a caller, calls of translated methods and reads of attributes written
only by constructors. Fewer states, the same verdicts: bugs found with traces re-executed on
CPython, fixed versions proved; the 4-thread programs of issue 27 proved under ``-m slow``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from absmc.component import ComponentOptions, check_file
from absmc.component.check import check_semantics
from absmc.component.machine import ComponentSemantics
from absmc.component.oracle import explore
from absmc.component.oracle.runtime import Program
from absmc.component.program import build_program, load_program
from absmc.component.stable import stable_attributes

from .conftest import EXAMPLES

PY = EXAMPLES / "python"

BUFFER = """
import copy
import threading


class Buffer:
    def __init__(self, capacity, wake_all):
        self.items = []
        self.capacity = capacity
        self.wake_all = wake_all
        self.cond = threading.Condition()

    def _wake(self):
        if self.wake_all:
            self.cond.notify_all()
        else:
            self.cond.notify()

    def put(self, item):
        with self.cond:
            while len(self.items) >= self.capacity:
                self.cond.wait()
            self.items.append(item)
            self._wake()

    def get(self):
        with self.cond:
            while not self.items:
                self.cond.wait()
            item = self.items.pop(0)
            self._wake()
            return item


def producer(buf, n):
    for i in range(n):
        buf.put(i)


def consumer(buf, out):
    out.append(buf.get())


def run(wake_all):
    buf = Buffer(1, wake_all)
    out = []
    ts = [threading.Thread(target=producer, args=(buf, 2))]
    ts += [threading.Thread(target=consumer, args=(buf, out)) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert sorted(out) == [0, 1], out


def run_copy():
    buf = Buffer(1, True)
    snapshot = copy.copy(buf)
    t = threading.Thread(target=producer, args=(buf, 1))
    t.start()
    t.join()
    assert snapshot.capacity == 1
"""

COMPONENT = ["Buffer", "producer", "consumer", "run", "run_copy"]


def _program(tmp_path: Path) -> Path:
    path = tmp_path / "joined_buffer.py"
    path.write_text(BUFFER)
    return path


def _search(path: Path, entry: str, joined: bool) -> tuple[Any, ComponentSemantics]:
    """The check of ``entry`` with the attribute reads joined or not (no CPython run)."""
    ns = load_program(path).__dict__
    prog, code = build_program(ns, ns[entry], COMPONENT, "statement", {})
    sem = ComponentSemantics(prog, code, [True])
    if not joined:
        sem.unstable = None
    return check_semantics(sem, ComponentOptions(keep_going=True), str(path)), sem


def test_joined_attribute_reads_cut_states_and_keep_the_proof(tmp_path: Path) -> None:
    path = _program(tmp_path)
    full, sem_full = _search(path, "run", joined=False)
    joined, sem = _search(path, "run", joined=True)
    assert sem.stable_used and not sem_full.stable_used
    for result in (full, joined):
        assert [r.verdict.value for r in result.results] == ["holds"] * 3
    assert joined.results[0].stats.states < full.results[0].stats.states


def test_joined_attribute_reads_keep_the_notify_deadlock(tmp_path: Path) -> None:
    """``notify()`` may wake the other consumer instead of the producer: a deadlock found
    with the reads joined, its trace re-executed on CPython."""
    path = _program(tmp_path)
    result, sem = check_file(path, "run", [False], COMPONENT, ComponentOptions(order="dfs"))
    assert sem.stable_used
    dead = next(r for r in result.results if r.property == "no-deadlock")
    assert dead.verdict.value == "violated"
    assert dead.trace is not None and dead.extra["cpython"] == "confirmed"


def test_a_library_call_given_a_component_object_reruns_without_joins(tmp_path: Path) -> None:
    """``copy.copy(buf)`` hands a component object to library code, which might write the
    attributes whose reads were joined: the check runs again without joining them."""
    path = _program(tmp_path)
    result, sem = check_file(path, "run_copy", [], COMPONENT, ComponentOptions())
    assert result.verdict.value == "holds"
    assert sem.stable_broken and sem.unstable is None


RACE = """
import threading


class Box:
    def __init__(self):
        self.items = []

    def fill(self):
        self.items.append(1)
        if self.items:
            return
        assert False, "emptied between the append and the test"

    def empty(self):
        self.items.clear()


def run():
    box = Box()
    ts = [threading.Thread(target=box.fill), threading.Thread(target=box.empty)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
"""


def test_a_test_of_a_lists_contents_is_never_joined(tmp_path: Path) -> None:
    """``if self.items`` reads the list's contents (not only the stable attribute): joined
    to the ``append`` before it, the other thread's ``clear`` in between would be lost."""
    path = tmp_path / "race.py"
    path.write_text(RACE)
    result, _ = check_file(path, "run", [], ["Box", "run"], ComponentOptions())
    bad = next(r for r in result.results if r.property == "assert")
    assert bad.verdict.value == "violated"
    assert bad.extra["cpython"] == "confirmed"


ARGUMENTS = """
import threading


def check(total):
    assert len(total) == 2, total


def check_star(*items):
    assert len(items) == 1, items


def reader_sum(xs, ys, ev):
    ev.set()
    check(xs + ys)


def reader_star(xs, ys, ev):
    ev.set()
    check_star(*xs)


def reader_tuple(xs, ys, ev):
    pair = (xs,)
    one = ([1],)
    ev.set()
    same = pair == one
    assert same, pair


def writer(xs, ev):
    ev.wait()
    xs.append(1)


def run(reader):
    xs = [1]
    ys = [1]
    ev = threading.Event()
    ts = [
        threading.Thread(target=reader, args=(xs, ys, ev)),
        threading.Thread(target=writer, args=(xs, ev)),
    ]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def run_sum():
    run(reader_sum)


def run_star():
    run(reader_star)


def run_tuple():
    run(reader_tuple)
"""


@pytest.mark.parametrize("entry", ["run_sum", "run_star", "run_tuple"])
def test_an_operand_that_reads_a_shared_list_is_never_joined(tmp_path: Path, entry: str) -> None:
    """``check(xs + ys)``, ``check_star(*xs)`` and ``pair == one`` (a tuple holding a shared
    list) read the list the writer appends to: joined to the ``ev.set()`` before them, the
    append in between (which the real program can do) would be lost and the bug proved
    absent. The bug is found, its trace re-executed on CPython, and the CPython oracle's
    exhaustive enumeration agrees."""
    path = tmp_path / "arguments.py"
    path.write_text(ARGUMENTS)
    component = ["reader_sum", "reader_star", "reader_tuple", "writer", "check", "check_star"]
    result, _ = check_file(path, entry, [], [*component, "run"], ComponentOptions())
    bad = next(r for r in result.results if r.property == "assert")
    assert bad.verdict.value == "violated"
    assert bad.extra["cpython"] == "confirmed"
    oracle = explore(Program(path, entry))
    assert oracle.complete and oracle.verdicts["assert"] == "violated"


@pytest.mark.parametrize(
    ("source", "unstable"),
    [
        # stores in a constructor that does not publish ``self`` are exempt
        (
            "class A:\n def __init__(self):\n  self.a = 1\n  self.b = []\n"
            " def f(self):\n  self.b = 2\n",
            {"b"},
        ),
        # an ``__init__`` that publishes ``self``: no constructor store is exempt
        (
            "reg = []\nclass A:\n def __init__(self):\n  reg.append(self)\n  self.a = 1\n"
            "class B:\n def __init__(self):\n  self.c = 1\n",
            {"a", "c"},
        ),
        # ``self.helper()`` passes ``self`` on
        ("class A:\n def __init__(self):\n  self.a = 1\n  self.go()\n", {"a"}),
        # a lambda in ``__init__`` captures ``self``
        ("class A:\n def __init__(self):\n  self.a = lambda: self.b\n", {"a"}),
        # ``__new__`` may hand the instance out before ``__init__`` runs
        (
            "class A:\n def __new__(cls):\n  return super().__new__(cls)\n"
            " def __init__(self):\n  self.a = 1\n",
            {"a"},
        ),
        # a class attribute store and an augmented store outside ``__init__``
        ("class A:\n n = 0\ndef f(a):\n A.n = 1\n a.k += 1\n", {"n", "k"}),
    ],
)
def test_stable_attribute_scan(tmp_path: Path, source: str, unstable: set[str]) -> None:
    path = tmp_path / "scan.py"
    path.write_text(source)
    assert stable_attributes([str(path)]) == frozenset(unstable)


@pytest.mark.parametrize(
    "source",
    [
        "def f(a):\n setattr(a, 'x', 1)\n",
        "def f(a):\n a.__dict__['x'] = 1\n",
        "def f(a):\n a.__class__ = int\n",
        "class A:\n def __init__(self):\n  self.a = 1\n def reset(self):\n  super().__init__()\n",
        "def f(a):\n a.__init__()\n",
    ],
)
def test_reflection_makes_every_attribute_unstable(tmp_path: Path, source: str) -> None:
    path = tmp_path / "scan.py"
    path.write_text(source)
    assert stable_attributes([str(path)]) is None


FOUR_THREADS = [
    ("por_buffer.py", "main", ["Buffer", "producer", "consumer", "run"]),
    ("por_jobqueue.py", "main", ["JobQueue", "submitter", "worker", "run"]),
]


@pytest.mark.slow
@pytest.mark.parametrize(("file", "entry", "comp"), FOUR_THREADS)
def test_the_four_thread_programs_of_issue_27_are_proved(
    file: str, entry: str, comp: list[str]
) -> None:
    """2 producers and 2 consumers, capacity 1, 2 items each (about 40 s CPU each): 874,509
    states before the joins for the buffer, 139,479 with them."""
    result, sem = check_file(PY / file, entry, [], comp, ComponentOptions(order="dfs"))
    assert [r.verdict.value for r in result.results] == ["holds"] * 3
    assert sem.stable_used
    assert result.results[0].stats.states < 200_000
