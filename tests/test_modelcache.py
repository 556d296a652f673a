"""The model cache (issue 25 item 6): a model loaded before from the same bytes by the same absmc
comes back without its front end; anything else is loaded afresh."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

import absmc.lang.loader
from absmc.ir.expr import Const, Op, Var
from absmc.ir.system import System
from absmc.lang.loader import load_model
from absmc.lang.modelcache import ENV, model_cache_dir

from .conftest import ROOT

MODEL = (
    "byte x;\nactive proctype p() { do :: x < 3 -> x++ :: x == 3 -> break od; assert(x == 3) }\n"
)


def _no_front_end(*args: object, **kwargs: object) -> System:
    raise AssertionError("the front end ran")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ABSMC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(ENV, raising=False)
    return model_cache_dir()


def _entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("*.pickle")) if cache.exists() else []


def test_a_second_load_comes_from_the_cache(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tmp_path / "counter.pml"
    model.write_text(MODEL)
    first = load_model(model, reduce=True)
    assert len(_entries(cache)) == 1
    monkeypatch.setattr(absmc.lang.loader, "_load", _no_front_end)
    second = load_model(model, reduce=True)
    assert second == first and second is not first
    assert [c.label for c in second.commands] == [c.label for c in first.commands]
    assert second.commands[0].guard == first.commands[0].guard
    with pytest.raises(AssertionError, match="the front end ran"):
        load_model(model, reduce=False)  # other loader options: another entry


def test_changed_bytes_directives_and_the_switch_load_afresh(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tmp_path / "counter.pml"
    model.write_text(MODEL)
    first = load_model(model)
    model.write_text(MODEL.replace("x < 3", "x < 2"))
    changed = load_model(model)  # a miss: the bytes differ
    assert len(_entries(cache)) == 2
    assert changed != first
    monkeypatch.setenv(ENV, "0")
    monkeypatch.setattr(absmc.lang.loader, "_load", _no_front_end)
    with pytest.raises(AssertionError, match="the front end ran"):
        load_model(model)


def test_directives_and_definitions_are_keyed_by_the_preprocessed_text(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model with ``#`` directives or ``-D`` definitions comes from the cache when the
    preprocessor's output is the same: an edit of an included file, or another definition, is
    a miss; the same inputs again are a hit."""
    inc = tmp_path / "bound.h"
    inc.write_text("#define N 3\n")
    pre = tmp_path / "defined.pml"
    pre.write_text('#include "bound.h"\n' + MODEL.replace("3", "N"))
    first = load_model(pre)
    assert len(_entries(cache)) == 1 and "x < 3" in str(first.commands[0].guard)
    inc.write_text("#define N 2\n")  # the model file's bytes are unchanged
    second = load_model(pre)
    assert len(_entries(cache)) == 2 and "x < 2" in str(second.commands[0].guard)
    plain = tmp_path / "plain.pml"
    plain.write_text(MODEL.replace("3", "N"))
    defined = load_model(plain, defines={"N": "4"})
    assert len(_entries(cache)) == 3 and "x < 4" in str(defined.commands[0].guard)
    monkeypatch.setattr(absmc.lang.loader, "_load", _no_front_end)
    assert load_model(pre) == second and load_model(plain, defines={"N": "4"}) == defined
    with pytest.raises(AssertionError, match="the front end ran"):
        load_model(plain, defines={"N": "5"})


def test_model_errors_are_not_cached(cache: Path, tmp_path: Path) -> None:
    from absmc.ir.span import ModelError

    bad = tmp_path / "bad.pml"
    bad.write_text("active proctype p() { y = 1 }\n")
    for _ in range(2):
        with pytest.raises(ModelError):
            load_model(bad)
    assert _entries(cache) == []


def test_a_pickled_operator_hashes_as_a_new_one_in_another_process() -> None:
    """Op caches its hash, which is of strings (seeded per process): unpickled elsewhere it
    must equal and hash as the same expression built there."""
    expr = Op("+", (Var("x"), Const(1)))
    probe = (
        "import pickle, sys\n"
        "from absmc.ir.expr import Const, Op, Var\n"
        "e = pickle.loads(sys.stdin.buffer.read())\n"
        "fresh = Op('+', (Var('x'), Const(1)))\n"
        "print(e == fresh, hash(e) == hash(fresh), {fresh: 1}.get(e))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", probe],
        input=pickle.dumps(expr),
        capture_output=True,
        env=env,
        check=True,
    ).stdout.decode()
    assert out.split() == ["True", "True", "1"]


def test_analyses_of_a_cached_system_are_kept_only_for_that_system(
    cache: Path, tmp_path: Path
) -> None:
    """``safe_conditions`` of a System the model cache gave out is kept on disk beside it and
    read back for the same model and arguments (a planted entry comes back: it is read, not
    recomputed); a System derived from it, or other arguments, is analysed afresh."""
    from absmc.ir.dependency import safe_conditions

    model = tmp_path / "counter.pml"
    model.write_text(MODEL)
    first = load_model(model, reduce=True)
    computed = safe_conditions(first, frozenset({"x"}))
    entries = sorted(cache.glob("*.derived"))
    assert len(entries) == 1 and entries[0].name.startswith(_entries(cache)[0].stem)
    second = load_model(model, reduce=True)  # a hit: another object, the same key
    assert second is not first and safe_conditions(second, frozenset({"x"})) == computed
    entries[0].write_bytes(pickle.dumps({"planted": {}}))
    assert safe_conditions(second, frozenset({"x"})) == {"planted": {}}
    assert safe_conditions(second.with_(properties=()), frozenset({"x"})) == computed
    assert safe_conditions(second, frozenset()) != {"planted": {}}  # other arguments
    assert len(list(cache.glob("*.derived"))) == 2
