"""One declaration per command-line option: its parameter name, flags, kind, default, help and
help group. Engines list their own (``Engine.options``), the command line lists the shared
ones (:mod:`absmc.cli.args`); :mod:`absmc.cli.common` turns declarations into click options,
grouped ``--help`` sections and the defaults of :class:`absmc.cli.args.CheckArgs`.

No click here: engines declare, the CLI parses.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

#: ``text``: a string; ``int``/``float``: a number in ``[min, max]``; ``choice``: one of
#: ``choices``; ``path``: a file name (no folder); ``flag``: ``--x`` (false unless given);
#: ``switch``: ``--x/--no-x`` (``flags`` holds the one ``"--x/--no-x"`` declaration)
OptionKind = Literal["text", "int", "float", "choice", "path", "flag", "switch"]


@dataclass(frozen=True)
class Option:
    """One option. ``name`` is the parameter name (the :class:`~absmc.cli.args.CheckArgs`
    field, the key an engine's option builder reads), ``flags`` its spellings (``("-N",
    "--ltl")``), ``default`` its value when not given (``()`` for a ``multiple`` one), ``help``
    the ``--help`` line, ``group`` the ``--help`` section it is listed in; ``min``/``max``
    bound numbers (``min_open``: ``min`` itself excluded), ``show_default`` prints the default
    in ``--help``."""

    name: str
    flags: tuple[str, ...]
    help: str
    default: Any = None
    kind: OptionKind = "text"
    choices: tuple[str, ...] = ()
    min: float | None = None
    max: float | None = None
    min_open: bool = False
    metavar: str | None = None
    multiple: bool = False
    show_default: bool = False
    group: str = "Options"

    @property
    def flag(self) -> str:
        """The long spelling that names the option in messages (``--ltl``; ``--reduce`` for
        ``--reduce/--no-reduce``)."""
        longs = [f for f in self.flags if f.startswith("--")] or list(self.flags)
        return longs[0].split("/")[0]

    @property
    def value_when_absent(self) -> Any:
        """The value the parser gives when the option is not on the command line."""
        if self.multiple:
            return ()
        if self.kind == "flag" and self.default is None:
            return False
        return self.default


def defaults(options: Iterable[Option]) -> dict[str, Any]:
    """``name -> value_when_absent`` of ``options``. Raises ``ValueError`` when two declare
    the same name."""
    out: dict[str, Any] = {}
    for o in options:
        if o.name in out:
            raise ValueError(f"option {o.name!r} is declared twice")
        out[o.name] = o.value_when_absent
    return out
