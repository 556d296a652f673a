"""``--backend native|auto`` with ``ctl`` properties: the reachable graph built in C.

The safety search runs as :func:`~absmc.engines.explicit.native.check_native` does; the CTL
properties are labelled (:mod:`absmc.engines.explicit.ctl`, Clarke, Emerson, Sistla 1986) on
the graph the C breadth-first search writes (:class:`~absmc.native.graph.NativeGraph`: CSR
successor and predecessor lists, the atoms evaluated in C). Both use one library (the model,
the atoms and ``runtime_graph.c``). Witnesses of violated properties are found and replayed on
the generated-Python back end, their states looked up in the C graph. ``auto`` follows the LTL
rule (:func:`~absmc.engines.explicit.native.check_ltl_with_backend`): the Python check first,
bounded by :data:`~absmc.engines.explicit.native.AUTO_SWITCH_STATES` states, with the library
compiled beside it; past the bound the check starts again with the searches in C. Where C
cannot serve (a refused option, a model or atom the generator does not translate, a value past
64 bits) the whole check runs in Python, with the reason in each result's ``native_fallback``.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from absmc.codegen.python import compile_system
from absmc.engines.explicit.ctl import check_ctl
from absmc.errors import OptionError
from absmc.ir.ctl import Not, to_enf
from absmc.ir.system import System
from absmc.kernel.run.options import CheckOptions, Selection
from absmc.kernel.run.result import Result
from absmc.native import CompilerError, Unsupported, native_available
from absmc.native.search import NativeOverflow

if TYPE_CHECKING:
    from absmc.engines.explicit.check import Backend
    from absmc.native.graph import NativeGraph

__all__ = ["check_ctl_with_backend"]


def check_ctl_with_backend(
    system: System,
    options: CheckOptions,
    selection: Selection,
    backend: Backend,
    python: Any,
    workers: int = 0,
) -> Result:
    """The safety properties of ``selection`` by :func:`~absmc.engines.explicit.native.
    check_native` and its ``ctl`` properties on the C-built graph (see the module docstring);
    ``python(options, workers)`` runs the whole check on the Python back end. Raises
    ``OptionError`` (option ``backend``) when ``native`` cannot serve the options."""
    from absmc.engines.explicit.native import (
        _noted,
        check_native,
        native_refusal,
        python_first,
        python_first_pays,
    )
    from absmc.native.graph import NativeGraph

    why = native_refusal(options)
    if why is None and not native_available():
        why = "no C compiler was found (set CC or install gcc)"
    if why is not None:
        if backend == "native":
            raise OptionError(why, "backend")
        return _noted(python(options, workers), f"searched in Python: {why}")
    start = time.monotonic()
    lim = options.limits
    formulas = [to_enf(Not(p.formula)) for p in selection.ctl]
    built: list[NativeGraph | Exception] = []
    if backend == "auto" and python_first_pays(system):
        got = python_first(
            options,
            workers,
            python,
            # the graph library's source is made here (no generate hook in NativeGraph)
            lambda opt, started, _generate: NativeGraph(
                system, selection.user, formulas, opt, started
            ),
        )
        if isinstance(got, Result):
            return got
        built = got
    try:
        if built and isinstance(built[0], Exception):
            raise built[0]
        graph = built[0] if built else NativeGraph(system, selection.user, formulas)
        assert isinstance(graph, NativeGraph)
        started = replace(options, limits=lim.started(start))
        safety = check_native(
            system, started, selection, started.limits.end(start), workers, graph.sem
        )
        compiled = compile_system(system, selection.user)
        ctl = check_ctl(compiled, selection.ctl, started, graph.explore, lambda: graph.extra)
        return replace(safety, results=(*safety.results, *ctl))
    except (Unsupported, CompilerError, NativeOverflow) as e:
        why = str(e)
    result: Result = python(replace(options, limits=lim.started(start)), workers)
    return _noted(result, f"searched in Python: {why}")
