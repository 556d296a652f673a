"""Weak fairness (SPIN's ``-f``) against pan: the product of SPIN's counter rules
(:mod:`absmc.kernel.ltl.fairness`) stores the states pan's first search stores, and the
verdicts are pan's. pan prints "states, stored" per product state ``(s, q)`` (its copies are
bits of one entry), so the count compared is pan's first-search ``(s, q, counter)`` states:
``pan.c`` is patched to count the new states stored outside the nested search."""

from __future__ import annotations

import functools
import re
import subprocess
from pathlib import Path

import pytest

from absmc.codegen.python import compile_system
from absmc.engines import registry
from absmc.engines.explicit.check import check_explicit
from absmc.ir.ltl import NON_PROGRESS
from absmc.kernel.ltl import irproduct, ltl
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import PropertyResult, Verdict
from absmc.lang.loader import load_model
from absmc.native import native_available
from absmc.native.build import OPT_ENV

from .spin import require_spin

#: three processes pass a token around, created by ``init`` in one atomic step (so the counter
#: starts at the highest live process), beside one that toggles ``x`` forever: the token
#: goes round only when the ring's processes must move, under weak fairness
_TOKEN = """
byte tok;
byte x;
proctype node(byte id) {
	do
	:: tok == id -> tok = (id + 1) % 3
	od
}
BUSY_DECL proctype busy() {
	do
	:: x = 1 - x
	od
}
init {
	atomic { run node(0); run node(1); run node(2)BUSY_RUN }
}
ltl round { [] <> (tok == 0) }
ltl pass { [] (tok == 1 -> <> (tok == 2)) }
ltl toggles { [] <> (x == 1) }
"""

#: ``busy`` first (pid 0) or last (the highest pid: the processes it waits behind are blocked)
MODELS = {
    "busy-first": _TOKEN.replace("BUSY_DECL", "active").replace("BUSY_RUN", ""),
    "busy-last": _TOKEN.replace("BUSY_DECL ", "").replace("BUSY_RUN", "; run busy()"),
}

#: the anchor in pan.c where a new state is counted (``nstates++`` of a state that was not
#: stored before, in either search), and what counts the first search's alone
_ANCHOR = re.compile(
    r"(if \(!kk\)\s*\{\s*static long sdone = \(long\) 0; long ndone;\s*nstates\+\+;)"
)
_COUNT = " if (!(now._a_t&1)) first_dfs_states++;"


def _build_pan(model: Path, workdir: Path) -> None:
    """``spin -a``, ``pan.c`` patched to print its first search's states, ``gcc -DNOREDUCE``."""
    require_spin()
    subprocess.run(["spin", "-a", str(model)], cwd=workdir, check=True, capture_output=True)
    pan_c = workdir / "pan.c"
    src = pan_c.read_text()
    if not _ANCHOR.search(src):
        pytest.skip("this SPIN's pan.c counts new states elsewhere")
    src = "double first_dfs_states;\n" + _ANCHOR.sub(lambda m: m.group(1) + _COUNT, src, 1)
    src = re.sub(
        r"(wrap_stats\(void\)\s*\{)",
        r'\1 printf("first-dfs %.0f\\n", first_dfs_states);',
        src,
        count=1,
    )
    pan_c.write_text(src)
    subprocess.run(
        ["gcc", "-O0", "-DNOREDUCE", "-DNFAIR=8", "-o", "pan", "pan.c"],
        cwd=workdir,
        check=True,
        capture_output=True,
    )


def _pan_first_search(workdir: Path, name: str, fair: bool) -> tuple[int, int]:
    """``(errors, states of the first search)`` of ``pan -a [-f] -N NAME``."""
    out = subprocess.run(
        ["./pan", "-a", *(["-f"] if fair else []), "-N", name, "-m100000", "-w16"],
        cwd=workdir,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    errors = int(re.search(r"errors: (\d+)", out).group(1))  # type: ignore[union-attr]
    first = int(re.search(r"first-dfs (\d+)", out).group(1))  # type: ignore[union-attr]
    return errors, first


def _absmc(model: Path, name: str, fair: bool) -> PropertyResult:
    system = load_model(model)
    opts = CheckOptions(ltl=name, fairness="weak" if fair else "none")
    return next(r for r in registry.run("explicit", system, opts).results if r.property == name)


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_fair_product_stores_pans_first_search_states(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tmp_path / "token.pml"
    model.write_text(MODELS[kind])
    names = [p.name for p in load_model(model).ltl if p.name != NON_PROGRESS]
    assert names == ["round", "pass", "toggles"]
    _build_pan(model, tmp_path)
    for name in names:
        errors, pan_states = _pan_first_search(tmp_path, name, fair=True)
        plain_errors, _ = _pan_first_search(tmp_path, name, fair=False)
        mine = _absmc(model, name, fair=True)
        plain = _absmc(model, name, fair=False)
        # the ring moves only under weak fairness: each property holds with it, not without
        assert (name, errors, plain_errors) == (name, 0, 1)
        assert (name, mine.verdict, plain.verdict) == (name, Verdict.HOLDS, Verdict.VIOLATED)
        assert (name, mine.stats.states) == (name, pan_states)
        # with pan's redundant steps after a blocked process, the same states here
        monkeypatch.setattr(
            ltl, "fair_product", functools.partial(irproduct.fair_product, spin_restart=True)
        )
        assert _absmc(model, name, fair=True).stats.states == pan_states
        monkeypatch.undo()


def test_counter_waits_only_for_live_processes(tmp_path: Path) -> None:
    """Before ``init`` runs the ring only ``init`` exists (pid 0 of 5 processes): an accepting
    state there starts the counter at ``init``, not at a ring process that has not started."""
    model = tmp_path / "token.pml"
    model.write_text(MODELS["busy-last"])
    system = load_model(model)
    sem = compile_system(system)
    prop = next(p for p in system.ltl if p.name == "toggles")
    fair = irproduct.fair_product(irproduct.product_of(sem, ltl.automaton_of(prop)), sem)
    assert fair.k == 5 and fair.live is not None
    assert fair.live(sem.initial) == 1
    succ, _ = fair.successors(fair.initial)
    # ! [] <> (x == 1) is accepted at once (x is 0): the counter waits for init alone, and
    # init's atomic step ends the round (seed copy k + 1); the other claim move leaves it idle
    assert {t[-1] for _, t in succ} == {0, fair.k + 1}


@pytest.mark.skipif(not native_available(), reason="no C compiler")
@pytest.mark.parametrize("kind", sorted(MODELS))
def test_fair_counter_in_c_equals_python(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The C search (runtime_ltl.c, l_fair_start / l_fair_pass) stores the Python product's
    states on every block, and its lasso of a violated block replays as weakly fair."""
    monkeypatch.setenv(OPT_ENV, "-O0")
    model = tmp_path / "token.pml"
    model.write_text(MODELS[kind] + "ltl reaches2 { <> (x == 2) }\n")
    system = load_model(model)
    for name in ("round", "pass", "toggles", "reaches2"):
        opts = CheckOptions(ltl=name, fairness="weak")
        py = next(r for r in check_explicit(system, opts, "python").results if r.property == name)
        c = next(r for r in check_explicit(system, opts, "native").results if r.property == name)
        assert c.stats.extra["backend"] == "native"
        assert (name, c.verdict, c.stats.states) == (name, py.verdict, py.stats.states)
        expected = Verdict.VIOLATED if name == "reaches2" else Verdict.HOLDS
        assert (name, c.verdict) == (name, expected)
        if c.verdict is Verdict.VIOLATED:
            assert c.trace is not None and c.trace.replayed and c.trace.cycle_start is not None
