"""Parser of BASL-like abstraction specifications (paper 001, Fig. 1).

::

    abstraction Signs abstracts int
    begin
      TOKENS = {NEG, ZERO, POS};
      abstract(n)
      begin
        n < 0  -> {NEG};
        n == 0 -> {ZERO};
        n > 0  -> {POS};
      end
      operator + add
      begin
        (NEG, NEG) -> {NEG};
        (_, _)     -> {NEG, ZERO, POS};
      end
    end

The abstraction function's clauses are tried in order (the first true condition gives the
token, as the compiled Java of Fig. 3); an operator's cases too (``_`` matches any token).
Comparison operators give subsets of ``{true, false}``. This module checks syntax and names
and returns the specification with IR expressions over the integer ``n`` (renamed to the
variable the file binds); :mod:`absmc.engines.typeabs.basl` turns it into a domain and checks
it with the prover. Errors are ``ModelError`` at ``FILE:LINE:COL``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedInput

from absmc.ir.expr import Const, Expr, Op, Var, const
from absmc.ir.sorts import INT
from absmc.ir.span import ModelError, SourceSpan
from absmc.lang.larkutil import span_of, syntax_error

#: the variable the abstraction function's conditions are written over, after renaming
VALUE_VAR = "n"

_BOOL_RESULTS = {"true": 1, "false": 0, "TRUE": 1, "FALSE": 0}


@dataclass(frozen=True)
class BaslClause:
    """``condition -> {TOKEN}`` of an abstraction function (condition over ``n``)."""

    condition: Expr
    token: int
    span: SourceSpan | None


@dataclass(frozen=True)
class BaslCase:
    """``(P1, P2) -> {R, ...}`` of an operator: patterns are token indices or ``None`` (``_``);
    results are token indices, or 0/1 (false/true) for a comparison."""

    patterns: tuple[int | None, ...]
    results: frozenset[int]
    span: SourceSpan | None


@dataclass(frozen=True)
class BaslOperator:
    """``operator OP NAME begin cases end``."""

    op: str
    name: str
    cases: tuple[BaslCase, ...]
    span: SourceSpan | None


@dataclass(frozen=True)
class BaslAbstraction:
    """One ``abstraction NAME abstracts int begin ... end`` block."""

    name: str
    tokens: tuple[str, ...]
    clauses: tuple[BaslClause, ...]
    operators: tuple[BaslOperator, ...]
    span: SourceSpan | None
    function_span: SourceSpan | None


@cache
def basl_parser() -> Lark:
    """The (cached) LALR parser for BASL."""
    grammar = files("absmc.lang.basl").joinpath("basl.lark").read_text(encoding="utf-8")
    return Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=True)


def parse_basl_file(path: str | Path) -> list[BaslAbstraction]:
    """Read and parse a BASL file. Raises ``ModelError`` for errors in it and ``OSError`` when it
    cannot be read."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ModelError(f"file is not UTF-8 text ({err.reason})", None, str(path)) from None
    return parse_basl(text, str(path))


def parse_basl(text: str, file: str = "<string>") -> list[BaslAbstraction]:
    """Parse BASL source text. Raises ``ModelError`` (with a span) on syntax and name errors."""
    parser = basl_parser()
    try:
        tree = parser.parse(text)
    except UnexpectedInput as err:
        raise syntax_error(err, parser, file, text) from None
    out: list[BaslAbstraction] = []
    for node in tree.children:
        assert isinstance(node, Tree)
        a = _Builder(file).abstraction(node)
        if any(b.name == a.name for b in out):
            raise ModelError(f"duplicate abstraction '{a.name}'", a.span)
        out.append(a)
    return out


class _Builder:
    def __init__(self, file: str) -> None:
        self.file = file
        self.var = VALUE_VAR

    def span(self, node: Tree[Any] | Token) -> SourceSpan | None:
        return span_of(node, self.file)

    def err(self, msg: str, node: Tree[Any] | Token) -> ModelError:
        return ModelError(msg, self.span(node) or SourceSpan(self.file, 1, 1))

    def abstraction(self, node: Tree[Any]) -> BaslAbstraction:
        name_tok, tokens_node, fn_node, *op_nodes = node.children
        tokens: list[str] = []
        for t in tokens_node.children:
            if str(t) in tokens:
                raise self.err(f"duplicate token '{t}'", t)
            if str(t) in _BOOL_RESULTS or str(t) == "_":
                raise self.err(f"'{t}' cannot be a token name", t)
            tokens.append(str(t))
        var_tok, *clause_nodes = fn_node.children
        self.var = str(var_tok)
        clauses: list[BaslClause] = []
        for c in clause_nodes:
            cond_node, tok = c.children
            cond = self.expr(cond_node)
            if not cond.is_bool:
                raise self.err("a condition of abstract() must be a comparison", cond_node)
            clauses.append(BaslClause(cond, self.token(tok, tokens), self.span(c)))
        if not clauses:
            raise self.err("abstract() needs at least one clause", fn_node)
        operators: list[BaslOperator] = []
        for o in op_nodes:
            op_tok, oname, *case_nodes = o.children
            sym = str(op_tok)
            if any(x.op == sym for x in operators):
                raise self.err(f"operator {sym} is defined twice", op_tok)
            comparison = sym in ("==", "!=", "<", "<=", ">", ">=")
            cases: list[BaslCase] = []
            for c in case_nodes:
                pat_node, res_node = c.children
                pats = [None if str(t) == "_" else self.token(t, tokens) for t in pat_node.children]
                results: set[int] = set()
                for child in res_node.children if res_node is not None else ():
                    if comparison:
                        if str(child) not in _BOOL_RESULTS:
                            raise self.err(
                                f"a comparison yields true or false, not '{child}'", child
                            )
                        results.add(_BOOL_RESULTS[str(child)])
                    else:
                        results.add(self.token(child, tokens))
                if len(pats) != 2:
                    raise self.err(f"operator {sym} takes two arguments", pat_node)
                cases.append(BaslCase(tuple(pats), frozenset(results), self.span(c)))
            operators.append(BaslOperator(sym, str(oname), tuple(cases), self.span(o)))
        return BaslAbstraction(
            str(name_tok),
            tuple(tokens),
            tuple(clauses),
            tuple(operators),
            self.span(node),
            self.span(fn_node),
        )

    def token(self, tok: Token | Tree[Any], tokens: list[str]) -> int:
        name = str(tok)
        if name not in tokens:
            raise self.err(f"unknown token '{name}' (tokens: {', '.join(tokens)})", tok)
        return tokens.index(name)

    def expr(self, node: Tree[Any] | Token) -> Expr:
        if isinstance(node, Token):  # pragma: no cover - the grammar wraps tokens
            raise self.err(f"unexpected {node!r}", node)
        sp = self.span(node)
        kind = node.data
        ch: list[Any] = node.children
        if kind == "int_lit":
            return const(int(ch[0]), sp)
        if kind == "var_ref":
            if str(ch[0]) != self.var:
                raise self.err(
                    f"unknown name '{ch[0]}' (the abstraction function's argument is '{self.var}')",
                    node,
                )
            return Var(VALUE_VAR, INT, sp)
        if kind == "neg":
            a = self.num(ch[1])
            return Const(-a.value, INT, sp) if isinstance(a, Const) else Op("neg", (a,), sp)
        if kind == "not_":
            return Op("!", (self.boolean(ch[0]),), sp)
        if kind == "arith":
            return Op(str(ch[1]), (self.num(ch[0]), self.num(ch[2])), sp)
        if kind == "cmp":
            return Op(str(ch[1]), (self.num(ch[0]), self.num(ch[2])), sp)
        if kind in ("and_", "or_"):
            sym = "&&" if kind == "and_" else "||"
            return Op(sym, (self.boolean(ch[0]), self.boolean(ch[1])), sp)
        raise self.err(f"unsupported construct {kind}", node)  # pragma: no cover

    def num(self, node: Tree[Any] | Token) -> Expr:
        e = self.expr(node)
        if e.is_bool:
            raise self.err("expected an integer expression", node)
        return e

    def boolean(self, node: Tree[Any] | Token) -> Expr:
        e = self.expr(node)
        if not e.is_bool:
            raise self.err("expected a condition", node)
        return e
