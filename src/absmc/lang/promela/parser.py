"""Promela source -> syntax tree (:mod:`absmc.lang.promela.ast`).

Pipeline: C preprocessor (:mod:`.preprocess`), ltl cut-out and implied semicolons
(:mod:`.lexprep`), the LALR grammar ``promela.lark``, then this module's builder. Syntax errors
are ``ModelError``s located in the original file (through the preprocessor's line map).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedInput

from absmc.ir.span import ModelError, SourceSpan
from absmc.lang.larkutil import parse_number, read_source, syntax_error, too_deep
from absmc.lang.promela.ast import (
    ChanInit,
    InlineDecl,
    Model,
    Node,
    ProcDecl,
    TypedefDecl,
    VarDecl,
)
from absmc.lang.promela.lexprep import prepare
from absmc.lang.promela.preprocess import LineMap, preprocess
from absmc.lang.promela.structmsg import flatten_struct_messages


@cache
def promela_parser() -> Lark:
    """The (cached) LALR parser for Promela."""
    grammar = files("absmc.lang.promela").joinpath("promela.lark").read_text(encoding="utf-8")
    return Lark(
        grammar, parser="lalr", propagate_positions=True, maybe_placeholders=True, cache=True
    )


def parse_promela_file(path: str | Path, defines: dict[str, str] | None = None) -> Model:
    """Read, preprocess and parse a Promela file. Raises ``ModelError`` and ``OSError``."""
    return parse_promela(read_source(path), str(path), defines)


def parse_promela(
    text: str, file: str = "<string>", defines: dict[str, str] | None = None
) -> Model:
    """Parse Promela source text into a :class:`Model` (syntax only; names are resolved by
    the lowering). Raises ``ModelError`` with a span on syntax errors."""
    pre, lines = preprocess(text, file, defines)
    prepared, ltls = prepare(pre)
    m = _EMBEDDED_C.search(prepared)
    if m is not None:
        line = prepared.count("\n", 0, m.start()) + 1
        col = m.start() - (prepared.rfind("\n", 0, m.start()) + 1) + 1
        raise ModelError(f"embedded C code ('{m.group()}') is not supported", lines.span(line, col))
    parser = promela_parser()
    try:
        tree = parser.parse(prepared)
    except UnexpectedInput as err:
        e = syntax_error(err, parser, file, prepared)
        raise _remap(e, lines) from None
    deep = too_deep(tree, MAX_NESTING, _NESTING)
    if deep is not None:
        raise _Builder(file, lines).err(
            f"nesting deeper than {MAX_NESTING} (statements and expressions)", deep
        )
    model = _Builder(file, lines).build(tree)
    flatten_struct_messages(model)
    for b in ltls:
        model.ltl.append((b.name, b.formula, lines.span(b.line, b.column)))
    return model


#: The deepest nesting of statements and expressions the front end takes, counted in syntax
#: tree levels (an ``if``/``do``/``atomic`` block is three: the statement, its options, one
#: sequence; an operator is one). The syntax tree is built and checked iteratively, but the
#: automaton construction and lowering walk statements and expressions recursively, with up to
#: three Python frames per level: 250 levels stay well inside Python's default recursion limit
#: (1,000 frames) with room for the caller. SPIN's own parser stops earlier for statements
#: ("confusing control structure" below 1,000 nested blocks; its yacc stack holds 10,000
#: symbols), and machine-generated models rarely nest deeper than a few dozen levels.
MAX_NESTING = 250

_NESTING = frozenset(
    [
        "if_stmt",
        "do_stmt",
        "atomic",
        "d_step",
        "block",
        "unless",
        "labeled",
        "for_range",
        "for_in",
        "for_body",
        "options",
        "sequence",
        "or_",
        "and_",
        "bin",
        "not_",
        "neg",
        "bnot",
        "cond",
        "varref",
        "run",
        "len_",
        "probe",
        "poll",
        "enabled",
        "pc_value",
        "remote_label",
        "remote_var",
        "get_priority",
        "eval_arg",
        "expr_stmt",
        "assign",
        "send",
        "recv",
        "recv_copy",
        "assert_stmt",
        "printf",
        "printm",
        "inline_call",
        "select_stmt",
        "send_args",
        "send_args_paren",
        "recv_args",
        "recv_args_paren",
    ]
)

_BASIC_TYPES = frozenset(
    ["bit", "bool", "byte", "short", "int", "pid", "mtype", "chan", "unsigned"]
)

_EMBEDDED_C = re.compile(r"\bc_(code|expr|decl|state|track)\b")


def atom_builder(file: str, span: SourceSpan) -> Callable[[Tree[Any]], Node]:
    """Turns the Lark tree of an expression parsed on its own (an ltl atom) into a
    :class:`Node`; every position is reported at ``span`` (the ltl block)."""
    builder = _Builder(file, LineMap([(span.file, span.line)]))
    return builder.expr


def _remap(e: ModelError, lines: LineMap) -> ModelError:
    if e.span is None:
        return e
    msg = e.message.replace("'\\x01red', ", "").replace("'\\x01red'", "'pred'")
    return ModelError(msg, lines.span(e.span.line, e.span.column))


def _tok(node: Any) -> str:
    return str(node)


class _Builder:
    def __init__(self, file: str, lines: LineMap) -> None:
        self.file = file
        self.lines = lines
        self.model = Model(file)
        self.order = 0

    # -- helpers -------------------------------------------------------------------------
    def span(self, node: Tree[Any] | Token) -> SourceSpan | None:
        if isinstance(node, Token):
            if node.line is None:
                return None
            return self.lines.span(node.line, node.column or 1)
        meta = node.meta
        if getattr(meta, "empty", True):
            return None
        return self.lines.span(meta.line, meta.column)

    def err(self, msg: str, node: Tree[Any] | Token) -> ModelError:
        return ModelError(msg, self.span(node) or SourceSpan(self.file, 1, 1))

    # -- units ---------------------------------------------------------------------------
    def build(self, tree: Tree[Any]) -> Model:
        for unit in tree.children:
            if not isinstance(unit, Tree):
                continue
            getattr(self, "u_" + unit.data)(unit)
        return self.model

    def u_proctype(self, t: Tree[Any]) -> None:
        active, _kw, name, params, prio, prov, body = t.children
        count = 0
        if active is not None:
            count = 1
            if active.children and active.children[0] is not None:
                count = self.const_int(self.expr(active.children[0]), active)
        pd = ProcDecl(
            _tok(name),
            self.params(params) if params is not None else [],
            self.body(body),
            count,
            "proctype",
            self.expr(prov.children[0]) if prov is not None else None,
            # SPIN checks the range when it starts an active process only
            Node("const", val=self.priority_value(prio, 1 if count else 0), span=self.span(prio))
            if prio is not None
            else None,
            self.span(name),
            self.order,
        )
        self.order += 1
        if any(p.name == pd.name for p in self.model.procs):
            raise self.err(f"proctype '{pd.name}' is declared twice", name)
        self.model.procs.append(pd)

    def u_init(self, t: Tree[Any]) -> None:
        prio, body = t.children
        if any(p.kind == "init" for p in self.model.procs):
            raise self.err("a model has at most one init process", t)
        pnode = (
            Node("const", val=self.priority_value(prio, 1), span=self.span(prio))
            if prio is not None
            else None
        )
        self.model.procs.append(
            ProcDecl(
                ":init:", [], self.body(body), 1, "init", None, pnode, self.span(t), self.order
            )
        )
        self.order += 1

    def u_never(self, t: Tree[Any]) -> None:
        name, body = t.children
        self.model.nevers.append(
            ProcDecl(
                _tok(name) if name else "never", [], self.body(body), 0, "never", span=self.span(t)
            )
        )

    def u_trace(self, t: Tree[Any]) -> None:
        kw, body = t.children
        self.model.nevers.append(
            ProcDecl(_tok(kw), [], self.body(body), 0, _tok(kw), span=self.span(t))
        )

    def u_inline_def(self, t: Tree[Any]) -> None:
        name, *rest = t.children
        body = rest[-1]
        params = [_tok(x) for x in rest[:-1] if x is not None]
        self.model.inlines[_tok(name)] = InlineDecl(
            _tok(name), params, self.body(body), self.span(name)
        )

    def u_typedef(self, t: Tree[Any]) -> None:
        name, *decls = t.children
        fields: list[VarDecl] = []
        for d in decls:
            if isinstance(d, Tree):
                fields.extend(self.decl(d))
        for f in fields:
            if f.type not in _BASIC_TYPES and f.type not in self.model.typedefs:
                # SPIN: a field's type must be declared before (no recursive structures)
                raise ModelError(f"unknown type '{f.type}' of field '{f.name}'", f.span, self.file)
        self.model.typedefs[_tok(name)] = TypedefDecl(_tok(name), fields, self.span(name))

    def u_mtype_decl(self, t: Tree[Any]) -> None:
        sub, *names = t.children
        key = _tok(sub) if sub is not None else ""
        lst = self.model.mtypes.setdefault(key, [])
        # SPIN numbers the names of one declaration in reverse order (see sym.c: setmtype)
        for n in reversed([x for x in names if isinstance(x, Token)]):
            lst.append(_tok(n))

    def u_decl(self, t: Tree[Any]) -> None:
        self.model.globals.extend(self.decl(t))

    def u_pred_decl(self, t: Tree[Any]) -> None:
        self.model.preds.append(self.expr(t.children[-1]))

    # -- declarations --------------------------------------------------------------------
    def params(self, t: Tree[Any]) -> list[VarDecl]:
        out: list[VarDecl] = []
        for p in t.children:
            if isinstance(p, Tree):
                typ, mt = self.typename(p.children[0])
                for iv in p.children[1:]:
                    out.append(self.ivar(iv, typ, False, mt))
        return out

    def typename(self, t: Tree[Any]) -> tuple[str, str | None]:
        if t.data == "basic_type":
            return _tok(t.children[0]), None
        if t.data == "mtype_type":
            sub = t.children[0]
            return "mtype", (_tok(sub) if sub is not None else None)
        if t.data == "chan_type":
            return "chan", None
        if t.data == "unsigned_type":
            return "unsigned", None
        return _tok(t.children[0]), None  # typedef name

    def decl(self, t: Tree[Any]) -> list[VarDecl]:
        vis, typ_t, *ivars = t.children
        typ, mt = self.typename(typ_t)
        hidden = vis is not None and _tok(vis) == "hidden"
        return [self.ivar(iv, typ, hidden, mt) for iv in ivars]

    def ivar(self, t: Tree[Any], typ: str, hidden: bool, mt: str | None) -> VarDecl:
        name, size_t, bits_t, init_t = t.children
        size = None
        if size_t is not None:
            size = self.const_int(self.expr(size_t), size_t)
            if size <= 0:
                raise self.err(f"array '{name}' needs a positive size", size_t)
        bits = None
        if bits_t is not None:
            if typ != "unsigned":
                raise self.err("a bit width is only allowed for 'unsigned' variables", bits_t)
            bits = self.const_int(self.expr(bits_t), bits_t)
            if not 1 <= bits <= 32:
                raise self.err("the width of an unsigned variable must be 1..32", bits_t)
        elif typ == "unsigned":
            raise self.err("'unsigned' variables need a width ('unsigned x : 3')", name)
        init: Any = None
        if init_t is not None:
            if isinstance(init_t, Tree) and init_t.data == "ch_init":
                cap = self.const_int(self.expr(init_t.children[0]), init_t)
                if cap < 0:
                    raise self.err("channel capacity must not be negative", init_t)
                fields = []
                for mtp in init_t.children[1:]:
                    fields.append(self.msg_type(mtp))
                init = ChanInit(cap, fields, self.span(init_t))
            elif isinstance(init_t, Tree) and init_t.data == "array_init":
                init = [self.expr(x) for x in init_t.children]
            else:
                init = self.expr(init_t)
        return VarDecl(_tok(name), typ, size, bits, init, hidden, self.span(name), mt)

    def msg_type(self, t: Tree[Any]) -> str:
        if t.data == "mt_mtype":
            return "mtype"
        if t.data == "mt_chan":
            return "chan"
        if t.data == "mt_unsigned":
            return "unsigned"
        return _tok(t.children[0])

    def priority_value(self, t: Tree[Any], lowest: int) -> int:
        """The constant of a ``priority N`` clause: ``lowest`` (1 for an active proctype or
        ``init``, whose priority 0 SPIN refuses; 0 for a ``run``, where 0 means 1, and for a
        proctype without active instances, whose priority SPIN ignores) to 255 (SPIN: "bad
        process priority, valid range: 1..255"). Raises ``ModelError``."""
        v = self.const_int(self.expr(t.children[0]), t)
        if not lowest <= v <= 255:
            raise self.err(f"bad process priority {v}, valid range: 1..255", t)
        return v

    def const_int(self, e: Node, where: Tree[Any] | Token) -> int:
        v = const_value(e)
        if v is None:
            raise self.err("expected a constant expression", where)
        return v

    # -- statements ----------------------------------------------------------------------
    def body(self, t: Tree[Any]) -> list[Node]:
        return self.sequence(t.children[0])

    def sequence(self, t: Tree[Any]) -> list[Node]:
        out: list[Node] = []
        for c in t.children:
            if isinstance(c, Tree):
                out.append(self.step(c))
        return out

    def step(self, t: Tree[Any]) -> Node:
        if t.data == "decl":
            return Node("decl", self.decl(t), span=self.span(t))
        if t.data == "xu_decl":
            kw, *refs = t.children
            return Node("xu", [self.varref(r) for r in refs], name=_tok(kw), span=self.span(t))
        if t.data == "pred_decl":
            return Node("pred", [self.expr(t.children[-1])], span=self.span(t))
        if t.data == "unless":
            return Node(
                "unless", [self.stmt(t.children[0]), self.stmt(t.children[1])], span=self.span(t)
            )
        return self.stmt(t)

    def stmt(self, t: Tree[Any]) -> Node:
        sp = self.span(t)
        d = t.data
        ch = t.children
        if d == "labeled":
            label = _tok(ch[0]).rstrip(": \t")
            inner = self.stmt(ch[1]) if ch[1] is not None else None
            return Node("label", [inner], name=label, span=self.span(ch[0]))
        if d in ("if_stmt", "do_stmt"):
            opts = [self.sequence(o) for o in ch[0].children]
            return Node("if" if d == "if_stmt" else "do", span=sp, options=opts)
        if d in ("atomic", "d_step", "block"):
            return Node(d, span=sp, options=[self.sequence(ch[0])])
        if d == "break_stmt":
            return Node("break", span=sp)
        if d == "goto_stmt":
            return Node("goto", name=_tok(ch[0]), span=sp)
        if d == "else_stmt":
            return Node("else", span=sp)
        if d == "assign":
            return Node("asgn", [self.varref(ch[0]), self.expr(ch[1])], span=sp)
        if d in ("incr", "decr"):
            v = self.varref(ch[0])
            return Node(
                "asgn",
                [v, Node("+" if d == "incr" else "-", [v, Node("const", val=1)], span=sp)],
                span=sp,
                val=1,
            )
        if d == "send":
            args = self.send_args(ch[2])
            return Node(
                "s", [self.varref(ch[0]), *args], val=1 if _tok(ch[1]) == "!!" else 0, span=sp
            )
        if d in ("recv", "recv_copy"):
            args = self.recv_args(ch[2])
            rnd = _tok(ch[1]) == "??"
            val = (1 if rnd else 0) + (2 if d == "recv_copy" else 0)
            return Node("r", [self.varref(ch[0]), *args], val=val, span=sp)
        if d == "assert_stmt":
            return Node("assert", [self.expr(ch[0])], span=sp)
        if d == "printf":
            return Node("print", [self.expr(x) for x in ch[1:]], name=_tok(ch[0]), span=sp)
        if d == "printm":
            return Node("printm", [self.expr(ch[0])], span=sp)
        if d == "inline_call":
            iname, *iargs = ch
            if _tok(iname) == "set_priority":  # SPIN 6.2's built-in: set_priority(pid, pr)
                pargs = [self.expr(a) for a in iargs if a is not None]
                if len(pargs) != 2:
                    raise self.err("set_priority takes two arguments (pid, priority)", iname)
                return Node("set_priority", pargs, span=self.span(iname))
            return Node(
                "inline_call",
                [self.expr(a) for a in iargs if a is not None],
                name=_tok(iname),
                span=self.span(iname),
            )
        if d == "for_range":
            fv, flo, fhi, fbody = ch
            return Node(
                "for",
                [self.varref(fv), self.expr(flo), self.expr(fhi)],
                span=sp,
                options=[self.sequence(fbody.children[0])],
            )
        if d == "for_in":
            iv, arr, ibody = ch
            return Node(
                "for_in",
                [self.varref(iv), self.varref(arr)],
                span=sp,
                options=[self.sequence(ibody.children[0])],
            )
        if d == "select_stmt":
            sv, slo, shi = ch
            return Node("select", [self.varref(sv), self.expr(slo), self.expr(shi)], span=sp)
        if d == "c_code":
            raise self.err(f"embedded C code ('{ch[0]}') is not supported", ch[0])
        if d == "expr_stmt":
            return Node("c", [self.expr(ch[0])], span=sp)
        raise self.err(f"unsupported statement ({d})", t)  # pragma: no cover

    def send_args(self, t: Tree[Any]) -> list[Node]:
        return [self.expr(x) for x in t.children]

    def recv_args(self, t: Tree[Any]) -> list[Node]:
        out: list[Node] = []
        for x in t.children:
            if isinstance(x, Tree) and x.data in ("recv_args", "recv_args_paren"):
                out.extend(self.recv_args(x))
            else:
                out.append(self.rarg(x))
        return out

    def rarg(self, t: Tree[Any] | Token) -> Node:
        assert isinstance(t, Tree)
        if t.data == "eval_arg":
            return Node("eval", [self.expr(t.children[0])], span=self.span(t))
        return self.expr(t)

    # -- expressions ---------------------------------------------------------------------
    def varref(self, t: Tree[Any]) -> Node:
        ch = t.children
        # NAME [idx] (. NAME [idx])*
        parts: list[tuple[Any, Any]] = []
        i = 0
        while i < len(ch):
            name = ch[i]
            idx = ch[i + 1] if i + 1 < len(ch) else None
            parts.append((name, idx))
            i += 2
        node: Node | None = None
        for name, idx in reversed(parts):
            node = Node(
                "var",
                [self.expr(idx) if idx is not None else None, node],
                name=_tok(name),
                span=self.span(name),
            )
        assert node is not None
        return node

    def expr(self, t: Tree[Any] | Token) -> Node:
        if isinstance(t, Token):  # pragma: no cover - every terminal is wrapped in a rule
            raise self.err(f"unexpected {t!s}", t)
        sp = self.span(t)
        d = t.data
        ch = t.children
        if d == "int_lit":
            s = _tok(ch[0])
            if s.startswith("'"):
                body = s[1:-1]
                v = (
                    ord(body.encode().decode("unicode_escape"))
                    if body.startswith("\\")
                    else ord(body)
                )
            else:
                v = parse_number(s, sp, self.file)
            return Node("const", val=v, span=sp)
        if d == "neg_int_lit":
            return Node("const", val=-parse_number(_tok(ch[0]), sp, self.file), span=sp)
        if d in ("true_lit", "skip_lit"):
            return Node("const", val=1, span=sp, name="skip" if d == "skip_lit" else "true")
        if d == "false_lit":
            return Node("const", val=0, span=sp, name="false")
        if d == "varref":
            return self.varref(t)
        if d == "bin":
            return Node(_tok(ch[1]), [self.expr(ch[0]), self.expr(ch[2])], span=sp)
        if d == "or_":
            return Node("||", [self.expr(ch[0]), self.expr(ch[1])], span=sp)
        if d == "and_":
            return Node("&&", [self.expr(ch[0]), self.expr(ch[1])], span=sp)
        if d == "not_":
            return Node("!", [self.expr(ch[0])], span=sp)
        if d == "neg":
            return Node("neg", [self.expr(ch[0])], span=sp)
        if d == "bnot":
            return Node("~", [self.expr(ch[0])], span=sp)
        if d == "cond":
            return Node("cond", [self.expr(c) for c in ch], span=sp)
        if d == "run":
            name, *args = ch
            prio = (
                args.pop()
                if args and isinstance(args[-1], Tree) and args[-1].data == "priority"
                else None
            )
            if args and args[-1] is None:
                args.pop()
            # SPIN's `run P() priority N` (N a constant, 1..255; 0 and none: 1) in ``val``
            pval = self.priority_value(prio, 0) if prio is not None else 0
            return Node(
                "run",
                [self.expr(a) for a in args if a is not None],
                name=_tok(name),
                val=pval,
                span=sp,
            )
        if d == "len_":
            return Node("len", [self.varref(ch[0])], span=sp)
        if d == "probe":
            return Node(_tok(ch[0]), [self.varref(ch[1])], span=sp)
        if d == "poll":
            return Node(
                "poll",
                [self.varref(ch[0]), *self.recv_args(ch[2])],
                val=1 if _tok(ch[1]) == "??" else 0,
                span=sp,
            )
        if d == "timeout":
            return Node("timeout", span=sp)
        if d == "nonprogress":
            return Node("np_", span=sp)
        if d in ("enabled", "pc_value", "get_priority"):
            return Node(d, [self.expr(ch[0])], span=sp)
        if d == "remote_label":
            if len(ch) == 3:
                return Node(
                    "remote_label", [self.expr(ch[1])], name=_tok(ch[0]), span=sp, text=_tok(ch[2])
                )
            return Node("remote_label", [None], name=_tok(ch[0]), span=sp, text=_tok(ch[1]))
        if d == "remote_var":  # P[pid]:v (ch: P, pid, REMOTE, v) or P:v (ch: P, REMOTE, v)
            pid = self.expr(ch[1]) if len(ch) == 4 else None
            return Node("remote_var", [pid, self.varref(ch[-1])], name=_tok(ch[0]), span=sp)
        raise self.err(f"unsupported expression ({d})", t)  # pragma: no cover


_BIN: dict[str, Any] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
    "<<": lambda a, b: a << b,
    ">>": lambda a, b: a >> b,
    "==": lambda a, b: int(a == b),
    "!=": lambda a, b: int(a != b),
    "<": lambda a, b: int(a < b),
    "<=": lambda a, b: int(a <= b),
    ">": lambda a, b: int(a > b),
    ">=": lambda a, b: int(a >= b),
    "&&": lambda a, b: int(bool(a) and bool(b)),
    "||": lambda a, b: int(bool(a) or bool(b)),
}


def const_value(e: Node) -> int | None:
    """The value of a constant expression (integers only; names are not constants here)."""
    if e.kind == "const":
        return e.val
    if e.kind == "neg":
        v = const_value(e.args[0])
        return None if v is None else -v
    if e.kind == "!":
        v = const_value(e.args[0])
        return None if v is None else int(not v)
    if e.kind == "~":
        v = const_value(e.args[0])
        return None if v is None else ~v
    if e.kind in ("/", "%"):
        a, b = const_value(e.args[0]), const_value(e.args[1])
        if a is None or b is None or b == 0:
            return None
        q = abs(a) // abs(b)
        q = q if (a >= 0) == (b >= 0) else -q
        return q if e.kind == "/" else a - b * q
    if e.kind in _BIN:
        a, b = const_value(e.args[0]), const_value(e.args[1])
        if a is None or b is None:
            return None
        return int(_BIN[e.kind](a, b))
    if e.kind == "cond":
        c = const_value(e.args[0])
        if c is None:
            return None
        return const_value(e.args[1] if c else e.args[2])
    return None
