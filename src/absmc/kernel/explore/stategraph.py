"""The reachable state graph CTL's labelling reads (:mod:`absmc.engines.explicit.ctl`), built
by the Python explorer (``ctl.explore``) or read back from the C search
(:mod:`absmc.native.graph`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from absmc.ir.ctl import Formula
from absmc.ir.steps import State

__all__ = ["Graph"]


@dataclass
class Graph:
    """The reachable graph: ``states[i]`` is state ``i`` (0 is the initial state),
    ``succ[i]`` its successor ids (a dead state: itself), ``pred`` the reverse;
    ``complete`` is false when a limit stopped the exploration (``stopped`` says which);
    ``atom_sets``, when given, labels the atoms (the C graph's: :mod:`absmc.native.graph`)."""

    states: Sequence[State]
    index: Mapping[State, int]
    succ: Sequence[Sequence[int]]
    pred: Sequence[Sequence[int]]
    complete: bool = True
    stopped: str | None = None
    atom_sets: Mapping[Formula, set[int]] | None = None
