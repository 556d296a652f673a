"""The options of ``absmc check``, each declared once (:class:`~absmc.option.Option`),
and its parsed arguments (:class:`CheckArgs`, field names are the declarations' names).

:data:`SHARED` are the options of every check, :data:`METHOD_SHARED` those several methods
read, :data:`PROGRAM` those of a Python program's check (the component checker, declared in
:mod:`absmc.component.options`); each engine declares its own in its package
(``Engine.options``). The click command (:mod:`absmc.cli.check`), its grouped ``--help``,
the defaults of :class:`CheckArgs` and the flag named in "applies to --method ..." messages
all come from these declarations.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Final

from absmc.cli.common import DEFINES
from absmc.component import options as component_options
from absmc.engines import explicit, symbolic, typeabs, under
from absmc.option import Option, defaults

#: the depth bound of a depth-first search when none is given (SPIN's ``-m`` default)
DFS_DEPTH_BOUND: Final = 10_000

_PROPS = "Properties"
_SEARCH = "Search"
_LIMITS = "Limits (verdict unknown when one is reached)"
_OUTPUT = "Output"
_ABSTRACTION = "Abstraction (--method under, fourvalued, symbolic)"

#: the options of every check (``--method``'s choices and help come from the registry)
SHARED: Final[tuple[Option, ...]] = (
    Option(
        "method",
        ("--method",),
        "",
        default="explicit",
        kind="choice",
        show_default=True,
        group="Method",
    ),
    Option(
        "properties",
        ("--property",),
        "Check only this property (repeatable). Built-in: no-deadlock, no-model-error.",
        metavar="NAME",
        multiple=True,
        group=_PROPS,
    ),
    Option(
        "ltl",
        ("-N", "--ltl"),
        "Check only this ltl block or never claim, as SPIN's -N: one product search, which "
        "reports assertion violations and model errors it meets (stopping at the first unless "
        "--keep-going) and no deadlocks (default: each block in turn, each with its own result, "
        "and the safety properties; docs/ltl.md).",
        metavar="NAME",
        group=_PROPS,
    ),
    Option(
        "fairness",
        ("--fairness",),
        "weak: only weakly fair cycles violate ltl properties and progress (SPIN's -f).",
        default="none",
        kind="choice",
        choices=("none", "weak"),
        show_default=True,
        group=_PROPS,
    ),
    Option(
        "non_progress",
        ("-l", "--non-progress"),
        "Look for non-progress cycles: cycles through no progress label (SPIN's -l).",
        kind="flag",
        group=_PROPS,
    ),
    Option(
        "show_automaton",
        ("--show-automaton",),
        "Print the Büchi automaton of each ltl block's negation (Spot's HOA text or a never "
        "claim) before the results.",
        kind="choice",
        choices=("hoa", "spin"),
        group=_PROPS,
    ),
    Option(
        "no_deadlock",
        ("--no-deadlock",),
        "Do not report states without successors.",
        kind="flag",
        group=_PROPS,
    ),
    Option(
        "order",
        ("--order",),
        "Search order (BFS gives shortest counterexamples). Default: bfs; dfs for a Python "
        "program (.py), where it finds bugs in far fewer states, without a depth bound.",
        kind="choice",
        choices=("bfs", "dfs"),
        group=_SEARCH,
    ),
    Option(
        "store",
        ("--store",),
        "State store: exact set, bitstate hashing or hash-compact (64-bit hashes, SPIN's "
        "-DHC) — both use less memory and may miss states, so they never prove; tree = the "
        "exact set with tree compression (LTSmin's; --backend native, one thread); "
        "[under] range = Kudra & Mercer's min/max refinement, no prover; [.py] range = PA+NTP, "
        "predicates = PA+TP (predicate abstraction refined with the prover, --predicate EXPR).",
        default="exact",
        kind="choice",
        choices=("exact", "bitstate", "hash-compact", "tree", "range", "predicates"),
        show_default=True,
        group=_SEARCH,
    ),
    Option(
        "bitstate_bits",
        ("--bitstate-bits",),
        "Bitstate array size: 2^LOG2 bits.",
        default=27,
        kind="int",
        min=3,
        max=40,
        metavar="LOG2",
        show_default=True,
        group=_SEARCH,
    ),
    Option(
        "hash_functions",
        ("--hash-functions",),
        "Number of bitstate hash functions (SPIN's -k).",
        default=3,
        kind="int",
        min=1,
        max=32,
        metavar="K",
        show_default=True,
        group=_SEARCH,
    ),
    Option(
        "keep_going",
        ("--keep-going",),
        "Continue after a violation and count them all (SPIN's -c0).",
        kind="flag",
        group=_SEARCH,
    ),
    Option(
        "reduce",
        ("--reduce/--no-reduce",),
        "State-space reductions. Models: on unless --no-reduce (partial-order reduction of "
        "the explicit safety search, docs/reductions.md; SPIN's dead-variable reset for Promela; "
        "--no-reduce gives spin -o1 -DNOREDUCE's counts). [.py] off unless --reduce: "
        "partial-order reduction of the threads' interleavings (persistent sets, fewer states "
        "stored, more time per state).",
        kind="switch",
        group=_SEARCH,
    ),
    replace(DEFINES, group=_SEARCH),
    Option(
        "max_states",
        ("--max-states",),
        "Stop after storing N states (verdict unknown).",
        kind="int",
        min=1,
        metavar="N",
        group=_LIMITS,
    ),
    Option(
        "max_depth",
        ("--max-depth",),
        "Do not explore beyond N steps from the initial state (verdict unknown). "
        f"Depth-first search has a default bound of {DFS_DEPTH_BOUND} (SPIN's -m).",
        kind="int",
        min=0,
        metavar="N",
        group=_LIMITS,
    ),
    Option(
        "timeout",
        ("--timeout",),
        "Stop after this much wall time (verdict unknown).",
        kind="float",
        min=0,
        min_open=True,
        metavar="SECONDS",
        group=_LIMITS,
    ),
    Option(
        "max_memory",
        ("--max-memory",),
        "Stop when the process uses this much memory (resident set, MiB; verdict unknown). "
        "Default: 80% of the machine's memory.",
        kind="float",
        min=1,
        metavar="MB",
        group=_LIMITS,
    ),
    Option(
        "as_json",
        ("--json",),
        "Print the result as one JSON object.",
        kind="flag",
        group=_OUTPUT,
    ),
    Option(
        "trail",
        ("--trail",),
        "Where to write the violated properties' traces (default: MODEL.trail.json beside "
        "the model; absmc replay MODEL replays them).",
        kind="path",
        metavar="FILE",
        group=_OUTPUT,
    ),
    Option(
        "no_trail",
        ("--no-trail",),
        "Write no trail file (also: ABSMC_NO_TRAIL=1).",
        kind="flag",
        group=_OUTPUT,
    ),
    Option(
        "html",
        ("--html",),
        "Also write the result as one self-contained HTML page (absmc report); its state "
        "graph is drawn with Graphviz's dot when installed (else listed as tables).",
        kind="path",
        metavar="FILE",
        group=_OUTPUT,
    ),
    Option(
        "dot",
        ("--dot",),
        "Write the explored state graph (its first --graph-bound states) as Graphviz text "
        "(draw it with Graphviz: dot -Tsvg FILE).",
        kind="path",
        metavar="FILE",
        group=_OUTPUT,
    ),
    Option(
        "graph_bound",
        ("--graph-bound",),
        "States drawn in --dot and --html state graphs.",
        default=60,
        kind="int",
        min=1,
        metavar="N",
        show_default=True,
        group=_OUTPUT,
    ),
    Option(
        "progress",
        ("--progress/--no-progress",),
        "Progress line on stderr (default: when stderr is a terminal).",
        kind="switch",
        group=_OUTPUT,
    ),
)

#: the options several methods read (``predicates`` also a Python program's check)
METHOD_SHARED: Final[tuple[Option, ...]] = (
    Option(
        "predicates",
        ("--predicate",),
        "Add a predicate for abstraction (repeatable; GCL expression syntax, e.g. 'x < y'; "
        "a Python expression for a .py program).",
        metavar="EXPR",
        multiple=True,
        group=_ABSTRACTION,
    ),
    Option(
        "max_iterations",
        ("--max-iterations",),
        "[under, fourvalued --refine] Refinement iterations before giving up (unknown).",
        default=50,
        kind="int",
        min=1,
        show_default=True,
        group=_ABSTRACTION,
    ),
    Option(
        "table",
        ("--table",),
        "[under, fourvalued, symbolic] Print the per-iteration (per-round) table.",
        kind="flag",
        group=_ABSTRACTION,
    ),
    Option(
        "refine",
        ("--refine",),
        "[fourvalued] Find predicates where a value is ⊥: from the first step of the "
        "unconfirmed may-trace without a concrete run (weakest preconditions). [symbolic] "
        "CEGAAR: refine predicates (abstraction) or widening delay and EG bound "
        "(approximation) until conclusive.",
        kind="flag",
        group=_ABSTRACTION,
    ),
)

#: the options of a Python program's check (:mod:`absmc.cli.component`), refused for models:
#: declared in the component checker's package
PROGRAM: Final[tuple[Option, ...]] = component_options.OPTIONS

#: the options the built-in engines declare (each engine package's ``OPTIONS``)
ENGINE_OPTIONS: Final[tuple[Option, ...]] = (
    *under.OPTIONS,
    *typeabs.OPTIONS,
    *explicit.OPTIONS,
    *symbolic.OPTIONS,
)

_D: Final = defaults((*SHARED, *METHOD_SHARED, *PROGRAM, *ENGINE_OPTIONS))


@dataclass(frozen=True)
class CheckArgs:
    """Everything ``absmc check`` takes; each default is its declaration's (``order`` None: not
    given, BFS for models, DFS for Python programs; ``reduce`` None: not given, the reductions
    on for models, off for Python programs). ``store`` is ``exact``, ``bitstate`` or a
    method's own store (``range`` for ``under``); ``timeout`` in seconds; the fields after
    ``progress`` belong to single methods (:mod:`absmc.cli.methods`); ``engine_args`` holds
    the values of options an engine declares without a field here (``name, value`` pairs;
    :meth:`value` reads both)."""

    model: str
    method: str = _D["method"]
    properties: tuple[str, ...] = _D["properties"]
    order: str | None = _D["order"]
    store: str = _D["store"]
    bitstate_bits: int = _D["bitstate_bits"]
    hash_functions: int = _D["hash_functions"]
    max_states: int | None = _D["max_states"]
    max_depth: int | None = _D["max_depth"]
    timeout: float | None = _D["timeout"]
    max_memory: float | None = _D["max_memory"]
    keep_going: bool = _D["keep_going"]
    no_deadlock: bool = _D["no_deadlock"]
    defines: tuple[str, ...] = _D["defines"]
    as_json: bool = _D["as_json"]
    ltl: str | None = _D["ltl"]
    fairness: str = _D["fairness"]
    non_progress: bool = _D["non_progress"]
    show_automaton: str | None = _D["show_automaton"]
    progress: bool | None = _D["progress"]
    html: str | None = _D["html"]
    dot: str | None = _D["dot"]
    graph_bound: int = _D["graph_bound"]
    predicates: tuple[str, ...] = _D["predicates"]
    backend: str = _D["backend"]
    seed_predicates: str = _D["seed_predicates"]
    max_iterations: int = _D["max_iterations"]
    prover: str = _D["prover"]
    concrete_after: int | None = _D["concrete_after"]
    local_predicates: bool = _D["local_predicates"]
    table: bool = _D["table"]
    refine: bool = _D["refine"]
    abstract: tuple[str, ...] = _D["abstract"]
    rest: str = _D["rest"]
    basl: tuple[str, ...] = _D["basl"]
    workers: int = _D["workers"]
    ray: str | None = _D["ray"]
    entry_args: tuple[str, ...] = ()
    entry: str | None = _D["entry"]
    component: tuple[str, ...] = _D["component"]
    granularity: str = _D["granularity"]
    emit_tests: str | None = _D["emit_tests"]
    reduce: bool | None = _D["reduce"]
    widen_delay: int = _D["widen_delay"]
    eg_bound: int = _D["eg_bound"]
    no_restrict: bool = _D["no_restrict"]
    max_rounds: int = _D["max_rounds"]
    composite: str = _D["composite"]
    trail: str | None = _D["trail"]
    no_trail: bool = _D["no_trail"]
    engine_args: tuple[tuple[str, Any], ...] = ()

    def value(self, name: str) -> Any:
        """The value of option ``name``: a field, one of ``engine_args``, else the default an
        engine declares for it (``None`` for a name no one declares)."""
        if name in _FIELDS:
            return getattr(self, name)
        given = dict(self.engine_args)
        return given[name] if name in given else _registered_default(name)

    def is_default(self, name: str) -> bool:
        """True when option ``name`` has its default value (an engine's option not given:
        absent from ``engine_args`` or equal to its declared default)."""
        if name in _FIELDS:
            default: Any = next(f.default for f in fields(self) if f.name == name)
            return bool(getattr(self, name) == default)
        given = dict(self.engine_args)
        return name not in given or bool(given[name] == _registered_default(name))

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> CheckArgs:
        """The arguments from click's parameters: fields by name, the rest (the options of
        engines without a field here) into ``engine_args``."""
        mine = {k: v for k, v in params.items() if k in _FIELDS}
        rest = tuple((k, v) for k, v in params.items() if k not in _FIELDS)
        return cls(**mine, engine_args=rest)


_FIELDS: Final = frozenset(f.name for f in fields(CheckArgs)) - {"engine_args"}


def registered_options() -> tuple[Option, ...]:
    """The options the registry's engines declare (built-in and added ones)."""
    from absmc.engines import registry  # the registry imports every engine: only when asked

    return tuple(o for e in registry.ENGINES for o in e.options)


def _registered_default(name: str) -> Any:
    return next((o.value_when_absent for o in registered_options() if o.name == name), None)


def declared(name: str) -> Option:
    """The declaration of shared option ``name`` (:data:`SHARED`, :data:`METHOD_SHARED`,
    :data:`PROGRAM`). Raises ``KeyError`` for another name."""
    for o in (*SHARED, *METHOD_SHARED, *PROGRAM):
        if o.name == name:
            return o
    raise KeyError(name)


def flag_of(name: str) -> str:
    """The flag that names option ``name`` in messages (``--predicate`` for ``predicates``)."""
    for o in (*SHARED, *METHOD_SHARED, *PROGRAM, *registered_options()):
        if o.name == name:
            return o.flag
    return name
