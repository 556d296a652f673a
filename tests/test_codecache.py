"""The cache of compiled generated Python (issue 25 item 6): a long generated source compiled
before comes back without ``compile``; a short one, another source, a corrupt entry and the
switch compile afresh; the cached code runs as the compiled one does."""

from __future__ import annotations

from pathlib import Path
from types import CodeType

import pytest

from absmc.codegen.codecache import ENV, MIN_CHARS, cached_compile, code_cache_dir
from absmc.codegen.python import compile_system
from absmc.kernel.explore.search import search
from absmc.lang.gcl import parse_gcl


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ABSMC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(ENV, raising=False)
    return code_cache_dir()


def _long_source(k: int) -> str:
    """A module of more than MIN_CHARS characters whose function returns ``k``."""
    pad = "".join(f"x{i} = {i}\n" for i in range(MIN_CHARS // 8))
    return pad + f"def f():\n    return {k}\n"


def _counted(source: str, calls: list[str]) -> CodeType:
    calls.append(source)
    return compile(source, "<gen>", "exec")


def _run(code: CodeType) -> object:
    ns: dict[str, object] = {}
    exec(code, ns)
    return ns["f"]()  # type: ignore[operator]


def test_a_long_source_is_compiled_once(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    src = _long_source(7)
    first = cached_compile(src, "<gen>", lambda: _counted(src, calls))
    second = cached_compile(src, "<gen>", lambda: _counted(src, calls))
    assert len(calls) == 1 and _run(first) == _run(second) == 7
    assert len(list(cache.glob("*.marshal"))) == 1
    other = _long_source(8)  # another source: another entry
    assert _run(cached_compile(other, "<gen>", lambda: _counted(other, calls))) == 8
    assert len(calls) == 2
    cached_compile(src, "<other name>", lambda: _counted(src, calls))  # the name is in the key
    assert len(calls) == 3
    short = "def f():\n    return 1\n"
    for _ in range(2):
        cached_compile(short, "<gen>", lambda: _counted(short, calls))
    assert len(calls) == 5 and len(list(cache.glob("*.marshal"))) == 3
    for entry in cache.glob("*.marshal"):
        entry.write_bytes(b"not marshal")  # corrupt: a miss, then rewritten
    assert _run(cached_compile(src, "<gen>", lambda: _counted(src, calls))) == 7
    assert len(calls) == 6
    monkeypatch.setenv(ENV, "0")
    cached_compile(src, "<gen>", lambda: _counted(src, calls))
    assert len(calls) == 7


def test_a_compiled_system_from_the_cache_searches_as_before(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model wide enough for the cache: the second compilation takes the code from it and
    the search's counts and verdicts are the first's."""
    n = 300  # a line of n + 1 states (x0 is 1 after the first step, the last one is a deadlock)
    decls = f"var go : 0..{n};\n" + "".join(f"var x{i} : 0..2;\n" for i in range(n))
    cmds = "".join(f"  go == {i} -> x{i} := x{(i + 1) % n} + 1, go := {i + 1};\n" for i in range(n))
    system = parse_gcl(decls + "process P {\n" + cmds + "}\ninvariant inv: x0 < 1;\n")
    first = compile_system(system)
    assert len(first.source) >= MIN_CHARS
    import absmc.codegen.codecache as cc

    def no_compile() -> CodeType:
        raise AssertionError("compiled again")

    real = cc.cached_compile
    monkeypatch.setattr(
        "absmc.codegen.python.cached_compile",
        lambda src, name, build: real(src, name, no_compile),
    )
    second = compile_system(system)
    a, b = search(first, keep_going=True), search(second, keep_going=True)
    assert (a.states, a.transitions) == (b.states, b.transitions)
    assert sorted(a.violations) == sorted(b.violations) == ["inv", "no-deadlock"]
    assert a.violations["inv"].path == b.violations["inv"].path
