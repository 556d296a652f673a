"""The kernel every engine builds on (between ``logic``/``ir`` and ``engines``), in five
sub-packages by concern:

* :mod:`~absmc.kernel.model` — the model interface: the ``Semantics`` protocol (compiled back
  end in :mod:`absmc.codegen.python`, reference in :mod:`absmc.codegen.reference`),
  ``IRSemantics``, initial states;
* :mod:`~absmc.kernel.explore` — explorers and stores: the one BFS/DFS search with limits,
  keep-going, progress, violation recording, deadlock, and ``SearchHooks`` (the extension
  point); nested DFS; stores (exact, bitstate, hash-compact, keyed for abstract matching);
  partial-order reduction; the state graph; the partitioned search;
* :mod:`~absmc.kernel.ltl` — linear-time properties: Büchi automata, the product, weak
  fairness, one property's check, lassos of abstract Systems;
* :mod:`~absmc.kernel.replay` — replay, concretization of abstract paths, trace rows, trails,
  CTL witnesses, random simulation;
* :mod:`~absmc.kernel.run` — one check: its limits (a wall-clock deadline shared by everything
  the check runs, and the one wording of stop reasons), the options every method shares,
  verdicts from a search outcome, and the result shape every engine returns.
"""
