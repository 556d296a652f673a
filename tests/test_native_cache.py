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
