"""The libraries one process has loaded are kept per cache file, not per C source (issue 23's
order-dependent pair: ``test_cli.py::test_progress_lines_on_request`` loaded bakery.gcl's
library, and ``test_native.py::test_a_cancelled_background_build_kills_the_compiler``, with its
own cache directory, got that library from ``native/build._LOADED`` without running the
compiler: it waited 30 s for one and failed)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from absmc.lang.gcl import parse_gcl_file
from absmc.native import NativeSemantics

from .conftest import GCL_EXAMPLES
from .native_helpers import needs_native

pytestmark = [needs_native, pytest.mark.usefixtures("native_fast_compile")]


def test_a_library_loaded_from_another_cache_directory_is_compiled_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    system = parse_gcl_file(GCL_EXAMPLES / "peterson.gcl")
    compiles: list[str] = []

    def record(where: str) -> Callable[[subprocess.Popen[str]], None]:
        def on_compile(proc: subprocess.Popen[str]) -> None:
            compiles.append(where)

        return on_compile

    for where in ("first", "again", "second"):
        cache = tmp_path / ("a" if where != "second" else "b")
        monkeypatch.setenv("ABSMC_CACHE_DIR", str(cache))
        sem = NativeSemantics(system, on_compile=record(where))
        assert sem.initial_states()  # a working library
        assert len(list(cache.glob("m_*.so"))) == 1
    # the same directory again: the loaded library; another one: the compiler runs
    assert compiles == ["first", "second"]


def _spy_ltl_sources(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The C source of each :class:`~absmc.native.ltl.NativeLtl` built from now on."""
    import absmc.native.ltl as native_ltl

    sources: list[str] = []
    init = native_ltl.NativeLtl.__init__

    def spy(self: native_ltl.NativeLtl, *args: object, **kwargs: object) -> None:
        init(self, *args, **kwargs)  # type: ignore[arg-type]
        sources.append(self.sem.source)

    monkeypatch.setattr(native_ltl.NativeLtl, "__init__", spy)
    return sources


def test_each_run_compiles_only_the_runtime_parts_it_uses(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The product library of ``-N NAME`` (no safety search beside the product search) leaves
    out the safety search, its tree store and threads (``NO_SAFETY_SEARCH``), and CNDFS unless
    ``--workers`` >= 2; without ``-N`` the safety search is in. Each combination loads (a part
    missing a symbol another needs would fail at ``dlopen``) and gives the same verdict, and the
    one-thread runs search the same product states to the same lasso."""
    from absmc.engines.explicit.check import check_explicit
    from absmc.kernel.run.options import CheckOptions
    from absmc.kernel.run.result import Verdict
    from absmc.lang.loader import load_model

    from .conftest import EXAMPLES

    monkeypatch.setenv("ABSMC_CACHE_DIR", str(tmp_path))
    sources = _spy_ltl_sources(monkeypatch)
    system = load_model(EXAMPLES / "ltl" / "abp.pml")
    runs = {
        (claim, workers): check_explicit(system, CheckOptions(ltl=claim), "native", workers)
        for claim, workers in (("delivers", 1), ("delivers", 2), (None, 1), (None, 2))
    }
    assert len(sources) == 4 and len(set(sources)) == 4  # four libraries, four cache files
    assert len(list(tmp_path.glob("m_*.so"))) == 4
    parts = [
        (
            "#define NO_SAFETY_SEARCH" in s,
            "int cn_run(cn_t *N" in s,
            "static int par_run(search_t *S, double seconds) {" in s,
        )
        for s in sources
    ]
    assert parts == [
        (True, False, False),
        (True, True, False),
        (False, False, True),
        (False, True, True),
    ]
    found = {
        key: {r.property: r for r in result.results}["delivers"] for key, result in runs.items()
    }
    assert {r.verdict for r in found.values()} == {Verdict.VIOLATED}  # without fairness
    assert all(r.stats.extra["backend"] == "native" for r in found.values())
    assert [found[k].stats.extra["workers"] for k in runs] == [1, 2, 1, 2]
    assert found["delivers", 1].stats.states == found[None, 1].stats.states


def test_a_library_without_cndfs_refuses_a_multi_core_search() -> None:
    """:meth:`NativeLtl.search` with ``workers`` >= 2 on a library built with ``cndfs=False``
    raises ``ValueError`` (it has no ``cn_*`` entry points) instead of running one thread."""
    from absmc.codegen.python import compile_system
    from absmc.lang.loader import load_model
    from absmc.native.ltl import NativeLtl

    from .conftest import EXAMPLES

    system = load_model(EXAMPLES / "ltl" / "abp.pml")
    native = NativeLtl(system, system.properties, system.ltl, por=False, cndfs=False)
    prop = system.ltl[0]
    assert native.search(compile_system(system), prop).outcome.states > 0
    with pytest.raises(ValueError, match="without the multi-core search"):
        native.search(compile_system(system), prop, workers=2)


def test_a_change_in_the_model_or_the_runtime_compiles_a_new_library(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The cache is keyed by the whole C source (model code and runtime parts) and the
    compiler's command: the same source is served from the cache without the compiler; another
    model, another runtime text (here one comment more in runtime_tail.c) or another runtime
    selection (``search=False``) is compiled into a library of its own, and each library
    answers for its own model (its number of variables)."""
    from absmc.native import build
    from absmc.native.cgen import CGen

    monkeypatch.setenv("ABSMC_CACHE_DIR", str(tmp_path))
    compiled: list[str] = []

    def load(source: str) -> object:
        return build.load_library(source, "-O0", lambda proc: compiled.append(source))

    peterson = parse_gcl_file(GCL_EXAMPLES / "peterson.gcl")
    bakery = parse_gcl_file(GCL_EXAMPLES / "bakery.gcl")
    head, tail = build.runtime_sources()
    first = CGen(peterson, peterson.properties).source(head, tail)
    changed_runtime = CGen(peterson, peterson.properties).source(head, tail + "/* changed */\n")
    no_search = CGen(peterson, peterson.properties).source(*build.runtime_sources(search=False))
    other_model = CGen(bakery, bakery.properties).source(head, tail)
    libs = [load(s) for s in (first, first, changed_runtime, no_search, other_model)]
    assert compiled == [first, changed_runtime, no_search, other_model]
    assert len(list(tmp_path.glob("m_*.so"))) == 4
    assert all(build.is_cached(s, "-O0") for s in compiled)
    assert not build.is_cached(first + "/* not compiled */\n", "-O0")
    nv = [lib.api_nv() for lib in libs]  # type: ignore[attr-defined]
    assert nv[:4] == [len(peterson.variables)] * 4 and nv[4] == len(bakery.variables)
    assert len(peterson.variables) != len(bakery.variables)
