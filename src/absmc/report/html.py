"""One self-contained HTML page for a result (``absmc report RESULT.json -o report.html``,
``absmc check --html FILE``): no script, no style sheet or font from the network; every
picture is inline SVG.

It renders the JSON shape of :meth:`absmc.kernel.run.result.Result.to_json` (so that a saved
result can be rendered later): the verdict of each property with the method that decided it
and what the other methods did (``--method auto``), the statistics, each counterexample as a
step table and as a message sequence chart (processes as lifelines, as SPIN's iSpin draws
them; a send ``c!...`` and the matching receive ``c?...`` of the same channel joined by an
arrow), the refinement rounds as a table and a plot, and the explored state graphs
(``graphs``: drawn by Graphviz's ``dot``; a plain list with a note where ``dot`` is absent).
The page is the Jinja2 template ``templates/report.html.j2`` (autoescaped); the pictures are
SVG built here, escaping the text they contain.
"""

from __future__ import annotations

import functools
import html
import re
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import jinja2
from markupsafe import Markup

from absmc.report.dot import FOLD_ABOVE, fold, to_svg, trace_path

_COLOR = {"holds": "#1a7f37", "violated": "#cf222e", "unknown": "#9a6700"}

_CSS = """
body { font-family: sans-serif; margin: 1.5em; color: #1f2328; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: .5em 0; font-size: .9em; }
th, td { border: 1px solid #d0d7de; padding: .25em .5em; text-align: left;
         vertical-align: top; }
th { background: #f6f8fa; }
td.mono, span.mono { font-family: monospace; }
.verdict { font-weight: bold; }
.note { color: #57606a; font-size: .9em; }
svg { max-width: 100%; height: auto; }
figure { margin: .5em 0; }
tr.cycle td { background: #fff0f0; }
"""


def _e(x: object) -> str:
    return html.escape(str(x), quote=True)


def _cell(v: object) -> str:
    """A table cell's text (the template escapes it)."""
    if isinstance(v, list):
        return ", ".join(str(x) for x in v) or "-"
    if isinstance(v, dict):
        return ", ".join(f"{k}: {x}" for k, x in v.items())
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


@functools.cache
def _template() -> jinja2.Template:
    """The page template (``templates/report.html.j2``, package data), autoescaped."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("absmc.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    return env.get_template("report.html.j2")


# -- traces ------------------------------------------------------------------------------
def _changed(trace: Sequence[Mapping[str, Any]], k: int) -> str:
    now = trace[k]["state"]
    if k == 0:
        return " ".join(f"{n}={v}" for n, v in now.items())
    before = trace[k - 1]["state"]
    return " ".join(f"{n}={v}" for n, v in now.items() if before.get(n) != v)


#: the command text of a stutter step (kernel.replay.trace.STUTTER_TEXT; the report reads JSON)
_STUTTER = "(stutter: the terminal state repeats)"


def _step_rows(trace: Sequence[Mapping[str, Any]], cycle_start: int | None) -> list[dict[str, Any]]:
    return [
        {
            "step": s["step"],
            "mark": cycle_start == k,
            "cycle": cycle_start is not None and k > cycle_start,
            "process": s.get("process") or "",
            "command": s.get("command") or "initial state",
            "source": s.get("source") or "",
            "changed": _changed(trace, k),
        }
        for k, s in enumerate(trace)
    ]


def step_table(trace: Sequence[Mapping[str, Any]], cycle_start: int | None = None) -> str:
    """A trace (``PropertyResult.to_json()["trace"]``) as a step table (the template's
    ``step_table`` macro); for a lasso (``cycle_start``: the row whose state the last row
    returns to) that row is marked ⟲ and the rows of the cycle after it are tinted (class
    ``cycle``)."""
    return str(_template().module.step_table(_step_rows(trace, cycle_start)))  # type: ignore[attr-defined]


_SEND = re.compile(r"(\w+(?:\[[^\]]*\])?)\s*!!?(?!=)")
_RECV = re.compile(r"(\w+(?:\[[^\]]*\])?)\s*\?\??(?![<\[])")

#: characters per line of a box's label in the sequence chart (lines are wrapped, never cut)
_LABEL_WIDTH = 24
_LINE_H = 13


def _label_lines(text: str, width: int = _LABEL_WIDTH) -> list[str]:
    """``text`` wrapped to lines of at most ``width`` characters (long words broken)."""
    return textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False) or [""]


def sequence_chart(trace: Sequence[Mapping[str, Any]], cycle_start: int | None = None) -> str:
    """A message sequence chart of a trace as SVG: one lifeline per process (in order of
    appearance), one box per step on its process's lifeline (its label wrapped over as many
    lines as it needs, the full text also as the box's tooltip), a box across every lifeline
    for a stutter step, and an arrow from each send on a channel to the next receive from that
    channel (first in, first out). For a lasso (``cycle_start``) the cycle's boxes are drawn
    red and a bracket on the left says where the run returns."""
    procs: list[str] = []
    for s in trace[1:]:
        p = s.get("process")
        if p and p not in procs:
            procs.append(p)
    lane, top, gap, box_w, left = 190, 50, 8, 170, 120 if cycle_start is not None else 20
    width = left + max(1, len(procs)) * lane
    x = {p: left + i * lane + lane // 2 for i, p in enumerate(procs)}
    labels = [_label_lines(f"{k}: {s.get('command') or ''}") for k, s in enumerate(trace) if k > 0]
    heights = [len(lines) * _LINE_H + 9 for lines in labels]
    ys = [top + sum(heights[:i]) + gap * i for i in range(len(heights))]
    height = (ys[-1] + heights[-1] if heights else top) + 20
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="msc" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" font-family="monospace" '
        'font-size="11">',
        "<defs><marker id='arrow' viewBox='0 0 10 10' refX='10' refY='5' markerWidth='8' "
        "markerHeight='8' orient='auto-start-reverse'><path d='M0,0 L10,5 L0,10 z' "
        "fill='#cf222e'/></marker></defs>",
    ]
    for p, px in x.items():
        out.append(
            f'<text x="{px}" y="20" text-anchor="middle" font-weight="bold">{_e(p)}</text>'
            f'<line x1="{px}" y1="28" x2="{px}" y2="{height - 10}" stroke="#8c959f" '
            'stroke-dasharray="4 3"/>'
        )
    pending: dict[str, list[tuple[int, int]]] = {}
    arrows = []
    for k, s in enumerate(trace[1:], start=1):
        cmd = str(s.get("command") or "")
        y, h, lines = ys[k - 1], heights[k - 1], labels[k - 1]
        in_cycle = cycle_start is not None and k > cycle_start
        stroke = "#cf222e" if in_cycle else "#57606a"
        p = s.get("process")
        if p in x:
            px, bx, bw = x[p], x[p] - box_w // 2, box_w
        else:  # a stutter step (no process moves): across every lifeline
            px, bx, bw = left + (width - left) // 2, left + 10, width - left - 20
        text = "".join(
            f'<tspan x="{px}" dy="{_LINE_H if i else 0}">{_e(line)}</tspan>'
            for i, line in enumerate(lines)
        )
        dash = ' stroke-dasharray="5 3"' if p not in x else ""
        cls = "step cycle" if in_cycle else "step"
        out.append(
            f'<g class="{cls}"><title>{_e(cmd)}</title><rect x="{bx}" y="{y}" '
            f'width="{bw}" height="{h}" rx="4" fill="#f6f8fa" stroke="{stroke}"{dash}/>'
            f'<text x="{px}" y="{y + 14}" text-anchor="middle">{text}</text></g>'
        )
        if p not in x:
            continue
        for m in _SEND.finditer(cmd):
            pending.setdefault(m.group(1), []).append((px, y + h // 2))
        for m in _RECV.finditer(cmd):
            queue = pending.get(m.group(1))
            if queue:
                sx, sy = queue.pop(0)
                ry = y + h // 2
                tx = px - box_w // 2 if sx < px else px + box_w // 2
                fx = sx + box_w // 2 if sx < px else sx - box_w // 2
                arrows.append(
                    f'<line class="message" x1="{fx}" y1="{sy}" x2="{tx}" y2="{ry}" '
                    f'stroke="#cf222e" marker-end="url(#arrow)"><title>{_e(m.group(1))}'
                    "</title></line>"
                )
    out += arrows
    if cycle_start is not None and cycle_start + 1 < len(trace):
        y0, y1 = ys[cycle_start], ys[-1] + heights[-1]
        out.append(
            f'<g class="cycle-mark"><path d="M{left - 6},{y0} h-10 V{y1} h10" fill="none" '
            f'stroke="#cf222e" stroke-width="2"/><text x="{left - 20}" y="{(y0 + y1) // 2}" '
            f'text-anchor="end" fill="#cf222e"><tspan x="{left - 20}">⟲ cycle:</tspan>'
            f'<tspan x="{left - 20}" dy="{_LINE_H}">back to the</tspan>'
            f'<tspan x="{left - 20}" dy="{_LINE_H}">state of step {cycle_start}</tspan>'
            "</text></g>"
        )
    out.append("</svg>")
    return "".join(out)


# -- refinement rounds -------------------------------------------------------------------
def rounds_plot(rows: Sequence[Mapping[str, Any]]) -> str:
    """The refinement rounds' state counts as a small SVG line plot (one line per numeric
    series among ``may_states``, ``must_states``, ``abstract_states``, ``concrete_states``)."""
    series = [
        k
        for k in ("may_states", "must_states", "abstract_states", "concrete_states")
        if any(isinstance(r.get(k), int) for r in rows)
    ]
    w, h, pad = 420, 200, 40
    top = max([int(r.get(k) or 0) for r in rows for k in series] + [1])
    n = max(1, len(rows) - 1)
    colors = ["#0969da", "#cf222e", "#1a7f37", "#8250df"]
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="10">',
        f'<line x1="{pad}" y1="{h - pad}" x2="{w - 10}" y2="{h - pad}" stroke="#000"/>',
        f'<line x1="{pad}" y1="10" x2="{pad}" y2="{h - pad}" stroke="#000"/>',
        f'<text x="{w // 2}" y="{h - 8}" text-anchor="middle">round</text>',
        f'<text x="{pad - 4}" y="14" text-anchor="end">{top}</text>',
        f'<text x="{pad - 4}" y="{h - pad}" text-anchor="end">0</text>',
    ]

    def px(i: int) -> float:
        return pad + (w - pad - 20) * (i / n if len(rows) > 1 else 0.5)

    def py(v: int) -> float:
        return h - pad - (h - pad - 20) * v / top

    for i in range(len(rows)):
        out.append(f'<text x="{px(i):.1f}" y="{h - pad + 14}" text-anchor="middle">{i + 1}</text>')
    for j, k in enumerate(series):
        pts = " ".join(f"{px(i):.1f},{py(int(r.get(k) or 0)):.1f}" for i, r in enumerate(rows))
        c = colors[j % len(colors)]
        out.append(f'<polyline points="{pts}" fill="none" stroke="{c}" stroke-width="2"/>')
        for i, r in enumerate(rows):
            out.append(
                f'<circle cx="{px(i):.1f}" cy="{py(int(r.get(k) or 0)):.1f}" r="3" fill="{c}"/>'
            )
        out.append(
            f'<text x="{w - 12}" y="{24 + 12 * j}" text-anchor="end" fill="{c}">'
            f"{_e(k.replace('_', ' '))}</text>"
        )
    out.append("</svg>")
    return "".join(out)


# -- graphs ------------------------------------------------------------------------------
def _graph(graph: Mapping[str, Any], trace: Sequence[Mapping[str, Any]] | None) -> dict[str, Any]:
    """One state graph for the template: its title and Graphviz's SVG with the states and
    steps of ``trace`` (the first counterexample) drawn red — a graph of more than
    ``FOLD_ABOVE`` states folded to the counterexample's neighbourhood (:func:`fold`) — or
    (``svg`` None, ``dot`` not installed) its states and transitions as table rows."""
    title = f"{graph.get('title', 'state space')} ({graph.get('states', 0)} states drawn"
    title += ", cut at the bound)" if graph.get("truncated") else ")"
    path = trace_path(graph, trace) if trace else []
    if len(path) > 1 and len(graph["nodes"]) > FOLD_ABOVE:
        graph = fold(graph, path)
        title += (
            f", folded to the counterexample and the states one step from it: "
            f"{len(graph['nodes'])} of {graph['folded_from']} shown (--dot FILE has them all)"
        )
    svg = to_svg(graph, path=path)
    return {
        "title": title,
        "path": len(path),
        "svg": Markup(svg) if svg is not None else None,
        "states": [[n["id"], n["label"], ", ".join(n["bad"])] for n in graph["nodes"]],
        "edges": [[e["source"], e["target"], e["label"]] for e in graph["edges"]],
    }


# -- the page ----------------------------------------------------------------------------
def render_html(data: Mapping[str, Any]) -> str:
    """The page for one result (``Result.to_json()``), rendered from
    ``templates/report.html.j2``."""
    results = list(data.get("results", []))
    properties = [
        {
            "property": r["property"],
            "kind": r["kind"],
            "verdict": r["verdict"],
            "decided_by": r.get("decided_by") or r.get("method") or "",
            "reason": r["reason"],
        }
        for r in results
    ]
    with_methods = [r for r in results if isinstance(r.get("methods"), dict)]
    methods = None
    if with_methods:
        names = list(dict.fromkeys(m for r in with_methods for m in r["methods"]))
        rows = []
        for r in with_methods:
            cells = []
            for m in names:
                o = r["methods"].get(m, {})
                role = o.get("role") or o.get("verdict") or ""
                cells.append((role, o.get("rejected") or o.get("reason", "")))
            rows.append({"property": r["property"], "cells": cells})
        methods = {"names": names, "rows": rows}
    seen: list[str] = []
    stats = []
    for r in results:
        key = repr(sorted(r["stats"].items()))
        if key not in seen:
            seen.append(key)
            stats.append([r.get("decided_by") or r["method"], _cell(r["stats"])])
    traces = []
    for r in results:
        if not r.get("trace"):
            continue
        cycle = r.get("cycle_start")
        cycle = cycle if isinstance(cycle, int) else None
        replayed = r["verdict"] == "violated"
        traces.append(
            {
                "kind": "Counterexample" if replayed else "Unconfirmed abstract trace",
                "property": r["property"],
                "steps": len(r["trace"]) - 1,
                "replayed": replayed,
                "rows": _step_rows(r["trace"], cycle),
                "cycle": cycle,
                "note": r.get("trace_note"),
                "chart": Markup(sequence_chart(r["trace"], cycle)),
            }
        )
    first = next(
        (r["trace"] for r in results if r["verdict"] == "violated" and r.get("trace")), None
    )
    rounds = []
    done: list[str] = []
    for r in results:
        its = r.get("iterations")
        if not its or repr(its) in done:
            continue
        done.append(repr(its))
        keys = list(dict.fromkeys(k for row in its for k in row))
        rounds.append(
            {
                "method": r.get("decided_by") or r["method"],
                "head": [k.replace("_", " ") for k in keys],
                "rows": [[_cell(row.get(k, "")) for k in keys] for row in its],
                "plot": Markup(rounds_plot(its)),
            }
        )
    return _template().render(
        css=Markup(_CSS),
        colors=_COLOR,
        model=data.get("model", ""),
        overall=str(data.get("verdict", "")),
        method=data.get("method", ""),
        properties=properties,
        methods=methods,
        stats=stats,
        notes=list(data.get("notes", [])),
        traces=traces,
        rounds=rounds,
        graphs=[_graph(g, first) for g in data.get("graphs") or []],
        states=next((r["stats"].get("states") for r in results if r.get("stats")), None),
    )
