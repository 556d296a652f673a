"""The README's example outputs are the program's: numbers quoted in the README are checked
against what absmc prints, so they cannot drift."""

from __future__ import annotations

import json
import re

from .conftest import ROOT, run_cli

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _json_example() -> dict[str, object]:
    block = README.split("`absmc check MODEL --json` prints one object:", 1)[1]
    body = block.split("```json", 1)[1].split("```", 1)[0]
    found = {
        "model": re.search(r'"model": "([^"]+)"', body),
        "reason": re.search(r'"reason": "([^"]+)"', body),
        "states": re.search(r'"states": (\d+)', body),
        "transitions": re.search(r'"transitions": (\d+)', body),
        "max_depth": re.search(r'"max_depth": (\d+)', body),
    }
    assert all(m is not None for m in found.values())
    return {k: m.group(1) for k, m in found.items() if m is not None}


def test_the_json_example_is_what_check_prints() -> None:
    shown = _json_example()
    r = run_cli("check", str(shown["model"]), "--json")
    first = json.loads(r.out)["results"][0]
    assert first["reason"] == shown["reason"]
    for key in ("states", "transitions", "max_depth"):
        assert first["stats"][key] == int(str(shown[key])), key


def _table_row(model: str) -> str:
    row = next(line for line in README.splitlines() if line.startswith(f"| `{model}` |"))
    return row.rsplit("|", 2)[1]


def test_the_state_counts_of_the_finite_gcl_examples() -> None:
    for model in ("peterson.gcl", "philosophers.gcl", "nonterminating.gcl"):
        claim = _table_row(model)
        count = int(re.match(r"\s*([\d,]+)", claim).group(1).replace(",", ""))  # type: ignore[union-attr]
        r = run_cli("check", f"examples/gcl/{model}", "--keep-going", "--json")
        res = json.loads(r.out)
        assert res["results"][0]["stats"]["states"] == count, model
        deadlock = next(x for x in res["results"] if x["property"] == "no-deadlock")
        assert (deadlock["verdict"] == "violated") == ("deadlock" in claim), model


def test_the_rax_row_gives_the_deadlock_depth() -> None:
    depth = int(re.search(r"depth (\d+)", _table_row("rax.gcl")).group(1))  # type: ignore[union-attr]
    r = run_cli("check", "examples/gcl/rax.gcl", "--json")
    first = json.loads(r.out)["results"][0]
    assert first["verdict"] == "violated" and len(first["trace"]) - 1 == depth
