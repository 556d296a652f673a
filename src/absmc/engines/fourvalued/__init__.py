"""Four-valued (Belnap bilattice) over- and under-abstraction: Bonsai (paper 004).

* :mod:`.bilattice` — FOUR: truth and information orders, join-irreducible elements, §2.4;
* :mod:`.partition` — partial abstraction and taint analysis (§3.2–3.3);
* :mod:`.effect` — one SMT enumeration per command, shared by both abstractions (§3.4);
* :mod:`.build` — the may and must Systems (one per join-irreducible element);
* :mod:`.check` — the two classical searches and the combined verdict t / f / ⊥;
* :mod:`.export` — the abstract Systems as Promela (if-statements and assignments only).
"""

from absmc.engines.fourvalued.bilattice import Belnap
from absmc.engines.fourvalued.build import FourValuedAbstraction, build_abstraction
from absmc.engines.fourvalued.check import check_fourvalued

__all__ = ["Belnap", "FourValuedAbstraction", "build_abstraction", "check_fourvalued"]
