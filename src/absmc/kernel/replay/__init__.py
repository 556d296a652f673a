"""Replay on the concrete semantics: the one replay module (:mod:`~absmc.kernel.replay.trace`),
saved trails (:mod:`~absmc.kernel.replay.trail`), CTL witnesses
(:mod:`~absmc.kernel.replay.witness`) and random simulation
(:mod:`~absmc.kernel.replay.simulate`)."""
