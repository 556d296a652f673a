"""Values wider than 64 bits in the native back end (``__int128``, two slots per variable):
every operator on wide values agrees with the generated-Python back end (exact integers), a
corpus model whose channel packs into 80 bits searches in C with SPIN's counts, and a value
needing more than 128 bits still falls back to Python."""

from __future__ import annotations

import csv
import random
from pathlib import Path

import pytest

from absmc.codegen.python import compile_system
from absmc.ir.expr import Const, Expr, Op, Var
from absmc.ir.sorts import BOOL, RangeSort
from absmc.ir.system import Command, Process, System, Variable, make_system
from absmc.native import NativeSemantics
from absmc.native.cgen import Unsupported, layout

from .conftest import SHARED
from .native_helpers import cli_json, needs_native

pytestmark = [needs_native, pytest.mark.usefixtures("native_fast_compile")]

CORPUS = SHARED / "benchmarks" / "promela"

WIDE = RangeSort(-(1 << 100), 1 << 100)
NARROW = RangeSort(-1000, 1000)
COUNT = RangeSort(-3, 140)
RESULT = RangeSort(-(1 << 125), 1 << 125)
#: a wrap-around range of 2^90 values: results reduced modulo its size
WRAP = RangeSort(-(1 << 89), (1 << 89) - 1, overflow="wrap")

A, B = Var("a", WIDE), Var("b", WIDE)
N, S = Var("n", NARROW), Var("s", COUNT)


def _op(o: str, *args: Expr) -> Expr:
    return Op(o, tuple(args))


#: one command per expression, assigned to ``r`` (or ``w``, ``f``); wide and narrow operands,
#: negative values, division and remainder by variables, comparisons as values
EXPRS: list[tuple[str, Expr]] = [
    ("r", _op("+", A, B)),
    ("r", _op("-", A, N)),
    ("r", _op("*", A, N)),
    ("r", _op("*", A, B)),  # past 128 bits for large operands: ovf, answered by Python
    ("r", _op("/", A, B)),
    ("r", _op("/", A, N)),
    ("r", _op("/", N, A)),
    ("r", _op("%", A, B)),
    ("r", _op("%", A, N)),
    ("r", _op("%", N, A)),
    ("r", _op("&", A, B)),
    ("r", _op("|", A, N)),
    ("r", _op("^", A, B)),
    ("r", _op("~", A)),
    ("r", _op("neg", A)),
    ("r", _op("<<", A, S)),
    ("r", _op("<<", N, S)),
    ("r", _op(">>", A, S)),
    ("r", _op(">>", N, S)),
    ("r", _op("&", _op(">>", A, Const(40)), Const(0xFFFF))),  # a channel field read
    ("r", _op("ite", _op("<", A, B), A, N)),
    ("r", _op("select", _op("%", A, Const(3)), A, B, N)),
    ("r", Const((1 << 110) + 12345)),
    ("f", _op("<", A, B)),
    ("f", _op("==", A, _op("+", B, Const(1 << 70)))),
    ("f", _op(">=", A, N)),
    ("n", _op("/", A, B)),  # a narrow variable: out-of-range values are failures
    ("n", _op("%", A, Const(1 << 65))),
    ("w", _op("*", A, Const(1 << 20))),  # wraps modulo 2^90
]


def _system() -> System:
    variables = [
        Variable("a", WIDE, 0),
        Variable("b", WIDE, 0),
        Variable("n", NARROW, 0),
        Variable("s", COUNT, 0),
        Variable("r", RESULT, 0),
        Variable("f", BOOL, 0),
        Variable("w", WRAP, 0),
    ]
    # a process per command: a step that leaves 128 bits sends only its own process to Python
    commands = [Command(f"P{k}", Const(1, BOOL), ((x, e),)) for k, (x, e) in enumerate(EXPRS)]
    processes = [Process(f"P{k}") for k in range(len(EXPRS))]
    return make_system(variables, processes, commands, name="wide")


def _value(rng: random.Random, sort: RangeSort) -> int:
    pick = rng.randrange(6)
    if pick == 0:
        return rng.choice([sort.lo, sort.hi, 0, -1, 1])
    if pick == 1:
        return rng.randint(-(1 << 63) - 5, (1 << 63) + 5)  # around the 64-bit border
    return rng.randint(sort.lo, sort.hi) >> rng.randrange(0, 100)


def test_layout_gives_wide_variables_two_slots_and_a_field_across_two_words() -> None:
    lay = layout(_system())
    a, b, n = lay.fields[0], lay.fields[1], lay.fields[2]
    assert a.wide and a.width == 102 and (a.slot, b.slot, n.slot) == (0, 2, 4)
    assert lay.slots == 11 and a.shift == b.shift == 0 and abs(b.word - a.word) == 2
    assert not n.wide and n.word not in (a.word, b.word)  # narrow fields fill second words
    state = (-(1 << 100), (1 << 100) - 7, -5, 3, 1 << 125, 1, -1)
    slots = lay.to_slots(state)
    assert slots is not None and len(slots) == 11 and lay.from_slots(slots) == state
    assert all(-(1 << 63) <= x < (1 << 63) for x in slots)


def test_every_operator_on_wide_values_agrees_with_python() -> None:
    system = _system()
    nat = NativeSemantics(system, (), opt="-O0")
    py = compile_system(system, ())
    rng = random.Random(14)
    checked = 0
    for _ in range(120):
        state = (
            _value(rng, WIDE),
            _value(rng, WIDE),
            rng.randint(-1000, 1000) if rng.randrange(4) else 0,
            rng.randint(-3, 140),
            0,
            0,
            0,
        )
        for ci in range(len(EXPRS)):
            got, want = nat.step(ci, state), py.step(ci, state)
            assert got[0] == want[0], (EXPRS[ci], state)
            assert [f.message for f in got[1]] == [f.message for f in want[1]], (ci, state)
            checked += 1
        steps, fails = nat.successors(state)
        psteps, pfails = py.successors(state)
        assert [t for _, t in steps] == [t for _, t in psteps]
        assert [f.message for f in fails] == [f.message for f in pfails]
    # most steps computed in C (ovf past 128 bits, or a failure's value past 64 bits, in Python)
    assert nat.fallbacks < checked // 4
    assert py.step(5, (0, 0, 0, 0, 0, 0, 0))[1][0].message == "division by zero"


def test_a_value_beyond_128_bits_falls_back_to_python(tmp_path: Path) -> None:
    model = tmp_path / "huge.gcl"
    big = 1 << 130
    model.write_text(f"var x : 0..{big};\nprocess P {{ x < {big} -> x := x + {1 << 128}; }}\n")
    code, res = cli_json("check", str(model), "--backend", "native")
    stats = res["results"][0]["stats"]
    assert code == 1 and res["verdict"] == "violated"  # a deadlock at x = 4 * 2^128
    assert stats["states"] == 5 and "wider than 128 bits" in stats["native_fallback"]
    with pytest.raises(Unsupported):
        layout(make_system([Variable("x", RangeSort(0, big))], [Process("P")], []))


def test_sort_pml_searches_in_c_with_spins_counts() -> None:
    if not CORPUS.exists():
        pytest.skip("../shared/benchmarks/promela is not available")
    code, res = cli_json("check", str(CORPUS / "sort.pml"), "--keep-going", "--backend", "native")
    stats = res["results"][0]["stats"]
    assert code == 0 and res["verdict"] == "holds"
    assert stats["backend"] == "native" and "native_fallback" not in stats
    assert stats["states"] == _spin_states("sort.pml")


def _spin_states(model: str) -> int:
    rows = csv.DictReader((CORPUS / "expected.csv").open())
    return next(int(r["spin_o1_states"]) for r in rows if r["file"] == model)
