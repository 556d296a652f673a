"""Logic: the only layer that imports solvers. IR formulas in, explicit answers out.

- :class:`~absmc.logic.prover.Prover` — validity / satisfiability / allSAT with a cache;
  ``unknown`` is never read as valid.
- :func:`~absmc.logic.wp.wp` — weakest preconditions of guarded commands.
"""

from absmc.logic.prover import Prover, ProverStats, Validity
from absmc.logic.wp import post_image, wp

__all__ = ["Prover", "ProverStats", "Validity", "post_image", "wp"]
