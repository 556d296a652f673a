"""The kernel every engine builds on (between ``logic``/``ir`` and ``engines``).

* :mod:`~absmc.kernel.semantics` — the ``Semantics`` protocol (compiled back end in
  :mod:`absmc.codegen.python`, reference in :mod:`absmc.codegen.reference`);
* :mod:`~absmc.kernel.store` — stores: exact, bitstate, hash-compact, keyed (abstract matching);
* :mod:`~absmc.kernel.search` — the one BFS/DFS search with limits, keep-going, progress,
  violation recording, deadlock, and ``SearchHooks`` (the extension point);
* :mod:`~absmc.kernel.trace` — replay, concretization of abstract paths, trace rows;
* :mod:`~absmc.kernel.outcome` — verdicts from a search outcome;
* :mod:`~absmc.kernel.limits` — one check's limits (a wall-clock deadline shared by everything
  the check runs) and the one wording of stop reasons;
* :mod:`~absmc.kernel.result` and :mod:`~absmc.kernel.options` — the result shape every engine
  returns and the options every method shares.
"""
