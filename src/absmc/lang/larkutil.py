"""Helpers shared by the lark-based front ends: readable syntax errors and source spans."""

from __future__ import annotations

from pathlib import Path
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


UTF8_BOM = "\ufeff"


def read_source(path: str | Path) -> str:
    """The text of a model file: UTF-8 (a leading byte-order mark is dropped), else Latin-1.

    SPIN reads models as bytes, so Latin-1 bytes in comments are legal Promela; decoding a file
    that is not UTF-8 as Latin-1 maps every byte to one character, so a stray byte outside a
    comment is reported by the parser as an unexpected character at its line and column.
    Raises ``OSError`` when the file cannot be read (a directory, a missing file).
    """
    data = Path(path).read_bytes()
    data = data.removeprefix(UTF8_BOM.encode("utf-8"))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


#: The most decimal digits a number in a model may have: Python's limit on converting strings
#: to ``int`` (``sys.get_int_max_str_digits()``, 4300 by default). Numbers that long are far
#: outside every sort a model can declare, so the limit costs nothing.
MAX_DIGITS = 4300


def parse_number(text: str, span: SourceSpan | None, file: str) -> int:
    """The value of a decimal (or ``0x`` hexadecimal) literal ``text``.

    Raises ``ModelError`` at ``span`` for a number with more than ``MAX_DIGITS`` digits (instead
    of Python's ``ValueError``)."""
    digits = text.lstrip("+-")
    if len(digits) > MAX_DIGITS:
        raise ModelError(
            f"number too long ({len(digits)} digits; at most {MAX_DIGITS} are supported)",
            span,
            file,
        )
    neg = text.startswith("-")
    value = int(digits, 16) if digits[:2].lower() == "0x" else int(digits, 10)
    return -value if neg else value


def too_deep(tree: Tree[Any], limit: int, counted: frozenset[str]) -> Tree[Any] | None:
    """The first node of ``tree`` (depth-first, iteratively) at which more than ``limit``
    nodes whose rule name is in ``counted`` are nested, or ``None``."""
    stack: list[tuple[Tree[Any], int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if node.data in counted:
            depth += 1
            if depth > limit:
                return node
        for c in node.children:
            if isinstance(c, Tree):
                stack.append((c, depth))
    return None
