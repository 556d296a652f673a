"""What the native back end's test modules share: the skip mark when there is no C compiler
and ``absmc check ... --json`` run in-process (their ``-O0`` fixture, ``native_fast_compile``,
is in conftest.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from absmc.native import native_available

from .conftest import run_cli

needs_native = pytest.mark.skipif(
    not native_available(), reason="no C compiler (cc, gcc or clang): no native back end"
)


def cli_json(*args: str) -> tuple[int, dict[str, Any]]:
    """Exit code and parsed JSON of ``absmc ARGS --json`` (a verdict's exit code: 0, 1 or 3)."""
    r = run_cli(*args, "--json")
    assert r.code in (0, 1, 3), r.err
    return r.code, json.loads(r.out)
