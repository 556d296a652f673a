"""``--workers N`` / ``--ray ADDRESS``: the explicit search partitioned among workers
(:mod:`absmc.kernel.explore.partitioned`), over processes of this machine or Ray actors."""

from __future__ import annotations

from typing import Any

from absmc.codegen.python import CompiledSystem, compile_system
from absmc.errors import OptionError
from absmc.ir.system import Property, System
from absmc.kernel.explore.partitioned import PartitionConfig, PartitionStats, Transport, coordinate
from absmc.kernel.explore.search import SearchOutcome
from absmc.kernel.run.options import CheckOptions, Selection

__all__ = ["CompiledFactory", "refuse_unsupported", "run_partitioned"]


class CompiledFactory:
    """Makes a worker's semantics: the already compiled System when the worker was forked from
    this process, else (spawned process, Ray actor) a fresh compilation of the pickled System.
    Picklable (the compiled code is not shipped)."""

    def __init__(
        self, system: System, properties: tuple[Property, ...], compiled: CompiledSystem | None
    ) -> None:
        self.system = system
        self.properties = properties
        self.compiled = compiled

    def __call__(self) -> CompiledSystem:
        if self.compiled is None:
            self.compiled = compile_system(self.system, self.properties)
        return self.compiled

    def __getstate__(self) -> dict[str, Any]:
        return {"system": self.system, "properties": self.properties, "compiled": None}


def refuse_unsupported(options: CheckOptions) -> None:
    """Raise ``OptionError`` (field ``workers``) for what the partitioned search does not do:
    depth-first order, a depth bound, a store other than the exact one."""
    if options.order != "bfs":
        raise OptionError("the partitioned search has its own order; it cannot be DFS", "workers")
    if options.store != "exact":
        raise OptionError(
            f"the partitioned search uses exact stores, not {options.store}", "workers"
        )
    if options.limits.max_depth is not None:
        raise OptionError("the partitioned search does not take a depth bound", "workers")


def run_partitioned(
    system: System,
    selection: Selection,
    compiled: CompiledSystem,
    options: CheckOptions,
    workers: int,
    ray: str | None,
) -> tuple[SearchOutcome, PartitionStats, int]:
    """The partitioned search: ``workers`` processes, or Ray actors when ``ray`` is given
    (``workers`` <= 1 then means one actor per CPU of the cluster). Returns the outcome, the
    exchange statistics and the number of workers used. Raises ``OptionError`` (unsupported
    combination, Ray missing or unreachable)."""
    refuse_unsupported(options)
    config = PartitionConfig(workers, options.keep_going, selection.deadlock)
    factory = CompiledFactory(system, selection.user, compiled)
    transport: Transport
    if ray is not None:
        from absmc.kernel.explore.partition_ray import RayTransport, RayUnavailable

        try:
            transport = RayTransport(ray, workers if workers > 1 else None, factory, config)
        except RayUnavailable as err:
            raise OptionError(str(err), "ray") from err
    else:
        from absmc.kernel.explore.partition_mp import ProcessTransport

        transport = ProcessTransport(workers, factory, config)
    outcome, stats = coordinate(
        transport, compiled, options.limits, options.keep_going, options.progress
    )
    return outcome, stats, transport.workers
