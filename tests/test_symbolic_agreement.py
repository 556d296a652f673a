"""Finite agreement (issue 11): on generated finite GCL systems with random CTL formulas, the
symbolic method never contradicts explicit CTL labelling (``unknown`` is allowed; the count is
printed). 12 systems in CI, 258 more behind ``-m slow``."""

from __future__ import annotations

import random
from collections.abc import Iterable

import pytest

from absmc.engines import registry
from absmc.kernel.run.options import CheckOptions, Limits
from absmc.kernel.run.result import Verdict
from absmc.lang.gcl.parser import parse_gcl
from tests.conftest import SHARED, needs_shared

ATOMS_VARS = ("r", "s", "x")


def _linear(rng: random.Random, names: list[str]) -> str:
    v = rng.choice(names)
    k = rng.randint(-1, 2)
    form = rng.randrange(4)
    if form == 0:
        return f"{v} + {k}"
    if form == 1:
        return f"{v} - {rng.choice(names)}"
    if form == 2:
        return f"2 * {v} - {k}" if k >= 0 else f"{v} / 2"
    return str(rng.randint(0, 3))


def _atom(rng: random.Random, names: list[str]) -> str:
    if rng.random() < 0.2:
        return rng.choice(["f", "!f"])
    op = rng.choice(["<", "<=", "==", "!=", ">", ">="])
    return f"{rng.choice(names)} {op} {_linear(rng, names)}"


def _state(rng: random.Random, names: list[str], depth: int) -> str:
    if depth <= 0 or rng.random() < 0.5:
        return _atom(rng, names)
    a, b = _state(rng, names, depth - 1), _state(rng, names, depth - 1)
    return f"({a} {rng.choice(['&&', '||', '=>'])} {b})"


def _ctl(rng: random.Random, names: list[str], depth: int) -> str:
    if depth <= 0 or rng.random() < 0.25:
        return f"({_state(rng, names, 1)})"
    k = rng.randrange(10)
    a = _ctl(rng, names, depth - 1)
    if k < 6:
        return f"{rng.choice(['AG', 'AF', 'AX', 'EG', 'EF', 'EX'])}({a})"
    b = _ctl(rng, names, depth - 1)
    if k < 8:
        return f"{rng.choice('AE')}[{a} U {b}]"
    if k == 8:
        return f"!({a})"
    return f"({a} {rng.choice(['&&', '||', '=>'])} {b})"


def random_processes(rng: random.Random, r_updates: list[str]) -> list[str]:
    """1-2 GCL processes of 2-4 commands over ``r, s : 0..3``, ``f : bool`` and ``x : int``
    (kept in -2..3 by the guards); ``r`` is assigned one of ``r_updates``."""
    names = list(ATOMS_VARS)
    lines = []
    for p in range(rng.randint(1, 2)):
        cmds = []
        for _ in range(rng.randint(2, 4)):
            guard = _state(rng, names, 1)
            upd = []
            kind = rng.randrange(5)
            if kind == 0:
                upd.append("x := x + 1")
                guard = f"x < 3 && {guard}"
            elif kind == 1:
                upd.append("x := x - 1")
                guard = f"x > -2 && {guard}"
            elif kind == 2:
                upd.append(f"r := {rng.choice(r_updates)}")
            elif kind == 3:
                upd.append(f"s := {rng.choice(['r', '(s + 1) % 4', '0'])}")
            if rng.random() < 0.4:
                upd.append(f"f := {rng.choice(['!f', 'r < s', 'true'])}")
            cmds.append(f"  {guard} -> {', '.join(upd) if upd else 'skip'};")
        lines.append(f"process P{p} {{\n" + "\n".join(cmds) + "\n}")
    return lines


def random_system(seed: int) -> str:
    """A finite GCL system: ``r, s : 0..3``, ``f : bool`` and ``x : int`` kept in -2..3 by its
    guards; 1-2 processes with 2-4 commands; an ``init:`` constraint sometimes; 3 CTL
    properties."""
    rng = random.Random(seed)
    names = list(ATOMS_VARS)
    lines = ["var r, s : 0..3;", "var f : bool;", "var x : int;"]
    if rng.random() < 0.4:
        lines.append(f"init: x >= {rng.randint(-2, 0)} && x <= {rng.randint(0, 2)} && r != 1;")
    lines += random_processes(rng, ["s", "r + 1", "3 - r", "x"])
    for k in range(3):
        lines.append(f"ctl c{k}: {_ctl(rng, names, 3)};")
    return "\n".join(lines) + "\n"


def _verdicts(method: str, text: str) -> dict[str, Verdict]:
    system = parse_gcl(text, "gen.gcl")
    names = [p.name for p in system.ctl]
    opts = CheckOptions(properties=names, limits=Limits(timeout=60))
    res = registry.run(method, system, opts)
    return {r.property: r.verdict for r in res.results}


def _agree(seeds: Iterable[int]) -> tuple[int, int]:
    unknown = total = 0
    for seed in seeds:
        text = random_system(seed)
        exact = _verdicts("explicit", text)
        sym = _verdicts("symbolic", text)
        for name, v in sym.items():
            total += 1
            assert exact[name] is not Verdict.UNKNOWN, (seed, name)
            if v is Verdict.UNKNOWN:
                unknown += 1
                continue
            assert v is exact[name], (seed, name, text)
    return unknown, total


def test_symbolic_agrees_with_explicit_ctl_on_generated_systems() -> None:
    unknown, total = _agree(range(12))
    print(f"symbolic vs explicit CTL: {total} formulas, {unknown} unknown, 0 contradictions")
    assert total == 48  # 3 ctl properties and no-model-error per system
    assert unknown < total // 2


@pytest.mark.slow
def test_symbolic_agrees_with_explicit_ctl_many() -> None:
    unknown, total = _agree([*range(12, 30), *range(1000, 1240)])
    print(f"symbolic vs explicit CTL: {total} formulas, {unknown} unknown, 0 contradictions")
    assert total == 1032


@needs_shared
def test_safety_verdicts_agree_on_the_promela_corpus_models_it_reads() -> None:
    """A 3 s limit per model in CI (the symbolic search of loops.pml runs into it, unknown
    at any limit CI can afford: its time is what the limit allows); 60 s under ``-m slow``."""
    _corpus_agreement(3)


@pytest.mark.slow
@needs_shared
def test_safety_verdicts_agree_on_the_promela_corpus_models_it_reads_60s() -> None:
    _corpus_agreement(60)


def _corpus_agreement(timeout: float) -> None:
    from absmc.errors import CapabilityError
    from absmc.lang.loader import load_model

    read = 0
    for path in sorted((SHARED / "benchmarks" / "promela").glob("*.pml")):
        system = load_model(path)
        try:
            sym = registry.run("symbolic", system, CheckOptions(limits=Limits(timeout=timeout)))
        except CapabilityError:
            continue  # atomic sequences, assertions, channels' error conditions, bit operators
        read += 1
        exact = registry.run("explicit", system, CheckOptions(limits=Limits(timeout=60)))
        want = {r.property: r.verdict for r in exact.results}
        for r in sym.results:
            assert r.verdict in (want[r.property], Verdict.UNKNOWN), (path.name, r.property)
    print(f"symbolic read {read} corpus models")
    assert read >= 1
