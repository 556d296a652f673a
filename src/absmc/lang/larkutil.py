"""Helpers shared by the lark-based front ends: readable syntax errors and source spans."""

from __future__ import annotations

from typing import Any

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from absmc.ir.span import ModelError, SourceSpan


def span_of(node: Tree[Any] | Token, file: str) -> SourceSpan | None:
    """The source span of a lark tree (``propagate_positions=True``) or token."""
    if isinstance(node, Token):
        if node.line is None:
            return None
        return SourceSpan(
            file, node.line, node.column or 1, node.end_line or 0, node.end_column or 0
        )
    meta = node.meta
    if getattr(meta, "empty", True):
        return None
    return SourceSpan(file, meta.line, meta.column, meta.end_line, meta.end_column)


def _describe_terminal(parser: Lark, name: str) -> str:
    try:
        term = parser.get_terminal(name)
    except KeyError:
        return name
    pattern = term.pattern
    if pattern.type == "str":
        return repr(pattern.value)
    readable = {
        "NAME": "a name",
        "INT": "a number",
        "LABEL": "a label",
        "PROPKIND": "'invariant', 'unreachable'",
        "CMPOP": "a comparison",
        "MULOP": "'*', '/', '%'",
    }
    return readable.get(name, name.lower())


def _expected(parser: Lark, names: set[str] | frozenset[str]) -> str:
    items = sorted({_describe_terminal(parser, n) for n in names if not n.startswith("$")})
    if not items:
        return ""
    if len(items) > 8:
        items = [*items[:8], "…"]
    return ", expected " + (items[0] if len(items) == 1 else "one of " + ", ".join(items))


def syntax_error(err: UnexpectedInput, parser: Lark, file: str, text: str) -> ModelError:
    """Turn a lark parse error into a ``ModelError`` located at the offending input."""
    line = getattr(err, "line", 1) or 1
    column = getattr(err, "column", 1) or 1
    pos = getattr(err, "pos_in_stream", None)
    if isinstance(err, UnexpectedToken) and err.token.start_pos is not None:
        pos = err.token.start_pos
    if pos is not None and text.startswith("/*", pos):
        msg = "unterminated block comment"
    elif isinstance(err, UnexpectedCharacters):
        ch = text[pos] if pos is not None and pos < len(text) else ""
        msg = f"unexpected character {ch!r}"
    elif isinstance(err, UnexpectedEOF):
        lines = text.splitlines() or [""]
        line, column = len(lines), len(lines[-1]) + 1
        msg = "unexpected end of file" + _expected(parser, set(err.expected))
    elif isinstance(err, UnexpectedToken):
        tok = err.token
        if tok.type == "$END":
            lines = text.splitlines() or [""]
            line, column = len(lines), len(lines[-1]) + 1
            msg = "unexpected end of file" + _expected(parser, err.expected)
        else:
            msg = f"unexpected {str(tok)!r}" + _expected(parser, err.expected)
    else:  # pragma: no cover - other lark errors
        msg = str(err).splitlines()[0]
    return ModelError(msg, SourceSpan(file, line, column))
