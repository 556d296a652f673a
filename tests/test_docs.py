"""The README's example outputs are the program's: numbers quoted in the README are checked
against what absmc prints, so they cannot drift."""

from __future__ import annotations

import json
import re

import pytest

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


# --- docs/typeabs.md: the DEOS rows ------------------------------------------------------

TYPEABS = (ROOT / "docs" / "typeabs.md").read_text(encoding="utf-8")


def _doc_row(text: str, first_cell: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(f"| {first_cell} |"))


def _number(pattern: str, row: str) -> int:
    m = re.search(pattern, row)
    assert m is not None, (pattern, row)
    return int(m.group(1).replace(",", ""))


def _results(*args: str) -> dict[str, dict[str, object]]:
    r = run_cli("check", *args, "--json")
    return {x["property"]: x for x in json.loads(r.out)["results"]}


def test_the_deos_gcl_row_of_the_typeabs_guide() -> None:
    row = _doc_row(TYPEABS, "`deos.gcl`")
    exact = _results("examples/gcl/deos.gcl", "--workers", "1")["time_partitioning"]
    assert exact["verdict"] == "violated"
    stats = exact["stats"]
    assert isinstance(stats, dict) and isinstance(exact["trace"], list)
    assert stats["states"] == _number(r"after ([\d,]+) states", row)
    assert len(exact["trace"]) - 1 == _number(r"defect at depth (\d+)", row)
    types = _results("examples/gcl/deos.gcl", "--method", "types", "--abstract", "period_id=signs")
    first = types["time_partitioning"]
    assert first["verdict"] == "violated" and isinstance(first["trace"], list)
    assert first["stats"]["states"] == _number(r"([\d,]+) abstract states", row)  # type: ignore[index]
    assert len(first["trace"]) - 1 == _number(r"counterexample of (\d+) steps", row)


def test_the_deos_pml_row_of_the_typeabs_guide() -> None:
    row = _doc_row(TYPEABS, "`deos.pml`")
    res = _results(
        "examples/promela/deos.pml", "--method", "types", "--abstract", "period_id=signs"
    )
    first = res["assert@60"]
    assert first["verdict"] == "violated" and isinstance(first["trace"], list)
    assert first["stats"]["states"] == _number(r"([\d,]+) abstract states", row)  # type: ignore[index]
    steps = _number(r"counterexample of (\d+) steps", row)
    assert len(first["trace"]) - 1 == steps
    assert f"counterexample of {steps} steps" in str(first["reason"])  # reason and table agree


@pytest.mark.parametrize(
    "model", ["examples/gcl/deos_fixed.gcl", "examples/promela/deos_fixed.pml"]
)
def test_the_fixed_deos_rows_of_the_typeabs_guide(model: str) -> None:
    row = _doc_row(TYPEABS, f"`{model.rsplit('/', 1)[1]}`")
    res = _results(model, "--method", "types", "--abstract", "period_id=signs")
    assert all(x["verdict"] == "holds" for x in res.values())
    states = {x["stats"]["states"] for x in res.values()}  # type: ignore[index]
    assert states == {_number(r"([\d,]+) abstract states", row)}


# --- docs/under.md: the rows reproduced from the paper -----------------------------------

UNDER = (ROOT / "docs" / "under.md").read_text(encoding="utf-8")


def _iterations(*args: str) -> list[tuple[int, int, list[str]]]:
    r = run_cli("check", *args, "--method", "under", "--keep-going", "--json")
    first = json.loads(r.out)["results"][0]
    return [
        (it["concrete_states"], it["abstract_states"], it["new_predicates"])
        for it in first["iterations"]
    ]


def test_the_bakery_row_of_the_under_guide() -> None:
    row = _doc_row(UNDER, "Bakery, BFS")
    claimed = [(int(a), int(b)) for a, b in re.findall(r"\((\d+), (\d+), \{", row.split("|")[2])]
    rows = _iterations("examples/gcl/bakery.gcl")
    assert [(c, a) for c, a, _ in rows[: len(claimed)]] == claimed
    assert len(rows) == _number(r"exact at (\d+)", row.split("|")[2])


def test_the_rax_rows_of_the_under_guide() -> None:
    row = _doc_row(UNDER, "RAX, BFS, keep going")
    claimed = [(int(a), int(b)) for a, b in re.findall(r"\((\d+), (\d+), \{", row.split("|")[2])]
    r = run_cli(
        "check", "examples/gcl/rax.gcl", "--method", "under", "--keep-going",
        "--max-iterations", str(len(claimed)), "--json",
    )  # fmt: skip
    its = json.loads(r.out)["results"][0]["iterations"]
    assert [(it["concrete_states"], it["abstract_states"]) for it in its] == claimed
    dfs = _doc_row(UNDER, "RAX, DFS").split("|")[2]
    r = run_cli("check", "examples/gcl/rax.gcl", "--method", "under", "--order", "dfs", "--json")
    first = json.loads(r.out)["results"][0]
    assert first["verdict"] == "violated"
    assert len(first["iterations"]) == _number(r"violated in iteration (\d+)", dfs)


def test_under_reports_one_predicate_count() -> None:
    """The statistics' predicate count, the note's list and the table's rows agree."""
    r = run_cli(
        "check", "examples/gcl/bakery.gcl", "--method", "under", "--predicate", "y >= 0", "--json"
    )
    res = json.loads(r.out)
    first = res["results"][0]
    listed = next(n for n in res["notes"] if n.startswith("predicates: ")).split(": ", 1)[1]
    new = [p for it in first["iterations"] for p in it["new_predicates"]]
    assert first["stats"]["predicates"] == len(listed.split(", ")) == len(new) + 1  # + the seed


#: where a document's module names are looked for (``kernel/replay/trace.py`` under ``src/absmc``,
#: ``explicit/check.py`` under ``engines``, ``benchmarks/x.py`` under the root)
_BASES = (ROOT / "src" / "absmc", ROOT / "src" / "absmc" / "engines", ROOT)
_SUFFIXES = (".py", ".c", ".md", ".lark", ".j2", ".json", ".gcl", ".pml", ".csv", ".sh")
_TREE = [p for top in ("src", "benchmarks", "tests", "examples") for p in (ROOT / top).rglob("*")]


def _file_of(name: str) -> str:
    """The file a backticked name means: ``kernel/replay/trace.replay`` is
    ``kernel/replay/trace.py``."""
    if not name.endswith(_SUFFIXES) and not name.endswith("/") and "." in name:
        return name.split(".", 1)[0] + ".py"
    return name.rstrip("/")


def _missing(doc: str) -> tuple[int, list[str]]:
    """How many files and folders ``docs/doc`` names in backticks, and those not in the tree
    (a bare ``check.py`` counts when some package has one: it is named in its section)."""
    text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
    names = {
        n
        for n in re.findall(r"`([A-Za-z_][A-Za-z0-9_./]*)`", text)
        if ("/" in n or n.endswith((".py", ".c"))) and "NAME" not in n
    }
    missing = []
    for n in sorted(names):
        f = _file_of(n)
        if any((b / f).exists() for b in _BASES):
            continue
        if any(p.as_posix().endswith("/" + f) for p in _TREE):
            continue
        missing.append(n)
    return len(names), missing


@pytest.mark.parametrize("doc", ["ARCHITECTURE.md", "internals.md"])
def test_the_architecture_names_modules_that_exist(doc: str) -> None:
    named, missing = _missing(doc)
    assert named > 50 and missing == []


def test_the_architecture_is_one_page() -> None:
    lines = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200
