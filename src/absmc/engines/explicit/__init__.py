"""Explicit-state model checking (the SPIN-style baseline every abstraction is checked against).

:func:`check_explicit` compiles the System, runs the kernel's search (BFS or DFS; exact,
bitstate or hash-compact store) and turns what it found into a
:class:`~absmc.kernel.run.result.Result` whose counterexamples were replayed on the compiled
semantics.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from absmc.engines.engine import PROPERTY_KINDS, Capabilities, Engine, lazy_exports
from absmc.ir.system import System
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import Result
from absmc.option import Option

if TYPE_CHECKING:
    from absmc.engines.explicit.check import check_explicit, make_store

__all__ = ["ENGINE", "ExplicitOptions", "check_explicit", "make_store"]

_CHECK = "absmc.engines.explicit.check"
__getattr__ = lazy_exports(__name__, {"check_explicit": _CHECK, "make_store": _CHECK})


@dataclass(frozen=True)
class ExplicitOptions:
    """Explicit search's own options (order, store and limits are shared:
    :class:`~absmc.kernel.run.options.CheckOptions`): the ``backend`` that runs the search —
    ``python`` (the generated-Python back end), ``native`` (C, :mod:`absmc.native`) or ``auto``
    (Python, moving to C for large models; see :mod:`absmc.engines.explicit.native`);
    ``workers``: on the Python back end, > 1 runs the hash-partitioned search
    (:mod:`absmc.kernel.explore.partitioned`) in that many processes; on ``native``/``auto``, the C
    search's threads (0, the default: the machine's cores once the search passes
    :data:`~absmc.engines.explicit.native.PARALLEL_AFTER` states; see ``runtime_par.c``; the
    product search of ltl properties runs CNDFS in ``workers`` >= 2 threads, else one thread:
    ``runtime_cndfs.c``);
    ``ray`` runs the partitioned search on Ray actors (``"auto"``: a local Ray cluster; else the
    address of a running one)."""

    backend: Literal["python", "native", "auto"] = "auto"
    workers: int = 0
    ray: str | None = None


def _check(system: System, options: CheckOptions, own: ExplicitOptions) -> Result:
    from absmc.engines.explicit.check import check_explicit

    return check_explicit(system, options, own.backend, own.workers, own.ray)


_GROUP = "--method explicit"

#: the method's command-line options (built by :mod:`absmc.cli.methods.explicit`)
OPTIONS = (
    Option(
        "backend",
        ("--backend",),
        "[explicit] What runs the search: generated Python, C compiled with the system C "
        "compiler (breadth-first; exact, hash-compact, bitstate or tree store), or auto (Python, "
        "then C once the model shows more than 50,000 states and the C code, compiled in the "
        "background, is ready; Python alone when no C compiler is present or with --ray).",
        default=ExplicitOptions.backend,
        kind="choice",
        choices=("python", "native", "auto"),
        show_default=True,
        group=_GROUP,
    ),
    Option(
        "workers",
        ("--workers",),
        "[explicit] Search in N threads (--backend native|auto: a shared lock-free store; "
        "default: the machine's cores, from 50,000 states on; ltl properties: CNDFS in N >= 2 "
        "threads, else one) or N processes (--backend python: "
        "hash-partitioned safety search, default 1; with --ray: N actors, default one per CPU of "
        "the cluster). "
        "[auto] Run N member engines at once (default: the machine's cores).",
        default=ExplicitOptions.workers,
        kind="int",
        min=0,
        metavar="N",
        group=_GROUP,
    ),
    Option(
        "ray",
        ("--ray",),
        "[explicit] Run the partitioned search on Ray actors: auto = a local Ray cluster, "
        "else the address of a running one (ray start --head); needs absmc[ray].",
        metavar="ADDRESS",
        group=_GROUP,
    ),
)

#: the registry entry (:mod:`absmc.engines.registry`)
ENGINE = Engine(
    name="explicit",
    options_type=ExplicitOptions,
    capabilities=Capabilities(
        property_kinds=PROPERTY_KINDS,
        stores=frozenset({"exact", "bitstate", "hash-compact", "tree"}),
        exhaustive=True,
    ),
    description="exhaustive explicit-state search (exact, bitstate or hash-compact store)",
    check=_check,
    options=OPTIONS,
)
