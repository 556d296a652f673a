"""Stable attributes: attribute names that the program writes only while an object is being
constructed, so that reading them is a *both-mover* (Lipton, "Reduction: a method of proving
properties of parallel programs", CACM 18(12), 1975; Flanagan & Qadeer, "A type and effect
system for atomicity", PLDI 2003, Sec. 2): once an object is shared, no step of any thread
writes such an attribute, so a read of it commutes with every other thread's steps and is
joined to the reading thread's previous step (:meth:`ComponentSemantics._invisible`), as the
steps on private locals are.

``stable_attributes(files)`` scans the program's source files (the checked program and the
modules of its directory that are loaded): a name ``m`` is *unstable* when some code stores
or deletes an attribute ``m`` (``x.m = ...``, ``x.m += ...``, ``del x.m``, ``for x.m in``)
anywhere other than ``self.m = ...`` in an ``__init__`` that does not publish ``self`` (every
use of ``self`` in it is ``self.a`` read or written, never passed on, called as
``self.method(...)`` or captured by a nested function, lambda or comprehension; a
``super().__init__(...)`` call is allowed; when some ``__init__`` publishes ``self`` or a
class defines ``__new__``, no constructor store is exempt). Any ``setattr``, ``delattr``, ``vars``,
``__dict__``, ``__setattr__``, ``__delattr__``, ``__class__``, ``exec``, ``eval``,
``compile``, or a use of ``__init__`` other than ``super().__init__`` inside an
``__init__`` makes every name
unstable (``None``). Library code is not scanned: the machine records whether an
environment call received a component object (``ComponentSemantics.stable_broken``) and the
check then runs again without joining attribute reads.
"""

from __future__ import annotations

import ast
import builtins
import os
import sys
import types
from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from typing import Any

#: names whose use makes every attribute unstable
_REFLECTIVE = frozenset(
    {
        "setattr",
        "delattr",
        "vars",
        "__dict__",
        "__setattr__",
        "__delattr__",
        "__class__",
        "exec",
        "eval",
        "compile",
    }
)


def program_files(main: str | None, funcs_files: Iterable[str]) -> set[str]:
    """The program's source files: ``main``, the files of the translated functions, and the
    loaded modules of the same directories."""
    files = {os.path.abspath(f) for f in funcs_files if f and os.path.isfile(f)}
    if main and os.path.isfile(main):
        files.add(os.path.abspath(main))
    dirs = {os.path.dirname(f) for f in files}
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None)
        if isinstance(f, str) and f.endswith(".py") and os.path.dirname(os.path.abspath(f)) in dirs:
            files.add(os.path.abspath(f))
    return files


def stable_attributes(files: Iterable[str]) -> frozenset[str] | None:
    """``None`` when reflection may write any attribute; else the set of *unstable* names
    (module docstring): an attribute name not in it is stable. Raises nothing: a file that
    cannot be read or parsed makes every name unstable (``None``)."""
    unstable: set[str] = set()
    for path in sorted(files):
        try:
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read(), path)
        except (OSError, SyntaxError, ValueError):
            return None
        if not _scan(tree, unstable):
            return None
    return frozenset(unstable)


def _scan(tree: ast.AST, unstable: set[str]) -> bool:
    allowed: set[int] = set()  # ids of the ``self.m = ...`` targets of publication-free inits
    in_init: set[int] = set()  # ids of the nodes inside an ``__init__``
    published = False
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "__init__":
            in_init.update(id(sub) for sub in ast.walk(node))
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__new__":
                    published = True  # may hand the instance out before ``__init__``
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    targets = _init_targets(item)
                    if targets is None:
                        published = True
                    else:
                        allowed.update(targets)
    if published:
        # an ``__init__`` that publishes ``self`` may do so before a base class's
        # ``__init__`` (``super().__init__()``) stores: no constructor store is exempt
        allowed.clear()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in _REFLECTIVE:
            return False
        if isinstance(node, ast.Attribute):
            if node.attr in _REFLECTIVE:
                return False
            if node.attr == "__init__" and not (_is_super_call(node.value) and id(node) in in_init):
                return False
            if isinstance(node.ctx, (ast.Store, ast.Del)) and id(node) not in allowed:
                unstable.add(node.attr)
    return True


def _is_super_call(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "super"
        and not node.args
    )


def _init_targets(fdef: ast.FunctionDef) -> list[int] | None:
    """The ids of the ``self.m = ...`` store targets of an ``__init__`` that does not publish
    ``self`` (module docstring), or ``None``."""
    if not fdef.args.args:
        return None
    me = fdef.args.args[0].arg
    parent: dict[int, ast.AST] = {}
    for node in ast.walk(fdef):
        for child in ast.iter_child_nodes(node):
            parent[id(child)] = node
    out: list[int] = []
    for node in ast.walk(fdef):
        if node is not fdef and isinstance(
            node,
            (
                ast.Lambda,
                ast.FunctionDef,
                ast.AsyncFunctionDef,
                ast.ClassDef,
                ast.ListComp,
                ast.SetComp,
                ast.DictComp,
                ast.GeneratorExp,
            ),
        ):
            return None
        if isinstance(node, ast.Name) and node.id == me:
            p = parent.get(id(node))
            if not isinstance(p, ast.Attribute) or p.value is not node:
                return None
            if isinstance(p.ctx, ast.Load):
                # ``self.method(...)`` passes ``self`` on
                gp = parent.get(id(p))
                if isinstance(gp, ast.Call) and gp.func is p:
                    return None
            else:
                out.append(id(p))
    return out


#: values an operator may read in a joined step: their contents cannot change
OPERAND_ATOMS = frozenset({int, str, bool, float, type(None), bytes, complex})

NOT_PLAIN: Any = object()

_OBJECT_GETATTRIBUTE: Any = object.__getattribute__

#: built-ins that do not write attributes of their arguments
_READING_BUILTINS = frozenset(
    {"len", "isinstance", "id", "type", "repr", "str", "print", "hash", "format", "sorted",
     "min", "max", "sum", "any", "all", "list", "tuple", "set", "frozenset", "dict", "bool",
     "enumerate", "zip", "reversed", "iter", "next", "getattr", "hasattr", "callable"}
)  # fmt: skip


def passes_objects(
    f: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    owned: frozenset[type],
    scanned: frozenset[str],
) -> bool:
    """A native call that may write attributes of component objects: it receives one (as
    an argument, the receiver, or inside a built-in container, 3 levels) and is not a
    reading built-in or a function of the scanned program (whose stores are known)."""
    if getattr(f, "__self__", None) is builtins and f.__name__ in _READING_BUILTINS:
        return False
    code = getattr(f, "__code__", None)
    if code is not None and code.co_filename in scanned:
        return False
    items = [getattr(f, "__self__", None), *args, *kwargs.values()]
    for _ in range(3):
        nxt: list[Any] = []
        for x in items:
            t = type(x)
            if t in owned:
                return True
            if t in (list, tuple, set, frozenset, deque):
                nxt.extend(x)
            elif t is dict or t is defaultdict:
                nxt.extend(x.values())
        items = nxt
    return False


def stable_values(
    reads: tuple[tuple[int, str, bool], ...],
    loc: list[Any],
    unstable: frozenset[str],
    owned: frozenset[type],
    unbound: object,
) -> bool:
    """The reads ``(slot, attribute or "", operand)`` of a piece over the frame's locals
    ``loc`` are stable: each attribute is not in ``unstable``, of a component object
    (``owned`` classes), read without running code (:func:`plain_attribute`); a value an
    operator uses is an atom (its contents cannot change), other values are only passed
    on (references)."""
    for slot, attr, operand in reads:
        v = loc[slot]
        if v is unbound:
            return False
        if attr:
            if attr in unstable or type(v) not in owned:
                return False
            v = plain_attribute(v, attr)
            if v is NOT_PLAIN:
                return False
        if operand and type(v) not in OPERAND_ATOMS:
            return False
    return True


def plain_attribute(obj: Any, attr: str) -> Any:
    """``obj.attr`` when reading it runs no code (an instance attribute or slot, a method,
    an atomic class attribute), else ``NOT_PLAIN``."""
    cls: Any = type(obj)
    if cls.__getattribute__ is not _OBJECT_GETATTRIBUTE or hasattr(cls, "__getattr__"):
        return NOT_PLAIN
    if any(k.__module__ == "threading" for k in cls.__mro__):
        # a ``Thread`` subclass: the checker writes its ``_name`` when it starts
        return NOT_PLAIN
    found: Any = NOT_PLAIN
    for k in cls.__mro__:
        if attr in k.__dict__:
            found = k.__dict__[attr]
            break
    d = getattr(obj, "__dict__", None)
    if found is NOT_PLAIN or type(found) is types.MemberDescriptorType:
        if d is not None and attr in d:
            return d[attr]
        if found is not NOT_PLAIN:
            try:
                return found.__get__(obj, cls)
            except AttributeError:
                return NOT_PLAIN
        return NOT_PLAIN
    if d is not None and attr in d:
        # an instance attribute shadows a class attribute (not a data descriptor)
        plain = type(found) in OPERAND_ATOMS or type(found) is types.FunctionType
        return d[attr] if plain else NOT_PLAIN
    if type(found) is types.FunctionType:
        return types.MethodType(found, obj)
    if type(found) in OPERAND_ATOMS:
        return found
    return NOT_PLAIN


def attr_reads(
    holder: ast.Module,
    local: Callable[[str], bool],
    slot_of: dict[str, int],
    pure_builtin: Callable[[str], bool],
    local_nodes: tuple[type, ...],
) -> tuple[tuple[int, str, bool], ...] | None:
    """The reads of a piece made of local nodes and attribute loads of locals (``x.a``):
    ``(slot, attribute or "", operand)`` per local read; ``operand`` when an operator (a
    comparison, arithmetic, a branch's or assertion's test, a returned value, unpacking,
    hashing) uses the value, not when it is only passed on (the whole value of ``x = ...``,
    a call's callee or argument, an element of a tuple or dict value so used). ``None``
    for a piece with any other node (a subscript, a call of a non-local, a global, an
    augmented assignment). ``local_nodes``: the node types of a piece on locals alone."""
    parent: dict[int, ast.AST] = {}
    for node in ast.walk(holder):
        for child in ast.iter_child_nodes(node):
            parent[id(child)] = node

    def bare(node: ast.AST) -> bool:
        p = parent.get(id(node))
        if isinstance(p, ast.Expr):
            # a call's packed (callee, args, kwargs); any other expression is tested
            # (a branch, an assertion) or returned: its value is an operand
            return isinstance(node, ast.Tuple)
        if isinstance(p, ast.Assign):
            # ``x = value``, not unpacking (which iterates the value)
            return p.value is node and all(isinstance(t, ast.Name) for t in p.targets)
        if isinstance(p, ast.Tuple):
            return bare(p)
        if isinstance(p, ast.Dict):
            # a key is hashed
            return any(v is node for v in p.values) and bare(p)
        return False

    out: list[tuple[int, str, bool]] = []
    for sub in ast.walk(holder):
        if isinstance(sub, ast.AugAssign):
            return None  # ``x += ...`` reads ``x`` (a shared list, perhaps) in place
        if isinstance(sub, ast.Attribute):
            base = sub.value
            if not (
                isinstance(sub.ctx, ast.Load) and isinstance(base, ast.Name) and local(base.id)
            ):
                return None
            out.append((slot_of[base.id], sub.attr, not bare(sub)))
            continue
        if isinstance(sub, (ast.Module, ast.Expr)):
            continue
        if not isinstance(sub, local_nodes):
            return None
        if isinstance(sub, ast.Name) and not isinstance(sub.ctx, ast.Load):
            if not local(sub.id):
                return None
            continue
        if isinstance(sub, ast.Name):
            if isinstance(parent.get(id(sub)), ast.Attribute):
                continue
            if not local(sub.id):
                if pure_builtin(sub.id):
                    continue
                return None
            out.append((slot_of[sub.id], "", not bare(sub)))
    return tuple(out)


__all__ = [
    "NOT_PLAIN",
    "OPERAND_ATOMS",
    "attr_reads",
    "passes_objects",
    "plain_attribute",
    "program_files",
    "stable_attributes",
    "stable_values",
]
