"""The model interface: the ``Semantics`` protocol every explorer consumes
(:mod:`~absmc.kernel.model.semantics`), ``IRSemantics`` for code that also needs the System
(:mod:`~absmc.kernel.model.irsemantics`) and the initial states of an ``init:`` constraint
(:mod:`~absmc.kernel.model.initial`)."""
