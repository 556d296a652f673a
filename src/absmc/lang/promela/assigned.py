"""The variable names a Promela model may write after their declaration.

A global channel declared with an initialiser (``chan fa = [0] of { chan }``) is lowered as a
constant channel id unless the model may assign it (SPIN's Examples/LTL/mobile2.pml swaps two
such channels: ``x = fa; fa = fp; fp = x``); :func:`written_names` finds those names.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from absmc.lang.promela.ast import Model, Node, VarDecl


def nodes(x: Any, decls: bool = False) -> Iterator[Node]:
    """Every syntax-tree node in ``x`` (a node, or nested lists of nodes), pre-order; with
    ``decls``, a bare :class:`VarDecl` met in a list is yielded as a ``decl`` node of it."""
    stack = [x]
    while stack:
        y = stack.pop()
        if isinstance(y, list):
            stack.extend(y)
        elif isinstance(y, Node):
            yield y
            stack.extend(y.args)
            if y.options is not None:
                stack.extend(y.options)
        elif decls and isinstance(y, VarDecl):
            yield Node("decl", [y])


def written_names(m: Model) -> set[str]:
    """Names of the variables that some statement of ``m`` may write (by name, so an
    over-approximation where a local shadows a global): left-hand sides of assignments,
    variables a receive stores into, and variables passed to an inline (whose body may
    assign its parameters)."""
    bodies: list[Any] = [p.body for p in m.procs] + [p.body for p in m.nevers]
    bodies += [i.body for i in m.inlines.values()]
    out: set[str] = set()
    for n in nodes(bodies):
        if n.kind == "asgn":
            targets = n.args[:1]
        elif n.kind == "r":
            targets = n.args[1:]
        elif n.kind == "inline_call":
            targets = list(n.args)
        else:
            continue
        out.update(t.name for t in targets if isinstance(t, Node) and t.kind == "var" and t.name)
    return out
