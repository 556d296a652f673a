"""The architecture's import rules (docs/ARCHITECTURE.md), checked on the source: the kernel
builds on ``ir`` only, no engine imports another engine's modules, lower layers never import
higher ones, and nothing uses a side channel for model errors."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

from .conftest import ROOT

SRC = ROOT / "src" / "absmc"
ENGINES = sorted(p.name for p in (SRC / "engines").iterdir() if (p / "__init__.py").is_file())


@cache  # each module is parsed once for all the tests here
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _imports(path: Path) -> frozenset[str]:
    tree = _tree(path)
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return frozenset(m for m in out if m == "absmc" or m.startswith("absmc."))


def _modules(package: str) -> list[Path]:
    return sorted((SRC / package).rglob("*.py"))


def test_there_are_engines_to_check() -> None:
    assert {"explicit", "under", "typeabs", "fourvalued"} <= set(ENGINES)


def test_no_engine_imports_another_engines_modules() -> None:
    bad = []
    for engine in ENGINES:
        for path in _modules(f"engines/{engine}"):
            for m in _imports(path):
                other = m.split(".")[2] if m.startswith("absmc.engines.") else None
                if other in ENGINES and other != engine:
                    bad.append(f"{path.relative_to(SRC)} imports {m}")
    assert bad == []


def test_imports_point_down() -> None:
    """ir and logic never import kernel/engines/cli/report; the kernel imports only ir and
    itself; engines never import the CLI or the report layer."""
    allowed = {
        "ir": {"ir"},
        "logic": {"ir", "logic"},
        "lang": {"ir", "lang", "logic"},
        "codegen": {"ir", "codegen"},
        "kernel": {"ir", "codegen", "kernel"},
        "native": {"ir", "codegen", "kernel", "native"},
        "report": {"ir", "kernel", "report"},
        "engines": {"ir", "logic", "codegen", "kernel", "engines", "lang", "native", "component"},
        "component": {"ir", "logic", "kernel", "component"},
    }
    bad = []
    for layer, ok in allowed.items():
        for path in _modules(layer):
            for m in _imports(path):
                parts = m.split(".")
                if len(parts) > 1 and parts[1] not in ok and parts[1] not in {"errors", "option"}:
                    bad.append(f"{path.relative_to(SRC)} imports {m}")
    assert bad == []


#: the explorers: they consume the model interface (:mod:`absmc.kernel.model.semantics`) and never
#: the IR's System (``kernel/explore/por.py`` still builds its ample sets from the System's
#: commands; the LTL product takes its automaton guards compiled, ``kernel/ltl/irproduct.py``
#: compiles them over a System)
EXPLORERS = [
    "kernel/model/semantics.py",
    "kernel/explore/search.py",
    "kernel/explore/nested.py",
    "kernel/explore/partitioned.py",
    "kernel/explore/partition_mp.py",
    "kernel/explore/partition_ray.py",
    "kernel/explore/graph.py",
    "kernel/ltl/product.py",
    "kernel/ltl/fairness.py",
    "kernel/ltl/ltl.py",
    "native/search.py",
]


def test_explorers_do_not_import_the_ir_system() -> None:
    ir_facing = ("absmc.ir.system", "absmc.kernel.model.irsemantics", "absmc.codegen")
    bad = [
        f"{m} imports {i}"
        for m in EXPLORERS
        for i in _imports(SRC / m)
        if i.startswith(ir_facing) and not (m == "kernel/ltl/ltl.py" and i.endswith("irsemantics"))
    ]
    assert bad == []


def test_the_model_interface_imports_no_explorer() -> None:
    """``kernel/model/`` (what a model offers) is below the explorers, the LTL product and
    replay: they import it, never the other way round."""
    above = ("absmc.kernel.explore", "absmc.kernel.ltl", "absmc.kernel.replay")
    bad = [
        f"{path.relative_to(SRC)} imports {m}"
        for path in _modules("kernel/model")
        for m in _imports(path)
        if m.startswith(above)
    ]
    assert _modules("kernel/model") and bad == []


def test_the_run_frame_is_the_kernels_bottom() -> None:
    """``kernel/run/`` (limits, options, results) is what every other part of the kernel
    builds on: it imports no model, explorer, LTL product or replay module."""
    above = (
        "absmc.kernel.model",
        "absmc.kernel.explore",
        "absmc.kernel.ltl",
        "absmc.kernel.replay",
    )
    bad = [
        f"{path.relative_to(SRC)} imports {m}"
        for path in _modules("kernel/run")
        for m in _imports(path)
        if m.startswith(above)
    ]
    assert _modules("kernel/run") and bad == []


def test_model_errors_have_no_side_channel() -> None:
    offenders = [
        str(p.relative_to(SRC))
        for p in SRC.rglob("*.py")
        if "errors.clear(" in p.read_text(encoding="utf-8")
    ]
    assert offenders == []


def _top_level_imports(path: Path, name: str, known: set[str]) -> set[str]:
    """Modules of absmc that ``path`` imports when it is loaded (module level, not under
    ``if TYPE_CHECKING``; ``from pkg import sub`` counts as importing ``pkg.sub``)."""
    out: set[str] = set()
    for node in _tree(path).body:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m in known and m != name}


def test_no_import_cycles() -> None:
    files = {}
    for p in SRC.rglob("*.py"):
        parts = p.relative_to(SRC.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        files[name] = p
    known = set(files)
    graph = {n: _top_level_imports(p, n, known) for n, p in files.items()}
    # a package importing its own submodules is no cycle unless one imports the package back
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(n: str, stack: list[str]) -> None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph[n]):
            if state.get(m) == 1:
                cycles.append([*stack[stack.index(m) :], m])
            elif m not in state:
                visit(m, stack)
        stack.pop()
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n, [])
    assert cycles == []


def test_the_cli_starts_without_loading_the_engines_implementations() -> None:
    """``absmc`` imports each engine's registry entry and options, not the engine: z3, islpy,
    cffi and an engine's search code load when a check runs (a small model's whole run is
    about half of what it was when every engine loaded at start-up)."""
    import subprocess
    import sys

    probe = (
        "import sys, absmc.cli\n"
        "print(' '.join(sorted(m for m in sys.modules if m in {'z3', 'islpy', 'cffi', 'spot'}"
        " or m.startswith('absmc.engines.') and m.rsplit('.', 1)[1] in {'check', 'refinement'})))"
    )
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
    ).stdout
    assert out.split() == []


def test_lazily_exported_names_are_the_modules_objects() -> None:
    import importlib

    for engine in ENGINES:
        package = importlib.import_module(f"absmc.engines.{engine}")
        for name in package.__all__:
            value = getattr(package, name)
            assert not hasattr(value, "__path__") and type(value).__name__ != "module", name


def _imports_z3(path: Path) -> bool:
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] == "z3":
                return True
        elif isinstance(node, ast.Import) and any(a.name.split(".")[0] == "z3" for a in node.names):
            return True
    return False


def test_only_logic_and_the_induction_engines_import_z3() -> None:
    """docs/ARCHITECTURE.md: ``logic/`` and ``engines/induction/`` (Spacer's Horn solving) are
    the only importers of z3; every other module reaches Z3 through ``logic/``."""
    importers = {str(p.relative_to(SRC)) for p in SRC.rglob("*.py") if _imports_z3(p)}
    assert importers and all(p.startswith(("logic/", "engines/induction/")) for p in importers), (
        sorted(importers)
    )
