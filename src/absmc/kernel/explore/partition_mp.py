"""The processes transport of the partitioned search (:mod:`absmc.kernel.explore.partitioned`): one
``multiprocessing`` process per worker on this machine, one inbox queue per worker (batches
from its peers and the coordinator's messages) and one queue to the coordinator.

Workers are forked (the compiled semantics is inherited, nothing is compiled twice) where the
platform allows it, else spawned (each compiles the pickled System itself). They ignore Ctrl-C
(the coordinator stops them and collects their statistics), exit when the coordinator's
process is gone, and are terminated, then killed, by :meth:`ProcessTransport.close`: no
orphans.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import signal
from collections.abc import Callable
from multiprocessing.process import BaseProcess
from multiprocessing.queues import Queue
from typing import Any

from absmc.kernel.explore.partitioned import Message, PartitionConfig, PartitionWorker
from absmc.kernel.model.semantics import Semantics

__all__ = ["ProcessTransport"]

SemanticsFactory = Callable[[], Semantics]


class _Link:
    def __init__(self, inbox: Queue[Any], peers: list[Queue[Any]], out: Queue[Any]) -> None:
        self.inbox = inbox
        self.peers = peers
        self.out = out
        self.parent = os.getppid()

    def get(self, timeout: float) -> Message | None:
        try:
            if timeout <= 0:
                return self.inbox.get_nowait()  # type: ignore[no-any-return]
            return self.inbox.get(timeout=timeout)  # type: ignore[no-any-return]
        except queue.Empty:
            return None

    def to_peer(self, j: int, message: Message) -> None:
        self.peers[j].put(message)

    def to_coordinator(self, message: Message) -> None:
        self.out.put(message)

    def alive(self) -> bool:
        return os.getppid() == self.parent


def _worker_main(
    index: int,
    factory: SemanticsFactory,
    config: PartitionConfig,
    inboxes: list[Queue[Any]],
    out: Queue[Any],
) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    link = _Link(inboxes[index], inboxes, out)
    PartitionWorker(index, factory(), config).run(link)
    # the coordinator has what it asked for: exit without waiting for unread queue data
    for q in [*inboxes, out]:
        q.cancel_join_thread()


class ProcessTransport:
    """``workers`` processes running :class:`PartitionWorker` (see the module doc).
    ``factory`` makes each worker's semantics (called in the worker); it must be picklable when
    the platform cannot fork."""

    def __init__(self, workers: int, factory: SemanticsFactory, config: PartitionConfig) -> None:
        self.workers = workers
        self.factory = factory
        self.config = config
        methods = mp.get_all_start_methods()
        self.ctx: Any = mp.get_context("fork" if "fork" in methods else "spawn")
        self.inboxes: list[Queue[Any]] = [self.ctx.Queue() for _ in range(workers)]
        self.out: Queue[Any] = self.ctx.Queue()
        self.procs: list[BaseProcess] = []

    def start(self) -> None:
        for i in range(self.workers):
            p = self.ctx.Process(
                target=_worker_main,
                args=(i, self.factory, self.config, self.inboxes, self.out),
                name=f"absmc-worker-{i}",
                daemon=True,
            )
            p.start()
            self.procs.append(p)

    def send(self, w: int, message: Message) -> None:
        self.inboxes[w].put(message)

    def receive(self, timeout: float) -> Message | None:
        try:
            if timeout <= 0:
                return self.out.get_nowait()  # type: ignore[no-any-return]
            return self.out.get(timeout=timeout)  # type: ignore[no-any-return]
        except queue.Empty:
            return None

    def alive(self) -> bool:
        return all(p.is_alive() or p.exitcode == 0 for p in self.procs)

    def close(self) -> None:
        for p in self.procs:
            p.join(timeout=2.0)
        for p in self.procs:
            if p.is_alive():
                p.terminate()
                p.join(timeout=2.0)
            if p.is_alive():
                p.kill()
                p.join()
        for q in [*self.inboxes, self.out]:
            q.cancel_join_thread()
            q.close()
        self.procs = []
