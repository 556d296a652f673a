"""Source locations and the one error type for errors in a user's model."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SourceSpan:
    """A region of a source file: 1-based line and column of its first character.

    ``end_line``/``end_column`` are inclusive-exclusive like lark's positions and may be equal to
    the start for a point location.
    """

    file: str
    line: int
    column: int
    end_line: int = 0
    end_column: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


class ModelError(Exception):
    """An error in the user's model (syntax, names, types, static checks).

    Rendered by the CLI as ``FILE:LINE:COL: error: MESSAGE`` with exit code 2. ``span`` may be
    ``None`` for errors that concern the whole model (then only ``FILE: error:`` is printed).
    """

    def __init__(self, message: str, span: SourceSpan | None = None, file: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.span = span
        self.file = span.file if span is not None else file

    def render(self) -> str:
        """The one-line ``FILE:LINE:COL: error: MESSAGE`` form."""
        where = str(self.span) if self.span is not None else (self.file or "<model>")
        return f"{where}: error: {self.message}"

    def __str__(self) -> str:
        return self.render()
