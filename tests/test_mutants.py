"""Mutation test of the front ends: mutants of the shipped examples never crash absmc.

Each mutant of an ``examples/**/*.gcl`` or ``examples/**/*.pml`` model (a deleted, duplicated
or swapped token, a truncation, random bytes, a huge integer, binary garbage, bytes that are not
UTF-8) is checked through the CLI with ``--max-states 2000 --timeout 5``. Every run must end
with a verdict (exit 0, 1 or 3) or with exit 2 and one located message ``FILE:LINE:COL: error:
...``; a directory or a missing file gives a one-line usage error. Never exit 4, never a
traceback. A seeded, bounded number of mutants runs in CI; ``-m slow`` runs many more.
"""

from __future__ import annotations

import random
import re
import signal
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import EXAMPLES

LOCATED = re.compile(r"^[^:\n]+:\d+:\d+: error: ")
USAGE = re.compile(r"^(Error: |absmc: error: )", re.MULTILINE)
LIMITS = ("--max-states", "2000", "--timeout", "5")
WATCHDOG_S = 60

SOURCES = sorted([*EXAMPLES.glob("**/*.gcl"), *EXAMPLES.glob("**/*.pml")])
TOKEN = re.compile(rb"[A-Za-z_][A-Za-z_0-9]*|\d+|\s+|/\*|\*/|::|->|[-+*/%<>=!&|]=?|.", re.DOTALL)


@dataclass(frozen=True)
class Mutant:
    """One mutated model: ``data`` is written to a file named like ``source``."""

    source: Path
    kind: str
    data: bytes

    def __str__(self) -> str:
        return f"{self.source.name}:{self.kind}"


def _tokens(data: bytes) -> list[bytes]:
    return TOKEN.findall(data)


def mutate(source: Path, rng: random.Random) -> Mutant:
    """A random mutant of ``source`` (one of the mutation operators, chosen by ``rng``)."""
    data = source.read_bytes()
    toks = _tokens(data)
    solid = [i for i, t in enumerate(toks) if not t.isspace()]
    kind = rng.choice(
        ["delete", "delete", "duplicate", "swap", "truncate", "bytes", "integer", "nesting",
         "binary", "latin1"]
    )  # fmt: skip
    i = rng.choice(solid)
    if kind == "delete":
        toks[i] = b""
    elif kind == "duplicate":
        toks[i] = toks[i] + b" " + toks[i]
    elif kind == "swap":
        j = solid[(solid.index(i) + 1) % len(solid)]
        toks[i], toks[j] = toks[j], toks[i]
    elif kind == "truncate":
        return Mutant(source, f"truncate@{i}", b"".join(toks[:i]))
    elif kind == "bytes":
        noise = bytes(rng.choice(b"{}()[];:,.-+*/%!<>=&|^~?'\"#@$\\0123456789aZ_\n\t ")
                      for _ in range(rng.randint(1, 4)))  # fmt: skip
        toks[i] = toks[i] + noise
    elif kind == "integer":
        numbers = [k for k in solid if toks[k].isdigit()] or [i]
        i = rng.choice(numbers)
        toks[i] = rng.choice([b"9" * rng.choice([20, 5000]), b"2147483648", b"4294967296"])
    elif kind == "nesting":
        depth = rng.choice([300, 600])
        opener = rng.choice([b"(", b"-", b"!", b"~"]) if toks[i].isdigit() else b"("
        closer = b")" if opener == b"(" else b""
        toks[i] = opener * depth + toks[i] + closer * depth
    elif kind == "binary":
        return Mutant(source, "binary", bytes(rng.randrange(256) for _ in range(200)))
    elif kind == "latin1":
        toks[i] = toks[i] + b"\xe9\xff"
    return Mutant(source, f"{kind}@{i}", b"".join(toks))


def mutants(seed: int, count: int) -> Iterator[Mutant]:
    """``count`` seeded mutants spread over the shipped examples."""
    rng = random.Random(seed)
    for k in range(count):
        yield mutate(SOURCES[k % len(SOURCES)], rng)


class _Hang(BaseException):
    """Raised by the watchdog: a run that neither ended nor honoured ``--timeout``."""


def _alarm(signum: int, frame: types.FrameType | None) -> None:
    raise _Hang


@dataclass
class Outcome:
    code: int
    err: str
    crashed: BaseException | None


def run_check(path: Path, limits: tuple[str, ...] = LIMITS) -> Outcome:
    """``absmc check PATH`` with the mutation limits (or ``limits``), in-process (the one
    adapter to the CLI)."""
    from absmc.cli import cli

    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(WATCHDOG_S)
    try:
        res = CliRunner().invoke(cli, ["check", str(path), *limits])
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    crashed = res.exception if not isinstance(res.exception, SystemExit) else None
    return Outcome(res.exit_code, res.stderr, crashed)


def problem(outcome: Outcome, expect_usage: bool = False) -> str | None:
    """Why ``outcome`` is not acceptable, or ``None``."""
    if outcome.crashed is not None:
        return f"exception {type(outcome.crashed).__name__}: {outcome.crashed}"
    if "Traceback" in outcome.err:
        return "traceback on stderr"
    if outcome.code in (0, 1, 3):
        return None
    if outcome.code != 2:
        return f"exit {outcome.code}: {outcome.err.strip()[:300]}"
    if expect_usage:
        return None if USAGE.search(outcome.err) else f"not a usage error: {outcome.err!r}"
    lines = outcome.err.strip().splitlines()
    if len(lines) == 1 and LOCATED.match(lines[0]):
        return None
    return f"exit 2 without one located message: {outcome.err.strip()[:300]!r}"


def _check_mutants(tmp_path: Path, seed: int, count: int) -> list[str]:
    bad = []
    for m in mutants(seed, count):
        path = tmp_path / m.source.name
        path.write_bytes(m.data)
        why = problem(run_check(path))
        if why is not None:
            bad.append(f"{m}: {why}")
    return bad


def test_mutants_of_examples_end_with_verdict_or_located_error(tmp_path: Path) -> None:
    # 60 mutants: every example (45) and every kind of mutation (9) among them; 4,000 more
    # under -m slow
    bad = _check_mutants(tmp_path, seed=13, count=60)
    assert bad == []


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(8))
def test_many_mutants_of_examples(tmp_path: Path, seed: int) -> None:
    bad = _check_mutants(tmp_path, seed=1000 + seed, count=500)
    assert bad == []


def test_directory_and_missing_file_are_usage_errors(tmp_path: Path) -> None:
    for path in (tmp_path, tmp_path / "missing.pml", tmp_path / "missing.gcl"):
        out = run_check(path)
        assert out.code == 2
        assert problem(out, expect_usage=True) is None


def test_binary_and_non_utf8_files_get_located_errors(tmp_path: Path) -> None:
    for name in ("bin.pml", "bin.gcl"):
        path = tmp_path / name
        path.write_bytes(bytes(range(256)) * 4)
        out = run_check(path)
        assert out.code == 2
        assert problem(out) is None, out.err
