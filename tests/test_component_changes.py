"""The component machine's cheaper steps: heap objects kept from one step to the next
(``Decoder.rebase``) and successors encoded from the cells a step changed
(``absmc.component.changes``) give exactly the states, transitions, verdicts and traces of
decoding and walking the whole heap at every step."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from absmc.component import ComponentOptions
from absmc.component import machine as machine_mod
from absmc.component.changes import encode_changes
from absmc.component.check import check_semantics
from absmc.component.machine import ComponentSemantics
from absmc.component.program import build_program, load_program
from absmc.component.values import Decoder, Encoder, Hashed, Opaque
from absmc.kernel.explore.search import search
from absmc.kernel.explore.store import ExactStore

from .conftest import EXAMPLES

PY = EXAMPLES / "python"


def _semantics(file: str, entry: str, args: list[Any], comp: list[str], **opts: Any) -> Any:
    ns = load_program(PY / file).__dict__
    options = ComponentOptions(**opts)
    prog, code = build_program(ns, ns[entry], comp, options.granularity, options.env_choices)
    return ComponentSemantics(prog, code, args), options


def _slow(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every step decodes afresh and walks the whole heap (the behaviour before)."""
    monkeypatch.setattr(machine_mod, "encode_changes", lambda *a: None)
    monkeypatch.setattr(Decoder, "rebase", lambda self, heap: False)


def _summary(result: Any) -> list[Any]:
    out = []
    for r in result.results:
        trace = None
        if r.trace is not None:
            trace = [(st.command, sorted(st.state.items())) for st in r.trace.steps]
        out.append((r.property, r.verdict.value, r.stats.states, r.stats.transitions, trace))
    return out


@pytest.mark.parametrize(
    ("file", "entry", "args", "comp", "opts"),
    [
        ("philosophers.py", "dinner", [3], ["philosopher"], {}),
        ("producer_consumer.py", "run_if", [], ["Buffer", "consumer_if"], {}),
        ("reader_writer.py", "run", [], ["Store", "reader", "writer"], {}),
        ("bank.py", "run", [], ["Account"], {"granularity": "access"}),
        ("cache.py", "run", [], ["Cache", "Reader", "run"], {"order": "dfs"}),
    ],
)
def test_cheaper_steps_change_nothing_but_the_time(
    file: str,
    entry: str,
    args: list[Any],
    comp: list[str],
    opts: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sem, options = _semantics(file, entry, args, comp, **opts)
    fast = _summary(check_semantics(sem, options, file))
    with monkeypatch.context() as m:
        _slow(m)
        sem, options = _semantics(file, entry, args, comp, **opts)
        slow = _summary(check_semantics(sem, options, file))
    assert fast == slow


def test_same_stored_states_and_the_fast_path_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    taken = []
    real = encode_changes

    def counting(*a: Any) -> Any:
        out = real(*a)
        taken.append(out is not None)
        return out

    monkeypatch.setattr(machine_mod, "encode_changes", counting)
    fast = ExactStore()
    sem, _ = _semantics("philosophers.py", "dinner_ordered", [3], ["philosopher"])
    search(sem, fast)
    sem.restore()
    # most executed steps only change cells (a lock, a counter) and the stepping thread
    assert sum(taken) > len(taken) // 2
    with monkeypatch.context() as m:
        _slow(m)
        slow = ExactStore()
        sem, _ = _semantics("philosophers.py", "dinner_ordered", [3], ["philosopher"])
        search(sem, slow)
        sem.restore()
    assert len(fast.states) == len(slow.states) == 1_943
    assert fast.states == slow.states


class _Point:
    def __init__(self, x: int, tags: list[str]) -> None:
        self.x = x
        self.tags = tags


def _encode(value: Any, opaque: Opaque) -> tuple[Any, tuple[Any, ...]]:
    e = Encoder(opaque, lambda t: t is _Point)
    root = e.enc(value)
    return root, e.heap


def test_rebase_rewrites_the_objects_in_place() -> None:
    opaque = Opaque()
    root, heap_a = _encode([1, _Point(2, ["a"]), {"k": [3]}], opaque)
    _, heap_b = _encode([1, _Point(5, ["b", "c"]), {"k": [3]}], opaque)
    d = Decoder(heap_a, opaque)
    live = d.dec(root)
    point, inner = live[1], live[2]["k"]
    inner.append(4)  # a step changes the dict's list (changed() is asked after the step)
    assert d.changed() == [d.cell_of[id(inner)]]
    assert d.rebase(heap_b)
    # the same objects, now with heap_b's contents (the changed list restored to [3])
    assert live[1] is point and live[2]["k"] is inner
    assert (point.x, point.tags, inner) == (5, ["b", "c"], [3])
    assert _encode(live, opaque) == (root, heap_b)


def test_rebase_refuses_values_that_change_under_one_identity() -> None:
    opaque = Opaque()
    root, heap = _encode([ValueError("x")], opaque)
    d = Decoder(heap, opaque)
    d.dec(root)
    assert d.unsafe
    assert not d.rebase(heap)


def test_hashed_tuples_equal_tuples_and_pickle_without_their_hash() -> None:
    plain = ("L", ("r", 1), "x")
    h = Hashed(plain)
    assert h == plain and hash(h) == hash(plain) and {h: 1}[plain] == 1
    back = pickle.loads(pickle.dumps(h))
    assert type(back) is Hashed and back == plain and "_hash" not in back.__dict__
