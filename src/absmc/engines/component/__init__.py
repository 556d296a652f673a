"""``--method component``: a Python program's component checked inside its natively executed
environment (Bao, *Verifying Abstract Components Within Concrete Software Environments*, 2009;
paper 003; the checker is :mod:`absmc.component`). The one engine that reads its model itself:
it takes the program's file name (``Engine.files``), not a System, and the registry chooses it
for a ``.py`` file. Its options are declared once, in :mod:`absmc.component.options`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from absmc.component.options import OPTIONS
from absmc.engines.engine import Capabilities, Engine
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import Result

__all__ = ["ENGINE", "ProgramOptions"]


@dataclass(frozen=True)
class ProgramOptions:
    """What a program's check needs beyond the shared options: the ``entry`` function's name
    and its ``args`` (Python values), the ``component`` (names of functions, classes,
    ``Class.method`` or the module), the step ``granularity`` (``statement`` or ``access``),
    ``emit_tests`` (a file for the environment's border states as pytest tests, or ``None``),
    the ``abstraction`` (``none``, ``predicates``, ``range``, ``prover``) with its
    ``predicates`` (Python expressions), ``env_choices`` and ``confirm`` (as
    :class:`absmc.component.ComponentOptions`)."""

    entry: str | None = None
    component: tuple[str, ...] = ()
    args: tuple[Any, ...] = ()
    granularity: str = "statement"
    emit_tests: str | None = None
    abstraction: str = "none"
    predicates: tuple[str, ...] = ()
    env_choices: Mapping[Any, Any] = field(default_factory=dict)
    confirm: bool = True


def _check(path: str, options: CheckOptions, own: ProgramOptions) -> Result:
    from absmc.engines.component.check import check_program

    return check_program(path, options, own)


#: the registry entry (:mod:`absmc.engines.registry`): no portfolio member (it checks programs)
ENGINE = Engine(
    name="component",
    options_type=ProgramOptions,
    capabilities=Capabilities(
        property_kinds=frozenset({"assert", "deadlock"}),
        stores=frozenset({"exact", "bitstate", "hash-compact"}),
    ),
    description="a Python program's component in its native environment (paper 003)",
    check=_check,
    options=OPTIONS,
    files=(".py",),
    files_text="Python programs (.py)",
)
