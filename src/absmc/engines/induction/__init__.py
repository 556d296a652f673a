"""Safety proofs by induction for unbounded-integer systems: IC3/PDR through Z3's Spacer on
constrained Horn clauses (``--method pdr``) and k-induction with bounded model checking
(``--method kind``). One package, two registry entries (:data:`ENGINE`, :data:`KIND_ENGINE`):
both share the encoding of :mod:`absmc.logic.transition` and the verdict rules of
:mod:`~absmc.engines.induction.check` — every ``holds`` carries an inductive invariant that
:mod:`absmc.logic.certificate` checks with a fresh solver first, every ``violated`` a trace
replayed on the concrete semantics.

Modules: :mod:`~absmc.engines.induction.check` (properties, certificates, replay, the time
limit), :mod:`~absmc.engines.induction.kind` (Houdini strengthening, k-induction, BMC).
"""

from __future__ import annotations

from dataclasses import replace

from absmc.engines.engine import Capabilities, Engine
from absmc.engines.induction.options import KindOptions, PdrOptions
from absmc.ir.system import System
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import Result

__all__ = ["ENGINE", "KIND_ENGINE", "KindOptions", "PdrOptions"]

#: what both engines check: safety properties (CTL only as AG of a state formula) of plain
#: guarded commands with Promela's transition assertions and error conditions; no atomic
#: sequences or timeout (they need more than one state of context), no bitwise operators
#: beyond what the logic layer encodes
CAPABILITIES = Capabilities(
    property_kinds=frozenset(
        {"invariant", "unreachable", "assert", "deadlock", "model-error", "ctl"}
    ),
    features=frozenset({"asserts", "errors", "valid-end", "nonlinear"}),
    initial_sets=True,
    ctl_safety_only=True,
)


def _check_pdr(system: System, options: CheckOptions, own: PdrOptions) -> Result:
    from absmc.engines.induction.check import check_pdr

    return check_pdr(system, options, own)


def _check_kind(system: System, options: CheckOptions, own: KindOptions) -> Result:
    from absmc.engines.induction.kind import check_kind

    return check_kind(system, options, own)


#: ``--method pdr``
ENGINE = Engine(
    name="pdr",
    options_type=PdrOptions,
    capabilities=replace(CAPABILITIES, start_rank=20),
    description="IC3/PDR on constrained Horn clauses (Z3's Spacer): safety proofs with a "
    "checked inductive invariant, replayed counterexamples",
    check=_check_pdr,
)

#: ``--method kind``
KIND_ENGINE = Engine(
    name="kind",
    options_type=KindOptions,
    # Houdini's facts and 1-induction usually answer within seconds: first in a portfolio
    capabilities=replace(CAPABILITIES, start_rank=10),
    description="k-induction with Houdini invariant strengthening and bounded model checking "
    "(up to --max-depth); proofs with a checked inductive invariant",
    check=_check_kind,
)
