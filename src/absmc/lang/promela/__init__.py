"""Promela: the front end (SPIN's semantics, lowered to the IR) and export of IR Systems."""

from __future__ import annotations

from pathlib import Path

from absmc.ir.span import ModelError
from absmc.ir.system import System
from absmc.lang.promela.export import to_promela


def load_promela(path: str | Path, defines: dict[str, str] | None = None) -> System:
    """Parse a Promela file (with ``-D`` definitions for the preprocessor) and lower it to a
    System with SPIN's semantics. Raises ``ModelError`` and ``OSError``."""
    from absmc.lang.promela.lower import lower_model
    from absmc.lang.promela.parser import parse_promela_file

    model = parse_promela_file(path, defines)
    if model.nevers:
        claim = model.nevers[0]
        what = "never claims" if claim.kind == "never" else f"{claim.kind} declarations"
        raise ModelError(
            f"{what} are not supported yet (LTL and claims come with the LTL issue)", claim.span
        )
    if model.ltl:
        name, _formula, span = model.ltl[0]
        raise ModelError(
            f"ltl formulas ('{name or 'ltl'}') are not supported yet (they come with LTL)",
            span,
        )
    return lower_model(model, Path(path).stem)


__all__ = ["load_promela", "to_promela"]
