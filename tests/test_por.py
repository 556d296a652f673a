"""Partial-order reduction (ir/dependency.py, kernel/explore/por.py, the C search's por_pick):
verdicts with reduction equal verdicts without, on generated Promela and GCL models and on the
corpus; reduced counts on SPIN's corpus; --no-reduce gives the full state space."""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path

import pytest

import absmc
from absmc.engines.explicit.check import check_explicit
from absmc.engines.registry import slots_exhausted
from absmc.ir.dependency import command_dependencies, safe_conditions, safe_locations
from absmc.ir.printer import format_expr
from absmc.ir.span import ModelError
from absmc.kernel.run.limits import Limits
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import Result
from absmc.lang.loader import load_model
from absmc.native import native_available

from .conftest import SHARED, run_cli
from .generators import random_model
from .promela_gen import random_promela_por, random_promela_races, random_promela_runs

# outcomes, not speed: the native back end compiles at -O0 (the semantics do not depend on it)
pytestmark = pytest.mark.usefixtures("native_fast_compile")

CORPUS = SHARED / "benchmarks" / "promela"
ROWS = list(csv.DictReader((CORPUS / "expected.csv").open())) if CORPUS.exists() else []

needs_cc = pytest.mark.skipif(not native_available(), reason="no C compiler")


def _verdicts(r: Result) -> dict[str, str]:
    return {p.property: str(p.verdict) for p in r.results}


def _states(r: Result) -> int:
    return r.results[0].stats.states


def _compare(
    path: Path, backend: str = "python", order: str = "bfs", max_states: int | None = None
) -> tuple[int, int]:
    """Check ``path`` with and without reduction (keep going; ``order``: the reduced search's);
    assert equal verdicts (hence equal violated property names) and that the reduced search
    stores no more states. Returns (full, reduced) state counts. A search that meets absmc's
    own process-slot limit gives no verdict (``unknown``, as ``absmc check`` reports it:
    :func:`~absmc.engines.registry.slots_exhausted`), and what it found past that point is
    not compared: a reduced search meets it only where the full one does (its states are the
    full one's), but the full one may meet it where the reduced one, creating processes in
    another order, does not. Where the reduced search meets it and the full one reports no
    such limit, the full one's model-error property must have stopped at an earlier model
    error (keep going reports each property's first violation: generated seed 201, whose
    full search meets an ``xs`` claim error first). ``max_states``: a model whose full search
    stores that many states is no test (returns (0, 0)): the generator's models are mostly
    small, but some have millions of states (seed 1365: more than 3.6 million)."""
    system = load_model(str(path))
    bound = CheckOptions(keep_going=True, reduce=False, limits=Limits(max_states=max_states))
    full = check_explicit(system, bound, backend)  # type: ignore[arg-type]
    if max_states is not None and _states(full) >= max_states:
        return 0, 0
    opts = CheckOptions(keep_going=True, reduce=True, order=order)  # type: ignore[arg-type]
    red = check_explicit(system, opts, backend)  # type: ignore[arg-type]
    if str(slots_exhausted(red).verdict) == "unknown":
        stopped = _verdicts(full).get("no-model-error") == "violated"
        assert str(slots_exhausted(full).verdict) == "unknown" or stopped, path.read_text()
    elif str(slots_exhausted(full).verdict) != "unknown":
        assert _verdicts(red) == _verdicts(full), path.read_text()
    assert _states(red) <= _states(full)
    for p in red.results:
        if str(p.verdict) == "violated":
            assert p.trace is not None  # replayed on the concrete semantics
    return _states(full), _states(red)


def _write(tmp: Path, seed: int) -> Path:
    p = tmp / f"m{seed}.pml"
    p.write_text(random_promela_por(seed))
    return p


def _differential(
    tmp: Path,
    seeds: range,
    backend: str = "python",
    order: str = "bfs",
    max_states: int | None = None,
) -> int:
    reduced = 0
    for seed in seeds:
        p = _write(tmp, seed)
        try:
            full, red = _compare(p, backend, order, max_states)
        except Exception as e:  # a generated model the front end refuses is no test
            if "error:" in str(e):
                continue
            raise
        reduced += red < full
    return reduced


def test_promela_differential_python(tmp_path: Path) -> None:
    # 40 models (1,000 more under -m slow): verdicts equal; most of them are reduced (the
    # generator has local variables; 29 of these 40)
    assert _differential(tmp_path, range(40)) >= 26


def test_gcl_differential_python(tmp_path: Path) -> None:
    for seed in range(40):
        p = tmp_path / f"g{seed}.gcl"
        p.write_text(random_model(seed).text)
        _compare(p)


def test_promela_differential_dfs_stack_proviso(tmp_path: Path) -> None:
    # the DFS applies SPIN's stack proviso (a group of steps stays when one of them reaches a
    # state off the stack): verdicts equal the full search's
    assert _differential(tmp_path, range(300, 320), order="dfs") >= 12


@needs_cc
def test_promela_differential_native(tmp_path: Path) -> None:
    assert _differential(tmp_path, range(6), "native") >= 1


@pytest.mark.slow
def test_promela_differential_many(tmp_path: Path) -> None:
    assert _differential(tmp_path, range(40, 1100)) >= 530
    _differential(tmp_path, range(1300, 1500), order="dfs", max_states=300_000)
    if native_available():
        _differential(tmp_path, range(1100, 1300), "native")


def test_promela_differential_runs(tmp_path: Path) -> None:
    # process creation and death (random_promela_runs: workers run with a channel their
    # creator declares locally, nested creation, deaths racing with runs for a slot, asserts
    # on _pid): verdicts equal the full search's; most models are reduced, some violated
    reduced = violated = 0
    for seed in range(30):
        p = tmp_path / f"r{seed}.pml"
        p.write_text(random_promela_runs(seed))
        try:
            full, red = _compare(p)
        except Exception as e:  # a generated model the front end refuses is no test
            if "error:" in str(e):
                continue
            raise
        reduced += red < full
        system = load_model(str(p))
        r = check_explicit(system, CheckOptions(keep_going=True, reduce=True), "python")
        violated += any(str(x.verdict) == "violated" for x in r.results)
    assert reduced >= 20 and violated >= 5


def _races(
    tmp: Path, seeds: range, backend: str = "python", order: str = "bfs"
) -> tuple[int, int, int]:
    """random_promela_races over ``seeds``: the verdicts of the reduced search with the race
    rule equal the full search's and the reduced search's without the rule (the same System
    with ``pids_unobserved`` off), it stores no more states than either, and its violations
    have replayed traces. A model whose search meets absmc's own process-slot limit (a pid
    SPIN would give that the slots absmc allocated cannot hold: ``unknown``,
    :func:`~absmc.engines.registry.slots_exhausted`) is no test. Returns (models the rule
    applies to, models it reduced further, models with a violation)."""
    on = fewer = violated = 0
    for seed in seeds:
        p = tmp / f"x{seed}.pml"
        p.write_text(random_promela_races(seed))
        try:
            system = load_model(str(p))
            more = (system.max_created or 0) - len(system.processes)
            if more > 0:  # as many slots as processes are ever created (recursive workers)
                system = load_model(str(p), extra_slots=more)
        except ModelError:  # a generated model the front end refuses is no test
            continue
        opts = CheckOptions(keep_going=True, reduce=True, order=order)  # type: ignore[arg-type]
        runs = [
            slots_exhausted(check_explicit(s, o, backend))  # type: ignore[arg-type]
            for s, o in (
                (system, replace(opts, reduce=False)),
                (system, opts),
                (system.with_(pids_unobserved=False), opts),
            )
        ]
        if any(str(r.verdict) == "unknown" for r in runs):
            continue
        full, red, off = runs
        assert _verdicts(red) == _verdicts(full) == _verdicts(off), p.read_text()
        assert _states(red) <= _states(off) <= _states(full), p.read_text()
        for x in red.results:
            if str(x.verdict) == "violated":
                assert x.trace is not None  # replayed on the concrete semantics
                violated += 1
        on += system.pids_unobserved
        fewer += _states(red) < _states(off)
    return on, fewer, violated


def test_promela_differential_races(tmp_path: Path) -> None:
    # a death and a run racing for a slot (random_promela_races: no pid observed, so the rule
    # of docs/reductions.md applies to most models): verdicts equal the full search's
    on, fewer, violated = _races(tmp_path, range(30))
    assert on >= 18 and fewer >= 9 and violated >= 8


def test_promela_differential_races_dfs(tmp_path: Path) -> None:
    on, fewer, _ = _races(tmp_path, range(100, 110), order="dfs")
    assert on >= 4 and fewer >= 2


@needs_cc
def test_promela_differential_races_native(tmp_path: Path) -> None:
    on, fewer, _ = _races(tmp_path, range(200, 204), "native")
    assert on >= 2 and fewer >= 1


@pytest.mark.slow
def test_promela_differential_races_many(tmp_path: Path) -> None:
    on, fewer, violated = _races(tmp_path, range(1000, 1300))
    assert on >= 200 and fewer >= 100 and violated >= 40
    assert _races(tmp_path, range(1300, 1400), order="dfs")[0] >= 60
    if native_available():
        assert _races(tmp_path, range(1400, 1450), "native")[0] >= 30


def test_a_run_is_independent_of_the_created_process(tmp_path: Path) -> None:
    # init's runs write the slots' pc and locals, which the started processes' commands read:
    # never enabled together (a run needs the slot free, the process's commands need it
    # taken), and no command of these processes, which never end, frees a slot, so init's run
    # locations are safe (before this rule none was: 70 states); its deletion waits for
    # P(1)'s, which never comes, so it is safe too. SPIN 6.5.2: 400 states with -DNOREDUCE,
    # 44 with its defaults.
    p = tmp_path / "m.pml"
    p.write_text(
        "byte g;\nproctype P() { byte l; do :: l < 2 -> l++ :: l == 2 -> g++; l = 3"
        " :: l == 3 -> g > 5 od }\ninit { run P(); run P(); run P() }\n"
    )
    system = load_model(str(p), reduce=False)
    init = next(q for q in system.processes if q.name.startswith("init"))
    locations = {d.location for d in command_dependencies(system) if d.process == init.name}
    assert safe_locations(system)[init.name] == locations and len(locations) == 4
    assert _compare(p) == (400, 44)


def test_safe_locations_follow_spin(tmp_path: Path) -> None:
    p = tmp_path / "m.pml"
    p.write_text(
        "byte g;\nactive [2] proctype P() { byte l; do :: l < 2 -> l++ :: else -> break od; g++ }\n"
    )
    system = load_model(str(p))
    safe = safe_locations(system)
    deps = command_dependencies(system)
    for proc in system.processes:
        for d in deps:
            if d.process != proc.name:
                continue
            here = d.location in safe.get(proc.name, frozenset())
            if "g" in d.reads | d.writes:
                assert not here  # the increment of the global
            elif d.reads | d.writes <= {proc.pc, f"{proc.name}.l"}:
                assert here  # the local loop


def test_a_visible_write_is_not_safe(tmp_path: Path) -> None:
    p = tmp_path / "m.gcl"
    p.write_text(
        "var x : 0..3 = 0; var y : 0..3 = 0;\n"
        "process A { x < 3 -> x := x + 1; }\n"
        "process B { y < 3 -> y := y + 1; }\n"
        "invariant small: x < 3;\n"
    )
    system = load_model(str(p))
    safe = safe_locations(system, frozenset({"x"}))
    assert "A" not in safe and "B" in safe
    full, red = _compare(p)
    assert red < full


def test_no_reduce_gives_the_full_counts_and_json_names_the_reduction(tmp_path: Path) -> None:
    p = tmp_path / "m.pml"
    p.write_text(
        "byte g;\n"
        "active [3] proctype P() { byte l; do :: l < 4 -> l++ :: l >= 4 -> break od;"
        " g++; assert(g <= 3) }\n"
    )
    on = json.loads(run_cli("check", str(p), "--json", "--backend", "python").out)
    off = json.loads(run_cli("check", str(p), "--json", "--no-reduce", "--backend", "python").out)
    assert on["results"][0]["stats"]["reductions"][-1] == "partial-order"
    assert "reductions" not in off["results"][0]["stats"]
    # SPIN 6.5.2: 55 states with its default partial-order reduction, 585 with -DNOREDUCE
    assert on["results"][0]["stats"]["states"] == 55
    assert off["results"][0]["stats"]["states"] == 585


def test_a_reduced_counterexample_replays(tmp_path: Path) -> None:
    p = tmp_path / "m.pml"
    p.write_text(
        "byte g;\n"
        "active [2] proctype P() { byte l; do :: l < 3 -> l++ :: else -> break od;"
        " g = g + l; assert(g < 6) }\n"
    )
    trail = tmp_path / "m.trail.json"
    r = run_cli("check", str(p), "--backend", "python", "--trail", str(trail))
    assert r.code == 1
    again = run_cli("replay", str(p), str(trail))
    assert again.code == 1, again.out + again.err
    assert "assert" in again.out


@pytest.mark.skipif(not ROWS, reason="../shared/benchmarks/promela is not available")
def test_reduction_on_the_corpus_keeps_verdicts() -> None:
    strictly = []
    for name in ("peterson.pml", "protocols.1.pm", "leader_filters.1.pm", "abp.pml"):
        row = next(r for r in ROWS if r["file"] == name)
        full, red = _compare(CORPUS / name)
        assert full == int(row["spin_o1_states"])
        if red < full:
            strictly.append(name)
    assert len(strictly) >= 2, strictly


PIPE = """
chan a = [2] of { byte }; chan b = [2] of { byte };
proctype src(chan out) { byte i; xs out; do :: i < 3 -> out!i; i++ :: else -> break od }
proctype mid(chan inp, out) { byte x; xr inp; xs out; end: do :: inp?x -> out!x od }
proctype dst(chan inp) { byte x, n; xr inp; end: do :: inp?x -> n++; assert(n <= 3) od }
init { atomic { run src(a); run mid(a, b); run dst(b) } }
"""


def test_exclusive_channels_are_conditionally_safe(tmp_path: Path) -> None:
    # SPIN: a receive from an ``xr`` channel is safe while the channel is non-empty, a send
    # to an ``xs`` channel while it is not full (pangen2.c has_global, pan's q_cond)
    p = tmp_path / "pipe.pml"
    p.write_text(PIPE)
    system = load_model(str(p))
    conds = safe_conditions(system)
    mid = next(name for name in conds if name.startswith("mid"))
    text = " ".join(format_expr(c) for c in conds[mid].values())
    assert "a#len > 0" in text and "b#len < 2" in text
    full, red = _compare(p)
    # SPIN 6.5.2: 18 states with its default reduction (spin -a), 57 with -DNOREDUCE (-o1)
    assert (full, red) == (57, 18)


def test_breaking_a_claim_is_a_model_error_with_and_without_reduction(tmp_path: Path) -> None:
    # pan: "xr assertion violated ... partial order reduction invalid" when another process
    # receives from a channel declared xr; absmc reports it as a model error either way
    p = tmp_path / "steal.pml"
    p.write_text(
        "chan c = [2] of { byte };\n"
        "active proctype S() { c!1; c!2 }\n"
        "active proctype R() { byte x; xr c; c?x; c?x }\n"
        "active proctype T() { byte y; c?y }\n"
    )
    _compare(p)
    for reduce in (False, True):
        r = check_explicit(
            load_model(str(p)), CheckOptions(keep_going=True, reduce=reduce), "python"
        )
        bad = next(x for x in r.results if x.property == "no-model-error")
        assert str(bad.verdict) == "violated"
        assert "xr assertion violated" in (bad.reason or "")


@pytest.mark.skipif(not ROWS, reason="../shared/benchmarks/promela is not available")
def test_exclusive_channels_match_spin_on_sort_and_leader() -> None:
    # SPIN 6.5.2's default run (spin -a, pan with its reductions): 135 and 97 states
    for name, spin in (("sort.pml", 135), ("leader0.pml", 97)):
        system = load_model(str(CORPUS / name))
        r = check_explicit(system, CheckOptions(keep_going=True, reduce=True), "python")
        assert _states(r) == spin
        assert all(str(x.verdict) == "holds" for x in r.results)


@needs_cc
@pytest.mark.skipif(not ROWS, reason="../shared/benchmarks/promela is not available")
def test_exclusive_channels_in_c(native_fast_compile: None) -> None:
    system = load_model(str(CORPUS / "sort.pml"))
    r = check_explicit(system, CheckOptions(keep_going=True, reduce=True), "native")
    assert _states(r) == 135


@pytest.mark.skipif(not ROWS, reason="../shared/benchmarks/promela is not available")
def test_spin_proviso_and_process_deletion_on_snoopy_and_p117(native_fast_compile: None) -> None:
    # SPIN 6.5.2's default run stores 9,343 (snoopy) and 152 (p117) states; the proviso that
    # keeps a group when one step reaches a later state and pan's Resume (snoopy: 15,697 before),
    # and the conditional safety of process deletion (p117: 202 before; 162 before the race of
    # deaths and runs, docs/reductions.md); both back ends alike
    backends = ("python", "native") if native_available() else ("python",)
    for name, most in (("snoopy.pml", 11_000), ("p117.pml", 152)):
        system = load_model(str(CORPUS / name), reduce=True)  # with the dead-variable reset
        counts = set()
        for backend in backends:
            r = check_explicit(system, CheckOptions(keep_going=True, reduce=True), backend)  # type: ignore[arg-type]
            assert any(str(x.verdict) == "violated" for x in r.results)
            counts.add(_states(r))
        assert len(counts) == 1 and counts.pop() <= most
    full, red = _compare(CORPUS / "p117.pml")
    assert red < full
    full, red = _compare(CORPUS / "p117.pml", order="dfs")
    assert red < full


@needs_cc
@pytest.mark.skipif(not ROWS, reason="../shared/benchmarks/promela is not available")
def test_threads_reduce_with_the_insertion_proviso() -> None:
    # threads: a state stays reduced when one of its ample steps inserted a new state (the
    # inserted states form a tree, so every chain of reduced states ends in a full expansion)
    system = load_model(str(CORPUS / "snoopy.pml"))
    full = check_explicit(system, CheckOptions(keep_going=True, reduce=False), "native")
    opts = CheckOptions(keep_going=True, reduce=True)
    r = check_explicit(system, opts, "native", workers=2)
    assert _verdicts(r) == _verdicts(full)
    assert _states(r) < _states(full) // 2


_LOOP = "atomic { do :: l < 3 -> l++ :: l < 2 -> l = l + 2 :: else -> break od }"


@pytest.mark.parametrize(
    ("body", "spin"),
    [
        # SPIN 6.5.2, spin -a + gcc -DSAFETY (its defaults): 18, 67 and 40 states; with
        # -o1 -DNOREDUCE 40, 85 and 40
        (f"{_LOOP}; g = g + 1", 18),
        (f"g = g + 1; {_LOOP}; g = g + l", 67),
        # the chain ends with a global write: no process is safe there
        (f"{_LOOP[:-2]}; g = g + 1 }}; g = g + 1", 40),
    ],
)
def test_local_atomic_chains_are_safe_like_spin(tmp_path: Path, body: str, spin: int) -> None:
    # an atomic sequence whose every statement is local is safe (pangen2.c has_global ->
    # scan_seq): the chain is one step of the search and commutes with the other processes'
    p = tmp_path / "m.pml"
    p.write_text(f"byte g;\nactive [3] proctype P() {{ byte l; {body} }}\n")
    system = load_model(str(p), reduce=True)
    backends = ("python", "native") if native_available() else ("python",)
    for backend in backends:
        r = check_explicit(system, CheckOptions(keep_going=True, reduce=True), backend)  # type: ignore[arg-type]
        assert _states(r) == spin, backend
    full, red = _compare(p)
    assert red == spin and (red < full) == (body.count("g = g + 1") < 2)


def test_pid_reuse_is_not_reduced_away(tmp_path: Path) -> None:
    # SPIN's default run (pan -DSAFETY) reports no error here: it takes a run statement as safe
    # and the death of the youngest process as conditionally safe (pan's q_cond, ALPHA_F), so it
    # never runs B before A has died and B always gets pid 1; with -DNOREDUCE pan finds the
    # violation. absmc keeps run and death dependent (both read the slot's pc).
    p = tmp_path / "m.pml"
    p.write_text(
        "proctype A() { skip }\nproctype B() { assert(_pid == 1) }\ninit { run A(); run B() }\n"
    )
    system = load_model(str(p), reduce=True)
    r = check_explicit(system, CheckOptions(keep_going=True, reduce=True), "python")
    bad = [x for x in r.results if str(x.verdict) == "violated"]
    assert [x.kind for x in bad] == ["assert"] and bad[0].trace is not None
    _compare(p)


@pytest.mark.parametrize("poll", ["len(p) > 0", "nempty(p)"])
def test_another_process_polls_of_a_claimed_channel_are_model_errors(
    tmp_path: Path, poll: str
) -> None:
    # Src polls the channel p (really c), which could be one that Relay claims: pan checks such
    # a poll against the claims (q_R_check/q_S_check, a model error when one holds), so Relay's
    # receive and send stay conditionally safe (len, empty: absmc before this rule 62 states).
    # nempty is checked against xr claims only; that p never holds b, which Relay claims xs, is
    # what value_sets tells (Src's parameter p only ever gets c's id; before: 57 states). SPIN
    # 6.5.2: 49 states with its defaults, 113 with -o1 -DNOREDUCE, either poll
    p = tmp_path / "m.pml"
    p.write_text(
        "chan a = [1] of { byte }; chan b = [1] of { byte }; chan c = [1] of { byte };\n"
        "proctype Relay(chan i, o) { byte x; xr i; xs o; end: do :: i?x -> o!x od }\n"
        f"proctype Src(chan o, p) {{ byte n; do :: n < 3 -> if :: {poll} -> n = 3\n"
        "  :: empty(p) -> o!n; n++ fi :: else -> break od }\n"
        "proctype Sink(chan i) { byte y; end: do :: i?y -> assert(y < 3) od }\n"
        "init { atomic { run Relay(a, b); run Src(a, c); run Sink(b) } }\n"
    )
    system = load_model(str(p), reduce=True)
    backends = ("python", "native") if native_available() else ("python",)
    for backend in backends:
        r = check_explicit(system, CheckOptions(keep_going=True, reduce=True), backend)  # type: ignore[arg-type]
        assert _states(r) == 49, backend
        assert all(str(x.verdict) == "holds" for x in r.results)
    full, red = _compare(p)
    assert (full, red) == (113, 49)


# src polls its xs channel (nfull) and sends in one atomic chain; mid receives from its xr
# channel and polls nfull of its xs one; dst polls nempty of its xr channel; mid's nfull(out)
# is another process's poll of the channel dst claims xr. Every location is conditionally
# safe in pan (pan -d: L), as here.
POLLS = """\
chan a = [2] of { byte }; chan b = [2] of { byte };
proctype src(chan out) { byte i; xs out;
  do :: atomic { nfull(out) -> out!i }; i = (i + 1) % 3 :: i == 2 -> break od }
proctype mid(chan inp, out) { byte x; xr inp; xs out;
  end: do :: inp?x -> atomic { nfull(out) -> out!x } od }
proctype dst(chan inp) { byte x, n; xr inp; end: do :: nempty(inp) -> inp?x; n = (n + 1) % 4 od }
init { atomic { run src(a); run mid(a, b); run dst(b) } }
"""


def test_polls_of_claimed_channels_are_conditionally_safe(tmp_path: Path) -> None:
    # SPIN 6.5.2 (pangen2.c has_global: nfull of an xs and nempty of an xr channel are local;
    # valTpe Q_FULL_F / Q_EMPT_F): 294 states with its defaults, 521 with -o1 -DNOREDUCE;
    # absmc before these rules 485
    p = tmp_path / "polls.pml"
    p.write_text(POLLS)
    system = load_model(str(p), reduce=True)
    conds = safe_conditions(system)
    for name, want in (("src", "a#len < 2"), ("dst", "b#len > 0")):
        proc = next(n for n in conds if n.startswith(name))
        assert any(want in format_expr(c) for c in conds[proc].values()), name
    backends = ("python", "native") if native_available() else ("python",)
    for backend in backends:
        r = check_explicit(system, CheckOptions(keep_going=True, reduce=True), backend)  # type: ignore[arg-type]
        assert _states(r) == 294, backend
        assert all(str(x.verdict) == "holds" for x in r.results)
    full, red = _compare(p)
    assert full == 521 and red < full


def test_a_chain_needs_room_for_every_send_it_makes(tmp_path: Path) -> None:
    # an atomic chain that sends twice to its xs channel is one step only when both sends
    # find room (a chain blocked half-way would not commute with the receiver's receive): the
    # location is safe where the channel holds at most capacity - 2 messages; one receive
    # after nempty needs one message, not two
    p = tmp_path / "m.pml"
    p.write_text(
        "chan c = [3] of { byte };\n"
        "active proctype S() { xs c; do :: atomic { c!1; c!2 } od }\n"
        "active proctype R() { byte x; xr c; do :: atomic { nempty(c) -> c?x } od }\n"
    )
    conds = safe_conditions(load_model(str(p)))
    # S at the chain's start and at its second send (where a blocked chain stops)
    assert sorted(format_expr(c) for c in conds["S(0)"].values()) == ["c#len < 2", "c#len < 3"]
    assert [format_expr(c) for c in conds["R(1)"].values()] == ["c#len > 0"] * 2
    _compare(p)


#: SPIN's Examples/Book_1991 p97.1, p97.2, p96.2 and p320 (nimble-code/Spin), as text
_BOOK = {
    "p97.1": (
        "byte state = 1;\n"
        "proctype A() { atomic { (state == 1) -> state = state + 1 } }\n"
        "proctype B() { atomic { (state == 1) -> state = state - 1 } }\n"
        "init { run A(); run B() }\n"
    ),
    "p97.2": (
        "proctype nr(short id, a, b)\n{ int res;\n"
        'atomic { res = (a*a+b)/2*a; printf("result %d: %d\\n", id, res) }\n}\n'
        "init { run nr(1,1,1); run nr(1,2,2); run nr(1,3,2) }\n"
    ),
    "p96.2": (
        "bool x, y, t;\n"
        "proctype A() { x = 1; t = 0; (y == 0 || t == 1); x = 0 }\n"
        "proctype B() { y = 1; t = 1; (x == 0 || t == 0); y = 0 }\n"
        "init { run A(); run B() }\n"
    ),
    "p320": (
        "bool x, y, t;\nbool ain, bin;\n"
        "proctype A() { x = 1; t = 1; (y == 0 || t == 0); ain = 1; assert(bin == 0);"
        " ain = 0; x = 0 }\n"
        "proctype B() { y = 1; t = 0; (x == 0 || t == 1); bin = 1; assert(ain == 0);"
        " bin = 0; y = 0 }\n"
        "init { run A(); run B() }\n"
    ),
}


@pytest.mark.parametrize(
    ("name", "full", "spin", "before"),
    [
        # states: absmc --no-reduce (= SPIN 6.5.2 -o1 -DNOREDUCE), SPIN's defaults, absmc's
        # reduction without the race rule (init's runs race with A's, B's, nr's deaths)
        ("p97.1", 9, 6, 9),
        ("p97.2", 41, 11, 23),
        ("p96.2", 48, 36, 46),
        ("p320", 81, 60, 76),
    ],
)
def test_deaths_and_runs_race_as_in_spin(
    tmp_path: Path, name: str, full: int, spin: int, before: int
) -> None:
    p = tmp_path / f"{name}.pml"
    p.write_text(_BOOK[name])
    system = load_model(str(p), reduce=True)
    assert system.pids_unobserved and system.max_created == len(system.processes)
    assert _compare(p) == (full, spin)
    backends = ("python", "native") if native_available() else ("python",)
    for backend in backends:
        opts = CheckOptions(keep_going=True, reduce=True)
        r = check_explicit(system, opts, backend)  # type: ignore[arg-type]
        assert _states(r) == spin, backend
        off = check_explicit(system.with_(pids_unobserved=False), opts, backend)  # type: ignore[arg-type]
        assert _states(off) == before and _verdicts(off) == _verdicts(r)


@pytest.mark.parametrize(
    ("text", "unobserved", "created"),
    [
        ("proctype A() { skip }\ninit { run A(); run A() }", True, 3),
        ("proctype A() { skip }\ninit { run A(); assert(_pid == 0) }", False, 2),
        ("proctype A() { skip }\ninit { run A(); _nr_pr == 1 }", False, 2),
        ("byte p;\nproctype A() { skip }\ninit { p = run A(); p > 0 }", False, 2),
        ("proctype A() { L: skip }\ninit { run A(); A@L -> skip }", False, 2),
        ("proctype A() { byte x; x = 1 }\ninit { run A(); A[1]:x == 0 }", False, 2),
        ("proctype A() { skip }\ninit { run A(); enabled(1) -> skip }", False, 2),
        # a local channel: only where channel ids flow down the creation tree (run arguments,
        # channel operands), never where one is copied elsewhere
        ("proctype A(chan r) { r!1 }\ninit { chan c = [1] of { byte }; run A(c); c?_ }", True, 2),
        (
            "chan g;\nproctype A() { skip }\ninit { chan c = [1] of { byte }; g = c; run A() }",
            False,
            2,
        ),
        ("proctype A(chan r) { r!r }\ninit { chan c = [1] of { chan }; run A(c); c?_ }", False, 2),
        # a run on a cycle, a proctype that creates itself: no bound
        (
            "proctype A() { skip }\n"
            "init { byte i; do :: i < 2 -> run A(); i++ :: else -> break od }",
            True,
            None,
        ),
        (
            "chan f = [2] of { byte };\nproctype A() { byte x; f?x; f!x; run A() }\n"
            "init { f!1; f!2; run A() }",
            True,
            None,
        ),
        (
            "proctype B() { skip }\nproctype A() { run B(); run B() }\ninit { run A(); run A() }",
            True,
            7,
        ),
    ],
)
def test_which_models_observe_pids(
    tmp_path: Path, text: str, unobserved: bool, created: int | None
) -> None:
    p = tmp_path / "m.pml"
    p.write_text(text + "\n")
    system = load_model(str(p))
    assert (system.pids_unobserved, system.max_created) == (unobserved, created)


def test_a_death_goes_first_only_with_a_creation_bound(tmp_path: Path) -> None:
    # init's run of the second A races with the first A's death: with a bound on the processes
    # ever created the death goes first (the run's slot stays the first A's) and init's run
    # goes first; with a run on a cycle only the run goes first. Verdicts equal either way.
    p = tmp_path / "m.pml"
    p.write_text(
        "byte g;\nproctype A() { g = (g + 1) % 3 }\n"
        "init { byte i; do :: i < 2 -> run A(); i++ :: else -> break od;"
        " assert(g != 2 || i == 2) }\n"
    )
    system = load_model(str(p))
    assert system.pids_unobserved and system.max_created is None
    _, red = _compare(p)
    opts = CheckOptions(keep_going=True, reduce=True)
    off = check_explicit(system.with_(pids_unobserved=False), opts, "python")
    bounded = check_explicit(system.with_(max_created=3), opts, "python")
    assert red < _states(off) and _states(bounded) <= red


#: SPIN's Examples/calculator.pml (nimble-code/Spin): each calc reads a token of f and, for
#: an operator, runs two calcs with its own rendezvous channel me and sends the result up
_CALCULATOR = """#define N 12
mtype = { operator, value }
chan f = [N] of { mtype, int }
proctype calc(chan you)
{ int s, lft, rgt
  chan me = [0] of { int }
  if
  :: f?operator(s)
     run calc(me); me?lft
     run calc(me); me?rgt
     if
     :: s == '+' -> you!(lft+rgt)
     :: s == '-' -> you!(lft-rgt)
     :: s == '*' -> you!(lft*rgt)
     :: s == '/' -> assert(rgt != 0); you!(lft/rgt)
     :: else -> assert(false)
     fi
  :: f?value(s) -> you!s
  fi
}
init { chan me = [0] of { int }; int result
  f!operator('+'); f!operator('/'); f!value(84); f!value(2); f!operator('-');
  f!value(36); f!operator('*'); f!value(3); f!value(4)
  run calc(me); me?result
  printf("result: %d\\n", result)
}
"""


def test_calculator_as_in_spin(tmp_path: Path) -> None:
    # calc's local channel me flows only to its children (run calc(me)), and calc runs calcs
    # only after it reads one of init's 9 tokens: at most 1 + 1 + 2 * 9 processes, so a
    # death may go before a run racing with it. SPIN 6.5.2: 568 states with -o1 -DNOREDUCE,
    # 52 with its defaults; absmc 530 before the race rule
    p = tmp_path / "calculator.pml"
    p.write_text(_CALCULATOR)
    system = load_model(str(p))
    assert system.pids_unobserved and system.max_created == 20
    red = absmc.check(str(p), keep_going=True, backend="python")
    assert str(red.verdict) == "holds" and _states(red) == 52


@pytest.mark.slow
def test_calculator_unreduced_as_in_spin(tmp_path: Path) -> None:
    # the unreduced search (its process slots grow to 20): SPIN -o1 -DNOREDUCE's 568 states
    p = tmp_path / "calculator.pml"
    p.write_text(_CALCULATOR)
    full = absmc.check(str(p), keep_going=True, reduce=False, backend="python")
    red = absmc.check(str(p), keep_going=True, backend="python")
    assert _verdicts(red) == _verdicts(full) and _states(full) == 568


def test_a_token_bound_needs_every_send_named(tmp_path: Path) -> None:
    # the tokens bound the creations only when every send to the channel names it: here a
    # worker holds f through its parameter, so its sends are not counted, and there is no bound
    p = tmp_path / "m.pml"
    p.write_text(
        "chan f = [2] of { byte };\nproctype W(chan q) { byte x; f?x; run W(q) }\n"
        "init { f!1; run W(f) }\n"
    )
    assert load_model(str(p)).max_created is None  # f is passed to a run
    q = tmp_path / "n.pml"
    q.write_text(
        "chan f = [2] of { byte };\nproctype W() { byte x; f?x; run W() }\n"
        "init { f!1; f!2; run W() }\n"
    )
    assert load_model(str(q)).max_created == 1 + 1 + 2
    q.write_text(
        "chan f = [2] of { byte };\nproctype W() { byte x; f?x; f!x; run W() }\n"
        "init { f!1; run W() }\n"
    )
    assert load_model(str(q)).max_created is None  # W sends to f: no bound on its tokens
