"""State-space pictures (``Result.graphs``, :mod:`absmc.kernel.explore.graph`) as Graphviz ``dot``
text, and as SVG through Graphviz's ``dot`` program when it is installed."""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

#: edge labels longer than this are wrapped over several lines (never cut)
EDGE_LABEL_CHARS = 20


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _wrap(text: str, n: int) -> str:
    """``text`` over lines of at most ``n`` characters (long words broken), for a label."""
    return "\n".join(textwrap.wrap(text, n, break_long_words=True, break_on_hyphens=False))


def trace_path(graph: Mapping[str, Any], trace: Sequence[Mapping[str, Any]]) -> list[int]:
    """The nodes of a concrete ``graph`` that a trace (its JSON rows) passes through, in
    order: a row's state matched by the node label :func:`absmc.kernel.explore.graph.bounded_graph`
    writes (``name=value`` lines). Rows whose state is not drawn (beyond the bound, inside an
    atomic chain) are skipped; an abstract graph has none."""
    if graph.get("kind", "concrete") != "concrete":
        return []
    ids = {str(n["label"]): int(n["id"]) for n in graph["nodes"]}
    out: list[int] = []
    for row in trace:
        label = "\n".join(f"{k}={v}" for k, v in dict(row.get("state", {})).items())
        node = ids.get(label)
        if node is not None and (not out or out[-1] != node):
            out.append(node)
    return out


#: a graph with more states than this is folded in the HTML report (:func:`fold`)
FOLD_ABOVE = 30


def fold(graph: Mapping[str, Any], path: Sequence[int]) -> dict[str, Any]:
    """The part of ``graph`` around a counterexample: the states of ``path`` (node ids,
    :func:`trace_path`), the states one step from them, and the edges between those (a large
    graph's labels overlap; the path is what the reader looks for). ``folded_from``: the
    number of states the graph had."""
    keep = set(path)
    for e in graph["edges"]:
        if e["source"] in path or e["target"] in path:
            keep.update((e["source"], e["target"]))
    return {
        **graph,
        "nodes": [n for n in graph["nodes"] if n["id"] in keep],
        "edges": [e for e in graph["edges"] if e["source"] in keep and e["target"] in keep],
        "truncated": False,
        "folded_from": len(graph["nodes"]),
    }


def to_dot(graph: Mapping[str, Any], path: Sequence[int] = ()) -> str:
    """The ``dot`` source of one graph: initial state blue, states violating a property red
    (the property names in the label), deadlocks orange; a note node when the picture was cut
    at its bound. ``path`` (node ids, :func:`trace_path`): the counterexample's states get a
    thick red border and the edges between consecutive ones are drawn thick and red."""
    on_path = set(path)
    steps = set(pairwise(path))
    lines = [
        f"digraph {_quote(str(graph.get('title', 'state space')))} {{",
        '  node [shape=box, fontname="monospace", fontsize=9, style=filled, fillcolor=white];',
        '  edge [fontname="monospace", fontsize=8];',
        "  graph [nodesep=0.5];",
    ]
    for n in graph["nodes"]:
        label = str(n["label"])
        color = "white"
        if n.get("deadlock"):
            color, label = "#ffd8a8", label + "\n(deadlock)"
        if n.get("bad"):
            color, label = "#f4cccc", label + "\n(violates " + ", ".join(n["bad"]) + ")"
        if n.get("initial"):
            color = "#cfe2ff" if color == "white" else color
        mark = ', color="#cf222e", penwidth=2.5' if n["id"] in on_path else ""
        lines.append(f"  s{n['id']} [label={_quote(label)}, fillcolor={_quote(color)}{mark}];")
    for e in graph["edges"]:
        mark = ""
        if (e["source"], e["target"]) in steps:
            mark = ', color="#cf222e", fontcolor="#cf222e", penwidth=2.5'
        lines.append(
            f"  s{e['source']} -> s{e['target']} "
            f"[label={_quote(_wrap(str(e['label']), EDGE_LABEL_CHARS))}{mark}];"
        )
    if graph.get("truncated"):
        lines.append(
            f'  more [shape=note, fillcolor="#eeeeee", label="only the first {graph["states"]} '
            'states are drawn"];'
        )
    lines.append("}")
    return "\n".join(lines) + "\n"


def dot_program() -> str | None:
    """The path of Graphviz's ``dot``, or ``None`` when it is not installed."""
    return shutil.which("dot")


def to_svg(
    graph: Mapping[str, Any], timeout_s: float = 30.0, path: Sequence[int] = ()
) -> str | None:
    """The graph drawn by ``dot -Tsvg`` (the ``<svg>`` element only; ``path`` as in
    :func:`to_dot`), or ``None`` when ``dot`` is absent or fails."""
    dot = dot_program()
    if dot is None:
        return None
    try:
        proc = subprocess.run(
            [dot, "-Tsvg"],
            input=to_dot(graph, path),
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0 or "<svg" not in proc.stdout:
        return None
    return proc.stdout[proc.stdout.index("<svg") :]
