"""The options of ``--method pdr`` and ``--method kind`` (a module of its own: the CLI and the
registry read them without loading z3)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KindOptions", "PdrOptions"]


@dataclass(frozen=True)
class PdrOptions:
    """Options of ``--method pdr`` (IC3/PDR by Z3's Spacer): ``strengthen`` gives Spacer
    Houdini's invariants (:mod:`absmc.engines.induction.facts`) as background facts (they
    become part of the certificate). The time limit is the run's ``--timeout``."""

    strengthen: bool = True


@dataclass(frozen=True)
class KindOptions:
    """Options of ``--method kind``: ``strengthen`` adds the interval and order invariants
    that Houdini's fixpoint keeps (candidates from the model's initial values, guards and
    properties) to the induction hypothesis; ``max_k`` bounds the induction depth when
    ``--max-depth`` is not given (bounded model checking runs as deep as the induction)."""

    strengthen: bool = True
    max_k: int = 40
