"""What an engine is to the rest of absmc: a descriptor with a name, a frozen options type,
its capabilities and its ``check`` function (the registry, :mod:`absmc.engines.registry`, lists
them and refuses capability mismatches in one place).

Each engine package defines ``ENGINE = Engine(...)`` in its ``__init__``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar

from absmc.ir.ctl import And, Atom, Formula, Implies, Not, Or, Temporal
from absmc.ir.expr import Const, Expr, Op, free_vars
from absmc.ir.system import System
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import Result
from absmc.option import Option

#: the safety property kinds (``kernel.run.options.property_kind``)
SAFETY_KINDS: Final = frozenset({"invariant", "unreachable", "assert", "deadlock", "model-error"})
#: every property kind: the safety kinds, ``ltl`` (``ltl`` blocks and never claims) and ``ctl``
PROPERTY_KINDS: Final = SAFETY_KINDS | {"ltl", "ctl"}
#: the kinds an engine checks unless its capabilities say otherwise: the safety kinds (LTL
#: needs a product search, CTL a method that labels or computes fixpoints)
DEFAULT_PROPERTY_KINDS: Final = SAFETY_KINDS

#: model features beyond plain guarded commands (Promela's, see ``ir.Command``), with the
#: description used in messages
FEATURES: Final = {
    "exclusive": "atomic sequences (exclusive control)",
    "timeout": "timeout",
    "asserts": "assertions on transitions",
    "errors": "model-error conditions on commands (e.g. array bounds)",
    "bitwise": "bitwise operators",
    "valid-end": "valid end states",
    "nonlinear": "nonlinear arithmetic (a product of variables, division by a non-constant)",
}

#: the stores of ``CheckOptions.store``
STORES: Final = frozenset({"exact", "bitstate", "hash-compact", "tree"})

_BITWISE: Final = frozenset({"&", "|", "^", "<<", ">>", "~"})

OptionsT = TypeVar("OptionsT")


@dataclass(frozen=True)
class Capabilities:
    """What an engine can do: the ``property_kinds`` it checks (subset of
    :data:`PROPERTY_KINDS`; default the safety kinds), the model ``features`` it supports
    (subset of :data:`FEATURES`), the ``stores`` it searches with (subset of :data:`STORES`),
    and whether it can ``prove`` (answer ``holds``) and ``refute`` (answer ``violated`` with a
    replayed trace). ``initial_sets``: the engine takes a System's ``init:`` constraint itself;
    for the others the registry enumerates the initial states
    (:func:`absmc.kernel.model.initial.initial_states`) and runs the engine once per initial
    state."""

    property_kinds: frozenset[str] = DEFAULT_PROPERTY_KINDS
    features: frozenset[str] = frozenset(FEATURES)
    stores: frozenset[str] = frozenset({"exact"})
    proves: bool = True
    refutes: bool = True
    initial_sets: bool = False
    #: the engine checks a ``ctl`` property only when it is ``AG`` of a state formula (a
    #: safety property); the registry refuses the others by name, a portfolio does not give
    #: them to it, and the engine skips them when no property is named
    ctl_safety_only: bool = False
    #: where a portfolio with fewer worker processes than members starts the engine (lower
    #: first): the engines that usually answer quickly first
    start_rank: int = 50
    #: the engine searches the state space exhaustively: it ends on finite state spaces only, so
    #: a portfolio starts it first on a model without unbounded integers and last on the others
    exhaustive: bool = False


def is_safety_ctl(f: Formula) -> bool:
    """``f`` is ``AG p`` with ``p`` a state formula (no temporal operator)."""
    return isinstance(f, Temporal) and f.op == "AG" and _state_formula(f.arg)


def _state_formula(f: Formula) -> bool:
    if isinstance(f, Atom):
        return True
    if isinstance(f, Not):
        return _state_formula(f.arg)
    if isinstance(f, (And, Or, Implies)):
        return _state_formula(f.left) and _state_formula(f.right)
    return False


def checks_property(caps: Capabilities, system: System, name: str, kind: str) -> bool:
    """Whether an engine with ``caps`` checks property ``name`` (of kind ``kind``) of
    ``system``."""
    if kind not in caps.property_kinds:
        return False
    if kind == "ctl" and caps.ctl_safety_only:
        return any(p.name == name and is_safety_ctl(p.formula) for p in system.ctl)
    return True


@dataclass(frozen=True)
class Engine(Generic[OptionsT]):
    """One checking method. ``options_type`` is its frozen options dataclass (every field has a
    default, so ``options_type()`` is the default options); ``check(model, options,
    engine_options)`` returns the :class:`~absmc.kernel.run.result.Result` (``options`` are the
    options shared by every method). ``model`` is a :class:`~absmc.ir.system.System` (from the
    front ends, :mod:`absmc.lang.loader`), or, for an engine that reads its models itself
    (``files``: the file name suffixes it reads, e.g. ``(".py",)``; ``files_text``: what they
    are, for messages), the model file's name. ``description`` is one line for ``--help``.
    ``options``: the engine's own command-line options (:class:`~absmc.option.Option`;
    ``absmc check`` adds them, refuses them for other methods and lists them in ``--help``);
    ``build_options(values)`` makes the engine's options from their parsed values (``name ->
    value``, every declared name present; raising ``OptionError``); ``None``: the default
    options (or, for the built-in engines, the builder in :mod:`absmc.cli.methods`)."""

    name: str
    options_type: type[OptionsT]
    capabilities: Capabilities
    description: str
    check: Callable[[Any, CheckOptions, OptionsT], Result]
    #: how the engine takes part in a portfolio (``--method auto``): given the options built
    #: from the user's arguments, the options to run with, or a string saying why it sits out
    #: (e.g. "no variable bindings given"); ``None``: it takes part with the options as given
    portfolio: Callable[[OptionsT], OptionsT | str] | None = None
    options: tuple[Option, ...] = ()
    build_options: Callable[[Mapping[str, Any]], OptionsT] | None = None
    files: tuple[str, ...] = ()
    files_text: str = ""

    @property
    def reads_files(self) -> bool:
        """The engine reads its model files itself (``check`` takes a file name)."""
        return bool(self.files)

    def where(self) -> str:
        """How messages name the engine's scope: ``--method NAME``, or the files it reads."""
        return self.files_text or f"--method {self.name}"

    def default_options(self) -> OptionsT:
        """The engine's default options."""
        return self.options_type()

    def for_portfolio(self, options: OptionsT) -> OptionsT | str:
        """The options this engine runs with in a portfolio, or why it sits out."""
        return options if self.portfolio is None else self.portfolio(options)


def system_features(system: System) -> frozenset[str]:
    """The :data:`FEATURES` that ``system`` uses."""
    out: set[str] = set()
    for c in system.commands:
        if c.exclusive is not None:
            out.add("exclusive")
        if "timeout" in c.flags:
            out.add("timeout")
        if c.asserts:
            out.add("asserts")
        if c.errors:
            out.add("errors")
    if system.valid_end is not None:
        out.add("valid-end")
    exprs = [c.guard for c in system.commands]
    exprs += [e for c in system.commands for _, e in c.updates]
    exprs += [e for c in system.commands for _, e in c.asserts]
    exprs += [e for c in system.commands for e, _ in c.errors]
    exprs += [p.expr for p in system.properties]
    # each distinct operator node once (a System's expressions share their subexpressions:
    # SPIN's mobile1, 3,090 commands, 0.1 s walking every occurrence)
    seen: set[int] = set()
    stack: list[Expr] = exprs
    while stack:
        x = stack.pop()
        if not isinstance(x, Op) or id(x) in seen:
            continue
        seen.add(id(x))
        if x.op in _BITWISE:
            out.add("bitwise")
        if "nonlinear" not in out and _nonlinear(x):
            out.add("nonlinear")
        stack.extend(x.args)
    return frozenset(out)


def _nonlinear(x: Op) -> bool:
    """A product of two non-constant factors, or a division/remainder by a non-constant or
    zero."""
    if x.op == "*":
        return sum(1 for a in x.args if free_vars(a)) > 1
    if x.op in ("/", "%"):
        d = x.args[1]
        return bool(free_vars(d)) or (isinstance(d, Const) and d.value == 0)
    return False


AnyEngine = Engine[Any]


def lazy_exports(package: str, where: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) for an engine package: name -> the module (in
    ``where``) it is imported from on first use, so that importing the package (the CLI and the
    registry import every engine's ``ENGINE`` and options type) does not load the engine's
    implementation and its libraries (z3, islpy, lark) until a check runs. Raises
    ``AttributeError`` for any other name."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return __getattr__
