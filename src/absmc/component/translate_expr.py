"""The translator's instructions and its expression half (Bao's thesis, ch. 3.4), the base of
:class:`absmc.component.translate._Translator`: the instruction and function records
(:class:`Instr`, :class:`FuncCode`), :class:`Unsupported`, the native pieces compiled from the
source (``compile_piece``), and the hoisting of calls out of expressions (``hoist``: each call
becomes its own ``CALL`` instruction, operands to its left evaluated first). The statements and
the whole function are lowered in :mod:`absmc.component.translate`, which re-exports these
names.
"""

from __future__ import annotations

import ast
import copy
import inspect
import textwrap
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from absmc.component.comprehension import ComprehensionLoops
from absmc.component.stable import attr_reads
from absmc.ir.span import ModelError, SourceSpan

Granularity = Literal["statement", "access"]

# instruction kinds
EXEC, CALL, BRANCH, RETURN, RAISE, ASSERT, MATCH, RERAISE, JUMP, DELETE, FOR_NEXT = range(11)

#: names of the methods the checker intercepts on synchronization objects (a call to one of
#: them from native code is refused, see ``values.NativeSyncUse``)
SYNC_METHODS = frozenset(
    {
        "acquire",
        "release",
        "wait",
        "wait_for",
        "notify",
        "notify_all",
        "put",
        "get",
        "put_nowait",
        "get_nowait",
        "join",
        "start",
        "set",
        "clear",
        "task_done",
        "is_alive",
        "is_set",
        "locked",
        "qsize",
        "empty",
        "full",
    }
)


class Unsupported(ModelError):
    """A construct of the component the translator cannot turn into transitions exactly;
    rendered ``FILE:LINE:COL: error: unsupported in the component: WHAT``."""

    def __init__(self, what: str, file: str, node: ast.AST | None) -> None:
        line = getattr(node, "lineno", 0) or 0
        col = (getattr(node, "col_offset", 0) or 0) + 1
        super().__init__(f"unsupported in the component: {what}", SourceSpan(file, line, col))


@dataclass(eq=False)
class Instr:
    """One instruction: ``op`` (module constants), source ``line`` and ``text``, the native
    piece ``fn`` with the local ``slots`` it takes (``reads``: slots that must be bound),
    the slots its result tuple is stored to (``writes``), the next pc ``nxt``, the other
    target ``alt`` (branches, exception matches), the result slot ``dest`` (calls, loops)."""

    op: int
    line: int
    text: str
    fn: Callable[..., Any] | None = None
    slots: tuple[int, ...] = ()
    reads: tuple[int, ...] = ()
    writes: tuple[int, ...] = ()
    nxt: int = -1
    alt: int = -1
    dest: int = -1
    aux: int = -1
    cells: tuple[tuple[int, int], ...] = ()
    cell_writes: tuple[tuple[int, int], ...] = ()
    local: bool = False
    kills: tuple[int, ...] = ()
    col: int = 0
    #: a piece that reads only locals and attributes of locals (``x.a``): per read
    #: ``(slot, attribute or "", operand)`` (``operand``: the value is used by an operator,
    #: else only passed on as a reference); ``None`` for any other piece
    #: (:meth:`ComponentSemantics._invisible`)
    attrs: tuple[tuple[int, str, bool], ...] | None = None


@dataclass(eq=False)
class FuncCode:
    """A translated function: ``slots`` (parameters first, then locals, then temporaries),
    ``instrs``, ``handler[pc]`` = ``(handler pc, exception slot)`` of the innermost ``try``
    around ``pc`` or ``None``, the Python function ``func`` and its ``signature``."""

    name: str
    file: str
    func: types.FunctionType
    slots: list[str]
    instrs: list[Instr]
    handler: list[tuple[int, int] | None]
    nparams: int
    simple: bool
    freevars: tuple[str, ...]
    signature: inspect.Signature | None = None
    index: int = -1
    #: a nested function: the slots its free variables are bound to at each call (from the
    #: function object's closure), and the nested functions it defines (templates)
    free_slots: tuple[int, ...] = ()
    nested: list[types.FunctionType] = field(default_factory=list)


@dataclass
class _Loop:
    head: int
    breaks: list[int] = field(default_factory=list)
    depth: int = 0  # len(finally stack) when the loop was entered


class ExprTranslator(ComprehensionLoops):
    """The translator's state, helpers, native pieces and call hoisting (the statements are
    lowered by the subclass :class:`absmc.component.translate._Translator`)."""

    def __init__(
        self,
        func: types.FunctionType,
        granularity: Granularity,
        component_names: frozenset[str],
        method_names: frozenset[str],
        nested: bool = False,
    ) -> None:
        self.func = func
        self.granularity = granularity
        self.component_names = component_names
        self.method_names = method_names | SYNC_METHODS
        code = func.__code__
        self.file = code.co_filename
        try:
            lines, first = inspect.getsourcelines(func)
        except (OSError, TypeError) as e:
            raise Unsupported(
                f"the source of {func.__qualname__} is not available", self.file, None
            ) from e
        tree = ast.parse(textwrap.dedent("".join(lines)))
        ast.increment_lineno(tree, first - 1)
        fdef = tree.body[0]
        if isinstance(fdef, ast.AsyncFunctionDef):
            raise Unsupported("async functions", self.file, fdef)
        assert isinstance(fdef, ast.FunctionDef)
        self.fdef = fdef
        if code.co_flags & (
            inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
        ):
            raise Unsupported(f"generator function {func.__qualname__}", self.file, fdef)
        self.slots: list[str] = list(code.co_varnames) + [
            c for c in code.co_cellvars if c not in code.co_varnames
        ]
        self.free_slots: tuple[int, ...] = ()
        if nested:
            # a nested function's free variables are locals bound at each call
            self.free_slots = tuple(range(len(self.slots), len(self.slots) + len(code.co_freevars)))
            self.slots.extend(code.co_freevars)
        self.slot_of = {n: i for i, n in enumerate(self.slots)}
        self.freevars = () if nested else code.co_freevars
        self.nested: list[types.FunctionType] = []
        self.globals: set[str] = set()
        self.nonlocals: set[str] = set()
        for node in ast.walk(fdef):
            if isinstance(node, ast.Global):
                self.globals.update(node.names)
            elif isinstance(node, ast.Nonlocal):
                self.nonlocals.update(node.names)
        self.instrs: list[Instr] = []
        self.regions: list[tuple[int, int]] = []  # innermost handler (pc placeholder, slot)
        self.handler: list[tuple[int, int] | None] = []
        self.loops: list[_Loop] = []
        self.finals: list[tuple[list[ast.stmt], int, int]] = []  # (body, region depth, loops)
        self.excs: list[int] = []  # exception slots of the enclosing except handlers
        self.ntemp = 0
        self.last_local = False
        self.last_attrs: tuple[tuple[int, str, bool], ...] | None = None
        self.last_kills: tuple[int, ...] = ()
        #: temporaries read exactly once (unbound again after their use)
        self.single: set[int] = set()

    # -- helpers -----------------------------------------------------------------------
    def fail(self, what: str, node: ast.AST | None) -> Unsupported:
        return Unsupported(what, self.file, node)

    def temp(self) -> int:
        self.ntemp += 1
        name = f"$t{self.ntemp}"
        self.slot_of[name] = len(self.slots)
        self.slots.append(name)
        return self.slot_of[name]

    def emit(self, ins: Instr) -> int:
        self.instrs.append(ins)
        self.handler.append(self.regions[-1] if self.regions else None)
        return len(self.instrs) - 1

    def here(self) -> int:
        return len(self.instrs)

    def text(self, node: ast.AST) -> str:
        try:
            return ast.unparse(node).split("\n")[0][:100]
        except Exception:  # unparse of a synthetic node
            return type(node).__name__

    def local(self, name: str) -> bool:
        return name in self.slot_of and name not in self.globals

    def pure_builtin(self, name: str) -> bool:
        return name in _PURE_BUILTINS and name not in self.func.__globals__

    def constant_name(self, name: str) -> bool:
        """A global name a piece may read as a constant: a pure built-in or a component
        function (as :func:`_thread_local` allows)."""
        return self.pure_builtin(name) or name in self.component_names

    # -- native pieces -----------------------------------------------------------------
    def names_in(self, node: ast.AST) -> tuple[list[str], list[str]]:
        """Locals read and (at statement level) written by ``node``."""
        reads: list[str] = []
        writes: list[str] = []
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name):
                n = sub.id
                if n.startswith("$"):
                    pass
                if isinstance(sub.ctx, ast.Load):
                    if n not in reads:
                        reads.append(n)
                elif n not in writes:
                    writes.append(n)
        return reads, writes

    def compile_piece(
        self, body: list[ast.stmt], node: ast.AST, returns: list[str] | None, expr: ast.expr | None
    ) -> tuple[
        Callable[..., Any],
        tuple[int, ...],
        tuple[int, ...],
        tuple[int, ...],
        tuple[tuple[int, int], ...],
        tuple[tuple[int, int], ...],
    ]:
        """A Python function for a piece: parameters are the locals (and closure cells) it
        uses; it returns ``expr`` or the tuple of the locals it assigns. The nodes are copied
        first: renaming must not change a tree that is compiled again (a ``finally`` body or a
        ``with`` exit copied to every ``return`` and ``break``)."""
        body = copy.deepcopy(body)
        expr = copy.deepcopy(expr)
        holder = ast.Module(body=[*body], type_ignores=[])
        if expr is not None:
            holder.body.append(ast.Expr(expr))
        reads, writes = self.names_in(holder)
        params: list[str] = []
        slots: list[int] = []
        must: list[int] = []
        cells: list[tuple[int, int]] = []
        cell_writes: list[tuple[int, int]] = []
        for n in [*reads, *[w for w in writes if w not in reads]]:
            if n in self.globals:
                continue
            if n in self.slot_of:
                params.append(n)
                slots.append(self.slot_of[n])
                if n in reads:
                    must.append(self.slot_of[n])
            elif n in self.freevars:
                params.append(n)
                cells.append((len(params) - 1, self.freevars.index(n)))
        stored = [w for w in writes if w in self.slot_of and w not in self.globals]
        for w in writes:
            if w in self.freevars:
                if w not in self.nonlocals:
                    raise self.fail(f"assignment to closure variable {w}", node)
                cell_writes.append((len(stored), self.freevars.index(w)))
                stored.append(w)
        fbody: list[ast.stmt] = []
        if self.globals & set(writes):
            fbody.append(ast.Global(names=sorted(self.globals & set(writes))))
        fbody.extend(body)
        if expr is not None:
            fbody.append(ast.Return(expr))
        else:
            fbody.append(
                ast.Return(ast.Tuple([ast.Name(w, ast.Load()) for w in stored], ast.Load()))
            )
        renamed = {p: f"_l{i}" if p.startswith("$") else p for i, p in enumerate(params)}
        fdef = ast.FunctionDef(
            name="_absmc_piece",
            args=ast.arguments(
                posonlyargs=[],
                args=[ast.arg(renamed[p]) for p in params],
                kwonlyargs=[],
                kw_defaults=[],
                defaults=[],
            ),
            body=fbody,
            decorator_list=[],
        )
        fdef = _Rename(renamed).visit(fdef)
        mod = ast.Module(body=[fdef], type_ignores=[])
        for sub in ast.walk(mod):
            if not hasattr(sub, "lineno") or getattr(sub, "lineno", None) is None:
                ast.copy_location(sub, node)
        ast.fix_missing_locations(mod)
        for sub in ast.walk(mod):
            if isinstance(sub, (ast.expr, ast.stmt)) and getattr(sub, "end_lineno", None) is None:
                sub.end_lineno = sub.lineno
        code = compile(mod, self.file, "exec")
        fcode = next(c for c in code.co_consts if isinstance(c, types.CodeType))
        fn = types.FunctionType(fcode, self.func.__globals__, "_absmc_piece")
        write_slots = tuple(self.slot_of[w] for w in stored if w in self.slot_of)
        self.last_local = not cells and not cell_writes and _thread_local(holder, self)
        self.last_attrs = (
            None
            if cells or cell_writes
            else attr_reads(holder, self.local, self.slot_of, self.constant_name, _LOCAL_NODES)
        )
        self.last_kills = tuple(
            self.slot_of[n] for n in reads if self.slot_of.get(n, -1) in self.single
        )
        return fn, tuple(slots), tuple(must), write_slots, tuple(cells), tuple(cell_writes)

    def piece_stmt(self, op: int, stmt: ast.stmt, text: str | None = None) -> int:
        fn, slots, must, writes, cells, cw = self.compile_piece([stmt], stmt, [], None)
        return self.emit(
            Instr(
                op,
                stmt.lineno,
                text or self.text(stmt),
                fn,
                slots,
                must,
                writes,
                cells=cells,
                cell_writes=cw,
                local=self.last_local,
                attrs=self.last_attrs,
                col=stmt.col_offset + 1,
            )
        )

    def piece_expr(self, op: int, expr: ast.expr, at: ast.AST, text: str) -> Instr:
        fn, slots, must, _, cells, _ = self.compile_piece([], at, None, expr)
        ins = Instr(
            op,
            getattr(at, "lineno", 0),
            text,
            fn,
            slots,
            must,
            cells=cells,
            local=self.last_local,
            attrs=self.last_attrs,
            col=(getattr(at, "col_offset", 0) or 0) + 1,
        )
        self.emit(ins)
        return ins

    # -- expressions: hoisting calls ---------------------------------------------------
    def check_native(self, node: ast.AST, where: str) -> None:
        """Calls inside ``node`` run natively: refuse those that may reach the component or
        a synchronization primitive, and constructs that cannot run there."""
        for sub in ast.walk(node):
            if isinstance(sub, (ast.Yield, ast.YieldFrom)):
                raise self.fail("yield (generators)", sub)
            if isinstance(sub, ast.Await):
                raise self.fail("await", sub)
            if isinstance(sub, ast.NamedExpr):
                raise self.fail(f"assignment expression (:=) in {where}", sub)
            if isinstance(sub, ast.Call):
                f = sub.func
                if isinstance(f, ast.Name) and f.id in ("exec", "eval"):
                    raise self.fail(f"{f.id}()", sub)
                if isinstance(f, ast.Name) and f.id in self.component_names:
                    raise self.fail(f"call of component function {f.id} in {where}", sub)
                if isinstance(f, ast.Attribute) and f.attr in self.method_names:
                    raise self.fail(f"call of method {f.attr} in {where}", sub)

    def has_call(self, node: ast.AST) -> bool:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call):
                return True
            if isinstance(sub, (ast.Yield, ast.YieldFrom)):
                raise self.fail("yield (generators)", sub)
            if isinstance(sub, ast.Await):
                raise self.fail("await", sub)
        return False

    def simple(self, node: ast.expr) -> bool:
        """Evaluating ``node`` later gives the same value: a constant or a local variable."""
        return isinstance(node, ast.Constant) or (
            isinstance(node, ast.Name) and self.local(node.id)
        )

    def to_temp(self, node: ast.expr, at: ast.AST) -> ast.Name:
        """Evaluate ``node`` (without calls) into a new temporary now."""
        t = self.temp()
        self.single.add(t)
        name = self.slots[t]
        self.piece_stmt(
            EXEC,
            ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], node), at),
            self.text(node),
        )
        return ast.Name(name, ast.Load())

    def hoist(self, node: ast.expr) -> ast.expr:
        """``node`` with every call replaced by a temporary computed by earlier instructions
        (left operands evaluated first when a later operand calls)."""
        if not self.has_call(node):
            return node
        if isinstance(node, ast.Call):
            return self.call(node, -1)
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp)):
            try:
                self.check_native(node, "a comprehension or lambda")
            except Unsupported:
                if not self.reaches_component(node):
                    raise
                return self.comprehension(node)
            return node
        if isinstance(node, (ast.Lambda, ast.GeneratorExp)):
            self.check_native(node, "a comprehension or lambda")
            return node
        if isinstance(node, ast.BoolOp):
            return self.boolop(node)
        if isinstance(node, ast.IfExp):
            return self.ifexp(node)
        if isinstance(node, ast.NamedExpr):
            raise self.fail("assignment expression (:=) around a call", node)
        # generic: children left to right
        fields = list(ast.iter_fields(node))
        children: list[tuple[str, int | None, ast.expr]] = []
        for fname, value in fields:
            if isinstance(value, ast.expr):
                children.append((fname, None, value))
            elif isinstance(value, list):
                for i, v in enumerate(value):
                    if isinstance(v, ast.expr):
                        children.append((fname, i, v))
                    elif isinstance(v, ast.keyword):
                        children.append((fname, i, v.value))
        calls_after = [False] * len(children)
        seen = False
        for k in range(len(children) - 1, -1, -1):
            calls_after[k] = seen
            seen = seen or self.has_call(children[k][2])
        new = _shallow_copy(node)
        for k, (fname, idx, child) in enumerate(children):
            if self.has_call(child):
                repl: ast.expr = self.hoist(child)
            elif calls_after[k] and not self.simple(child):
                repl = self.to_temp(child, node)
            else:
                repl = child
            if idx is None:
                setattr(new, fname, repl)
            else:
                lst = list(getattr(new, fname))
                item = lst[idx]
                if isinstance(item, ast.keyword):
                    lst[idx] = ast.keyword(item.arg, repl)
                else:
                    lst[idx] = repl
                setattr(new, fname, lst)
        out: ast.expr = new
        return out

    def call(self, node: ast.Call, dest: int) -> ast.Name:
        """Emit a CALL for ``node`` (operands hoisted first); the result goes to slot ``dest``
        (a new temporary when ``-1``)."""
        f = node.func
        if isinstance(f, ast.Name) and f.id in ("exec", "eval", "compile"):
            raise self.fail(f"{f.id}()", node)
        parts: list[ast.expr] = [f, *node.args, *[k.value for k in node.keywords]]
        holder = ast.copy_location(ast.Tuple(parts, ast.Load()), node)
        hoisted = self.hoist(holder)
        assert isinstance(hoisted, ast.Tuple)
        elts = hoisted.elts
        callee = elts[0]
        args = elts[1 : 1 + len(node.args)]
        kwvals = elts[1 + len(node.args) :]
        keys: list[ast.expr | None] = [
            ast.Constant(k.arg) if k.arg is not None else None for k in node.keywords
        ]
        packed = ast.Tuple(
            [callee, ast.Tuple(list(args), ast.Load()), ast.Dict(keys, list(kwvals))], ast.Load()
        )
        if dest < 0:
            dest = self.temp()
            self.single.add(dest)
        ins = self.piece_expr(CALL, packed, node, self.text(node))
        ins.dest = dest
        ins.nxt = self.here()
        return ast.Name(self.slots[dest], ast.Load())

    def boolop(self, node: ast.BoolOp) -> ast.Name:
        t = self.temp()
        name = self.slots[t]
        ends: list[Instr] = []
        for i, v in enumerate(node.values):
            val = self.hoist(v)
            self.piece_stmt(
                EXEC,
                ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], val), node),
                self.text(v),
            )
            if i < len(node.values) - 1:
                test: ast.expr = ast.Name(name, ast.Load())
                br = self.piece_expr(BRANCH, test, node, self.text(v))
                # and: continue when true; or: continue when false
                if isinstance(node.op, ast.And):
                    br.nxt = self.here()
                    ends.append(br)  # alt patched to the end
                else:
                    br.alt = self.here()
                    br.aux = 1  # nxt patched to the end
                    ends.append(br)
        end = self.here()
        for br in ends:
            if br.aux == 1:
                br.nxt = end
                br.aux = -1
            else:
                br.alt = end
        return ast.Name(name, ast.Load())

    def ifexp(self, node: ast.IfExp) -> ast.Name:
        t = self.temp()
        name = self.slots[t]
        test = self.hoist(node.test)
        br = self.piece_expr(BRANCH, test, node, self.text(node.test))
        br.nxt = self.here()
        body = self.hoist(node.body)
        self.piece_stmt(
            EXEC,
            ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], body), node),
            self.text(node.body),
        )
        j = self.emit(Instr(JUMP, node.lineno, ""))
        br.alt = self.here()
        orelse = self.hoist(node.orelse)
        self.piece_stmt(
            EXEC,
            ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], orelse), node),
            self.text(node.orelse),
        )
        self.instrs[j].nxt = self.here()
        return ast.Name(name, ast.Load())


_LOCAL_NODES = (
    ast.Module,
    ast.Expr,
    ast.Assign,
    ast.AugAssign,
    ast.Return,
    ast.Name,
    ast.Constant,
    ast.Tuple,
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.Compare,
    ast.IfExp,
    ast.Starred,
    ast.Dict,
    ast.Load,
    ast.Store,
    ast.operator,
    ast.unaryop,
    ast.boolop,
    ast.cmpop,
)


def _thread_local(holder: ast.AST, tr: ExprTranslator) -> bool:
    """A piece that touches only the frame's locals (no attribute, element, global or call):
    with values that are not heap objects it is invisible to other threads."""
    for sub in ast.walk(holder):
        if not isinstance(sub, _LOCAL_NODES):
            return False
        if (
            isinstance(sub, ast.Name)
            and not tr.local(sub.id)
            and not (sub.id in _PURE_BUILTINS and sub.id not in tr.func.__globals__)
            and sub.id not in tr.component_names
        ):
            return False
    return True


#: built-ins without side effects on data that is not a heap object
_PURE_BUILTINS = frozenset(
    {
        "range",
        "len",
        "min",
        "max",
        "abs",
        "int",
        "str",
        "float",
        "bool",
        "divmod",
        "round",
        "ord",
        "chr",
        "isinstance",
        "type",
        "hash",
        "pow",
    }
)


def _shallow_copy(node: ast.AST) -> Any:
    new = type(node)()
    for k, v in ast.iter_fields(node):
        setattr(new, k, v)
    for k in node._attributes:
        if hasattr(node, k):
            setattr(new, k, getattr(node, k))
    return new


class _Rename(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id in self.names:
            return ast.copy_location(ast.Name(self.names[node.id], node.ctx), node)
        return node
