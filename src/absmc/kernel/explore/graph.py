"""A bounded picture of a state space: the first states a breadth-first exploration of a
Semantics reaches, with their transitions, as plain JSON-ready data (``Result.graphs``; drawn
by ``absmc.report``: Graphviz ``--dot``, the HTML report).

Shape: ``{"title": str, "kind": "concrete" | "abstract", "nodes": [{"id": int, "label": str,
"initial": bool, "bad": [property names], "deadlock": bool}], "edges": [{"source": int,
"target": int, "label": str}], "states": int, "truncated": bool}``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from absmc.ir.steps import State
from absmc.kernel.model.semantics import Semantics

#: the default bound on drawn states (a readable picture)
DEFAULT_BOUND = 60


def bounded_graph(
    sem: Semantics,
    title: str,
    kind: str = "concrete",
    bound: int = DEFAULT_BOUND,
    label: Callable[[State], str] | None = None,
    command_text: Callable[[int], str] | None = None,
) -> dict[str, Any]:
    """The first ``bound`` states of ``sem`` in breadth-first order and every transition
    between them. ``label`` writes a state (default: ``name=value`` of every variable),
    ``command_text`` a command (default: ``#index``); a chain label shows its commands joined
    by ``;``. ``truncated`` says whether states were left out."""

    def default_label(s: State) -> str:
        return "\n".join(f"{k}={v}" for k, v in sem.describe_state(s).items())

    write = label or default_label
    text = command_text or (lambda ci: f"#{ci}")
    ids: dict[State, int] = {}
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    truncated = False

    def node(s: State) -> int | None:
        nonlocal truncated
        if s in ids:
            return ids[s]
        if len(ids) >= bound:
            truncated = True
            return None
        ids[s] = len(ids)
        bad = [sem.properties[k].name for k in sem.violated(s)]
        nodes.append({"id": ids[s], "label": write(s), "initial": not ids[s], "bad": bad})
        return ids[s]

    frontier = [sem.initial]
    node(sem.initial)
    while frontier:
        nxt: list[State] = []
        for s in frontier:
            succ, _ = sem.successors(s)
            nodes[ids[s]]["deadlock"] = not succ and not sem.valid_end(s)
            for lab, t in succ:
                new = t not in ids
                k = node(t)
                if k is None:
                    continue
                cmds = "; ".join(text(ci) for ci in sem.commands_of(lab))
                edges.append({"source": ids[s], "target": k, "label": cmds})
                if new:
                    nxt.append(t)
        frontier = nxt
    for n in nodes:
        n.setdefault("deadlock", False)
    return {
        "title": title,
        "kind": kind,
        "nodes": nodes,
        "edges": edges,
        "states": len(nodes),
        "truncated": truncated,
    }
