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
    """Exit code and parsed JSON of ``absmc ARGS --json`` (a verdict's exit code: 0, 1 or 3).
    A ``check`` runs with ``--no-reduce``: these tests compare the native search's full state
    space with SPIN's ``-o1 -DNOREDUCE`` counts, the Python back end and other thread counts
    (partial-order reduction has its own tests, tests/test_por.py)."""
    more = ("--no-reduce",) if args and args[0] == "check" else ()
    r = run_cli(*args, *more, "--json")
    assert r.code in (0, 1, 3), r.err
    return r.code, json.loads(r.out)


def assert_native_equals_python(nat: dict[str, Any], py: dict[str, Any]) -> None:
    """The JSON results of a ``--backend native`` and a ``--backend python`` check: the same
    properties in the same order, each with the same verdict, states and transitions, and every
    native one searched in C."""
    assert nat["results"] and len(nat["results"]) == len(py["results"])
    for a, b in zip(nat["results"], py["results"], strict=True):
        assert a["stats"]["backend"] == "native"
        assert (a["property"], a["verdict"], a["stats"]["states"]) == (
            b["property"],
            b["verdict"],
            b["stats"]["states"],
        )
        assert a["stats"]["transitions"] == b["stats"]["transitions"]
