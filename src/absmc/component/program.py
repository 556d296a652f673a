"""Loading a Python program and splitting it into component and environment (Bao's thesis,
ch. 2.4 and 3.4): the user names the component — functions, classes (all their methods),
``Class.method``, or the program's module name (everything defined in it) —; the entry
function is always translated (it is where control starts); everything else is the
environment and runs natively.
"""

from __future__ import annotations

import ast
import enum
import inspect
import signal
import sys
import threading
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from absmc.component.machine import Program
from absmc.component.translate import FuncCode, Granularity, Unsupported, translate
from absmc.component.values import slot_names
from absmc.errors import LoadTimeout, UsageError
from absmc.ir.depth import MAX_EXPR_DEPTH, deep_recursion
from absmc.ir.span import ModelError, SourceSpan


class ImportTimeout(LoadTimeout):
    """Importing the checked program took longer than the run's time limit."""

    def __init__(self, path: str, seconds: float) -> None:
        super().__init__(f"{path}: time limit of {seconds:g} s reached while importing the program")


def check_expression_depth(tree: ast.AST, path: str, limit: int = MAX_EXPR_DEPTH) -> int:
    """The nesting depth of the deepest expression of the parsed program ``tree`` (a leaf
    expression is 1, each expression node one more than its deepest sub-expression; an
    iterative walk, any depth). Raises ``ModelError`` ``expression nested too deeply (N levels;
    the limit is M)`` located at the expression ``limit`` levels below the top of a deepest one
    when it is deeper: the component checker's recursive walkers (the translator, ``deepcopy``,
    the prover's conversion) take expressions up to :data:`absmc.ir.depth.MAX_EXPR_DEPTH` deep
    under :func:`absmc.ir.depth.deep_recursion`, as the models' methods do."""
    depth: dict[int, int] = {}
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, done = stack.pop()
        if not done:
            stack.append((node, True))
            stack.extend((c, False) for c in ast.iter_child_nodes(node))
            continue
        below = max((depth[id(c)] for c in ast.iter_child_nodes(node)), default=0)
        depth[id(node)] = below + 1 if isinstance(node, ast.expr) else below
    deepest = 0
    for node in ast.walk(tree):
        d = depth[id(node)]
        if isinstance(node, ast.expr) and d > limit:
            x = node
            for _ in range(limit):
                kids = [c for c in ast.iter_child_nodes(x) if isinstance(c, ast.expr)]
                if not kids:
                    break
                x = max(kids, key=lambda c: depth[id(c)])
            at = x if hasattr(x, "lineno") else node
            span = SourceSpan(path, getattr(at, "lineno", 1), getattr(at, "col_offset", 0) + 1)
            raise ModelError(
                f"expression nested too deeply ({d} levels; the limit is {limit})", span
            )
        deepest = max(deepest, d if isinstance(node, ast.expr) else 0)
    return deepest


#: modules whose processes, pools or event loops the checker cannot schedule: refused
REFUSED_MODULES = ("multiprocessing", "concurrent.futures", "asyncio", "_thread")


def load_program(path: str | Path, timeout: float | None = None) -> types.ModuleType:
    """Import the program at ``path`` as a fresh module (``__name__`` is not ``"__main__"``,
    so its ``if __name__ == "__main__"`` block does not run), within ``timeout`` seconds
    (main thread only). Raises ``ModelError`` for a syntax error, an import of a module in
    :data:`REFUSED_MODULES`, and — located at the program's line — an exception,
    ``sys.exit()`` or a ``raise KeyboardInterrupt`` while importing, or threads started by
    the import; ``ImportTimeout`` past the time limit; ``OSError`` when unreadable."""
    p = Path(path)
    source = p.read_text(encoding="utf-8")
    try:
        with deep_recursion():  # Python's parser and compiler recurse on expressions
            tree = ast.parse(source, str(p))
            check_expression_depth(tree, str(p))
            code = compile(tree, str(p), "exec")
    except SyntaxError as e:
        span = SourceSpan(str(p), e.lineno or 1, (e.offset or 0) or 1)
        raise ModelError(f"Python syntax error: {e.msg}", span) from None
    except RecursionError:  # deeper than Python's parser takes even with the raised limit
        raise ModelError(
            f"expression nested too deeply (past Python's parser; limit {MAX_EXPR_DEPTH})",
            SourceSpan(str(p), 1, 1),
        ) from None
    _refuse_imports(tree, str(p))
    name = f"absmc_program_{p.stem}"
    module = types.ModuleType(name)
    module.__file__ = str(p)
    sys.modules[name] = module
    started: list[str] = []
    real_start = threading.Thread.start

    def recorded_start(thread: threading.Thread) -> None:
        started.append(thread.name)
        real_start(thread)

    threading.Thread.start = recorded_start  # type: ignore[method-assign, assignment]
    use_alarm = timeout is not None and threading.current_thread() is threading.main_thread()

    def expire(signum: int, frame: object) -> None:
        raise ImportTimeout(str(p), timeout or 0.0)

    old = signal.signal(signal.SIGALRM, expire) if use_alarm else None
    if use_alarm:
        signal.setitimer(signal.ITIMER_REAL, timeout or 0.0)
    try:
        exec(code, module.__dict__)
    except ImportTimeout:
        raise
    except SystemExit as e:
        raise ModelError(
            f"the program called sys.exit({e.code!r}) while it was imported (absmc imports "
            "the program to check it; move the call under if __name__ == '__main__':)",
            _raised_at(e, str(p)),
        ) from None
    except KeyboardInterrupt as e:
        where = _raised_at(e, str(p))
        line = source.splitlines()[where.line - 1] if where is not None and where.line else ""
        if "raise" not in line:
            raise  # Ctrl-C: the run is interrupted
        raise ModelError("importing the program raised KeyboardInterrupt", where) from None
    except Exception as e:
        raise ModelError(
            f"importing the program raised {type(e).__name__}: {e}", _raised_at(e, str(p))
        ) from None
    finally:
        threading.Thread.start = real_start  # type: ignore[method-assign]
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
    if started:
        raise ModelError(
            f"the program started {len(started)} thread(s) while it was imported "
            f"({', '.join(started)}); they run outside the checker's "
            "control: start threads from the entry function",
            None,
            str(p),
        )
    return module


def _raised_at(e: BaseException, file: str) -> SourceSpan | None:
    """The innermost line of ``file`` in ``e``'s traceback."""
    span = None
    tb = e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == file:
            span = SourceSpan(file, tb.tb_lineno, 1)
        tb = tb.tb_next
    return span


def _refuse_imports(tree: ast.Module, file: str) -> None:
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for n in names:
            for bad in REFUSED_MODULES:
                if n == bad or n.startswith(bad + "."):
                    raise Unsupported(
                        f"import of {bad} (its processes, pools or event loops run outside "
                        "the checker's control)",
                        file,
                        node,
                    )


def _functions_of(cls: type) -> list[types.FunctionType]:
    """The methods of ``cls`` that are translated: its functions, static and class methods,
    except the methods ``@dataclass`` generated (``__init__``, ``__repr__``, ``__eq__``, ...:
    they have no source and run natively, one step each, on the instance)."""
    generated = hasattr(cls, "__dataclass_fields__")
    home = getattr(sys.modules.get(cls.__module__), "__file__", None)
    out = []
    for v in vars(cls).values():
        if isinstance(v, (staticmethod, classmethod)):
            v = v.__func__
        if isinstance(v, types.FunctionType):
            if generated and v.__code__.co_filename != home:
                continue
            out.append(v)
    return out


def resolve(
    namespace: Mapping[str, Any], names: Iterable[str], module_name: str
) -> tuple[list[types.FunctionType], set[type]]:
    """The component's functions and classes named by ``names``. Raises ``UsageError`` for
    a name the program does not define."""
    funcs: list[types.FunctionType] = []
    classes: set[type] = set()
    for raw in names:
        name = raw.strip()
        if not name:
            continue
        if name in (module_name, "*", namespace.get("__name__")):
            for v in namespace.values():
                if isinstance(v, types.FunctionType) and v.__module__ == namespace["__name__"]:
                    funcs.append(v)
                elif isinstance(v, type) and v.__module__ == namespace["__name__"]:
                    classes.add(v)
            continue
        obj: Any = namespace
        for part in name.split("."):
            try:
                obj = obj[part] if isinstance(obj, Mapping) else vars(obj)[part]
            except KeyError:
                raise UsageError(f"the program defines no '{name}' (component name)") from None
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        if isinstance(obj, types.FunctionType):
            funcs.append(obj)
        elif isinstance(obj, type):
            classes.add(obj)
        else:
            raise UsageError(f"'{name}' is neither a function nor a class of the program")
    for cls in classes:
        funcs.extend(_functions_of(cls))
    return funcs, classes


def build_program(
    namespace: dict[str, Any],
    entry: Callable[..., Any],
    component: Sequence[str],
    granularity: Granularity = "statement",
    env_choices: Mapping[Any, Any] | None = None,
) -> tuple[Program, FuncCode]:
    """Translate the component (and the entry function) and collect what the state holds:
    the module globals the component uses that hold data, the closure cells of its
    functions, the program's own classes. Raises ``Unsupported`` (a ``ModelError`` with the
    file and line) for what cannot be translated, ``UsageError`` for unknown names."""
    module_name = str(namespace.get("__name__", ""))
    funcs, classes = resolve(namespace, component, module_name)
    if not isinstance(entry, types.FunctionType):
        raise UsageError(f"the entry {entry!r} is not a Python function")
    ordered: list[types.FunctionType] = []
    seen: set[int] = set()
    for f in [entry, *funcs]:
        if id(f) not in seen:
            seen.add(id(f))
            ordered.append(f)
    names = frozenset(f.__name__ for f in ordered if "." not in f.__qualname__)
    names |= frozenset(c.__name__ for c in classes)
    methods = frozenset(f.__name__ for c in classes for f in _functions_of(c))
    codes: list[FuncCode] = []
    for i, f in enumerate(ordered):
        fc = translate(f, granularity, names, methods)
        fc.index = i
        codes.append(fc)
    # functions defined inside component functions (and inside those)
    k = 0
    while k < len(codes):
        for tmpl in codes[k].nested:
            fc = translate(tmpl, granularity, names, methods, nested=True)
            fc.index = len(codes)
            codes.append(fc)
        k += 1
    # tracked roots: module globals the component names that hold data
    used: set[str] = set()
    for f in ordered:
        used.update(_global_names(f))
    roots = tuple(
        sorted(
            n
            for n in used
            if (n in namespace and _is_data(namespace[n])) or _assigned_global(n, ordered)
        )
    )
    cells: list[types.CellType] = []
    for f in ordered:
        for c in f.__closure__ or ():
            if c not in cells:
                cells.append(c)
    owned = {
        v
        for v in namespace.values()
        if isinstance(v, type) and v.__module__ == module_name and _has_dict(v)
    }
    owned |= {c for c in classes if _has_dict(c)}
    prog = Program(
        namespace,
        codes,
        frozenset(classes),
        roots,
        tuple(cells),
        frozenset(owned),
        dict(env_choices or {}),
    )
    return prog, codes[0]


def _has_dict(cls: type) -> bool:
    """Instances of ``cls`` are component data (heap objects): they keep their attributes in
    a ``__dict__`` or ``__slots__``; enumeration members are constants (kept by identity)."""
    if issubclass(cls, enum.Enum):
        return False
    return bool(getattr(cls, "__dictoffset__", 0)) or bool(slot_names(cls))


def _is_data(v: Any) -> bool:
    return not isinstance(
        v,
        (
            types.ModuleType,
            types.FunctionType,
            types.BuiltinFunctionType,
            type,
            types.MethodType,
        ),
    )


def _global_names(f: types.FunctionType) -> set[str]:
    out: set[str] = set()
    stack = [f.__code__]
    while stack:
        code = stack.pop()
        out.update(code.co_names)
        stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return out


def _assigned_global(name: str, funcs: Sequence[types.FunctionType]) -> bool:
    for f in funcs:
        try:
            tree = ast.parse(inspect.getsource(f).strip())
        except (OSError, SyntaxError, TypeError, IndentationError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Global) and name in node.names:
                return True
    return False
