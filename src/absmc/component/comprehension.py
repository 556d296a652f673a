"""Lowerings of the translator (Bao's thesis, ch. 3.4: every statement of the component is a
transition), mixed into :mod:`absmc.component.translate`:

* list, set and dict comprehensions that call the component, translated as the loops they
  stand for: ``[Worker(c) for _ in range(2)]`` or ``[t.join() for t in ts]`` would otherwise
  run natively, in one step, out of the checker's reach;
* functions defined inside a component function (``def worker(): ...`` then
  ``Thread(target=worker)``): translated too; the ``def`` statement makes a function object
  whose closure holds the captured values (encoded by value, ``values.NESTED``), which is
  exact because a captured variable is refused unless it is bound once, before the ``def``,
  outside loops, and the nested function does not assign it."""

from __future__ import annotations

import ast
import copy
import types
from typing import TYPE_CHECKING, Any

from absmc.component.values import NESTED

if TYPE_CHECKING:
    from absmc.component.translate import Unsupported


class ComprehensionLoops:
    """The translator's comprehension lowering (it provides ``slots``, ``temp``, ``text``,
    ``piece_stmt``, ``stmt`` and ``fail``)."""

    slots: list[str]
    slot_of: dict[str, int]
    func: Any  # the translated function (a FunctionType; Any: not a method of the mixin)
    fdef: ast.FunctionDef
    file: str
    loops: list[Any]
    nested: list[types.FunctionType]

    def emit(self, ins: Any) -> int:
        raise NotImplementedError

    def temp(self) -> int:
        raise NotImplementedError

    def text(self, node: ast.AST) -> str:
        raise NotImplementedError

    def piece_stmt(self, op: int, stmt: ast.stmt, text: str | None = None) -> int:
        raise NotImplementedError

    def stmt(self, s: ast.stmt) -> None:
        raise NotImplementedError

    def fail(self, what: str, node: ast.AST | None) -> Unsupported:
        raise NotImplementedError

    def reaches_component(self, node: ast.AST) -> bool:
        """``node`` calls the component or a synchronization method (and holds no lambda or
        generator expression that would: those stay refused)."""
        for sub in ast.walk(node):
            if isinstance(sub, (ast.Lambda, ast.GeneratorExp, ast.Yield, ast.Await)):
                return False
        return True

    def comprehension(self, node: ast.ListComp | ast.SetComp | ast.DictComp) -> ast.Name:
        """A list, set or dict comprehension that calls the component (``[Worker(c) for _ in
        range(2)]``, ``[t.start() for t in ts]``) as the loops it stands for, statement by
        statement: its targets become fresh locals, the result a temporary."""
        from absmc.component.translate_expr import EXEC, _Rename  # the translator imports us

        res = self.temp()
        rname = self.slots[res]
        empty: ast.expr
        if isinstance(node, ast.ListComp):
            empty = ast.List([], ast.Load())
        elif isinstance(node, ast.SetComp):
            empty = ast.Call(ast.Name("set", ast.Load()), [], [])
        else:
            empty = ast.Dict([], [])
        self.piece_stmt(
            EXEC,
            ast.copy_location(ast.Assign([ast.Name(rname, ast.Store())], empty), node),
            self.text(node),
        )
        renamed: dict[str, str] = {}
        for gen in node.generators:
            if gen.is_async:
                raise self.fail("async comprehension", node)
            for sub in ast.walk(gen.target):
                if isinstance(sub, ast.Name) and sub.id not in renamed:
                    renamed[sub.id] = self.slots[self.temp()]
        ren = _Rename(renamed)

        def fix(e: ast.AST) -> Any:
            return ren.visit(copy.deepcopy(e))

        res_load = ast.Name(rname, ast.Load())
        inner: ast.stmt
        if isinstance(node, ast.ListComp):
            inner = ast.AugAssign(
                ast.Name(rname, ast.Store()), ast.Add(), ast.List([fix(node.elt)], ast.Load())
            )
        elif isinstance(node, ast.SetComp):
            inner = ast.Expr(
                ast.Call(ast.Attribute(res_load, "add", ast.Load()), [fix(node.elt)], [])
            )
        else:
            inner = ast.Assign(
                [ast.Subscript(res_load, fix(node.key), ast.Store())], fix(node.value)
            )
        body: list[ast.stmt] = [inner]
        for gen in reversed(node.generators):
            for cond in reversed(gen.ifs):
                body = [ast.If(fix(cond), body, [])]
            # the first iterable is evaluated in the enclosing scope: no renaming
            it = gen.iter if gen is node.generators[0] else fix(gen.iter)
            body = [ast.For(fix(gen.target), it, body, [])]
        loop = body[0]
        for sub in ast.walk(loop):
            ast.copy_location(sub, node)
        self.stmt(loop)
        return ast.Name(rname, ast.Load())

    def s_FunctionDef(self, s: ast.FunctionDef) -> None:
        """``def NAME(...)`` inside a component function: the nested function is translated
        (its template registered in ``values.NESTED``) and the statement binds ``NAME`` to a
        function object closing over the captured values."""
        from absmc.component.translate import EXEC, Instr

        if s.decorator_list:
            raise self.fail(f"decorated nested function {s.name}", s)
        for d in [*s.args.defaults, *[k for k in s.args.kw_defaults if k is not None]]:
            if not isinstance(d, ast.Constant):
                raise self.fail(f"a default that is not a constant in nested function {s.name}", d)
        if self.loops:
            raise self.fail(f"nested function {s.name} defined inside a loop", s)
        for sub in ast.walk(s):
            if isinstance(sub, (ast.Nonlocal, ast.Global)):
                raise self.fail(f"nonlocal/global in nested function {s.name}", sub)
        code = next(
            (
                c
                for c in self.func.__code__.co_consts
                if isinstance(c, types.CodeType)
                and c.co_name == s.name
                and c.co_firstlineno == s.lineno
            ),
            None,
        )
        if code is None:
            raise self.fail(f"nested function {s.name} (its code was not found)", s)
        captured = code.co_freevars
        for name in captured:
            if name not in self.slot_of:
                raise self.fail(f"{s.name} captures {name} of an enclosing function", s)
            if _bindings(self.fdef, name, s) > 1:
                raise self.fail(
                    f"nested function {s.name} captures {name}, which is bound more than once",
                    s,
                )
        defaults = tuple(d.value for d in s.args.defaults if isinstance(d, ast.Constant))
        kwdefaults = {
            a.arg: d.value
            for a, d in zip(s.args.kwonlyargs, s.args.kw_defaults, strict=True)
            if isinstance(d, ast.Constant)
        }
        template = types.FunctionType(
            code,
            self.func.__globals__,
            s.name,
            defaults or None,
            tuple(types.CellType() for _ in captured),
        )
        template.__kwdefaults__ = kwdefaults or None
        template.__qualname__ = code.co_qualname
        NESTED[code] = template
        self.nested.append(template)

        def make(*values: Any) -> tuple[types.FunctionType]:
            f = types.FunctionType(
                code,
                template.__globals__,
                s.name,
                template.__defaults__,
                tuple(types.CellType(v) for v in values),
            )
            f.__kwdefaults__ = template.__kwdefaults__
            f.__qualname__ = template.__qualname__
            return (f,)

        slots = tuple(self.slot_of[n] for n in captured)
        self.emit(
            Instr(
                EXEC,
                s.lineno,
                f"def {s.name}(...)",
                fn=make,
                slots=slots,
                reads=slots,
                writes=(self.slot_of[s.name],),
                local=True,
                col=s.col_offset + 1,
            )
        )


def _bindings(fdef: ast.FunctionDef, name: str, inner: ast.FunctionDef) -> int:
    """How often ``name`` is bound in ``fdef`` outside the nested ``inner`` (parameters,
    assignments, loop and ``with``/``except`` targets, imports, ``def``)."""
    n = sum(
        1 for a in [*fdef.args.posonlyargs, *fdef.args.args, *fdef.args.kwonlyargs] if a.arg == name
    )
    n += (fdef.args.vararg is not None and fdef.args.vararg.arg == name) + (
        fdef.args.kwarg is not None and fdef.args.kwarg.arg == name
    )
    stack: list[ast.AST] = list(fdef.body)
    while stack:
        node = stack.pop()
        if node is inner:
            continue
        stored = isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
        named = isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.ExceptHandler))
        if stored or (named and getattr(node, "name", None) == name):
            n += 1
        elif isinstance(node, (ast.For, ast.While)) and any(
            isinstance(x, ast.Name) and x.id == name and isinstance(x.ctx, ast.Store)
            for x in ast.walk(node)
        ):
            n += 2  # bound in a loop: rebound on every pass
            continue
        if isinstance(node, (ast.FunctionDef, ast.Lambda, ast.ClassDef)) and node is not inner:
            continue  # another scope
        stack.extend(ast.iter_child_nodes(node))
    return n
