"""JSON output (issue 26 item 3): every object absmc writes carries ``schema_version`` and is
valid against the JSON Schema shipped with the package; errors under ``--json`` are JSON
objects with the error's location and exit code."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from .conftest import EXAMPLES, GCL_EXAMPLES, ROOT, run_cli, run_cli_subprocess

jsonschema = pytest.importorskip("jsonschema")

PROMELA_ERRORS = ROOT / "tests" / "fixtures" / "promela_errors"


def _schema() -> dict[str, Any]:
    text = (resources.files("absmc") / "schema" / "absmc.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def _valid(data: Any, shape: str) -> None:
    """``data`` is valid against the whole schema and against its ``shape`` definition."""
    schema = _schema()
    jsonschema.validate(data, schema)
    jsonschema.validate(data, {**schema, "anyOf": [{"$ref": f"#/$defs/{shape}"}]})
    assert data["schema_version"] == 1


def test_the_schema_rejects_what_is_not_absmc_output() -> None:
    schema = _schema()
    good = json.loads(run_cli("check", str(GCL_EXAMPLES / "rax.gcl"), "--json").out)
    jsonschema.validate(good, schema)
    for broken in (
        {k: v for k, v in good.items() if k != "schema_version"},
        {**good, "verdict": "maybe"},
        {**good, "results": [{**good["results"][0], "trace": [{"step": -1}]}]},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema)


@pytest.mark.parametrize(
    "args",
    [
        ("examples/gcl/rax.gcl",),
        ("examples/gcl/peterson.gcl",),
        ("examples/gcl/philosophers.gcl", "--keep-going"),
        ("examples/ltl/never_response.pml",),
        ("examples/gcl/bakery.gcl", "--method", "under", "--table"),
        ("examples/python/philosophers.py", "--entry", "dinner", "--component", "philosopher"),
    ],
)
def test_check_json_is_valid(args: tuple[str, ...]) -> None:
    r = run_cli("check", *args, "--json")
    assert r.code in (0, 1)
    _valid(json.loads(r.out), "result")


def test_simulate_json_and_the_trail_are_valid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    r = run_cli("simulate", "examples/gcl/philosophers.gcl", "--json", "--seed", "1")
    _valid(json.loads(r.out), "simulation")
    monkeypatch.delenv("ABSMC_NO_TRAIL")
    model = tmp_path / "never_response.pml"
    model.write_text((EXAMPLES / "ltl" / "never_response.pml").read_text())
    out = json.loads(run_cli("check", str(model), "--json").out)
    _valid(out, "result")
    trail = json.loads(Path(out["trail"]).read_text())
    _valid(trail, "result")
    assert trail["format"] == "absmc-trail" and "cycle_start" in trail["results"][0]


def test_a_model_error_under_json_is_a_located_object() -> None:
    bad = ROOT / "tests" / "fixtures" / "gcl_errors" / "assign_undeclared.gcl"
    r = run_cli("check", str(bad), "--json")
    assert r.code == 2
    data = json.loads(r.out)
    _valid(data, "error")
    line, col = r.err.split(":")[1:3]  # FILE:LINE:COL: error: ... stays on stderr
    assert (data["file"], data["line"], data["column"]) == (str(bad), int(line), int(col))
    assert data["exit_code"] == 2 and data["error"] in r.err


def test_usage_and_file_errors_under_json() -> None:
    r = run_cli("check", "examples/gcl/rax.gcl", "--json", "--property", "nope")
    data = json.loads(r.out)
    _valid(data, "error")
    assert r.code == data["exit_code"] == 2 and "nope" in data["error"] and data["file"] is None
    r = run_cli("check", "no/such/model.gcl", "--json")
    data = json.loads(r.out)
    _valid(data, "error")
    assert r.code == 2 and data["file"] == "no/such/model.gcl"
    r = run_cli("simulate", "no/such/model.gcl", "--json")
    assert r.code == 2 and json.loads(r.out)["exit_code"] == 2


def test_a_command_line_error_under_json_is_an_object() -> None:
    """click's own errors (a bad choice) happen before any command runs: main() writes them."""
    r = run_cli_subprocess("check", "examples/gcl/rax.gcl", "--json", "--order", "sideways")
    assert r.code == 2 and "Invalid value for '--order'" in r.err
    data = json.loads(r.out)
    _valid(data, "error")
    assert "sideways" in data["error"]
