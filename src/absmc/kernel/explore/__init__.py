"""Explorers and state stores: the one BFS/DFS (:mod:`~absmc.kernel.explore.search`), nested
DFS (:mod:`~absmc.kernel.explore.nested`), stores (:mod:`~absmc.kernel.explore.store`),
partial-order reduction (:mod:`~absmc.kernel.explore.por`), the bounded state graph
(:mod:`~absmc.kernel.explore.graph`) and the hash-partitioned search
(:mod:`~absmc.kernel.explore.partitioned`, over processes in
:mod:`~absmc.kernel.explore.partition_mp` or Ray actors in
:mod:`~absmc.kernel.explore.partition_ray`)."""
