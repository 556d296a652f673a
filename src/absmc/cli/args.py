"""The parsed arguments of ``absmc check`` (field names are the click parameter names)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class CheckArgs:
    """Everything ``absmc check`` takes, with its command-line defaults (``order`` None: not
    given, BFS for models, DFS for Python programs; ``reduce`` None: not given, the reductions
    on for models, off for Python programs). ``store`` is ``exact``,
    ``bitstate`` or a method's own store (``range`` for ``under``); ``timeout`` in seconds; the
    fields after ``progress`` belong to single methods (:mod:`absmc.cli.methods`). ``reduce``
    None: not given (reductions on for models, off for Python programs)."""

    model: str
    method: str = "explicit"
    properties: tuple[str, ...] = ()
    order: str | None = None
    store: str = "exact"
    bitstate_bits: int = 27
    hash_functions: int = 3
    max_states: int | None = None
    max_depth: int | None = None
    timeout: float | None = None
    max_memory: float | None = None
    keep_going: bool = False
    no_deadlock: bool = False
    defines: tuple[str, ...] = ()
    as_json: bool = False
    ltl: str | None = None
    fairness: str = "none"
    non_progress: bool = False
    show_automaton: str | None = None
    progress: bool | None = False
    html: str | None = None
    dot: str | None = None
    graph_bound: int = 60
    predicates: tuple[str, ...] = ()
    backend: str = "auto"
    seed_predicates: str = ""
    max_iterations: int = 50
    prover: str = "z3"
    concrete_after: int | None = None
    local_predicates: bool = False
    table: bool = False
    refine: bool = False
    abstract: tuple[str, ...] = ()
    rest: str = "concrete"
    basl: tuple[str, ...] = ()
    workers: int = 0
    ray: str | None = None
    entry_args: tuple[str, ...] = ()
    entry: str | None = None
    component: tuple[str, ...] = ()
    granularity: str = "statement"
    emit_tests: str | None = None
    reduce: bool | None = None
    widen_delay: int = 2
    eg_bound: int = 20
    no_restrict: bool = False
    max_rounds: int = 10
    trail: str | None = None
    no_trail: bool = False

    def is_default(self, name: str) -> bool:
        """True when field ``name`` has its default value."""
        default: Any = next(f.default for f in fields(self) if f.name == name)
        return bool(getattr(self, name) == default)


#: the flag of each method-specific field (for "applies to --method ..." messages)
FLAG_OF = {
    "backend": "--backend",
    "predicates": "--predicate",
    "seed_predicates": "--seed-predicates",
    "max_iterations": "--max-iterations",
    "prover": "--prover",
    "concrete_after": "--concrete-after",
    "local_predicates": "--local-predicates",
    "table": "--table",
    "refine": "--refine",
    "abstract": "--abstract",
    "rest": "--rest",
    "basl": "--basl",
    "workers": "--workers",
    "ray": "--ray",
    "widen_delay": "--widen-delay",
    "eg_bound": "--eg-bound",
    "no_restrict": "--no-restrict",
    "max_rounds": "--max-rounds",
}
