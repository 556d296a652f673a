"""Values wider than 64 bits in the native back end (``__int128``, two slots per variable; past
128 bits ``big_t``, several words per variable): every operator on wide values agrees with the
generated-Python back end (exact integers), corpus models whose channels pack into 80 and 160
bits search in C with SPIN's counts, and a model with 131-bit values searches in C."""

from __future__ import annotations

import csv
import random
from pathlib import Path

import pytest

from absmc.codegen.plan import op_interval
from absmc.codegen.python import compile_system
from absmc.ir.expr import Const, Expr, Op, Var, substitute
from absmc.ir.sorts import BOOL, RangeSort
from absmc.ir.system import Command, Process, System, Variable, make_system
from absmc.lang.promela import load_promela
from absmc.native import NativeSemantics, cgen, shapes
from absmc.native.cgen import CGen, layout

from .conftest import SHARED
from .native_helpers import assert_native_equals_python, cli_json, needs_native

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


#: the same sorts past 128 bits (``big_t``): 202-bit operands, 252-bit results, a 190-bit wrap
HUGE = (RangeSort(-(1 << 200), 1 << 200), RangeSort(-(1 << 250), 1 << 250))
HUGE_WRAP = RangeSort(-(1 << 189), (1 << 189) - 1, overflow="wrap")


def _system(wide: RangeSort = WIDE, result: RangeSort = RESULT, wrap: RangeSort = WRAP) -> System:
    variables = [
        Variable("a", wide, 0),
        Variable("b", wide, 0),
        Variable("n", NARROW, 0),
        Variable("s", COUNT, 0),
        Variable("r", result, 0),
        Variable("f", BOOL, 0),
        Variable("w", wrap, 0),
    ]
    # a process per command: a step whose value leaves the C types sends only its own
    # process to Python
    a, b = Var("a", wide), Var("b", wide)
    exprs = [(x, substitute(e, {"a": a, "b": b})) for x, e in EXPRS]
    commands = [Command(f"P{k}", Const(1, BOOL), ((x, e),)) for k, (x, e) in enumerate(exprs)]
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


@pytest.mark.parametrize("huge", [False, True], ids=["int128", "big"])
def test_every_operator_on_wide_values_agrees_with_python(huge: bool) -> None:
    wide = HUGE[0] if huge else WIDE
    system = _system(*HUGE, HUGE_WRAP) if huge else _system()
    nat = NativeSemantics(system, (), opt="-O0")
    assert ("b_load(v + " in nat.source) == huge  # variables of more than two words
    py = compile_system(system, ())
    rng = random.Random(14)
    checked = 0
    for _ in range(120):
        state = (
            _value(rng, wide),
            _value(rng, wide),
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
    # most steps computed in C (ovf past the C type, or a failure's value past 64 bits, in
    # Python)
    assert nat.fallbacks < checked // 4
    assert py.step(5, (0, 0, 0, 0, 0, 0, 0))[1][0].message == "division by zero"


def test_a_big_field_spans_words_and_round_trips() -> None:
    lay = layout(_system(*HUGE, HUGE_WRAP))
    a, r, w = lay.fields[0], lay.fields[4], lay.fields[6]
    assert (a.width, a.words, r.width, r.words, w.words) == (202, 4, 252, 4, 3)
    assert a.shift == 0 and lay.slots == 4 + 4 + 1 + 1 + 4 + 1 + 3
    state = (-(1 << 200), (1 << 200) - 7, -5, 3, -(1 << 250), 1, (1 << 189) - 1)
    slots = lay.to_slots(state)
    assert slots is not None and lay.from_slots(slots) == state
    assert all(-(1 << 63) <= x < (1 << 63) for x in slots)
    assert lay.to_slots((1 << 255, *state[1:])) is None  # past the field's four words


def test_right_shift_intervals_hold_for_operands_past_128_bits() -> None:
    # a count up to 200 shifts a 160-bit value to 0: its range checks rely on this
    assert op_interval(">>", [(1 << 150, 1 << 160), (0, 200)]) == (0, 1 << 160)
    assert op_interval(">>", [(-(1 << 160), -(1 << 150)), (0, 200)]) == (-(1 << 160), -1)


def test_values_beyond_128_bits_search_in_c(tmp_path: Path) -> None:
    model = tmp_path / "huge.gcl"
    big = 1 << 130
    model.write_text(f"var x : 0..{big};\nprocess P {{ x < {big} -> x := x + {1 << 128}; }}\n")
    code, res = cli_json("check", str(model), "--backend", "native")
    stats = res["results"][0]["stats"]
    assert code == 1 and res["verdict"] == "violated"  # a deadlock at x = 4 * 2^128
    assert stats["states"] == 5 and stats["backend"] == "native"
    assert "native_fallback" not in stats
    assert res["results"][0]["trace"][-1]["state"]["x"] == big


#: a channel of 12 two-byte messages packs into 192 bits; the receiver's assertion fails when
#: the sender has filled the channel before the first receive
CHANNEL_192 = """
chan c = [12] of { byte, byte };
byte got;
active proctype sender() {
    byte i = 0;
    do
    :: i < 14 -> c!i,255-i; i++
    :: i >= 14 -> break
    od
}
active proctype receiver() {
    byte x, y;
    do
    :: c?x,y -> assert(x + y == 255 && (x > 0 || len(c) < 11)); got++
    od
}
"""


def test_a_192_bit_channel_gives_the_same_verdict_and_counts_in_c_and_python(
    tmp_path: Path,
) -> None:
    model = tmp_path / "chan192.pml"
    model.write_text(CHANNEL_192)
    res = {}
    for backend in ("native", "python"):
        code, out = cli_json("check", str(model), "--backend", backend, "--keep-going")
        res[backend] = (code, [(r["property"], r["verdict"]) for r in out["results"]], out)
    (nc, nv, nat), (pc, pv, py) = res["native"], res["python"]
    assert nc == pc == 1 and nv == pv and ("assert@14", "violated") in nv
    for a, b in zip(nat["results"], py["results"], strict=True):
        assert a["stats"]["states"] == b["stats"]["states"] > 100
        assert a["stats"]["transitions"] == b["stats"]["transitions"]
    stats = nat["results"][0]["stats"]
    assert stats["backend"] == "native" and "native_fallback" not in stats


def test_big_t_commands_shared_by_shape_keep_the_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Commands on 192-bit values share shape functions (their ``UINT64_C`` words stay in
    place) once the process functions' code passes ``SHARE_MIN_CHARS`` (1 here, with far
    fewer commands than ``SHARE_MIN_COMMANDS``): the same counts and verdicts as Python."""
    model = tmp_path / "chan192.pml"
    model.write_text(CHANNEL_192)
    system = load_promela(model)
    plain = CGen(system, ())
    plain.source("", "")
    assert not plain.share
    monkeypatch.setattr(cgen, "SHARE_MIN_CHARS", 1)
    gen = CGen(system, ())
    source = gen.source("", "")
    assert len(system.commands) < shapes.SHARE_MIN_COMMANDS and gen.share
    assert any("b_store" in shape for shape in gen.shapes) and "goto d" not in source
    _, py = cli_json("check", str(model), "--backend", "python", "--keep-going")
    code, nat = cli_json("check", str(model), "--backend", "native", "--keep-going")
    assert code == 1 and nat["verdict"] == py["verdict"] == "violated"
    assert_native_equals_python(nat, py)
    assert all(a["stats"]["states"] > 100 for a in nat["results"])


def test_sort_pml_searches_in_c_with_spins_counts() -> None:
    if not CORPUS.exists():
        pytest.skip("../shared/benchmarks/promela is not available")
    code, res = cli_json("check", str(CORPUS / "sort.pml"), "--keep-going", "--backend", "native")
    stats = res["results"][0]["stats"]
    assert code == 0 and res["verdict"] == "holds"
    assert stats["backend"] == "native" and "native_fallback" not in stats
    assert stats["states"] == _spin_states("sort.pml")


def test_leader0_with_160_bit_channels_searches_in_c_with_spins_counts() -> None:
    """Its five node processes' code (160-bit channels) is shared by shape by default."""
    if not CORPUS.exists():
        pytest.skip("../shared/benchmarks/promela is not available")
    system = load_promela(CORPUS / "leader0.pml")
    gen = CGen(system, ())
    gen.source("", "")
    assert len(system.commands) < shapes.SHARE_MIN_COMMANDS and gen.share and gen.shapes
    code, res = cli_json("check", str(CORPUS / "leader0.pml"), "--backend", "native")
    stats = res["results"][0]["stats"]
    assert code == 0 and res["verdict"] == "holds"
    assert stats["backend"] == "native" and "native_fallback" not in stats
    assert stats["states"] == _spin_states("leader0.pml") == 15779


def _spin_states(model: str) -> int:
    rows = csv.DictReader((CORPUS / "expected.csv").open())
    return next(int(r["spin_o1_states"]) for r in rows if r["file"] == model)
