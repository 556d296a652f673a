"""One check's frame: its limits (:mod:`~absmc.kernel.run.limits`, memory in
:mod:`~absmc.kernel.run.memory`, a hard deadline in :mod:`~absmc.kernel.run.isolate`), the
options every method shares (:mod:`~absmc.kernel.run.options`), verdicts from a search outcome
(:mod:`~absmc.kernel.run.outcome`) and the result shape every engine returns
(:mod:`~absmc.kernel.run.result`)."""
