"""Array reads with a computed index (``select``) and indexed stores in the generated code.

The generated code reads ``select`` over state variables as one indexed load, keeps a lazy case
split when an element may divide by zero, and turns per-element writes ``ite(i == k, v, a_k)``
into indexed stores (:mod:`absmc.ir.arrays`); all of them agree with the reference evaluator
and with the case split the abstraction engines see (``expand_system``), on random systems
whose indices run out of range. The Promela front end uses them for computed indices (loading
stays small) with the same bounds errors as before.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import z3

from absmc.codegen.python import compile_system
from absmc.engines import registry
from absmc.ir.arrays import (
    array_writes,
    expand_selects,
    expand_system,
    select_chain,
    system_has_select,
)
from absmc.ir.evaluate import evaluate
from absmc.ir.expr import Const, Expr, Op, Var
from absmc.ir.simplify import simplify
from absmc.ir.sorts import RangeSort
from absmc.ir.system import Command, Process, System, Variable, make_system
from absmc.kernel.run.options import CheckOptions
from absmc.lang.promela import load_promela
from absmc.lang.promela.lower import lower_model
from absmc.lang.promela.parser import parse_promela
from absmc.logic.z3conv import Z3Translator

from .test_compile import _agree

ROOT = Path(__file__).resolve().parent.parent
ELEM = RangeSort(0, 7, "wrap")
INDEX = RangeSort(-1, 6, "wrap")  # -1 and 6 are out of range of the 6-element arrays


def _select(i: Expr, elems: list[Expr]) -> Expr:
    return Op("select", (i, *elems))


def _random_system(rng: random.Random, stride: int, elem: RangeSort = ELEM) -> System:
    """Two 6-element arrays ``a`` (contiguous, or interleaved with ``b`` at ``stride`` 2) of
    ``elem`` values, indices ``i j`` that leave the range, writes of one or two layers, reads
    in guards and values, elements that divide by ``j``."""
    names_a = [f"a{k}" for k in range(6)]
    names_b = [f"b{k}" for k in range(6)]
    order = (
        [*names_a, *names_b]
        if stride == 1
        else [x for pair in zip(names_a, names_b, strict=True) for x in pair]
    )
    variables = [Variable(n, elem, rng.randrange(8)) for n in order]
    variables += [Variable("i", INDEX, 0), Variable("j", INDEX, 1)]
    a = [Var(n, elem) for n in names_a]
    b = [Var(n, elem) for n in names_b]
    i, j = Var("i", INDEX), Var("j", INDEX)

    def value() -> Expr:
        choice = rng.randrange(4)
        if choice == 0:
            return Op("+", (_select(i, a), Const(rng.randrange(1, 4))))
        if choice == 1:
            return Op("+", (_select(j, b), _select(i, a)))
        if choice == 2:  # an element that may divide by zero: the lazy form
            elems: list[Expr] = list(a)
            elems[rng.randrange(6)] = Op("/", (Const(6), j))
            return _select(i, elems)
        return Const(rng.randrange(8))

    def write(arr: list[Var], idx: Expr, v: Expr, old: list[Expr]) -> list[Expr]:
        return [Op("ite", (Op("==", (idx, Const(k))), v, old[k])) for k in range(6)]

    commands = []
    for _ in range(4):
        guard = Op(
            "<", (_select(rng.choice([i, j]), rng.choice([a, b])), Const(rng.randrange(3, 8)))
        )
        arr = rng.choice([a, b])
        news = write(arr, rng.choice([i, j]), value(), list(arr))
        if rng.random() < 0.5:  # a second write on top of the first one (d_step order)
            news = write(arr, rng.choice([i, j]), value(), news)
        updates = [(x.name, e) for x, e in zip(arr, news, strict=True)]
        step = rng.choice([i, j])
        updates.append((step.name, Op("+", (step, Const(rng.choice([1, 2, 3]))))))
        commands.append(Command("P", guard, tuple(updates)))
    return make_system(variables, [Process("P")], commands)


@pytest.mark.parametrize("seed", range(12))
def test_select_and_indexed_stores_agree_with_reference_and_case_split(seed: int) -> None:
    rng = random.Random(seed)
    system = _random_system(rng, stride=1 + seed % 2)
    _agree(system, limit=300)
    compiled = compile_system(system)
    expanded = expand_system(system)
    assert not system_has_select(expanded) and system_has_select(system)
    plain = compile_system(expanded)
    frontier = [system.initial_state()]
    seen = set(frontier)
    while frontier and len(seen) < 300:
        s = frontier.pop()
        got = compiled.successors(s)
        assert got == plain.successors(s)
        for _, t in got[0]:
            if t not in seen:
                seen.add(t)
                frontier.append(t)


def test_select_value_out_of_range_is_the_last_element_everywhere() -> None:
    x, y, z = Var("x", ELEM), Var("y", ELEM), Var("z", ELEM)
    i = Var("i", RangeSort(-5, 5))
    e = _select(i, [x, y, z])
    env = {"x": 3, "y": 4, "z": 5}
    tr = Z3Translator()
    solver = z3.Solver()
    for k in range(-5, 6):
        want = {0: 3, 1: 4}.get(k, 5)
        assert evaluate(e, {**env, "i": k}) == want
        assert evaluate(select_chain(i, [x, y, z]), {**env, "i": k}) == want
        assert simplify(_select(Const(k), [x, y, z])) == {0: x, 1: y}.get(k, z)
        solver.push()
        solver.add(tr(i) == k, tr(x) == 3, tr(y) == 4, tr(z) == 5, tr(e) != want)
        assert solver.check() == z3.unsat
        solver.pop()
    assert expand_selects(Op("+", (e, Const(1)))) == Op("+", (select_chain(i, [x, y, z]), Const(1)))


def test_array_writes_recognizes_stacked_writes_and_keeps_the_rest() -> None:
    a = [Var(f"a{k}", ELEM) for k in range(5)]
    i, j = Var("i", INDEX), Var("j", INDEX)
    inner = [Op("ite", (Op("==", (i, Const(k))), Const(1), a[k])) for k in range(5)]
    outer = [Op("ite", (Op("==", (j, Const(k))), Const(2), inner[k])) for k in range(5)]
    updates = [*((f"a{k}", outer[k]) for k in range(5)), ("i", Const(0))]
    index_of = {f"a{k}": 3 + k for k in range(5)} | {"i": 0, "j": 1}
    plain, stacks = array_writes(updates, index_of)
    assert plain == [("i", Const(0))]
    (stack,) = stacks
    assert [(w.index, w.value, w.base, w.stride, w.length) for w in stack] == [
        (i, Const(1), 3, 1, 5),
        (j, Const(2), 3, 1, 5),
    ]
    assert stack[0].rests == tuple(a)


def _load(text: str) -> System:
    return lower_model(parse_promela(text, "m.pml"), "m")


def test_promela_computed_index_reads_are_one_select_with_the_bounds_error() -> None:
    system = _load("byte a[4]; byte i; active proctype P() { do :: i < 9 -> i = a[i] + i + 1 od }")
    c = next(c for c in system.commands if c.source_text == "i = a[i] + i + 1")
    a = [Var(f"a[{k}]", RangeSort(0, 255, "wrap")) for k in range(4)]
    assert dict(c.updates)["i"] == Op(
        "+", (Op("+", (_select(Var("i", a[0].var_sort), a), Var("i", a[0].var_sort))), Const(1))
    )
    assert [m for _, m in c.errors] == ["array index out of bounds of 'a' (size 4)"]
    res = registry.run("explicit", system, CheckOptions())
    (r,) = [r for r in res.results if r.property == "no-model-error"]
    assert r.verdict.value == "violated"
    assert r.trace is not None and r.trace.replayed
    assert r.trace.note is not None and "array index out of bounds of 'a'" in r.trace.note


def test_read_after_write_in_a_d_step_stays_small() -> None:
    # four computed-index accesses of a 64-byte array in one d_step: with a case split per
    # element the generated code was 52 MB (98 s to compile); now a few kB
    system = load_promela(ROOT / "benchmarks" / "models" / "array_dstep64.pml")
    compiled = compile_system(system)
    assert len(compiled.source) < 40_000
    # indexed reads of the state and indexed stores into the new state
    assert "(s[" in compiled.source and "_l[" in compiled.source
    res = registry.run("explicit", system, CheckOptions(keep_going=True))
    assert res.results[0].stats.states == 5700  # SPIN 6.5.2: spin -o1, -DNOREDUCE
    assert res.verdict.value == "holds"


def test_abstraction_engines_get_the_case_split() -> None:
    system = _load(
        "byte a[3]; byte i; active proctype P() { do :: i < 2 -> a[i] = a[i] + 1; i++ od }"
    )
    assert system_has_select(system)
    four = registry.run("fourvalued", system, CheckOptions(keep_going=True))
    exact = registry.run("explicit", system, CheckOptions(keep_going=True))
    assert [(r.property, r.verdict) for r in four.results] == [
        (r.property, r.verdict) for r in exact.results
    ]
    assert four.verdict.value == "violated"  # a[i] + 1 never overflows, but P ends: deadlock


@pytest.mark.parametrize("seed", range(6))
def test_the_native_back_end_selects_as_the_python_one(seed: int) -> None:
    """`select` and indexed stores in generated C: element i, the last one out of range,
    failures of the chosen element only, stores only in range, values wrapped (or, with
    elements whose overflow is an error, the per-element form and its range errors) — the
    same successors and failures as the generated Python."""
    from absmc.native import NativeSemantics, native_available

    if not native_available():
        pytest.skip("no C compiler: no native back end")
    elem = ELEM if seed < 3 else RangeSort(0, 7, "error")
    system = _random_system(random.Random(100 + seed), stride=1 + seed % 2, elem=elem)
    compiled = compile_system(system)
    native = NativeSemantics(system, (), opt="-O0")
    frontier = [system.initial_state()]
    seen = set(frontier)
    while frontier and len(seen) < 200:
        s = frontier.pop()
        got = native.successors(s)
        assert got == compiled.successors(s)
        for _, t in got[0]:
            if t not in seen:
                seen.add(t)
                frontier.append(t)


def test_the_generated_c_stores_at_a_computed_index_instead_of_testing_every_element() -> None:
    """A write ``a[i] = a[j] + 1`` to a 64-element array is one indexed load and one indexed
    store in the C source (no case per element): its code is no longer than for 8 elements
    by more than the declarations of the extra variables."""
    from absmc.native.build import runtime_sources
    from absmc.native.cgen import CGen

    def source(n: int) -> str:
        sort = RangeSort(0, 255, "wrap")
        idx = RangeSort(0, n - 1, "wrap")
        a = [Var(f"a{k}", sort) for k in range(n)]
        i, j = Var("i", idx), Var("j", idx)
        value = Op("+", (_select(j, list(a)), Const(1)))
        news = [Op("ite", (Op("==", (i, Const(k))), value, a[k])) for k in range(n)]
        updates = [(x.name, e) for x, e in zip(a, news, strict=True)]
        updates.append(("i", Op("+", (i, Const(1)))))
        variables = [Variable(x.name, sort, 0) for x in a]
        variables += [Variable("i", idx, 0), Variable("j", idx, 1)]
        system = make_system(variables, [Process("P")], [Command("P", Const(1), tuple(updates))])
        head, tail = runtime_sources()
        return CGen(system, ()).source(head, tail)

    small, large = source(8), source(64)
    assert "t[_w" in large and "v[_si" in large  # the indexed store and load
    assert "== 63" not in large  # no element is tested by number
    assert len(large) - len(small) < 56 * 200
