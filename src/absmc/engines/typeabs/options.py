"""The options of ``--method types`` (a module of its own: the CLI and the registry read them
without loading the method)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from absmc.engines.typeabs.infer import Rest
    from absmc.lang.basl import BaslAbstraction
    from absmc.lang.domains import Binding

__all__ = ["METHOD", "TypesOptions"]

METHOD = "types"


@dataclass(frozen=True)
class TypesOptions:
    """The method's own options, already parsed: ``bindings`` are (variable, written
    abstraction) pairs (:func:`absmc.lang.domains.parse_bindings`), ``rest`` what happens to
    integer variables inference does not reach, ``basl`` parsed BASL abstractions
    (:func:`absmc.lang.basl.parse_basl_file`) whose names ``bindings`` may use."""

    bindings: tuple[Binding, ...] = ()
    rest: Rest = "concrete"
    basl: tuple[BaslAbstraction, ...] = ()
