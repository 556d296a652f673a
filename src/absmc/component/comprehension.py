"""List, set and dict comprehensions that call the component, translated as the loops they
stand for (Bao's thesis, ch. 3.4: every statement of the component is a transition): ``[Worker(c)
for _ in range(2)]`` or ``[t.join() for t in ts]`` would otherwise run natively, in one step,
out of the checker's reach. Mixed into the translator (:mod:`absmc.component.translate`)."""

from __future__ import annotations

import ast
import copy
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from absmc.component.translate import Unsupported


class ComprehensionLoops:
    """The translator's comprehension lowering (it provides ``slots``, ``temp``, ``text``,
    ``piece_stmt``, ``stmt`` and ``fail``)."""

    slots: list[str]

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
        from absmc.component.translate import EXEC, _Rename  # the translator imports us

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
