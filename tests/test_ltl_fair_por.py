"""Partial-order reduction of the LTL product search in C under weak fairness (SPIN's ``-f``;
runtime_ltl.c ``l_ample`` with the tables of native/fairpor.py, one choice per ``(s, q)`` for
every counter copy; docs/reductions.md "Weak fairness"): the same verdicts as the unreduced
fair search on generated Promela models whose processes block (guards on globals, full and
empty channels, ``xr``/``xs`` channels, rendezvous), every violation a replayed weakly fair
lasso, strictly fewer product states on some; the shared LTL corpus's fair rows (SPIN's
verdicts); SPIN's leader.pml with ``-f`` against pan's verdicts (slow)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from absmc.ir.ltl import NON_PROGRESS
from absmc.kernel.run.result import Verdict
from absmc.lang.loader import load_model
from absmc.native import native_available
from absmc.native.ltl import POR

from .conftest import SHARED, needs_shared
from .test_ltl_native import corpus_params
from .test_ltl_por import _ATOMS, _TEMPLATES, _compare, _one

CORPUS = SHARED / "benchmarks" / "ltl"

pytestmark = [
    pytest.mark.skipif(not native_available(), reason="no C compiler"),
    pytest.mark.usefixtures("native_fast_compile"),  # outcomes, not speed
]


#: options of every process type: local steps (safe locations), guards that block on the
#: globals, writes of the globals, a shared buffered channel (full and empty block)
_OPTIONS = [
    "l = (l + 1) % 3",
    "l > 0 -> l--; l = (l + 2) % 3",
    "l = 1; l = l + 1; l = 0",
    "g0 == 1 -> g0 = 0",
    "g0 = (g0 + 1) % 3",
    "g1 < 2 -> g1++",
    "g1 == 2 -> g1 = 0; l = 1",
    "c!l; l = 0",
    "c?l; l = l % 3",
    "atomic { l < 2 -> l++; l++ }; l--",
    "l = 1; atomic { l = (l + 1) % 3; g1 = l % 2 }; l = 0",
]


def fair_promela(seed: int) -> str:
    """Two or three process types (some with two instances), each a ``do`` loop over 2-4
    options of :data:`_OPTIONS`; often a consumer that claims channel ``d`` with ``xr`` (its
    receives conditionally safe, the case pan reduces and absmc's fair tables leave out) with
    producers (one of them sometimes claiming ``d`` with ``xs``), or a rendezvous channel
    ``r``; 3 next-free LTL properties over the globals and ``len(c)``, several of which hold
    only under weak fairness."""
    rng = random.Random(seed)
    lines = [
        "byte g0, g1;",
        f"chan c = [{rng.choice([1, 2])}] of {{ byte }};",
        f"chan d = [{rng.choice([1, 2])}] of {{ byte }};",
        "chan r = [0] of { byte };",
    ]
    claims = rng.random() < 0.6
    rendezvous = rng.random() < 0.3
    for k in range(rng.choice([2, 3])):
        opts = rng.sample(_OPTIONS, rng.randint(2, 4))
        decl = ""
        n = rng.choice(["", "", " [2]"])
        if claims and k == 0:  # the consumer of d (one instance: an xr claim is per process)
            # its loop's head receives only (a conditionally safe location), its later ones
            # are local or write the globals
            opts = ["d?l; l = l % 3", "d?l; g0 = 1", "d?l; g1 = (g1 + 1) % 3; l = 0"]
            opts = rng.sample(opts, rng.randint(1, 3))
            decl, n = "xr d; ", ""
        elif claims and k == 1:
            opts.append("l = 1; d!1; l = 2")
            if n == "" and rng.random() < 0.5:
                decl = "xs d; "
        if rendezvous and k == 0:
            opts.append("r!1")
        elif rendezvous and k == 1:
            opts.append("r?l -> g1 = 1")
        body = " ".join(f":: {o}" for o in opts)
        lines.append(f"active{n} proctype P{k}() {{ byte l; {decl}do {body} od }}")
    for m in range(3):
        a, b = rng.sample(_ATOMS, 2)
        lines.append(f"ltl f{m} {{ {rng.choice(_TEMPLATES).format(a=a, b=b)} }}")
    return "\n".join(lines) + "\n"


def _differential(tmp: Path, seeds: range) -> tuple[int, int, int]:
    """Returns (properties compared, violated ones, ones with strictly fewer states)."""
    compared = violated = fewer = 0
    for seed in seeds:
        path = tmp / f"f{seed}.pml"
        path.write_text(fair_promela(seed))
        for name in ("f0", "f1", "f2"):
            red, full = _compare(path, name, "native", fairness="weak")
            compared += 1
            violated += red.verdict is Verdict.VIOLATED
            if red.verdict is Verdict.HOLDS and red.stats.states < full.stats.states:
                assert POR in red.stats.extra["reductions"]
                assert red.stats.extra["reduced_states"] > 0
                fewer += 1
    return compared, violated, fewer


def test_generated_models_same_fair_verdicts(tmp_path: Path) -> None:
    compared, violated, fewer = _differential(tmp_path, range(0, 5))
    print(f"fair LTL POR differential: {compared} properties, {violated} violated, {fewer} fewer")
    assert compared == 15 and violated >= 2 and fewer >= 1


@pytest.mark.slow
def test_generated_models_same_fair_verdicts_many(tmp_path: Path) -> None:
    compared, violated, fewer = _differential(tmp_path, range(5, 215))
    print(f"fair LTL POR differential: {compared} properties, {violated} violated, {fewer} fewer")
    assert compared == 630 and violated >= 100 and fewer >= 50


_CHEAP = {"ltl_always_eventually.pml", "ltl_example.pml", "zune.pml", "diskhead.pml"}


@needs_shared
@pytest.mark.parametrize(
    "row", [p for p in corpus_params(_CHEAP) if str(getattr(p, "id", "")).endswith("-fair")]
)
def test_corpus_fair_verdicts_reduced_equal_spin(row: dict[str, str]) -> None:
    system = load_model(CORPUS / row["file"])
    name = row["ltl"] or next(p.name for p in system.ltl if p.name != NON_PROGRESS)
    red, _ = _compare(CORPUS / row["file"], name, "native", fairness="weak")
    assert red.verdict.value == row["verdict"]


#: SPIN's leader.pml (Examples/LTL, 5 nodes) with -f: pan's verdicts (SPIN 6.5.2, its default
#: build: `spin -a`, `gcc -O2 -DNFAIR=8`, `pan -a -f -N NAME`; all hold, 27 Nov 2026)
_LEADER_PAN = {"p0": "holds", "p1": "holds", "p2": "holds", "p3": "holds"}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(_LEADER_PAN))
def test_spin_leader_fair_reduced_equals_pan(name: str, tmp_path: Path) -> None:
    """leader.pml ``-N NAME --fairness weak`` reduced in C: pan's verdict, a reduced search
    (unreduced: 11.8 million fair product states for p0, no verdict in 900 s for p1/p2)."""
    source = _spin_example("leader.pml")
    if source is None:
        pytest.skip("no SPIN mirror")
    path = tmp_path / "leader.pml"
    path.write_text(source)
    red = _one(path, name, True, "native", fairness="weak")
    assert red.verdict.value == _LEADER_PAN[name]
    assert POR in red.stats.extra["reductions"] and red.stats.extra["reduced_states"] > 0


def _spin_example(name: str) -> str | None:
    """Examples/LTL/NAME from the local git mirror of nimble-code/Spin (None: no mirror)."""
    import subprocess

    git = Path("/work/.mirror/nimble-code+Spin/repo")
    if not git.is_dir():
        return None
    out = subprocess.run(
        ["git", f"--git-dir={git}", "show", f"HEAD:Examples/LTL/{name}"],
        capture_output=True,
        text=True,
    )
    return out.stdout if out.returncode == 0 else None


#: a consumer T claims d with ``xr``: its receive is conditionally safe (d non-empty) and
#: makes room for a sender blocked on a full d. A weakly fair run where P stays blocked at
#: ``d!1`` (d kept full by R) and g == 1 only finitely often exists; a reduced search that
#: took T's receives as ample sets drains d at once and never sees P blocked (SPIN 6.5.2's
#: ``pan -a -f`` with its default reduction answers "no errors" here, with -DNOREDUCE it finds
#: the acceptance cycle)
_XR_DRAIN = """
chan d = [2] of { byte };
byte g;
active proctype P() { do :: d!1; g = 1; g = 0 od }
active proctype R() { do :: d!2 od }
active proctype T() { xr d; byte x; do :: d?x; x = 0; x = 1 od }
ltl p { []<> (g == 1) }
"""


def test_receives_that_unblock_a_sender_are_not_ample_under_fairness(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from absmc.ir.dependency import safe_conditions
    from absmc.native import cgen
    from absmc.native.fairpor import fair_safe_conditions

    path = tmp_path / "drain.pml"
    path.write_text(_XR_DRAIN)
    system = load_model(path)
    safe = safe_conditions(system, frozenset({"g"}))
    fair = fair_safe_conditions(system, safe)
    # T's receive location (its only one: the local steps merge into the receive) is
    # conditionally safe, but not under weak fairness
    assert [n for n in safe if n.startswith("T")] and not fair
    red, full = _compare(path, "p", "native", fairness="weak")
    assert full.verdict is Verdict.VIOLATED and red.verdict is Verdict.VIOLATED
    # the same search with every safe location (pan's choice) misses the weakly fair cycle
    monkeypatch.setattr(cgen, "fair_safe_conditions", lambda s, c: c)
    wrong = _one(path, "p", True, "native", fairness="weak")
    assert wrong.verdict is Verdict.HOLDS
