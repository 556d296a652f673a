"""The Ray transport of the partitioned search (:mod:`absmc.kernel.explore.partitioned`): one Ray
actor per worker, on one machine (``auto``: a local cluster started for the run) or on the nodes of
a running cluster (its address, as ``ray start --head`` prints it, or ``ray://HOST:10001``).

Each actor runs :class:`~absmc.kernel.explore.partitioned.PartitionWorker` in one thread of a
threaded actor; its peers' batches and the coordinator's messages arrive as ``put`` calls handled by
other threads of the same actor (fire-and-forget actor calls: Ray moves large payloads through
its object store), and the coordinator collects what the workers say with ``drain`` calls.
Ray is an optional dependency (``pip install 'absmc[ray]'``): without it
:class:`RayUnavailable` is raised. Each actor compiles the pickled System itself; on a remote
cluster absmc is shipped to the workers as a Ray ``py_modules`` runtime environment.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from absmc.kernel.explore.partitioned import Message, PartitionConfig, PartitionWorker
from absmc.kernel.model.semantics import Semantics

__all__ = ["RayTransport", "RayUnavailable"]


class RayUnavailable(Exception):
    """Ray is not installed, the cluster cannot be reached, or it has too few CPUs."""


class _Actor:
    """One worker as a Ray actor (threaded: ``run`` in one thread, ``put``/``drain`` in
    others)."""

    def __init__(
        self, index: int, factory: Callable[[], Semantics], config: PartitionConfig
    ) -> None:
        self.inbox: queue.Queue[Message] = queue.Queue()
        self.outbox: list[Message] = []
        self.lock = threading.Lock()
        self.peers: list[Any] = []
        self.worker = PartitionWorker(index, factory(), config)

    def connect(self, peers: list[Any]) -> None:
        self.peers = peers

    def put(self, message: Message) -> None:
        self.inbox.put(message)

    def drain(self) -> list[Message]:
        with self.lock:
            out, self.outbox = self.outbox, []
        return out

    def run(self) -> None:
        self.worker.run(self)

    # -- the WorkerLink side -------------------------------------------------------------
    def get(self, timeout: float) -> Message | None:
        try:
            if timeout <= 0:
                return self.inbox.get_nowait()
            return self.inbox.get(timeout=timeout)
        except queue.Empty:
            return None

    def to_peer(self, j: int, message: Message) -> None:
        self.peers[j].put.remote(message)

    def to_coordinator(self, message: Message) -> None:
        with self.lock:
            self.outbox.append(message)

    def alive(self) -> bool:
        return True


class RayTransport:
    """Workers as Ray actors (see the module doc). ``address``: ``"auto"`` starts a local
    cluster of ``workers`` CPUs (default: this machine's CPU count); anything else is the
    address of a running cluster. ``workers`` ``None``: one actor per CPU of the cluster.
    Raises :class:`RayUnavailable`."""

    def __init__(
        self,
        address: str,
        workers: int | None,
        factory: Callable[[], Semantics],
        config: PartitionConfig,
    ) -> None:
        try:
            import ray as ray_module
        except ImportError as err:
            raise RayUnavailable(
                "Ray is not installed (pip install 'absmc[ray]' or pip install ray)"
            ) from err
        ray: Any = ray_module
        self.ray = ray
        self.factory = factory
        local = address == "auto"
        try:
            if local:
                cpus = max(workers or 0, os.cpu_count() or 1)
                ray.init(
                    num_cpus=cpus,
                    include_dashboard=False,
                    log_to_driver=False,
                    logging_level=logging.ERROR,
                    configure_logging=False,
                )
            else:
                import absmc

                ray.init(
                    address=address,
                    log_to_driver=False,
                    logging_level=logging.ERROR,
                    configure_logging=False,
                    runtime_env={"py_modules": [os.path.dirname(absmc.__file__)]},
                )
        except Exception as err:  # Ray raises ConnectionError, RuntimeError, ValueError...
            msg = f"cannot start or reach the Ray cluster at {address}: {err}"
            raise RayUnavailable(msg) from err
        total = int(ray.cluster_resources().get("CPU", 1))
        n = workers if workers is not None else max(total, 1)
        if n > total:
            ray.shutdown()
            raise RayUnavailable(f"the Ray cluster has {total} CPUs, fewer than {n} workers")
        self.workers = n
        self.config = dataclasses.replace(config, workers=n)
        self.actors: list[Any] = []
        self.runs: list[Any] = []
        self.buffer: list[Message] = []

    def start(self) -> None:
        ray = self.ray
        cls = ray.remote(_Actor)
        self.actors = [
            cls.options(num_cpus=1, max_concurrency=4).remote(i, self.factory, self.config)
            for i in range(self.workers)
        ]
        ray.get([a.connect.remote(self.actors) for a in self.actors])
        self.runs = [a.run.remote() for a in self.actors]

    def send(self, w: int, message: Message) -> None:
        self.actors[w].put.remote(message)

    def _poll(self) -> None:
        for got in self.ray.get([a.drain.remote() for a in self.actors]):
            self.buffer.extend(got)

    def receive(self, timeout: float) -> Message | None:
        if not self.buffer and timeout > 0:
            self._poll()
            if not self.buffer:
                time.sleep(timeout)
                self._poll()
        return self.buffer.pop(0) if self.buffer else None

    def alive(self) -> bool:
        ready, _ = self.ray.wait(self.runs, num_returns=len(self.runs), timeout=0)
        for ref in ready:
            try:
                self.ray.get(ref)
            except Exception:
                return False
        return True

    def close(self) -> None:
        ray = self.ray
        for a in self.actors:
            with contextlib.suppress(Exception):  # already gone
                ray.kill(a)
        self.actors = []
        ray.shutdown()
