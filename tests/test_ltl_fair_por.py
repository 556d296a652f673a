"""Partial-order reduction of the LTL product search in C under weak fairness (SPIN's ``-f``;
runtime_ltl.c ``l_ample`` with the tables of native/fairpor.py, one choice per ``(s, q)`` for
every counter copy; docs/reductions.md "Weak fairness"): the same verdicts as the unreduced
fair search on generated Promela models whose processes block (guards on globals, full and
empty channels, ``xr``/``xs`` channels, point-to-point channels, rendezvous), every violation a
replayed weakly fair lasso, strictly fewer product states on some; the shared LTL corpus's
fair rows (SPIN's verdicts); SPIN's leader.pml with ``-f`` against pan's verdicts (slow);
point-to-point channels' receives and sends in the fair tables where one sender and one
receiver use them (also by channel parameters), not where two senders do."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from absmc.codegen.reference import ReferenceSemantics
from absmc.ir.evaluate import evaluate
from absmc.ir.expr import TRUE, Expr
from absmc.ir.ltl import NON_PROGRESS
from absmc.ir.system import System
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
    receives conditionally safe) with producers (one of them sometimes claiming ``d`` with
    ``xs``: one producer makes ``d`` point to point), or a rendezvous channel ``r``; in most
    models point-to-point channels (:func:`_point_to_point`; then two single-instance types
    of 2-3 options besides); 3 next-free LTL properties over the globals and ``len(c)``,
    several of which hold only under weak fairness."""
    rng = random.Random(seed)
    # point-to-point channels (their own random choices); with them, the rest is kept small
    p2p = _point_to_point(random.Random(seed * 7919 + 1))
    lines = [
        "byte g0, g1;",
        f"chan c = [{rng.choice([1, 2])}] of {{ byte }};",
        f"chan d = [{rng.choice([1, 2])}] of {{ byte }};",
    ]
    claims = rng.random() < 0.6
    rendezvous = rng.random() < 0.3
    if rendezvous:  # (a channel parameter's rendezvous commands would pin its receivers)
        lines.append("chan r = [0] of { byte };")
    for k in range(2 if p2p else rng.choice([2, 3])):
        opts = rng.sample(_OPTIONS, rng.randint(2, 3 if p2p else 4))
        decl = ""
        n = "" if p2p else rng.choice(["", "", " [2]"])
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
    lines.extend(p2p)
    for m in range(3):
        a, b = rng.sample(_ATOMS, 2)
        lines.append(f"ltl f{m} {{ {rng.choice(_TEMPLATES).format(a=a, b=b)} }}")
    return "\n".join(lines) + "\n"


#: what a point-to-point process does with a message ``x`` it received (writes of the globals
#: the properties read, local steps, a blocking guard)
_WORK = ["g1 = (g1 + 1) % 3", "g0 = x % 2", "x = x + 1; x = 0", "g1 < 2 -> g1++", "skip"]


def _point_to_point(rng: random.Random) -> list[str]:
    """Declarations for :func:`fair_promela`: none (a seventh of the models), or channels that
    one process alone sends to and one alone receives from (docs/reductions.md "Point-to-point
    channels"): a global channel ``e`` between two active processes, the receiver claiming it
    ``xr`` and the sender sometimes ``xs``; or a ring or a pipeline (a source, a node, a
    sink) of processes that ``init`` runs on elements of ``chan q[3]``, each claiming ``xr``
    its input and ``xs`` its output, point to point only by the values of their channel
    parameters. A fifth of them break the pattern, without ``xs`` claims: a second sender to
    ``e``, a ring whose last node sends to the first node's output, a second source."""
    kind = rng.choice(["none", "global", "global", "ring", "ring", "pipeline", "pipeline"])
    if kind == "none":
        return []
    cap = rng.choice([1, 2]) if kind == "global" else 1  # (rings and pipelines: small)
    broken = rng.random() < 0.2
    xs = "" if broken else "xs out; "
    work = "; ".join(rng.sample(_WORK, rng.randint(1, 2) if kind == "global" else 1))
    take = rng.choice(["inp?x", "inp?x", "nempty(inp) -> inp?x"])  # (len: both claims)
    if kind == "global":
        out = [f"chan e = [{cap}] of {{ byte }};"]
        claim = "xs e; " if rng.random() < 0.5 and not broken else ""
        send = rng.choice(["e!1", "e!l; l = (l + 1) % 3", "g0 == 0 -> e!2"])
        out.append(f"active proctype S() {{ byte l; {claim}do :: {send} :: l = (l + 1) % 2 od }}")
        got = take.replace("inp", "e")
        out.append(f"active proctype V() {{ xr e; byte x; do :: {got}; {work} od }}")
        if broken:
            out.append("active proctype S2() { do :: e!3 od }")
        return out
    n = rng.choice([2, 3]) if kind == "ring" else 2
    out = [
        f"chan q[3] = [{cap}] of {{ byte }};",
        f"proctype N(chan inp, out; byte id) {{ xr inp; {xs}byte x; "
        f"if :: id == 0 -> out!id :: else -> skip fi; do :: {take}; {work}; out!x od }}",
    ]
    if kind == "ring":
        runs = [f"run N(q[{k}], q[{(k + 1) % n}], {k})" for k in range(n)]
        if broken:  # the last node sends to the first node's output as well
            runs[-1] = f"run N(q[{n - 1}], q[1], {n - 1})"
    else:  # q[0] -> ... -> q[n-1]: a source, nodes, a sink
        out.append(f"proctype Src(chan out) {{ {xs}do :: out!1 od }}")
        out.append("proctype Snk(chan inp) { xr inp; byte x; do :: inp?x; g0 = x % 2 od }")
        runs = ["run Src(q[0])", *(f"run N(q[{k}], q[{k + 1}], {k + 1})" for k in range(n - 1))]
        runs += [f"run Snk(q[{n - 1}])", *(["run Src(q[0])"] if broken else [])]
    out.append(f"init {{ atomic {{ {'; '.join(runs)} }} }}")
    return out


def _differential(tmp: Path, seeds: range, rule_off: bool = False) -> dict[str, int]:
    """Reduced against unreduced fair searches of the generated models' properties:
    ``compared`` properties, ``violated`` ones, ``fewer`` (holds with strictly fewer states),
    ``p2p`` models whose fair tables the point-to-point rule extends; with ``rule_off`` also
    ``beyond``: properties whose reduced search stores fewer states than the same search
    without the rule (a third search each)."""
    from absmc.ir.dependency import safe_conditions
    from absmc.native import fairpor

    got = dict.fromkeys(["compared", "violated", "fewer", "p2p", "beyond"], 0)
    for seed in seeds:
        path = tmp / f"f{seed}.pml"
        path.write_text(fair_promela(seed))
        system = load_model(path)
        safe = safe_conditions(system, frozenset({"g0", "g1", "c#len"}))
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(fairpor._PointToPoint, "stable", lambda *a: None)
            without = fairpor.fair_safe_conditions(system, safe)
        applies = fairpor.fair_safe_conditions(system, safe) != without
        got["p2p"] += applies
        for name in ("f0", "f1", "f2"):
            red, full = _compare(path, name, "native", fairness="weak")
            got["compared"] += 1
            got["violated"] += red.verdict is Verdict.VIOLATED
            if red.verdict is Verdict.HOLDS and red.stats.states < full.stats.states:
                assert POR in red.stats.extra["reductions"]
                assert red.stats.extra["reduced_states"] > 0
                got["fewer"] += 1
            if rule_off and applies and red.verdict is Verdict.HOLDS:
                with pytest.MonkeyPatch.context() as mp:
                    mp.setattr(fairpor._PointToPoint, "stable", lambda *a: None)
                    old = _one(path, name, True, "native", fairness="weak")
                assert old.verdict is red.verdict
                got["beyond"] += red.stats.states < old.stats.states
    print("fair LTL POR differential:", got)
    return got


def test_generated_models_same_fair_verdicts(tmp_path: Path) -> None:
    got = _differential(tmp_path, range(0, 5))
    assert got["compared"] == 15 and got["violated"] >= 2 and got["fewer"] >= 1
    assert got["p2p"] >= 2


@pytest.mark.slow
def test_generated_models_same_fair_verdicts_many(tmp_path: Path) -> None:
    got = _differential(tmp_path, range(5, 305), rule_off=True)
    assert got["compared"] == 900 and got["violated"] >= 100 and got["fewer"] >= 50
    assert got["p2p"] >= 100 and got["beyond"] >= 20


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
    # conditionally safe, but not under weak fairness: its point-to-point condition asks that
    # one of the two senders never send again, which no reachable state meets
    (t,) = [n for n in safe if n.startswith("T")]
    assert not any(_holds_somewhere(system, c) for c in fair.get(t, {}).values())
    assert any(_holds_somewhere(system, c) for c in safe[t].values())
    red, full = _compare(path, "p", "native", fairness="weak")
    assert full.verdict is Verdict.VIOLATED and red.verdict is Verdict.VIOLATED
    # the same search with every safe location (pan's choice) misses the weakly fair cycle
    monkeypatch.setattr(cgen, "fair_safe_conditions", lambda s, c: c)
    wrong = _one(path, "p", True, "native", fairness="weak")
    assert wrong.verdict is Verdict.HOLDS


def _holds_somewhere(system: System, cond: Expr) -> bool:
    """Whether ``cond`` holds in some reachable state of ``system`` (a small one: every
    reachable state, by the reference evaluator)."""
    sem = ReferenceSemantics(system)
    names = [v.name for v in system.variables]
    seen = set(sem.initial_states())
    todo = list(seen)
    while todo:
        st = todo.pop()
        if evaluate(cond, dict(zip(names, st, strict=True))):
            return True
        for _, t in sem.successors(st)[0]:
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return False


#: one sender P and one receiver T of ``d`` (T claims it ``xr``): T's receive may make room
#: for P blocked on a full ``d``, but when P stops moving ``d`` empties and stays empty, so P
#: stays blocked (docs/reductions.md, "Point-to-point channels")
_XR_SINGLE = """
chan d = [2] of { byte };
byte g;
active proctype P() { do :: d!1; g = 1; g = 0 od }
active proctype T() { xr d; byte x; do :: d?x; x = 0; x = 1 od }
ltl p { []<> (g == 1) }
ltl q { <>[] (g == 0) }
"""

#: a token ring of three nodes on ``q[0..2]``, point to point only by the values of the
#: channel parameters (every node's commands can touch every element, as on SPIN's
#: leader.pml), and a process that never blocks: ``p`` holds under weak fairness only
_RING = """
chan q[3] = [1] of { byte };
byte got, s;
proctype N(chan inp, out; byte id) {
    xr inp; xs out; byte x;
    if :: id == 0 -> out!id :: else -> skip fi;
    do :: inp?x -> x = (x + 1) % 3; got = x; out!x od
}
active proctype Busy() { do :: s = 1 - s od }
init { atomic { run N(q[0], q[1], 0); run N(q[1], q[2], 1); run N(q[2], q[0], 2) } }
ltl p { []<> (got == 2) }
ltl q { <>[] (got != 0) }
"""


@pytest.mark.parametrize(
    ("source", "verdicts"),
    [(_XR_SINGLE, {"p": "holds", "q": "violated"}), (_RING, {"p": "holds"})],
    ids=["single-sender", "ring-by-parameters"],
)
def test_point_to_point_channels_are_ample_under_fairness(
    source: str, verdicts: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The receives (and, on the ring, the sends) of point-to-point channels stay in the
    fair-safe tables with a condition that reachable states meet; the verdicts with reduction
    equal those without, and the search stores fewer states than without the rule."""
    from absmc.ir.dependency import safe_conditions
    from absmc.native import fairpor

    path = tmp_path / "p2p.pml"
    path.write_text(source)
    system = load_model(path)
    safe = safe_conditions(system, frozenset({"g", "got"}))
    fair = fairpor.fair_safe_conditions(system, safe)
    for name, locs in safe.items():
        for loc, cond in locs.items():
            if cond != TRUE and not name.startswith("init"):  # a receive or a send
                assert loc in fair.get(name, {}), (name, loc)
                assert _holds_somewhere(system, fair[name][loc]), (name, loc)
    reduced: dict[str, int] = {}
    for prop, verdict in verdicts.items():
        red, full = _compare(path, prop, "native", fairness="weak")
        assert red.verdict.value == verdict
        reduced[prop] = red.stats.states
        if verdict == "holds":
            assert red.stats.states < full.stats.states
    # without the rule the channel operations are never ample: more states
    monkeypatch.setattr(fairpor._PointToPoint, "stable", lambda *a: None)
    old = _one(path, "p", True, "native", fairness="weak")
    assert old.verdict.value == verdicts["p"] and old.stats.states > reduced["p"]
