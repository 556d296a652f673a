"""Replay on the concrete semantics: the one replay module (:mod:`~absmc.kernel.replay.trace`),
verdicts from a search outcome with its violations replayed
(:mod:`~absmc.kernel.replay.outcome`), saved trails (:mod:`~absmc.kernel.replay.trail`), CTL
witnesses (:mod:`~absmc.kernel.replay.witness`) and random simulation
(:mod:`~absmc.kernel.replay.simulate`)."""
