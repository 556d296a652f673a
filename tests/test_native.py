"""The native back end (``--backend native|auto``): SPIN's numbers on the shared corpus, the
same traces as the Python back end, limits, the packed store's memory, hash-compact, and the
fall-back to Python where 64 bits do not suffice. (Step-by-step agreement with the reference
semantics on random Systems is in ``test_semantics_conformance.py``.)"""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path
from typing import Any

import pytest

from absmc.lang.gcl import parse_gcl_file
from absmc.native import CompilerError, NativeSemantics

from .conftest import GCL_EXAMPLES, SHARED, run_cli
from .native_helpers import cli_json, needs_native

pytestmark = [needs_native, pytest.mark.usefixtures("native_fast_compile")]

CORPUS = SHARED / "benchmarks" / "promela"
ROWS = list(csv.DictReader((CORPUS / "expected.csv").open())) if CORPUS.exists() else []


@pytest.mark.parametrize("row", ROWS, ids=[r["file"] for r in ROWS])
def test_native_search_gives_spins_states_and_verdicts(row: dict[str, str]) -> None:
    args = ("check", str(CORPUS / row["file"]), "--keep-going", "--backend", "native")
    code, res = cli_json(*args, "--no-reduce")  # spin -o1: no dead-variable reset
    assert {p["stats"]["states"] for p in res["results"]} == {int(row["spin_o1_states"])}
    expected = "violated" if int(row["errors_c0"]) > 0 else "holds"
    assert res["verdict"] == expected and code == (1 if expected == "violated" else 0)
    extra = res["results"][0]["stats"]
    # every model in C, leader0.pml's five 160-bit channels too
    assert extra["backend"] == "native" and "native_fallback" not in extra
    if int(row["spin_o1_states"]) > 10_000:
        # the packed state and ~20 bytes of table, parent id and label (sort.pml: 128-byte
        # states, seven 80-bit channels)
        assert extra["bytes_per_state"] <= max(64, extra["state_vector_bytes"] + 24)


def _traces(res: dict[str, Any]) -> dict[str, Any]:
    return {r["property"]: (r["verdict"], r.get("trace")) for r in res["results"]}


@pytest.mark.parametrize(
    ("model", "args"),
    [
        (str(GCL_EXAMPLES / "philosophers.gcl"), ()),
        (str(GCL_EXAMPLES / "philosophers.gcl"), ("--keep-going",)),
        (str(CORPUS / "p117.pml"), ("--keep-going",)),
        (str(CORPUS / "bakery.1.pm"), ()),
    ],
)
def test_traces_are_the_python_back_ends(model: str, args: tuple[str, ...]) -> None:
    if not Path(model).exists():
        pytest.skip("../shared/benchmarks/promela is not available")
    _, py = cli_json("check", model, *args, "--backend", "python")
    _, nat = cli_json("check", model, *args, "--backend", "native")
    assert _traces(nat) == _traces(py)
    assert any(v == "violated" for v, _ in _traces(nat).values())
    for r in nat["results"]:
        if r["verdict"] == "violated":
            assert len(r["trace"]) >= 2  # replayed by results_from_outcome


def test_limits_end_the_native_search_with_unknown(tmp_path: Path) -> None:
    model = tmp_path / "grid.gcl"
    model.write_text(
        "var x, y : 0..300;\nprocess P { x < 300 -> x := x + 1; }\n"
        "process Q { y < 300 -> y := y + 1; }\n"
    )
    code, res = cli_json("check", str(model), "--backend", "native", "--max-states", "5000")
    assert code == 3
    r = res["results"][0]
    assert r["verdict"] == "unknown" and r["reason"] == "state limit of 5000 states reached"
    assert r["stats"]["states"] == 5000
    code, res = cli_json("check", str(model), "--backend", "native", "--max-depth", "10")
    assert code == 3 and res["results"][0]["reason"] == "depth limit of 10 steps reached"
    assert res["results"][0]["stats"]["states"] == 66  # x + y <= 10
    code, res = cli_json("check", str(model), "--backend", "native", "--max-memory", "1")
    assert code == 3 and "memory limit of 1 MB" in res["results"][0]["reason"]


def test_model_errors_and_assertions_in_c_match_python(tmp_path: Path) -> None:
    model = tmp_path / "errs.gcl"
    model.write_text(
        "var x : 0..5; var y : int = 3; var z : -2..2;\n"
        "process P { x < 5 -> x := x + 1; x == 4 -> y := y / (x - 4); }\n"
        "process Q { z > -2 -> z := z - 1; x == 2 -> z := z - 3; }\n"
        "invariant small: y < 100;\n"
    )
    _, py = cli_json("check", str(model), "--keep-going", "--backend", "python")
    _, nat = cli_json("check", str(model), "--keep-going", "--backend", "native")
    assert _traces(nat) == _traces(py)
    bad = {r["property"]: r for r in nat["results"]}["no-model-error"]
    assert bad["verdict"] == "violated" and bad["violations"] == py["results"][-1]["violations"]


def test_values_beyond_64_bits_are_computed_in_python(tmp_path: Path) -> None:
    model = tmp_path / "big.gcl"
    model.write_text("var x : int = 1;\nprocess P { x < 9000000000000000000 -> x := x * 3; }\n")
    code, res = cli_json("check", str(model), "--backend", "native")
    assert code == 1
    stats = res["results"][0]["stats"]
    assert stats["states"] == 41 and "64-bit" in stats["native_fallback"]  # 3^0 .. 3^40
    assert res["verdict"] == "violated"  # the last state is a deadlock, as in Python
    system = parse_gcl_file(model)
    sem = NativeSemantics(system, opt="-O0")
    assert sem.successors((3**38,)) == ([(0, (3**39,))], ()) and sem.fallbacks == 0
    # 3^39 * 3 > 2^63: this step is answered by the Python back end
    assert sem.successors((3**39,)) == ([(0, (3**40,))], ()) and sem.fallbacks == 1


def test_hash_compact_uses_at_most_16_bytes_per_state_and_reports_omissions() -> None:
    if not CORPUS.exists():
        pytest.skip("../shared/benchmarks/promela is not available")
    args = ("check", str(CORPUS / "brp.1.pm"), "--keep-going", "--backend", "native", "--no-reduce")
    code, res = cli_json(*args, "--store", "hash-compact")
    assert code == 1
    stats = res["results"][0]["stats"]
    assert stats["states"] == 40710 and stats["bytes_per_state"] <= 16
    assert 0 < stats["omission_probability"] < 1e-9
    _, exact = cli_json(*args)
    violated = {k: v for k, v in _traces(exact).items() if v[0] == "violated"}
    assert violated and {k: _traces(res)[k] for k in violated} == violated  # the same traces
    assert {r["verdict"] for r in res["results"]} == {"violated", "unknown"}  # never holds


def test_backend_refusals_and_auto(monkeypatch: pytest.MonkeyPatch) -> None:
    model = str(GCL_EXAMPLES / "peterson.gcl")
    r = run_cli("check", model, "--backend", "native", "--order", "dfs")
    assert r.code == 2 and "--backend: the native back end searches breadth-first only" in r.err
    r = run_cli("check", model, "--backend", "native", "--method", "under")
    assert r.code == 2 and "--backend applies to --method explicit" in r.err
    code, res = cli_json("check", model, "--backend", "auto", "--order", "dfs")
    assert code == 0 and "backend" not in res["results"][0]["stats"]
    code, res = cli_json("check", model, "--backend", "auto")  # small: stays in Python
    assert code == 0 and "backend" not in res["results"][0]["stats"]


def _counter(tmp_path: Path, n: int) -> str:
    """A GCL model of ``n + 1`` states in a row (the Python search asks ``hand_over`` every
    1,024 expansions)."""
    model = tmp_path / "count.gcl"
    model.write_text(f"var x : 0..{n};\nprocess P {{ x < {n} -> x := x + 1; }}\n")
    return str(model)


def _recorded(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The background builds ``auto`` starts, in order (and every one found ready when asked:
    the asking search waits for it)."""
    import absmc.engines.explicit.native as nat
    from absmc.native.background import BackgroundBuild

    builds: list[Any] = []

    class Recorded(BackgroundBuild):
        def start(self) -> None:
            builds.append(self)
            super().start()

        def ready(self) -> bool:
            return self.result() is not None

    monkeypatch.setattr(nat, "BackgroundBuild", Recorded)
    monkeypatch.setattr(nat, "AUTO_SWITCH_STATES", 10)  # now the models count as large
    monkeypatch.setattr(nat, "AUTO_COMPILE_AFTER_S", 0.0)
    return builds


def test_auto_hands_over_to_c_once_the_background_build_is_ready(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    model = _counter(tmp_path, 5000)
    _, py = cli_json("check", model, "--keep-going", "--backend", "python")
    builds = _recorded(monkeypatch)
    code, res = cli_json("check", model, "--keep-going", "--backend", "auto")
    stats = res["results"][0]["stats"]
    assert code == 1 and stats["backend"] == "native"  # the C search ran, from the start
    assert len(builds) == 1 and builds[0].ready()  # $ABSMC_NATIVE_OPT is set: no upgrade
    assert stats["states"] == 5001 == py["results"][0]["stats"]["states"]
    assert _traces(res) == _traces(py)  # the deadlock at x = 5000, replayed


def test_auto_is_the_default_backend_and_python_is_chosen_by_name(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    model = _counter(tmp_path, 5000)
    builds = _recorded(monkeypatch)  # 10 states count as large
    _, default = cli_json("check", model, "--keep-going")
    assert default["results"][0]["stats"]["backend"] == "native" and len(builds) == 1
    _, py = cli_json("check", model, "--keep-going", "--backend", "python")
    assert py["results"][0]["stats"].get("backend", "python") == "python" and len(builds) == 1


def test_a_long_c_search_in_auto_moves_to_better_compiled_code(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import absmc.engines.explicit.native as nat

    builds = _recorded(monkeypatch)
    monkeypatch.setattr(nat, "UPGRADE_AFTER_S", 0.0)
    monkeypatch.setattr(nat, "UPGRADE_RATIO", 0.0)
    monkeypatch.setattr(nat, "UPGRADE_OPT", "-O1")
    monkeypatch.delenv("ABSMC_NATIVE_OPT")  # auto's own levels: -O0, then the upgrade
    # 1,500^2 states: the -O0 search lasts more than one 0.2 s slice
    model = tmp_path / "grid.gcl"
    model.write_text(
        "var x : 0..1499; var y : 0..1499;\n"
        "process P { x < 1499 -> x := x + 1; x == 1499 -> x := 0; }\n"
        "process Q { y < 1499 -> y := y + 1; y == 1499 -> y := 0; }\n"
    )
    code, res = cli_json("check", str(model), "--backend", "auto")
    stats = res["results"][0]["stats"]
    assert code == 0 and stats["backend"] == "native" and stats["states"] == 1500**2
    # Python handed over to the -O0 code, which handed over to the -O1 code
    assert [b._opt for b in builds] == ["-O0", "-O1"] and builds[1]._product is not None


@pytest.mark.parametrize(
    ("cpus", "load", "waits"), [(2, 0.9, False), (2, 9.5, True), (1, 0.0, True)]
)
def test_auto_starts_the_compiler_at_once_only_beside_a_spare_cpu(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cpus: int, load: float, waits: bool
) -> None:
    import absmc.engines.explicit.native as nat

    monkeypatch.setattr(nat, "default_workers", lambda: cpus)
    monkeypatch.setattr(nat.os, "getloadavg", lambda: (load, load, load))
    assert nat.spare_cpus() == min(cpus - 1, cpus - max(load, 1.0))
    builds = _recorded(monkeypatch)
    code, res = cli_json("check", _counter(tmp_path, 300), "--backend", "auto")
    assert code == 1 and res["results"][0]["stats"]["states"] == 301
    # the ski-rental wait (a share of the compiler's estimated time) where no CPU is spare
    assert [b._ratio for b in builds] == [nat.AUTO_COMPILE_RATIO if waits else 0.0]


def test_auto_never_waits_for_the_compiler(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import absmc.engines.explicit.native as nat
    from absmc.native.background import BackgroundBuild

    builds: list[BackgroundBuild] = []

    class Recorded(BackgroundBuild):
        def start(self) -> None:
            builds.append(self)
            super().start()

    monkeypatch.setattr(nat, "BackgroundBuild", Recorded)
    monkeypatch.setattr(nat, "AUTO_SWITCH_STATES", 10)
    monkeypatch.setattr(nat, "AUTO_COMPILE_AFTER_S", 3600.0)  # the build never gets ready
    code, res = cli_json("check", _counter(tmp_path, 3000), "--backend", "auto")
    stats = res["results"][0]["stats"]
    assert code == 1 and stats["states"] == 3001 and "backend" not in stats  # Python's answer
    assert len(builds) == 1 and not builds[0].started  # cancelled before it began


def test_a_cancelled_background_build_kills_the_compiler(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from absmc.native.background import BackgroundBuild

    monkeypatch.setenv("ABSMC_CACHE_DIR", str(tmp_path / "cache"))
    system = parse_gcl_file(GCL_EXAMPLES / "bakery.gcl")
    build = BackgroundBuild(system, system.properties, 0.0, "-O2")
    build.start()
    # until the compiler starts (or the build ends without it: then fail at once, not after
    # the wait; a busy machine may take long to get there)
    deadline = time.monotonic() + 120
    while build._proc is None and not build._done.is_set() and time.monotonic() < deadline:
        time.sleep(0.001)
    proc = build._proc
    assert proc is not None, build.failed()
    assert proc.poll() is None  # the compiler is running
    build.cancel()
    assert proc.wait(timeout=10) < 0  # killed by a signal
    assert build._done.wait(timeout=10) and not build.ready()
    assert isinstance(build.failed(), CompilerError)
    assert not list((tmp_path / "cache").glob("m_*.so"))  # nothing half-built was cached
    with pytest.raises(CompilerError):
        build.result()


def test_progress_and_ctrl_c_in_the_native_search(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    from .conftest import ROOT

    model = tmp_path / "long.gcl"
    model.write_text(
        "var x, y : 0..100000;\nprocess P { x < 100000 -> x := x + 1; }\n"
        "process Q { y < 100000 -> y := y + 1; }\n"
    )
    # --no-reduce: partial-order reduction would make this search one short line
    cmd = ["check", str(model), "--json", "--backend", "native", "--progress", "--no-reduce"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "absmc.cli", *cmd],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()  # the first progress line: the C search is running
    assert line.startswith("states ") and "states/s" in line
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    try:
        out, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()  # a search of 10^10 states must not outlive the test
        proc.communicate()
        raise
    assert proc.returncode == 3
    first = json.loads(out)["results"][0]
    assert first["verdict"] == "unknown" and "interrupted" in first["reason"]
    assert first["stats"]["states"] > 0 and first["stats"]["backend"] == "native"


@needs_native
def test_a_background_build_found_in_the_cache_does_not_wait_for_the_ski_rental(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ski-rental wait (``ratio`` times the compiler's estimated time) is for a compiler
    run: a build already in the cache is ready at once (``auto``'s upgrade to ``-O2`` on a
    second run of the same model starts in the faster code instead of searching twice)."""
    from absmc.native.background import BackgroundBuild
    from absmc.native.build import is_cached, runtime_sources
    from absmc.native.cgen import CGen

    monkeypatch.setenv("ABSMC_CACHE_DIR", str(tmp_path / "cache"))
    system = parse_gcl_file(_counter(tmp_path, 100))
    source = CGen(system, system.properties).source(*runtime_sources())
    assert not is_cached(source, "-O0")
    NativeSemantics(system, system.properties, opt="-O0")  # compiles it into the cache
    assert is_cached(source, "-O0")
    build = BackgroundBuild(system, system.properties, 0.0, "-O0", ratio=10_000.0)
    build.start()
    try:
        # without the cache, the wait would be 10,000 compile times (hours); 120 s is only
        # there for a busy machine
        assert build._done.wait(timeout=120)
        assert build.ready(), build.failed()
    finally:
        build.cancel()
    other = BackgroundBuild(system, system.properties, 0.0, "-O1", ratio=10_000.0)
    other.start()  # not cached at -O1: it waits, and is cancelled without compiling
    deadline = time.monotonic() + 120
    while not other.started and time.monotonic() < deadline:
        time.sleep(0.01)
    assert other.started and not other.ready()
    other.cancel()
    assert other._done.wait(timeout=120) and not other.ready()


@needs_native
def test_a_library_loaded_from_one_cache_is_not_taken_from_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The libraries loaded in a process are remembered by their cached file: after a change of
    ``ABSMC_CACHE_DIR`` (each test's own cache) the same source is not cached there, so a build
    runs the compiler (it used to be found loaded: a test after one that had loaded bakery.gcl's
    library waited 30 s for a compiler that never started)."""
    from absmc.native.build import is_cached, load_library, runtime_sources
    from absmc.native.cgen import CGen

    system = parse_gcl_file(_counter(tmp_path, 50))
    source = CGen(system, system.properties).source(*runtime_sources())
    monkeypatch.setenv("ABSMC_CACHE_DIR", str(tmp_path / "a"))
    first = load_library(source, "-O0")
    assert is_cached(source, "-O0") and load_library(source, "-O0") is first
    monkeypatch.setenv("ABSMC_CACHE_DIR", str(tmp_path / "b"))
    assert not is_cached(source, "-O0")
    started: list[object] = []
    load_library(source, "-O0", on_compile=started.append)
    assert len(started) == 1  # the compiler ran for the new cache
    assert list((tmp_path / "b").glob("m_*.so"))


def test_the_background_build_generates_c_in_a_forked_child(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The C source comes from a forked child (no GIL taken from the search beside it): the
    built module's source is the one generated in process; the child's ``Unsupported`` reaches
    the caller; a cancelled build kills the child and reaps it."""
    import os

    import absmc.native.background as bg
    from absmc.native.build import runtime_sources
    from absmc.native.cgen import CGen, Unsupported

    monkeypatch.setenv("ABSMC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(bg.FORK_ENV, raising=False)
    system = parse_gcl_file(_counter(tmp_path, 100))
    pids: list[int] = []

    class Watched(bg.BackgroundBuild):
        def _on_child(self, pid: int) -> None:
            pids.append(pid)
            super()._on_child(pid)

    build = Watched(system, system.properties, 0.0, "-O0")
    build.start()
    assert build._done.wait(timeout=120) and build.ready(), build.failed()
    assert len(pids) == 1 and pids[0] != os.getpid()
    assert build.result().source == CGen(system, system.properties).source(*runtime_sources())

    class Refused(CGen):
        def source(self, head: str, tail: str) -> str:
            if os.getpid() != parent:  # only the child refuses: the parent never generates
                raise Unsupported("refused in the child")
            raise AssertionError("the parent generated the source")

    parent = os.getpid()
    monkeypatch.setattr(bg, "CGen", Refused)
    refused = Watched(system, system.properties, 0.0, "-O0")
    refused.start()
    assert refused._done.wait(timeout=120)
    failed = refused.failed()
    assert isinstance(failed, Unsupported) and "refused in the child" in str(failed)

    class Slow(CGen):
        def source(self, head: str, tail: str) -> str:
            time.sleep(600)
            raise AssertionError("not cancelled")

    monkeypatch.setattr(bg, "CGen", Slow)
    pids.clear()
    slow = Watched(system, system.properties, 0.0, "-O0")
    slow.start()
    deadline = time.monotonic() + 120
    while not pids and time.monotonic() < deadline:
        time.sleep(0.01)
    assert pids, slow.failed()
    slow.cancel()
    assert slow._done.wait(timeout=30) and not slow.ready()
    assert isinstance(slow.failed(), RuntimeError)
    with pytest.raises(ProcessLookupError):  # killed and reaped
        os.kill(pids[0], 0)


@pytest.mark.parametrize("where", ["python-to-c", "upgrade"])
def test_ctrl_c_between_two_searches_ends_with_the_first_ones_statistics(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, where: str
) -> None:
    """Ctrl-C (or SIGTERM) landing after one search handed over and before the next one runs
    (``auto``: Python to C, or C at -O0 to the upgraded code) ends the check with the first
    search's statistics and "interrupted", not with an error and no results."""
    import absmc.engines.explicit.native as nat
    import absmc.native.search as nsearch

    builds = _recorded(monkeypatch)
    monkeypatch.setattr(nat, "UPGRADE_AFTER_S", 0.0)
    monkeypatch.setattr(nat, "UPGRADE_RATIO", 0.0)
    monkeypatch.setattr(nat, "UPGRADE_OPT", "-O1")
    monkeypatch.delenv("ABSMC_NATIVE_OPT")  # auto's own levels: -O0, then the upgrade
    searches: list[int] = []
    real = nsearch.native_search

    def interrupted_at(*args: Any, **kwargs: Any) -> Any:
        searches.append(1)
        if where == "python-to-c" or len(searches) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(nat, "native_search", interrupted_at)
    model = tmp_path / "grid.gcl"  # 1,500^2 states: the -O0 search lasts more than one slice
    model.write_text(
        "var x : 0..1499; var y : 0..1499;\n"
        "process P { x < 1499 -> x := x + 1; x == 1499 -> x := 0; }\n"
        "process Q { y < 1499 -> y := y + 1; y == 1499 -> y := 0; }\n"
    )
    code, res = cli_json("check", str(model), "--backend", "auto")
    assert code == 3
    first = res["results"][0]
    assert first["verdict"] == "unknown" and "interrupted" in first["reason"]
    assert first["stats"]["states"] >= nat.AUTO_SWITCH_STATES
    assert first["stats"].get("backend") == (None if where == "python-to-c" else "native")
    assert len(searches) == (1 if where == "python-to-c" else 2) and builds
