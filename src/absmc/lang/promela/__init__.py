"""Promela: the front end (SPIN's semantics, lowered to the IR) and export of IR Systems."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from absmc.ir.expr import Expr
from absmc.ir.ltl import LtlProperty, non_progress_property
from absmc.ir.span import ModelError
from absmc.ir.system import System
from absmc.lang.promela.ast import Model, Node
from absmc.lang.promela.deadvars import DEAD_VARIABLE_RESET
from absmc.lang.promela.export import to_promela


def load_promela(
    path: str | Path,
    defines: dict[str, str] | None = None,
    dead_variables: bool = False,
    extra_slots: int = 0,
) -> System:
    """Parse a Promela file (with ``-D`` definitions for the preprocessor) and lower it to a
    System with SPIN's semantics; ``dead_variables``: with SPIN's dead-variable reset
    (:mod:`absmc.lang.promela.deadvars`; SPIN's default, off with ``spin -o1``; the System's
    ``reductions`` then name it when it resets anything); ``extra_slots``: process slots
    beyond those the lowering's dry run allocates, each open to every proctype a ``run``
    names (at most SPIN's 255 processes in all). Raises ``ModelError`` and ``OSError``."""
    from absmc.lang.promela.parser import parse_promela_file

    model = parse_promela_file(path, defines)
    for claim in model.nevers:
        if claim.kind != "never":
            raise ModelError(f"{claim.kind} declarations are not supported", claim.span)
    if len(model.nevers) > 1:
        raise ModelError("a model has at most one never claim", model.nevers[1].span)
    return _with_ltl(model, Path(path).stem, dead_variables, extra_slots)


def _with_ltl(
    model: Model, name: str, dead_variables: bool = False, extra_slots: int = 0
) -> System:
    """Lower a model and its ``ltl`` blocks: their atoms are read in the global context (the
    globals they read stay in the state, as SPIN's never claim reads them); a model with
    progress labels also gets the non-progress property (checked with ``non_progress``)."""
    from absmc.lang.promela.claim import claim_property
    from absmc.lang.promela.lower import Lowerer

    if model.ltl:  # the formula parser only for a model with ltl blocks
        from absmc.lang.promela.ltl import FormulaError, atom_nodes, parse_formula, to_ltl
        from absmc.lang.promela.parser import atom_builder

    blocks = []
    seen: set[str] = set()
    proctypes = {pd.name for pd in model.procs}
    remote: dict[str, tuple[str, int | None, str]] = {}
    for k, (bname, text, span) in enumerate(model.ltl):
        label = bname if bname is not None else f"ltl_{k}"
        if label in seen:
            raise ModelError(f"ltl name '{label}' is used twice", span)
        seen.add(label)
        try:
            tree = parse_formula(text)
        except FormulaError as err:
            raise ModelError(f"ltl '{label}': {err}", span) from None
        nodes = atom_nodes(tree, atom_builder(model.file, span), span, proctypes, remote)
        blocks.append((label, text, span, tree, nodes))
    lowerer = Lowerer(model, name)
    lowerer.remote_vars = remote
    lowerer.dead_variables = dead_variables
    lowerer.extra_slots = extra_slots
    lowerer.ltl_reads = [n for b in blocks for n in b[4].values()]
    lowerer.ltl_reads += [st for claim in model.nevers for st in _statements(claim.body)]
    system = lowerer.lower()
    props = [claim_property(lowerer, claim) for claim in model.nevers]
    progress = lowerer.progress_expr()
    if progress is not None:
        props.append(non_progress_property(progress))
    for label, text, span, tree, nodes in blocks:

        def lower(key: tuple[str, int], nodes: dict[tuple[str, int], Node] = nodes) -> Expr:
            return lowerer.state_expr(nodes[key])

        formula = to_ltl(tree, lower)
        props.append(LtlProperty(label, formula, span, text=" ".join(text.split())))
    applied = (DEAD_VARIABLE_RESET,) if any(t.dead for t in lowerer.ptypes.values()) else ()
    return system.with_(ltl=tuple(props), reductions=applied)


def _statements(body: list[Node]) -> list[Node]:
    """Every statement node of a body, nested ones included."""
    out: list[Node] = []
    stack: list[Any] = list(body)
    while stack:
        n = stack.pop()
        if not isinstance(n, Node):
            if isinstance(n, list):
                stack.extend(n)
            continue
        out.append(n)
        stack.extend(a for a in n.args if isinstance(a, (Node, list)))
    return out


__all__ = ["load_promela", "to_promela"]
