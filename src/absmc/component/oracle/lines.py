"""Which source lines of the program are *thread-local* (no scheduling point before them) and
which hold ``assert`` statements, from the program's own syntax tree (``ast``).

A line is a candidate when exactly one statement (or one loop/``if`` header) covers it, on
that line alone, and it only combines names and constants with operators
(``x = i + 1``, ``if n < k:``, ``while i < n:``, ``for i in range(n):``, ``pass``,
``break``, ``continue``, ``return x``): no call, attribute, subscript, comprehension or
f-string. At the line event the candidate is thread-local when every name it reads or writes
is a plain local of the running frame (not a global, cell or free variable) and every value
it reads is immutable (``int``, ``float``, ``str``, ``bool``, ``None``, tuples of them).
Such a line touches nothing another thread can see, so running it in the step before it
changes no reachable outcome (the reduction of invisible steps; Godefroid's persistent sets
with one invisible transition).
"""

from __future__ import annotations

import ast
import types
from dataclasses import dataclass, field

_ALLOWED = (
    ast.Name,
    ast.Constant,
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.Compare,
    ast.IfExp,
    ast.Tuple,
    ast.operator,
    ast.unaryop,
    ast.boolop,
    ast.cmpop,
    ast.expr_context,
)

_SCALARS = (int, float, str, bool, type(None), complex, bytes)


def _pure(node: ast.AST | None) -> bool:
    if node is None:
        return True
    return all(isinstance(n, _ALLOWED) for n in ast.walk(node))


def _names(node: ast.AST) -> tuple[str, ...]:
    return tuple(sorted({n.id for n in ast.walk(node) if isinstance(n, ast.Name)}))


def _immutable(v: object) -> bool:
    if isinstance(v, _SCALARS):
        return True
    if type(v) is tuple:
        return all(_immutable(x) for x in v)
    return False


@dataclass
class LineInfo:
    """``asserts``: the lines with an ``assert``; ``candidates``: line -> (names read or
    written, uses the builtin ``range``)."""

    asserts: set[int] = field(default_factory=set)
    candidates: dict[int, tuple[tuple[str, ...], bool]] = field(default_factory=dict)

    def local_only(self, frame: types.FrameType, line: int) -> bool:
        """Is ``line``, about to run in ``frame``, thread-local now?"""
        cand = self.candidates.get(line)
        if cand is None:
            return False
        names, uses_range = cand
        code = frame.f_code
        if uses_range and (
            "range" in frame.f_globals
            or "range" in code.co_varnames
            or frame.f_builtins.get("range") is not range
        ):
            return False
        shared = code.co_cellvars + code.co_freevars
        loc = frame.f_locals
        for n in names:
            if n == "range" and uses_range:
                continue
            if n not in code.co_varnames or n in shared:
                return False
            if n in loc and not _immutable(loc[n]):
                return False
        return True


def analyse(source: str) -> LineInfo:
    """The :class:`LineInfo` of a program's source (a ``SyntaxError`` propagates)."""
    tree = ast.parse(source)
    info = LineInfo()
    cover: dict[int, int] = {}
    found: dict[int, tuple[tuple[str, ...], bool] | None] = {}

    def mark(line: int, cand: tuple[tuple[str, ...], bool] | None) -> None:
        cover[line] = cover.get(line, 0) + 1
        found[line] = cand

    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        if isinstance(node, ast.Assert):
            info.asserts.add(node.lineno)
        end = node.end_lineno or node.lineno
        if isinstance(node, (ast.If, ast.While)):
            t = node.test
            ok = t.lineno == node.lineno and (t.end_lineno or t.lineno) == node.lineno
            mark(node.lineno, (_names(t), False) if ok and _pure(t) else None)
            continue
        if isinstance(node, ast.For):
            it = node.iter
            ok = (
                isinstance(node.target, ast.Name)
                and (it.end_lineno or it.lineno) == node.lineno
                and isinstance(it, ast.Call)
                and isinstance(it.func, ast.Name)
                and it.func.id == "range"
                and not it.keywords
                and all(_pure(a) for a in it.args)
            )
            names = _names(node.target) + _names(it)
            mark(node.lineno, (tuple(sorted(set(names))), True) if ok else None)
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if hasattr(node, "body"):
            # other compound statements: their header line runs code we do not read
            mark(node.lineno, None)
            continue
        cand: tuple[tuple[str, ...], bool] | None = None
        if end == node.lineno:
            if isinstance(node, (ast.Pass, ast.Break, ast.Continue)):
                cand = ((), False)
            elif isinstance(node, ast.Return) and _pure(node.value):
                cand = (_names(node) if node.value is not None else (), False)
            elif isinstance(node, ast.Assign) and _pure(node.value):
                if all(isinstance(t, ast.Name) for t in node.targets):
                    cand = (_names(node), False)
            elif (
                isinstance(node, ast.AugAssign)
                and isinstance(node.target, ast.Name)
                and _pure(node.value)
            ):
                cand = (_names(node), False)
        for line in range(node.lineno, end + 1):
            mark(line, cand if line == node.lineno else None)
    for line, n in cover.items():
        cand = found[line]
        if n == 1 and cand is not None:
            info.candidates[line] = cand
    return info
