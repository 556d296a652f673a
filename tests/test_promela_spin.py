"""Promela semantics checked against SPIN itself (skipped when spin or gcc is missing).

* the control-flow automata absmc builds are SPIN's (``pan -d``), for the corpus and for the
  feature models in tests/promela_models (with their counts, from the same ``pan``);
* each feature model has SPIN's number of reachable states and transitions (``spin -o1``,
  ``-DNOREDUCE``) and is violated exactly when SPIN counts errors (the ``else_*`` models: an
  ``else`` runs when no transition before it in pan's list for its state moved);
* two ``else`` at one state are refused, as pan refuses them;
* ``-D NAME=VALUE`` reaches the preprocessor as with ``spin -D``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from absmc.codegen.python import compile_system
from absmc.kernel.explore.search import search
from absmc.lang.promela import load_promela
from absmc.lang.promela.fsm import ATOM, D_ATOM, L_ATOM, _tag_order
from absmc.lang.promela.lower import Lowerer
from absmc.lang.promela.parser import parse_promela_file

from .conftest import SHARED, run_cli
from .spin import require_spin, run_spin

MODELS = Path(__file__).resolve().parent / "promela_models"
FEATURES = sorted(MODELS.glob("*.pml"))
#: the corpus models (by suffix: a trail written beside a model, m.pml.trail.json, is none)
CORPUS = sorted(
    p for p in (SHARED / "benchmarks" / "promela").glob("*") if p.suffix in (".pml", ".pm", ".sumo")
)
#: SPIN goes on after an out-of-bounds write (it writes beside the array); absmc stops there
VERDICT_ONLY = {"oob"}


def _ours(path: Path) -> dict[str, list[tuple[int, int, str]]]:
    low = Lowerer(parse_promela_file(path), path.stem)
    low.global_decls()
    low.proc_types()
    out: dict[str, list[tuple[int, int, str]]] = {}
    for name, pt in low.ptypes.items():
        rows = []
        for s in _tag_order(pt.fsm):
            for t in pt.fsm.trans.get(s, []):
                # pan -d marks ATOM and L_ATOM alike ('A'); only ATOM keeps control
                kind = "A" if t.atom & (ATOM | L_ATOM) else ("D" if t.atom & D_ATOM else "-")
                rows.append((s, t.target, kind))
        out["init" if name == ":init:" else name] = sorted(rows)
    return out


def _spins(path: Path, tmp: Path) -> dict[str, list[tuple[int, int, str]]]:
    require_spin()
    shutil.copy(path, tmp / "m.pml")
    subprocess.run(["spin", "-o1", "-a", "m.pml"], cwd=tmp, check=True, capture_output=True)
    subprocess.run(
        ["gcc", "-O0", "-DNOREDUCE", "-DNOCLAIM", "-DSAFETY", "-o", "pan", "pan.c"],
        cwd=tmp,
        check=True,
        capture_output=True,
    )
    return _pan_automata(tmp)


def _pan_automata(tmp: Path) -> dict[str, list[tuple[int, int, str]]]:
    """The automata of the ``pan`` compiled in ``tmp`` (``pan -d``), by proctype."""
    out = subprocess.run(["./pan", "-d"], cwd=tmp, capture_output=True, text=True).stdout
    res: dict[str, list[tuple[int, int, str]]] = {}
    cur = ""
    pat = re.compile(r"\s+state\s+(\d+) -\(tr\s+\d+\)-> state\s+(\d+)\s+\[id[^\]]*\] \[(.)")
    for line in out.splitlines():
        if line.startswith("proctype "):
            cur = line.split()[1]
            res[cur] = []
        elif line.startswith("init"):
            cur = "init"
            res[cur] = []
        m = pat.match(line)
        if m and cur:
            kind = m.group(3) if m.group(3) in "AD" else "-"
            res[cur].append((int(m.group(1)), int(m.group(2)), kind))
    return {k: sorted(v) for k, v in res.items()}


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_automata_are_spins(path: Path, tmp_path: Path) -> None:
    assert _ours(path) == _spins(path, tmp_path)


@pytest.mark.parametrize("path", FEATURES, ids=lambda p: p.stem)
def test_feature_model_matches_spin(path: Path, tmp_path: Path) -> None:
    """The feature model's automata are SPIN's, and so are its counts and verdict (one
    ``spin -o1 -a`` and one compilation of pan for both)."""
    spin = run_spin(path, tmp_path)
    assert _ours(path) == _pan_automata(tmp_path)
    system = load_promela(path)
    ours = search(compile_system(system), keep_going=True)
    assert bool(ours.violations) == (spin.errors > 0), list(ours.violations)
    if path.stem not in VERDICT_ONLY:
        assert ours.states == spin.states
        # pan counts stored + matched states: every transition, plus the initial state
        assert ours.transitions + 1 == spin.transitions


def test_two_else_at_one_state_are_refused_as_by_pan(tmp_path: Path) -> None:
    model = tmp_path / "m.pml"
    model.write_text(
        "byte x;\n"
        "active proctype P() {\n"
        "  if\n"
        "  :: if\n"
        "     :: x == 0 -> x++\n"
        "     :: else -> skip\n"
        "     fi\n"
        "  :: else -> x = 2\n"
        "  fi\n"
        "}\n"
    )
    r = run_cli("check", str(model))
    assert r.code == 2
    assert f"{model}:8:6: error: proctype 'P' state" in r.err
    assert "inherits 2 'else' statements" in r.err


def test_defines_reach_the_preprocessor(tmp_path: Path) -> None:
    model = SHARED / "benchmarks" / "scaling" / "bakery2.pml"
    if not model.exists():
        pytest.skip("../shared/benchmarks/scaling is not available")
    require_spin()
    spin = run_spin(model, tmp_path, defines=("N=5",))
    r = run_cli("check", str(model), "-D", "N=5", "--keep-going", "--no-reduce", "--json")
    assert r.code == 0, r.err
    assert f'"states": {spin.states}' in r.out
    r2 = run_cli("check", str(model), "-D", "N=6", "--json")
    assert f'"states": {spin.states}' not in r2.out
