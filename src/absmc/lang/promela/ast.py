"""The Promela syntax tree: one generic node type, close to SPIN's own ``Lextok``.

A :class:`Node` has a ``kind`` and children ``args``; ``name`` and ``val`` carry a symbol name
or an integer where the kind needs one. Kinds:

* expressions: ``const`` (val), ``var`` (name; ``args = [index or None, field var or None]``),
  binary operators ``+ - * / % & | ^ << >> == != < <= > >= && ||``, unary ``! ~ neg``,
  ``cond`` (c, a, b), ``run`` (name; args), ``len``/``full``/``nfull``/``empty``/``nempty``
  (chan var), ``poll`` (chan var, rargs...; val 1 = random), ``timeout``, ``np_``,
  ``enabled``, ``pc_value``, ``remote_label`` (name = proctype, val = label; args = [pid]),
  ``eval`` (in receive arguments);
* statements: ``c`` (expression statement), ``asgn`` (lhs, rhs), ``s`` (send: chan, args...;
  val 1 = sorted ``!!``), ``r`` (receive: chan, rargs...; val 0 ``?``, 1 ``??``, 2 ``?<>``,
  3 ``??<>``), ``assert``, ``print``, ``printm``, ``else``, ``goto`` (name), ``break``,
  ``if``/``do`` (options: lists of steps), ``atomic``/``d_step``/``block`` (body: steps),
  ``unless`` (main, escape), ``label`` (name; the labelled statement or None), ``decl``
  (a declaration inside a body), ``xu`` (xr/xs), ``inline_call``, ``for``/``for_in``/
  ``select``, ``pred``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from absmc.ir.span import SourceSpan


@dataclass(eq=False)
class Node:
    """One syntax-tree node (see the module docstring for the kinds)."""

    kind: str
    args: list[Any] = field(default_factory=list)
    name: str | None = None
    val: int = 0
    span: SourceSpan | None = None
    options: list[list[Node]] | None = None  # if/do options; bodies of atomic/d_step/block
    text: str = ""  # source text of a statement (for trails)

    def __repr__(self) -> str:
        inner = ", ".join(repr(a) for a in self.args)
        extra = f" {self.name}" if self.name else ""
        return f"{self.kind}{extra}({inner})"


@dataclass
class VarDecl:
    """A declared variable: ``type`` is a basic type name (``bit bool byte short int pid
    unsigned mtype chan``) or a typedef name; ``size`` the array length (``None``: scalar);
    ``bits`` the width of ``unsigned``; ``init`` an expression, a ``ChanInit``, or a list of
    expressions (array initialiser)."""

    name: str
    type: str
    size: int | None = None
    bits: int | None = None
    init: Any = None
    hidden: bool = False
    span: SourceSpan | None = None
    mtype_name: str | None = None


@dataclass
class ChanInit:
    """``[capacity] of { field types }``."""

    capacity: int
    fields: list[str]
    span: SourceSpan | None = None


@dataclass
class ProcDecl:
    """A proctype (or ``init``/``never``): parameters, body steps, instantiation."""

    name: str
    params: list[VarDecl]
    body: list[Node]
    active: int = 0
    kind: str = "proctype"  # proctype | init | never | trace | notrace
    provided: Node | None = None
    priority: Node | None = None
    span: SourceSpan | None = None
    order: int = 0  # position among the model's units (process creation order)


@dataclass
class InlineDecl:
    """``inline name(params) { body }``."""

    name: str
    params: list[str]
    body: list[Node]
    span: SourceSpan | None = None


@dataclass
class TypedefDecl:
    """``typedef name { fields }``."""

    name: str
    fields: list[VarDecl]
    span: SourceSpan | None = None


@dataclass
class Model:
    """A parsed Promela model."""

    file: str
    globals: list[VarDecl] = field(default_factory=list)
    mtypes: dict[str, list[str]] = field(default_factory=dict)
    procs: list[ProcDecl] = field(default_factory=list)
    inlines: dict[str, InlineDecl] = field(default_factory=dict)
    typedefs: dict[str, TypedefDecl] = field(default_factory=dict)
    preds: list[Node] = field(default_factory=list)
    ltl: list[Any] = field(default_factory=list)
    nevers: list[ProcDecl] = field(default_factory=list)
