"""The GCL front end: source text -> ``absmc.ir.System``.

Parsing uses the lark grammar ``gcl.lark`` (LALR); names are resolved and types checked in a
second pass, so declarations may come in any order. Every problem is raised as
:class:`absmc.ir.ModelError` located at the offending source position. See ``docs/gcl.md``.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedInput

from absmc.ir.ctl import (
    TEMPORAL_OPS,
    And,
    Atom,
    CtlProperty,
    Formula,
    Implies,
    Not,
    Or,
    Temporal,
    Until,
)
from absmc.ir.evaluate import EvalError, evaluate
from absmc.ir.expr import FALSE, TRUE, Const, Expr, Op, Var, conj, const, free_vars, transform
from absmc.ir.ltl import LtlProperty
from absmc.ir.sorts import BOOL, INT, BoolSort, RangeSort, Sort
from absmc.ir.span import ModelError, SourceSpan
from absmc.ir.system import Command, Process, Property, PropertyKind, System, Variable
from absmc.lang.larkutil import parse_number, read_source, span_of, syntax_error


@cache
def gcl_parser() -> Lark:
    """The (cached) LALR parser for GCL."""
    grammar = files("absmc.lang.gcl").joinpath("gcl.lark").read_text(encoding="utf-8")
    return Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=True)


def parse_gcl_file(path: str | Path) -> System:
    """Read and parse a ``.gcl`` file. Raises ``ModelError`` for model errors and ``OSError``
    when the file cannot be read."""
    return parse_gcl(read_source(path), str(path))


def parse_gcl(text: str, file: str = "<string>") -> System:
    """Parse GCL source text into a System. Raises ``ModelError`` (with a span) on syntax, name
    and type errors."""
    parser = gcl_parser()
    try:
        tree = parser.parse(text)
    except UnexpectedInput as err:
        raise syntax_error(err, parser, file, text) from None
    return _Builder(file).build(tree, Path(file).stem)


def parse_gcl_expr(text: str, system: System, what: str = "expression") -> Expr:
    """Parse one expression over the variables of ``system`` (for ``--predicate EXPR`` and the
    like). Raises ``ModelError`` located in ``<what>``."""
    parser = gcl_parser()
    src = f"predicate {text};"
    try:
        tree = parser.parse(src)
    except UnexpectedInput as err:
        e = syntax_error(err, parser, what, src)
        assert e.span is not None
        col = max(1, e.span.column - len("predicate "))
        message = e.message
        if col > len(text):  # at the ';' added above: the expression ended too early
            message = message.replace("unexpected ';'", "unexpected end of the expression", 1)
        raise ModelError(message, SourceSpan(what, 1, col)) from None
    decls = tree.children
    if len(decls) != 1 or not isinstance(decls[0], Tree) or decls[0].data != "predicate_decl":
        raise ModelError("expected a single expression", SourceSpan(what, 1, 1))
    b = _Builder(what)
    b.vars = {v.name: v for v in system.variables}
    node = decls[0].children[0]
    assert isinstance(node, (Tree, Token))
    shift = len("predicate ")
    try:
        parsed = b.expr(node)
    except ModelError as err:  # name and type errors: columns of ``text``, not of ``src``
        sp = err.span
        if sp is not None and sp.line == 1:
            sp = SourceSpan(what, 1, max(1, sp.column - shift))
        raise ModelError(err.message, sp) from None
    return transform(parsed, lambda x: _shifted(x, shift))


def _shifted(e: Expr, shift: int) -> Expr:
    """``e`` with its span moved ``shift`` columns left (on line 1)."""
    sp = e.span
    if sp is None or sp.line != 1:
        return e
    moved = replace(sp, column=max(1, sp.column - shift))
    if sp.end_line == 1:
        moved = replace(moved, end_column=max(1, sp.end_column - shift))
    return replace(e, span=moved)  # type: ignore[type-var]


def _kind(e: Expr) -> str:
    return "bool" if isinstance(e.sort(), BoolSort) else "int"


class _Builder:
    def __init__(self, file: str) -> None:
        self.file = file
        self.vars: dict[str, Variable] = {}

    def span(self, node: Tree[Any] | Token) -> SourceSpan | None:
        return span_of(node, self.file)

    def err(self, msg: str, node: Tree[Any] | Token) -> ModelError:
        return ModelError(msg, self.span(node) or SourceSpan(self.file, 1, 1))

    # -- declarations ------------------------------------------------------------------
    def build(self, tree: Tree[Any], name: str) -> System:
        decls = [d for d in tree.children if isinstance(d, Tree)]
        for d in decls:
            if d.data == "var_decl":
                self.var_decl(d)
        variables = tuple(self.vars.values())
        processes: list[Process] = []
        commands: list[Command] = []
        properties: list[Property] = []
        predicates: list[Expr] = []
        prop_names: dict[str, Tree[Any]] = {}
        inits: list[Expr] = []
        ctl: list[CtlProperty] = []
        for d in decls:
            if d.data == "process":
                pname_tok = d.children[0]
                pname = str(pname_tok)
                if any(p.name == pname for p in processes):
                    raise self.err(f"duplicate process '{pname}'", pname_tok)
                processes.append(Process(pname, None, self.span(pname_tok)))
                labels: set[str] = set()
                for c in d.children[1:]:
                    commands.append(self.command(c, pname, labels))
            elif d.data == "predicate_decl":
                predicates.append(self.bool_expr(d.children[0], "a predicate"))
            elif d.data == "init_decl":
                inits.append(self.bool_expr(d.children[1], "an init constraint"))
            elif d.data == "ctl_decl":
                label_tok, body = d.children
                pname = _label_name(label_tok)
                if pname in prop_names:
                    raise self.err(f"duplicate property '{pname}'", label_tok)
                prop_names[pname] = d
                ctl.append(CtlProperty(pname, self.ctl_formula(body), self.span(d)))
            elif d.data == "property_decl":
                kind_tok, label_tok, body = d.children
                kind: PropertyKind = "invariant" if str(kind_tok) == "invariant" else "unreachable"
                if label_tok is not None:
                    pname = _label_name(label_tok)
                else:
                    pname = f"{kind}{sum(1 for p in properties if p.kind == kind) + 1}"
                if pname in prop_names:
                    raise self.err(f"duplicate property '{pname}'", label_tok or d)
                prop_names[pname] = d
                expr = self.bool_expr(body, f"the {kind} condition")
                properties.append(Property(pname, kind, expr, self.span(d)))
        ltl_decls = [d for d in decls if d.data == "ltl_decl"]
        if not processes:
            raise ModelError("the model declares no process", SourceSpan(self.file, 1, 1))
        if not commands:
            first = next(d for d in decls if d.data == "process")
            raise self.err("no process has a command (no runnable process)", first.children[0])
        system = System(
            variables=variables,
            processes=tuple(processes),
            commands=tuple(commands),
            properties=tuple(properties),
            predicates=tuple(predicates),
            name=name,
            file=self.file,
            init_constraint=_conjoin(inits),
            ctl=tuple(ctl),
        )
        if not ltl_decls:
            return system
        ltl: list[LtlProperty] = []
        for d in ltl_decls:
            label_tok, text_tok = d.children
            assert isinstance(text_tok, Token)
            lname = _label_name(label_tok)
            if lname in prop_names or any(p.name == lname for p in ltl):
                raise self.err(f"duplicate property '{lname}'", label_tok)
            ltl.append(self.ltl_property(lname, str(text_tok), text_tok, system))
        return system.with_(ltl=tuple(ltl))

    def ltl_property(self, name: str, text: str, where: Token, system: System) -> LtlProperty:
        """An ``ltl NAME: FORMULA;`` declaration: SPIN's operators over GCL expressions."""
        from absmc.lang.promela.ltl import FormulaError, parse_formula, to_ltl

        try:
            tree = parse_formula(text)
        except FormulaError as err:
            raise self.err(f"ltl '{name}': {err}", where) from None

        def lower(key: tuple[str, int]) -> Expr:
            try:
                e = parse_gcl_expr(key[0], system, f"the atom '{key[0]}' of ltl '{name}'")
            except ModelError as err:
                raise self.err(f"ltl '{name}': {err.message}", where) from None
            if not e.is_bool:
                raise self.err(f"ltl '{name}': '{key[0]}' must be a bool expression", where)
            return e

        return LtlProperty(name, to_ltl(tree, lower), self.span(where), text=" ".join(text.split()))

    def var_decl(self, d: Tree[Any]) -> None:
        names = [c for c in d.children if isinstance(c, Token) and c.type == "NAME"]
        sort_node = next(c for c in d.children if isinstance(c, Tree) and c.data.endswith("_sort"))
        init_node = d.children[-1]
        sort = self.sort(sort_node)
        init = 0
        if isinstance(sort, RangeSort) and not sort.contains(0):
            init = sort.lo
        if init_node is not None:
            init = self.initial_value(init_node, sort)
        for tok in names:
            n = str(tok)
            if n in self.vars:
                raise self.err(f"duplicate declaration of '{n}'", tok)
            self.vars[n] = Variable(n, sort, init, self.span(tok))

    def sort(self, node: Tree[Any]) -> Sort:
        if node.data == "int_sort":
            return INT
        if node.data == "bool_sort":
            return BOOL
        lo, hi = (self.signed_int(c) for c in node.children)
        if lo > hi:
            raise self.err(f"empty range {lo}..{hi}", node)
        return RangeSort(lo, hi)

    def signed_int(self, node: Tree[Any]) -> int:
        minus, num = node.children
        value = parse_number(str(num), self.span(num), self.file)
        return -value if minus is not None else value

    def initial_value(self, node: Tree[Any] | Token, sort: Sort) -> int:
        e = self.expr(node)
        if free_vars(e):
            raise self.err("an initial value must be a constant expression", node)
        want = "bool" if isinstance(sort, BoolSort) else "int"
        if _kind(e) != want:
            raise self.err(f"initial value of type {_kind(e)} for a variable of type {sort}", node)
        try:
            value = evaluate(e, {})
        except EvalError as err:
            raise self.err(str(err), node) from None
        if isinstance(sort, RangeSort) and not sort.contains(value):
            raise self.err(f"initial value {value} is outside the range {sort}", node)
        return value

    # -- CTL ---------------------------------------------------------------------------
    def ctl_formula(self, node: Tree[Any] | Token) -> Formula:
        """The CTL formula of a ``ctl`` declaration's tree (``gcl.lark``: the expression
        grammar plus ``ctl_temporal`` and ``ctl_until``); temporal-free subtrees become
        :class:`~absmc.ir.ctl.Atom` s. Raises ``ModelError`` for a temporal operator used as an
        operand of a comparison, arithmetic or ``?:`` and for non-bool state formulas."""
        assert isinstance(node, Tree)
        if not _has_temporal(node):
            return Atom(self.bool_expr(node, "a CTL state formula"))
        kind = node.data
        subs = _operands(node)
        if kind == "not_":
            return Not(self.ctl_formula(subs[0]))
        if kind in ("and_", "or_"):
            parts = [self.ctl_formula(c) for c in subs]
            out = parts[0]
            for p in parts[1:]:
                out = And(out, p) if kind == "and_" else Or(out, p)
            return out
        if kind == "implies":
            return Implies(self.ctl_formula(subs[0]), self.ctl_formula(subs[1]))
        if kind == "ctl_temporal":
            op_name = str(node.children[0])
            assert op_name in TEMPORAL_OPS
            return Temporal(op_name, self.ctl_formula(subs[0]))  # type: ignore[arg-type]
        if kind == "ctl_until":
            path: Literal["A", "E"] = "A" if str(node.children[0]) == "A" else "E"
            return Until(path, self.ctl_formula(subs[0]), self.ctl_formula(subs[1]))
        raise self.err(
            "a temporal formula cannot be an operand here (temporal operators bind like '!': "
            "write AG(x == 1), not AG x == 1)",
            node,
        )

    # -- commands ----------------------------------------------------------------------
    def command(self, c: Tree[Any], process: str, labels: set[str]) -> Command:
        label_tok, guard_node, updates_node = c.children
        label = None
        if label_tok is not None:
            label = _label_name(label_tok)
            if label in labels:
                raise self.err(f"duplicate label '{label}' in process '{process}'", label_tok)
            labels.add(label)
        guard = self.bool_expr(guard_node, "a guard")
        updates: list[tuple[str, Expr]] = []
        if updates_node.data != "skip":
            seen: set[str] = set()
            for u in updates_node.children:
                name_tok, rhs_node = u.children
                n = str(name_tok)
                if n not in self.vars:
                    raise self.err(f"assignment to undeclared variable '{n}'", name_tok)
                if n in seen:
                    raise self.err(f"'{n}' is assigned twice in one command", name_tok)
                seen.add(n)
                rhs = self.expr(rhs_node)
                target = self.vars[n].sort
                want = "bool" if isinstance(target, BoolSort) else "int"
                if _kind(rhs) != want:
                    raise self.err(
                        f"cannot assign a {_kind(rhs)} expression to '{n}' of type {target}",
                        rhs_node,
                    )
                if (
                    isinstance(target, RangeSort)
                    and isinstance(rhs, Const)
                    and not target.contains(rhs.value)
                ):
                    raise self.err(
                        f"constant {rhs.value} is outside the range {target} of '{n}'", rhs_node
                    )
                updates.append((n, rhs))
        return Command(process, guard, tuple(updates), label, self.span(c))

    # -- expressions -------------------------------------------------------------------
    def bool_expr(self, node: Tree[Any] | Token, what: str) -> Expr:
        e = self.expr(node)
        if not e.is_bool:
            raise self.err(f"{what} must be a bool expression, not int", node)
        return e

    def expr(self, node: Tree[Any] | Token) -> Expr:
        """The IR of an expression tree, built bottom-up with an explicit stack (no recursion:
        a sum of 10,000 terms or 10,000 nested negations is as deep as its tree)."""
        done: dict[int, Expr] = {}
        stack: list[tuple[Tree[Any] | Token, bool]] = [(node, False)]
        while stack:
            n, ready = stack.pop()
            if isinstance(n, Token):  # pragma: no cover - grammar always wraps tokens
                raise self.err(f"unexpected token {n!r}", n)
            subs = _operands(n)
            if ready or not subs:
                done[id(n)] = self.combine(n, [done.pop(id(c)) for c in subs])
                continue
            stack.append((n, True))
            stack.extend((c, False) for c in reversed(subs))
        return done[id(node)]

    def combine(self, node: Tree[Any], args: list[Expr]) -> Expr:
        """One expression node from the IR of its subtrees ``args`` (in order); type checks."""
        sp = self.span(node)
        kind = node.data
        ch: list[Any] = node.children
        subs = _operands(node)
        if kind == "int_lit":
            return const(parse_number(str(ch[0]), sp, self.file), sp)
        if kind == "true_lit":
            return Const(TRUE.value, BOOL, sp)
        if kind == "false_lit":
            return Const(FALSE.value, BOOL, sp)
        if kind == "var_ref":
            n = str(ch[0])
            v = self.vars.get(n)
            if v is None:
                raise self.err(f"undeclared variable '{n}'", node)
            return Var(n, v.sort, sp)
        if kind == "neg":
            a = self.num(args[0], subs[0], "operand of unary '-'")
            if isinstance(a, Const):
                return Const(-a.value, INT, sp)
            return Op("neg", (a,), sp)
        if kind == "not_":
            return Op("!", (self.boolean(args[0], subs[0], "operand of '!'"),), sp)
        if kind == "arith":
            o = str(ch[1])
            return Op(
                o,
                (
                    self.num(args[0], subs[0], f"left operand of '{o}'"),
                    self.num(args[1], subs[1], f"right operand of '{o}'"),
                ),
                sp,
            )
        if kind == "cmp":
            o = str(ch[1])
            a, b = args
            if o in ("==", "!="):
                if _kind(a) != _kind(b):
                    raise self.err(f"'{o}' compares a {_kind(a)} with a {_kind(b)}", node)
            else:
                for x, sub in zip(args, subs, strict=True):
                    if x.is_bool:
                        raise self.err(f"'{o}' needs int operands, not bool", sub)
            return Op(o, (a, b), sp)
        if kind in ("and_", "or_", "implies"):
            sym = {"and_": "&&", "or_": "||", "implies": "=>"}[kind]
            ops = [
                self.boolean(x, n, f"{'left' if i == 0 else 'right'} operand of '{sym}'")
                for i, (x, n) in enumerate(zip(args, subs, strict=True))
            ]
            if sym != "=>":
                # && and || are associative: keep chains flat (a && b && c is one node)
                flat: list[Expr] = []
                for x in ops:
                    flat.extend(x.args if isinstance(x, Op) and x.op == sym else (x,))
                return Op(sym, tuple(flat), sp)
            return Op("=>", (ops[0], ops[1]), sp)
        if kind == "ite":
            c = self.boolean(args[0], subs[0], "condition of '?:'")
            a, b = args[1], args[2]
            if _kind(a) != _kind(b):
                raise self.err(
                    f"branches of '?:' have different types ({_kind(a)}, {_kind(b)})", node
                )
            return Op("ite", (c, a, b), sp)
        raise self.err(f"unsupported construct {kind}", node)  # pragma: no cover

    def num(self, e: Expr, node: Tree[Any] | Token, what: str) -> Expr:
        if e.is_bool:
            raise self.err(f"{what} must be int, not bool", node)
        return e

    def boolean(self, e: Expr, node: Tree[Any] | Token, what: str) -> Expr:
        if not e.is_bool:
            raise self.err(f"{what} must be bool, not int", node)
        return e


def _operands(node: Tree[Any]) -> list[Tree[Any]]:
    """The operand subtrees of an expression node; a left-nested chain ``a && b && c`` (or
    ``||``) gives all its operands at once, so that it becomes one n-ary node in linear time."""
    subs = [c for c in node.children if isinstance(c, Tree)]
    if node.data not in ("and_", "or_"):
        return subs
    right: list[Tree[Any]] = []
    left = node
    while isinstance(left, Tree) and left.data == node.data:
        right.append(left.children[1])
        left = left.children[0]
    return [left, *reversed(right)]


def _label_name(tok: Token | Tree[Any]) -> str:
    return str(tok).rstrip(": \t")


def _has_temporal(node: Tree[Any]) -> bool:
    """Whether a temporal operator occurs in ``node``'s tree."""
    return any(t.data in ("ctl_temporal", "ctl_until") for t in node.iter_subtrees())


def _conjoin(parts: list[Expr]) -> Expr | None:
    """The conjunction of the ``init:`` clauses (``None`` when there is none)."""
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else conj(parts)
