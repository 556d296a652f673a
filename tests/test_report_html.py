"""``absmc report`` / ``check --html`` / ``check --dot`` (issue 15, items 3 and 4): one
self-contained page with verdicts, deciding methods, statistics, the counterexample as a step
table and a message sequence chart, refinement rounds and state graphs; checked in a real
headless Chromium where it is installed."""

from __future__ import annotations

import html
import itertools
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from absmc.report.html import render_html, sequence_chart
from tests.conftest import EXAMPLES, ROOT, run_cli

PINGPONG = EXAMPLES / "promela" / "pingpong_buggy.pml"
LAMPORT = EXAMPLES / "promela" / "lamport.pml"

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed (Debian: apt-get install chromium)"
)
needs_dot = pytest.mark.skipif(
    shutil.which("dot") is None,
    reason="Graphviz is not installed (Debian: apt-get install graphviz)",
)


@pytest.fixture(scope="module")
def pingpong_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("page")
    page, dot = out / "report.html", out / "graph.dot"
    r = run_cli("check", str(PINGPONG), "--html", str(page), "--dot", str(dot))
    assert r.code == 1, r.err
    return page


def test_page_has_verdicts_trace_chart_and_graph(pingpong_page: Path) -> None:
    text = pingpong_page.read_text(encoding="utf-8")
    # nothing to fetch at view time (the SVG namespaces are names, not addresses)
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:|//)", text)
    assert "<script" not in text and "<link" not in text and "@import" not in text
    assert re.search(r"assert@21</span></td><td>assert</td><td><span[^>]*>violated", text)
    assert text.count('class="step"') == 5  # one box per step of the counterexample
    assert text.count('class="message"') == 2  # c!2 -> c?x and c!1 -> c?x
    assert 'class="trace"' in text
    assert 'class="graph"' in text


def test_chart_pairs_sends_with_receives_in_fifo_order() -> None:
    trace = [
        {"step": 0, "state": {}},
        {"step": 1, "process": "A", "command": "c!1", "state": {}},
        {"step": 2, "process": "A", "command": "d!7", "state": {}},
        {"step": 3, "process": "B", "command": "d?y", "state": {}},
        {"step": 4, "process": "B", "command": "x = (a ? 1 : 2)", "state": {}},
    ]
    svg = sequence_chart(trace)
    assert svg.count('class="message"') == 1  # d only: c is never received, a ? is no channel
    assert "<title>d</title>" in svg


@needs_dot
def test_dot_file_is_graphviz_input(tmp_path: Path) -> None:
    dot = tmp_path / "g.dot"
    r = run_cli("check", str(PINGPONG), "--dot", str(dot), "--graph-bound", "5")
    assert r.code == 1
    text = dot.read_text(encoding="utf-8")
    assert text.count("[label=") >= 5 and "only the first 5 states" in text
    svg = subprocess.run(["dot", "-Tsvg", str(dot)], capture_output=True, text=True, check=True)
    assert "<svg" in svg.stdout


def test_report_renders_a_saved_result_with_refinement_rounds(tmp_path: Path) -> None:
    saved = tmp_path / "lamport.json"
    r = run_cli(
        "check",
        str(LAMPORT),
        "-D",
        "NOPRED",
        "--method",
        "fourvalued",
        "--refine",
        "--json",
        "--html",
        str(tmp_path / "direct.html"),
    )
    assert r.code == 0, r.err
    saved.write_text(r.out, encoding="utf-8")
    page = tmp_path / "report.html"
    assert run_cli("report", str(saved), "-o", str(page)).code == 0
    text = page.read_text(encoding="utf-8")
    assert "Refinement rounds" in text and 'class="plot"' in text and "polyline" in text
    assert "n[0] &lt;= n[1]" in text  # a predicate the refinement found
    assert text == (tmp_path / "direct.html").read_text(encoding="utf-8")
    assert render_html(json.loads(r.out)) == text


def test_report_refuses_what_is_not_a_result(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{oops", encoding="utf-8")
    r = run_cli("report", str(bad))
    assert r.code == 2 and r.err.startswith(f"{bad}:1:2: error: not JSON")
    bad.write_text("[1]", encoding="utf-8")
    assert run_cli("report", str(bad)).code == 2


@needs_chromium
def test_page_loads_in_headless_chromium(pingpong_page: Path, tmp_path: Path) -> None:
    assert CHROMIUM is not None
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--enable-logging=stderr",
        "--v=0",
    ]
    url = pingpong_page.resolve().as_uri()
    dom = subprocess.run(
        [CHROMIUM, *flags, "--dump-dom", url], capture_output=True, text=True, timeout=120
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    # console messages (errors included) are logged as ...:CONSOLE(...)
    assert [line for line in dom.stderr.splitlines() if ":CONSOLE" in line] == []
    assert dom.stdout.count('class="step"') == 5  # the chart as the browser parsed it
    assert 'class="trace"' in dom.stdout and 'class="graph"' in dom.stdout
    shot = tmp_path / "page.png"
    r = subprocess.run(
        [CHROMIUM, *flags, "--window-size=1100,1700", f"--screenshot={shot}", url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0 and shot.stat().st_size > 10_000
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_chart_wraps_labels_and_draws_a_stutter_step_across_the_lifelines() -> None:
    long = "pc2 == 2 -> e1 := e1 + 1, w1 := 0, pc2 := 3, another_long_name := 12345678901234"
    trace = [
        {"step": 0, "state": {}},
        {"step": 1, "process": "P2", "command": long, "state": {}},
        {"step": 2, "process": None, "command": "(stutter: the terminal state repeats)"},
    ]
    svg = sequence_chart(trace)
    first = svg.split('<g class="step">', 2)[1]
    shown = [html.unescape(t) for t in re.findall(r"<tspan[^>]*>([^<]*)</tspan>", first)]
    assert len(shown) > 2 and all(len(line) <= 24 for line in shown)
    assert "".join(shown).replace(" ", "") == f"1: {long}".replace(" ", "")  # never cut
    assert "…" not in svg
    # one lifeline (P2): the stutter step is a dashed box across it, no "?" lifeline
    assert svg.count('stroke-dasharray="4 3"') == 1 and ">?<" not in svg
    assert 'stroke-dasharray="5 3"' in svg.split('<g class="step">', 2)[2]


def test_a_lasso_is_marked_in_the_table_and_the_chart() -> None:
    r = run_cli("check", str(ROOT / "examples" / "ltl" / "never_response.pml"), "--json")
    data = json.loads(r.out)
    lasso = next(x for x in data["results"] if x["verdict"] == "violated")
    c, n = lasso["cycle_start"], len(lasso["trace"])
    page = render_html(data)
    table = page.split('<table class="trace">', 1)[1].split("</table>", 1)[0]
    assert f"<td>{c} ⟲</td>" in table
    assert table.count('<tr class="cycle">') == n - 1 - c  # the steps that repeat
    chart = page.split('class="msc"', 1)[1].split("</svg>", 1)[0]
    assert chart.count('class="step cycle"') == n - 1 - c
    assert f"state of step {c}" in chart and 'class="cycle-mark"' in chart


def test_the_page_template_escapes_every_text() -> None:
    from importlib import resources

    assert (resources.files("absmc.report") / "templates" / "report.html.j2").is_file()
    evil = "<script>alert(1)</script>"
    step = {"step": 1, "process": evil, "command": f"x < 1 && {evil}", "source": evil}
    data = {
        "model": evil,
        "method": "explicit",
        "verdict": "violated",
        "notes": [evil],
        "results": [
            {
                "property": evil,
                "kind": "assert",
                "method": "explicit",
                "verdict": "violated",
                "reason": evil,
                "stats": {"states": 1, "note": evil},
                "trace": [{"step": 0, "state": {"v": evil}}, {**step, "state": {"v": 1}}],
                "trace_note": evil,
            }
        ],
    }
    page = render_html(data)
    assert "<script" not in page
    assert page.count("&lt;script&gt;") >= 9  # title, heading, tables, notes, chart


def test_the_counterexample_path_is_drawn_red_and_the_graph_count_explained(
    tmp_path: Path,
) -> None:
    from absmc.report.dot import to_dot, trace_path

    dot = tmp_path / "rax.dot"
    r = run_cli("check", "examples/gcl/rax.gcl", "--json", "--graph-bound", "60", "--dot", str(dot))
    data = json.loads(r.out)
    trace = data["results"][0]["trace"]
    path = trace_path(data["graphs"][0], trace)
    assert len(path) == len(trace) == 8  # every state of the 7-step deadlock is drawn
    edges = {(e["source"], e["target"]) for e in data["graphs"][0]["edges"]}
    assert all(step in edges for step in itertools.pairwise(path))
    text = to_dot(data["graphs"][0], path)
    assert text.count("penwidth=2.5") == 8 + 7  # the path's states and steps
    assert dot.read_text() == text  # check --dot draws the same path
    page = " ".join(render_html(data).split())
    assert "may hold more states than the search's statistics count (29)" in page
    del data["graphs"]
    assert "No state graph: the result holds none" in " ".join(render_html(data).split())


def test_a_large_graph_is_folded_to_the_counterexamples_neighbourhood() -> None:
    from absmc.report.dot import fold, trace_path

    r = run_cli("check", "examples/gcl/rax.gcl", "--json", "--html", "/dev/null")
    data = json.loads(r.out)
    graph = data["graphs"][0]
    path = trace_path(graph, data["results"][0]["trace"])
    small = fold(graph, path)
    near = {e["target"] for e in graph["edges"] if e["source"] in path}
    near |= {e["source"] for e in graph["edges"] if e["target"] in path}
    assert {n["id"] for n in small["nodes"]} == set(path) | near
    assert len(small["nodes"]) < len(graph["nodes"]) == 60
    page = " ".join(render_html(data).split())
    assert f"{len(small['nodes'])} of 60 shown (--dot FILE has them all)" in page


def test_graph_edge_labels_are_wrapped_not_cut() -> None:
    from absmc.report.dot import EDGE_LABEL_CHARS, to_dot

    long = "pc2 == 2 -> e1 := e1 + 1, w1 := 0, pc2 := 3, and_a_very_long_name := 1234567890"
    graph = {
        "title": "g",
        "nodes": [{"id": 0, "label": "x=0", "bad": []}, {"id": 1, "label": "x=1", "bad": []}],
        "edges": [{"source": 0, "target": 1, "label": long}],
        "states": 2,
    }
    label = to_dot(graph).split("s0 -> s1 [label=", 1)[1].split('"]', 1)[0].strip('"')
    lines = label.split("\\n")
    assert len(lines) > 2 and all(len(line) <= EDGE_LABEL_CHARS for line in lines)
    assert "".join(lines).replace(" ", "") == long.replace(" ", "") and "…" not in label


def test_a_python_programs_check_writes_its_page(tmp_path: Path) -> None:
    page, dot = tmp_path / "bank.html", tmp_path / "bank.dot"
    bank = str(EXAMPLES / "python" / "bank.py")
    args = ("--entry", "run", "--component", "Account", "--granularity", "access")
    r = run_cli("check", bank, *args, "--html", str(page), "--dot", str(dot))
    assert r.code == 1 and "--method component drew no state graph" in r.err
    text = page.read_text(encoding="utf-8")
    assert "Counterexample for" in text and text.count('class="step"') >= 5
    assert "of a Python program, has none" in " ".join(text.split())
    assert not dot.exists()
