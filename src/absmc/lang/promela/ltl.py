"""Promela's ``ltl NAME { FORMULA }`` blocks: SPIN's LTL syntax over Promela expressions.

Operators (SPIN 6, ``spin.y``), from the loosest to the tightest binding: ``->`` ``<->``
(``implies``, ``equivalent``; left-associative), ``||``, ``&&``, the prefix operators ``[]``
``<>`` (``always``, ``eventually``: their operand takes ``U`` ``W`` ``V`` but not ``&&``: ``[] p
U q`` is ``[] (p U q)``, ``[] p && q`` is ``([] p) && q``), ``U`` ``W`` ``V`` (``until``,
``stronguntil``, ``weakuntil``, ``release``; left-associative), ``X`` (next), ``!``. Atoms are
Promela expressions (comparisons, arithmetic, ``len``, channel polls, remote references
``P[1]@label``), parsed with the model's expression grammar and lowered in the global context
(:meth:`absmc.lang.promela.lower.Lowerer.state_expr`).

A parenthesized group is a sub-formula when it contains an LTL operator and is not an operand
of an arithmetic or comparison operator; otherwise it belongs to an atom.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any, Final

from lark import Lark
from lark.exceptions import UnexpectedInput

from absmc.ir.expr import Expr
from absmc.ir.ltl import Ltl, LtlOp, atom, mk_ltl
from absmc.ir.span import ModelError, SourceSpan
from absmc.lang.promela.ast import Node

_TOKEN = re.compile(
    r"""(?P<ws>\s+)|(?P<op><->|->|\[\s*\]|<>|&&|\|\||!(?!=))|(?P<lp>\()|(?P<rp>\))
    |(?P<word>[A-Za-z_][A-Za-z0-9_]*)|(?P<other>==|!=|<=|>=|<<|>>|\S)""",
    re.X,
)

_WORDS: Final = {
    "always": "[]",
    "eventually": "<>",
    "until": "U",
    "stronguntil": "U",
    "weakuntil": "W",
    "release": "V",
    "implies": "->",
    "equivalent": "<->",
    "U": "U",
    "W": "W",
    "V": "V",
    "X": "X",
}

#: binary operators: precedence (higher binds tighter), all left-associative
_BINARY: Final = {"->": 1, "<->": 1, "||": 2, "&&": 3, "U": 5, "W": 5, "V": 5}
_PREFIX_OPERAND: Final = {"[]": 5, "<>": 5, "X": 7}

#: the LTL syntax tree before lowering: ``("atom", text)`` or ``(op, child, ...)``
Tree = tuple[Any, ...]


@dataclass
class _Tok:
    kind: str  # "op" (an LTL operator), "lp", "rp", "other"
    text: str
    pos: int


def _tokens(text: str) -> list[_Tok]:
    out: list[_Tok] = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "other"
        tok = m.group()
        if kind == "ws":
            continue
        if kind == "word":
            if tok in _WORDS:
                out.append(_Tok("op", _WORDS[tok], m.start()))
            else:
                out.append(_Tok("other", tok, m.start()))
            continue
        if kind == "op" and tok.startswith("["):
            tok = "[]"
        out.append(_Tok(kind, tok, m.start()))
    return out


class FormulaError(Exception):
    """A syntax error in a formula at character ``pos`` of its text."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.pos = pos


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> _Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def fail(self, msg: str) -> FormulaError:
        t = self.peek()
        return FormulaError(msg, t.pos if t is not None else len(self.text))

    def formula(self) -> Tree:
        f = self.binary(0)
        if self.peek() is not None:
            raise self.fail(f"unexpected '{self.peek().text}' in the formula")  # type: ignore[union-attr]
        return f

    def binary(self, min_prec: int) -> Tree:
        left = self.unary()
        while True:
            t = self.peek()
            if t is None or t.kind != "op" or t.text not in _BINARY:
                return left
            prec = _BINARY[t.text]
            if prec < min_prec:
                return left
            self.i += 1
            right = self.binary(prec + 1)
            left = (t.text, left, right)

    def unary(self) -> Tree:
        t = self.peek()
        if t is None:
            raise self.fail("the formula ends too early")
        if t.kind == "op" and t.text == "!":
            self.i += 1
            return ("!", self.unary())
        if t.kind == "op" and t.text in _PREFIX_OPERAND:
            self.i += 1
            return (t.text, self.binary(_PREFIX_OPERAND[t.text]))
        if t.kind == "op":
            raise self.fail(f"'{t.text}' needs a left operand")
        if t.kind == "rp":
            raise self.fail("unexpected ')'")
        if t.kind == "lp":
            end = self.matching(self.i)
            after = self.toks[end + 1] if end + 1 < len(self.toks) else None
            inner = self.toks[self.i + 1 : end]
            if any(x.kind == "op" for x in inner) and (after is None or after.kind != "other"):
                self.i += 1
                f = self.binary(0)
                if self.peek() is None or self.peek().kind != "rp":  # type: ignore[union-attr]
                    raise self.fail("')' expected")
                self.i += 1
                return f
        return self.atom()

    def matching(self, i: int) -> int:
        depth = 0
        for j in range(i, len(self.toks)):
            k = self.toks[j].kind
            depth += 1 if k == "lp" else -1 if k == "rp" else 0
            if depth == 0:
                return j
        raise FormulaError("unbalanced '('", self.toks[i].pos)

    def atom(self) -> Tree:
        start = self.i
        while self.i < len(self.toks):
            t = self.toks[self.i]
            if t.kind == "lp":
                self.i = self.matching(self.i) + 1
            elif t.kind == "other":
                self.i += 1
            else:
                break
        if self.i == start:
            raise self.fail("an expression expected")
        a, b = self.toks[start].pos, self.toks[self.i - 1].pos + len(self.toks[self.i - 1].text)
        return ("atom", self.text[a:b], a)


def parse_formula(text: str) -> Tree:
    """The LTL syntax tree of ``text`` (atoms kept as text). Raises :class:`FormulaError`."""
    return _Parser(text).formula()


@cache
def expr_parser() -> Lark:
    """An LALR parser for one Promela expression (the model grammar, start ``expr``)."""
    grammar = files("absmc.lang.promela").joinpath("promela.lark").read_text(encoding="utf-8")
    return Lark(
        grammar,
        parser="lalr",
        start="expr",
        propagate_positions=True,
        maybe_placeholders=True,
        cache=True,
    )


#: a remote variable reference ``P[pid]:var`` / ``P:var`` (``P`` must name a proctype)
_REMOTE_VAR = re.compile(r"\b([A-Za-z_]\w*)\s*(?:\[\s*(\d+)\s*\])?\s*:\s*([A-Za-z_]\w*)")

#: the prefix of the names that stand for remote variable references in parsed atoms
REMOTE_PREFIX: Final = "_remote_"


def rewrite_remote_vars(
    text: str, proctypes: set[str], refs: dict[str, tuple[str, int | None, str]]
) -> str:
    """``text`` with each remote variable reference ``P[pid]:var`` / ``P:var`` (``P`` a name
    in ``proctypes``) replaced by a fresh name ``_remote_K``, recorded in ``refs`` as
    ``(proctype, pid or None, variable)``."""

    def repl(m: re.Match[str]) -> str:
        if m.group(1) not in proctypes:
            return m.group()
        name = f"{REMOTE_PREFIX}{len(refs)}"
        refs[name] = (m.group(1), int(m.group(2)) if m.group(2) else None, m.group(3))
        return name

    return _REMOTE_VAR.sub(repl, text)


def atom_nodes(
    tree: Tree,
    build: Callable[[Any], Node],
    span: SourceSpan,
    proctypes: set[str] | None = None,
    refs: dict[str, tuple[str, int | None, str]] | None = None,
) -> dict[tuple[str, int], Node]:
    """Parse every atom of ``tree`` as a Promela expression (``build`` turns Lark's tree into a
    :class:`Node`); keyed by ``(text, position)``. Remote variable references are rewritten
    first (:func:`rewrite_remote_vars`, into ``refs``). Raises ``ModelError`` at ``span``."""
    out: dict[tuple[str, int], Node] = {}
    stack = [tree]
    while stack:
        t = stack.pop()
        if t[0] == "atom":
            text = t[1]
            if proctypes and refs is not None:
                text = rewrite_remote_vars(text, proctypes, refs)
            try:
                out[(t[1], t[2])] = build(expr_parser().parse(text))
            except UnexpectedInput as err:
                raise ModelError(
                    f"syntax error in the ltl formula's expression '{t[1]}'", span
                ) from err
        else:
            stack.extend(t[1:])
    return out


def to_ltl(tree: Tree, lower: Callable[[tuple[str, int]], Expr]) -> Ltl:
    """The IR formula of ``tree``, atoms lowered by ``lower((text, position))``."""
    if tree[0] == "atom":
        return atom(lower((tree[1], tree[2])))
    op: LtlOp = tree[0]
    return mk_ltl(op, *(to_ltl(c, lower) for c in tree[1:]))
