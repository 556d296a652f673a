"""From a Python function's syntax tree to an explicit state machine (Bao's thesis, ch. 3.4:
the component is translated, the environment runs natively).

Each function becomes a :class:`FuncCode`: a list of instructions indexed by a program counter
(pc), its local variable slots, and for each pc the innermost exception handler. A statement is
one transition; branches (``if``, ``while``, ``for``, ``and``/``or``/conditional expressions
around calls, ``try``/``except``/``finally``, ``with``) are exposed as instructions with two
successors. Every call in a statement is *hoisted* into its own ``CALL`` instruction (the
machine decides at run time whether the callee is a component function — a new frame —, a
synchronization primitive, or the environment — one native, atomic transition), with the
operands to its left evaluated first, so Python's evaluation order is kept.

The pieces of code the machine runs natively are compiled once into small Python functions
(``Instr.fn``) whose parameters are the frame's local variables the piece uses; statements
return the locals they assign. Granularity ``access`` splits an assignment to shared data
(an attribute, an element, a global) into a read step and a write step, so that the lost
update of ``balance += x`` between two threads is a reachable interleaving.

What the translator cannot express exactly raises :class:`Unsupported` with the file, line
and construct: generators, ``async``, ``exec``/``eval``, nested ``def``/``class``, ``match``,
``global`` data rebound in comprehensions, calls into the component or the checker's
primitives from inside a comprehension or ``lambda``.
"""

from __future__ import annotations

import ast
import inspect
import types
from collections.abc import Callable
from typing import Any

from absmc.component.translate_expr import (
    ASSERT,
    BRANCH,
    CALL,
    DELETE,
    EXEC,
    FOR_NEXT,
    JUMP,
    MATCH,
    RAISE,
    RERAISE,
    RETURN,
    SYNC_METHODS,
    ExprTranslator,
    FuncCode,
    Granularity,
    Instr,
    Unsupported,
    _Loop,
    _shallow_copy,
)

__all__ = [
    "ASSERT",
    "BRANCH",
    "CALL",
    "DELETE",
    "EXEC",
    "FOR_NEXT",
    "JUMP",
    "MATCH",
    "RAISE",
    "RERAISE",
    "RETURN",
    "SYNC_METHODS",
    "FuncCode",
    "Granularity",
    "Instr",
    "Unsupported",
    "translate",
]


class _Translator(ExprTranslator):
    """Lowers the statements and the whole function (the expression half: the base)."""

    # -- statements --------------------------------------------------------------------
    def block(self, body: list[ast.stmt]) -> None:
        for s in body:
            self.stmt(s)

    def stmt(self, s: ast.stmt) -> None:
        meth = getattr(self, f"s_{type(s).__name__}", None)
        if meth is None:
            raise self.fail(f"the statement '{type(s).__name__}'", s)
        meth(s)

    def s_Pass(self, s: ast.Pass) -> None:
        pass

    def s_Global(self, s: ast.Global) -> None:
        pass

    def s_Nonlocal(self, s: ast.Nonlocal) -> None:
        pass

    def s_Import(self, s: ast.Import) -> None:
        self.piece_stmt(EXEC, s)

    def s_ImportFrom(self, s: ast.ImportFrom) -> None:
        self.piece_stmt(EXEC, s)

    def s_AsyncFunctionDef(self, s: ast.AsyncFunctionDef) -> None:
        raise self.fail("async functions", s)

    def s_ClassDef(self, s: ast.ClassDef) -> None:
        raise self.fail(f"class definition {s.name} inside a function", s)

    def s_AsyncWith(self, s: ast.AsyncWith) -> None:
        raise self.fail("async with", s)

    def s_AsyncFor(self, s: ast.AsyncFor) -> None:
        raise self.fail("async for", s)

    def s_Match(self, s: ast.stmt) -> None:
        raise self.fail("match statements", s)

    def s_Expr(self, s: ast.Expr) -> None:
        v = s.value
        if isinstance(v, ast.Constant):
            return  # docstrings and bare constants
        if isinstance(v, ast.Call):
            self.call(v, -1)
            return
        val = self.hoist(v)
        self.piece_stmt(EXEC, ast.copy_location(ast.Expr(val), s), self.text(s))

    def shared_target(self, t: ast.expr) -> bool:
        return not (isinstance(t, ast.Name) and self.local(t.id))

    def s_Assign(self, s: ast.Assign) -> None:
        for t in s.targets:
            self.check_native(t, "an assignment target") if self.has_call(t) else None
        if (
            len(s.targets) == 1
            and isinstance(s.targets[0], ast.Name)
            and self.local(s.targets[0].id)
            and isinstance(s.value, ast.Call)
        ):
            self.call(s.value, self.slot_of[s.targets[0].id])
            return
        val = self.hoist(s.value)
        if (
            self.granularity == "access"
            and any(self.shared_target(t) for t in s.targets)
            and not self.simple(val)
        ):
            val = self.to_temp(val, s)
        self.piece_stmt(EXEC, ast.copy_location(ast.Assign(s.targets, val), s), self.text(s))

    def s_AnnAssign(self, s: ast.AnnAssign) -> None:
        if s.value is None:
            return
        self.s_Assign(ast.copy_location(ast.Assign([s.target], s.value), s))

    def s_AugAssign(self, s: ast.AugAssign) -> None:
        if self.has_call(s.target):
            raise self.fail("a call in the target of an augmented assignment", s)
        val = self.hoist(s.value)
        if self.granularity == "access" and self.shared_target(s.target):
            # read (one step), then compute and write (another step)
            load = _as_load(s.target)
            old = self.to_temp(load, s)
            new = ast.BinOp(old, s.op, val)
            self.piece_stmt(
                EXEC, ast.copy_location(ast.Assign([s.target], new), s), self.text(s) + "  (write)"
            )
            return
        self.piece_stmt(
            EXEC, ast.copy_location(ast.AugAssign(s.target, s.op, val), s), self.text(s)
        )

    def s_Delete(self, s: ast.Delete) -> None:
        for t in s.targets:
            if isinstance(t, ast.Name) and self.local(t.id):
                self.emit(
                    Instr(DELETE, s.lineno, self.text(s), dest=self.slot_of[t.id], local=True)
                )
            else:
                self.piece_stmt(EXEC, ast.copy_location(ast.Delete([t]), s), self.text(s))

    def s_Assert(self, s: ast.Assert) -> None:
        test = self.hoist(s.test)
        if s.msg is not None:
            msg = self.hoist(s.msg) if self.has_call(s.msg) else s.msg
            packed: ast.expr = ast.Tuple([test, ast.Lambda(_no_args(), msg)], ast.Load())
            self.check_native(s.msg, "an assertion message") if not self.has_call(s.msg) else None
        else:
            packed = ast.Tuple([test, ast.Constant(None)], ast.Load())
        ins = self.piece_expr(ASSERT, packed, s, self.text(s))
        ins.nxt = self.here()

    def s_Raise(self, s: ast.Raise) -> None:
        if s.exc is None:
            if not self.excs:
                raise self.fail("bare raise outside an except clause", s)
            self.emit(Instr(RERAISE, s.lineno, "raise", dest=self.excs[-1]))
            return
        exc = self.hoist(s.exc)
        packed = ast.Tuple(
            [exc, s.cause if s.cause is not None else ast.Constant(None)], ast.Load()
        )
        self.piece_expr(RAISE, packed, s, self.text(s))

    def s_Return(self, s: ast.Return) -> None:
        val: ast.expr = self.hoist(s.value) if s.value is not None else ast.Constant(None)
        if self.finals:
            if not self.simple(val):
                val = self.to_temp(val, s)
            self.run_finals(0, s)
        ins = self.piece_expr(RETURN, val, s, self.text(s))
        ins.nxt = -1

    def run_finals(self, down_to: int, at: ast.AST) -> None:
        """Copies of the enclosing ``finally`` bodies (innermost first) down to depth
        ``down_to``, each in the handler region around its ``try``."""
        saved_regions, saved_finals = self.regions, self.finals
        for k in range(len(saved_finals) - 1, down_to - 1, -1):
            body, depth, _ = saved_finals[k]
            self.regions = saved_regions[:depth]
            self.finals = saved_finals[:k]
            self.block(body)
        self.regions, self.finals = saved_regions, saved_finals

    def s_Break(self, s: ast.Break) -> None:
        loop = self.loops[-1]
        self.run_finals(loop.depth, s)
        loop.breaks.append(self.emit(Instr(JUMP, s.lineno, "break")))

    def s_Continue(self, s: ast.Continue) -> None:
        loop = self.loops[-1]
        self.run_finals(loop.depth, s)
        self.emit(Instr(JUMP, s.lineno, "continue", nxt=loop.head))

    def s_If(self, s: ast.If) -> None:
        test = self.hoist(s.test)
        br = self.piece_expr(BRANCH, test, s, f"if {self.text(s.test)}")
        br.nxt = self.here()
        self.block(s.body)
        if s.orelse:
            j = self.emit(Instr(JUMP, s.lineno, ""))
            br.alt = self.here()
            self.block(s.orelse)
            self.instrs[j].nxt = self.here()
        else:
            br.alt = self.here()

    def s_While(self, s: ast.While) -> None:
        head = self.here()
        test = self.hoist(s.test)
        br = self.piece_expr(BRANCH, test, s, f"while {self.text(s.test)}")
        br.nxt = self.here()
        loop = _Loop(head, depth=len(self.finals))
        self.loops.append(loop)
        self.block(s.body)
        self.loops.pop()
        self.emit(Instr(JUMP, s.lineno, "", nxt=head))
        br.alt = self.here()
        self.block(s.orelse)
        end = self.here()
        for b in loop.breaks:
            self.instrs[b].nxt = end

    def s_For(self, s: ast.For) -> None:
        it = self.hoist(s.iter)
        seq = self.temp()
        idx = self.temp()
        seqn, idxn = self.slots[seq], self.slots[idx]
        # a list is iterated live (as its iterator does), other iterables are snapshotted
        snap = ast.IfExp(
            ast.Call(
                ast.Name("isinstance", ast.Load()),
                [
                    it,
                    ast.Tuple(
                        [ast.Name(n, ast.Load()) for n in ("list", "tuple", "range", "str")],
                        ast.Load(),
                    ),
                ],
                [],
            ),
            it,
            ast.Call(ast.Name("list", ast.Load()), [it], []),
        )
        init = ast.Assign(
            [ast.Tuple([ast.Name(seqn, ast.Store()), ast.Name(idxn, ast.Store())], ast.Store())],
            ast.Tuple([snap, ast.Constant(0)], ast.Load()),
        )
        self.check_native(it, "a loop's iterable") if not isinstance(it, ast.Name) else None
        self.piece_stmt(EXEC, ast.copy_location(init, s), f"for ... in {self.text(s.iter)}")
        head = self.here()
        # FOR_NEXT: when idx < len(seq): target = seq[idx]; idx += 1; else leave
        self.check_native(s.target, "a loop target") if self.has_call(s.target) else None
        step = [
            ast.Assign(
                [s.target],
                ast.Subscript(ast.Name(seqn, ast.Load()), ast.Name(idxn, ast.Load()), ast.Load()),
            ),
            ast.AugAssign(ast.Name(idxn, ast.Store()), ast.Add(), ast.Constant(1)),
        ]
        for st in step:
            ast.copy_location(st, s)
        fn, slots, must, writes, cells, cw = self.compile_piece(step, s, [], None)
        nxt = self.emit(
            Instr(
                FOR_NEXT,
                s.lineno,
                f"for {self.text(s.target)} in {self.text(s.iter)}",
                fn,
                slots,
                must,
                writes,
                cells=cells,
                cell_writes=cw,
                dest=seq,
                aux=idx,
                local=True,
            )
        )
        self.instrs[nxt].nxt = self.here()
        loop = _Loop(head, depth=len(self.finals))
        self.loops.append(loop)
        self.block(s.body)
        self.loops.pop()
        self.emit(Instr(JUMP, s.lineno, "", nxt=head))
        self.instrs[nxt].alt = self.here()
        self.block(s.orelse)
        end = self.here()
        for b in loop.breaks:
            self.instrs[b].nxt = end

    def s_Try(self, s: ast.Try) -> None:
        if s.finalbody:
            inner = ast.Try(s.body, s.handlers, s.orelse, []) if s.handlers else None
            body: list[ast.stmt] = [ast.copy_location(inner, s)] if inner is not None else s.body
            self.try_finally(body, s.finalbody, s)
            return
        self.try_except(s)

    def try_except(self, s: ast.Try) -> None:
        exc = self.temp()
        marker = len(self.instrs)
        region_key = (-(marker + 1), exc)  # placeholder handler pc, patched below
        self.regions.append(region_key)
        start = self.here()
        self.block(s.body)
        self.regions.pop()
        end_body = self.here()
        self.block(s.orelse)
        j_end = [self.emit(Instr(JUMP, s.lineno, ""))]
        hpc = self.here()
        for pc in range(start, end_body):
            if self.handler[pc] == region_key:
                self.handler[pc] = (hpc, exc)
        self.excs.append(exc)
        for h in s.handlers:
            if h.type is not None:
                m = self.piece_expr(MATCH, h.type, h, f"except {self.text(h.type)}")
                m.dest = exc
                m.nxt = self.here()
                if h.name is not None:
                    self.emit(
                        Instr(
                            EXEC,
                            h.lineno,
                            f"as {h.name}",
                            fn=_identity,
                            slots=(exc,),
                            reads=(exc,),
                            writes=(self.slot_of[h.name],),
                            local=True,
                        )
                    )
                self.block(h.body)
                j_end.append(self.emit(Instr(JUMP, h.lineno, "")))
                m.alt = self.here()
            else:
                self.block(h.body)
                j_end.append(self.emit(Instr(JUMP, h.lineno, "")))
        self.excs.pop()
        self.emit(Instr(RERAISE, s.lineno, "(exception not handled here)", dest=exc))
        end = self.here()
        for j in j_end:
            self.instrs[j].nxt = end

    def try_finally(
        self,
        body: list[ast.stmt],
        final: list[ast.stmt],
        s: ast.AST,
        on_error: Callable[[int], None] | None = None,
    ) -> None:
        exc = self.temp()
        marker = len(self.instrs)
        region_key = (-(marker + 1), exc)
        depth = len(self.regions)
        self.regions.append(region_key)
        self.finals.append((final, depth, len(self.loops)))
        start = self.here()
        self.block(body)
        self.finals.pop()
        self.regions.pop()
        end_body = self.here()
        self.block(final)
        j = self.emit(Instr(JUMP, getattr(s, "lineno", 0), ""))
        hpc = self.here()
        for pc in range(start, end_body):
            if self.handler[pc] == region_key:
                self.handler[pc] = (hpc, exc)
        if on_error is not None:
            on_error(exc)
        else:
            self.block(final)
        self.emit(Instr(RERAISE, getattr(s, "lineno", 0), "(exception continues)", dest=exc))
        self.instrs[j].nxt = self.here()

    def s_With(self, s: ast.With) -> None:
        if len(s.items) > 1:
            first, *rest = s.items
            inner = ast.copy_location(ast.With(rest, s.body), s)
            self.s_With(ast.copy_location(ast.With([first], [inner]), s))
            return
        item = s.items[0]
        cm = self.temp()
        cmn = self.slots[cm]
        ctx = self.hoist(item.context_expr)
        self.piece_stmt(
            EXEC,
            ast.copy_location(ast.Assign([ast.Name(cmn, ast.Store())], ctx), s),
            f"with {self.text(item.context_expr)}",
        )
        enter = ast.copy_location(
            ast.Call(ast.Attribute(ast.Name(cmn, ast.Load()), "__enter__", ast.Load()), [], []), s
        )
        if item.optional_vars is not None:
            target = item.optional_vars
            self.s_Assign(ast.copy_location(ast.Assign([target], enter), s))
        else:
            self.call(enter, -1)
        exit_ok = ast.copy_location(
            ast.Expr(
                ast.Call(
                    ast.Attribute(ast.Name(cmn, ast.Load()), "__exit__", ast.Load()),
                    [ast.Constant(None)] * 3,
                    [],
                )
            ),
            s,
        )
        ast.fix_missing_locations(exit_ok)

        def on_error(exc: int) -> None:
            en = self.slots[exc]
            call = ast.copy_location(
                ast.Call(
                    ast.Attribute(ast.Name(cmn, ast.Load()), "__exit__", ast.Load()),
                    [
                        ast.Call(ast.Name("type", ast.Load()), [ast.Name(en, ast.Load())], []),
                        ast.Name(en, ast.Load()),
                        ast.Constant(None),
                    ],
                    [],
                ),
                s,
            )
            ast.fix_missing_locations(call)
            sup = self.temp()
            self.single.add(sup)
            self.call(call, sup)
            br = self.piece_expr(
                BRANCH, ast.Name(self.slots[sup], ast.Load()), s, "(exception suppressed?)"
            )
            br.alt = self.here()
            # suppressed: continue after the with statement (patched by the caller's jump)
            self.suppress.append(br)

        self.suppress: list[Instr] = getattr(self, "suppress", [])
        mark = len(self.suppress)
        self.try_finally(s.body, [exit_ok], s, on_error)
        end = self.here()
        for br in self.suppress[mark:]:
            br.nxt = end
        del self.suppress[mark:]

    # -- the whole function ------------------------------------------------------------
    def translate(self) -> FuncCode:
        fdef = self.fdef
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(fdef)):
            raise self.fail(f"generator function {self.func.__qualname__}", fdef)
        self.block(fdef.body)
        ret = self.emit(
            Instr(RETURN, fdef.end_lineno or fdef.lineno, "return None", fn=_none, nxt=-1)
        )
        del ret
        # thread jumps
        n = len(self.instrs)

        def final(pc: int) -> int:
            seen = 0
            while 0 <= pc < n and self.instrs[pc].op == JUMP and seen <= n:
                pc = self.instrs[pc].nxt
                seen += 1
            return pc

        for pc, ins in enumerate(self.instrs):
            if ins.op in (EXEC, DELETE) and ins.nxt < 0:
                ins.nxt = pc + 1
            if ins.op != JUMP:
                if ins.nxt >= 0:
                    ins.nxt = final(ins.nxt)
                if ins.alt >= 0:
                    ins.alt = final(ins.alt)
        handler = [(final(h[0]), h[1]) if h is not None else None for h in self.handler]
        code = self.func.__code__
        nparams = code.co_argcount + code.co_kwonlyargcount
        nparams += bool(code.co_flags & inspect.CO_VARARGS)
        nparams += bool(code.co_flags & inspect.CO_VARKEYWORDS)
        simple = (
            code.co_kwonlyargcount == 0
            and not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
            and not self.func.__defaults__
        )
        try:
            sig = inspect.signature(self.func)
        except (TypeError, ValueError):
            sig = None
        return FuncCode(
            self.func.__qualname__,
            self.file,
            self.func,
            self.slots,
            self.instrs,
            handler,
            nparams,
            simple,
            self.freevars,
            sig,
            free_slots=self.free_slots,
            nested=self.nested,
        )


def _identity(x: Any) -> tuple[Any]:
    return (x,)


def _none() -> None:
    return None


#: the piece of the ``return None`` that ends every translated body
NONE_PIECE = _none


def _no_args() -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])


def _as_load(t: ast.expr) -> ast.expr:
    new: ast.expr = _shallow_copy(t)
    if hasattr(new, "ctx"):
        new.ctx = ast.Load()
    return new


def translate(
    func: types.FunctionType,
    granularity: Granularity = "statement",
    component_names: frozenset[str] = frozenset(),
    method_names: frozenset[str] = frozenset(),
    nested: bool = False,
) -> FuncCode:
    """Translate one Python function into a :class:`FuncCode` (Bao's thesis, ch. 3.4).
    ``component_names``/``method_names``: names of the component's functions and methods
    (calls to them may not be hidden in natively run code); ``nested``: ``func`` is the
    template of a function defined inside a component function (its free variables become
    locals bound at each call). Raises :class:`Unsupported` for a construct that cannot be
    translated exactly (file:line of the construct)."""
    return _Translator(func, granularity, component_names, method_names, nested).translate()
