"""One check's frame: its limits (:mod:`~absmc.kernel.run.limits`, memory in
:mod:`~absmc.kernel.run.memory`, a hard deadline in :mod:`~absmc.kernel.run.isolate`), the
options every method shares (:mod:`~absmc.kernel.run.options`) and the result shape every engine
returns (:mod:`~absmc.kernel.run.result`). The bottom of ``kernel/``: it imports no explorer,
product or replay (``tests/test_layering.py``)."""
