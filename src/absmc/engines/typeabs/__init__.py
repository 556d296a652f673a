"""Type-based data abstraction (Bandera; Dwyer et al., ICSE 2001 — paper 001, §§3-7).

Modules, one concern each:

- :mod:`~absmc.engines.typeabs.domains` — the abstraction library (signs, range, set, modulo,
  point) and domain specs (``range(0,1)``);
- :mod:`~absmc.engines.typeabs.basl` — user domains from BASL files (Fig. 1);
- :mod:`~absmc.engines.typeabs.operators` — abstract operators by the prover's elimination
  method (§4), safety checks of user-written ones;
- :mod:`~absmc.engines.typeabs.infer` — abstract type inference with coercions and conflicts
  (§5.3, §6.2);
- :mod:`~absmc.engines.typeabs.absexpr` and :mod:`~absmc.engines.typeabs.generate` — the
  abstract System with ``choose`` (§6);
- :mod:`~absmc.engines.typeabs.check` — abstract search, choose-free search and concrete
  replay (§7, Fig. 4);
- :mod:`~absmc.engines.typeabs.ltl` — LTL on the abstract program, choose-free lassos;
- :mod:`~absmc.engines.typeabs.select` — selection help from data and control dependences and
  a cone-of-influence slice (§5.1-5.2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from absmc.engines.engine import DEFAULT_PROPERTY_KINDS, Capabilities, Engine, lazy_exports

# ``infer`` is also a submodule's name: imported here, before anything loads the submodule
# (which would bind the package attribute to the module), as a lazy export could not be
from absmc.engines.typeabs.infer import Typing, infer
from absmc.engines.typeabs.options import METHOD, TypesOptions
from absmc.ir.system import System
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import Result
from absmc.option import Option

if TYPE_CHECKING:
    from absmc.engines.typeabs.check import build_abstraction, check_types
    from absmc.engines.typeabs.domains import Domain, DomainError, DomainSpec, resolve_domain
    from absmc.engines.typeabs.generate import CHOOSE, ERROR, Abstraction, abstract_system
    from absmc.engines.typeabs.operators import OperatorLibrary, OpTable

__all__ = [
    "CHOOSE",
    "ENGINE",
    "ERROR",
    "METHOD",
    "Abstraction",
    "Domain",
    "DomainError",
    "DomainSpec",
    "OpTable",
    "OperatorLibrary",
    "TypesOptions",
    "Typing",
    "abstract_system",
    "build_abstraction",
    "check_types",
    "infer",
    "resolve_domain",
]

_PKG = "absmc.engines.typeabs"
__getattr__ = lazy_exports(
    __name__,
    {
        "build_abstraction": f"{_PKG}.check",
        "check_types": f"{_PKG}.check",
        "Domain": f"{_PKG}.domains",
        "DomainError": f"{_PKG}.domains",
        "DomainSpec": f"{_PKG}.domains",
        "resolve_domain": f"{_PKG}.domains",
        "CHOOSE": f"{_PKG}.generate",
        "ERROR": f"{_PKG}.generate",
        "Abstraction": f"{_PKG}.generate",
        "abstract_system": f"{_PKG}.generate",
        "OperatorLibrary": f"{_PKG}.operators",
        "OpTable": f"{_PKG}.operators",
    },
)


def _check(system: System, options: CheckOptions, own: TypesOptions) -> Result:
    from absmc.engines.typeabs.check import check_types

    return check_types(system, options, own)


def _in_portfolio(options: TypesOptions) -> TypesOptions | str:
    """In a portfolio the method runs only on the user's bindings (without any it would be an
    exact search again)."""
    return options if options.bindings else "no variable bindings given"


_GROUP = "--method types"

#: the method's command-line options (built by :mod:`absmc.cli.methods.typeabs`; also taken
#: by ``absmc export --method types`` and ``absmc abstract``)
OPTIONS = (
    Option(
        "abstract",
        ("--abstract",),
        "--method types: abstract VAR with DOMAIN: signs, range(l,u), set(v,...), "
        "modulo(k), point or a BASL abstraction (repeatable).",
        metavar="VAR=DOMAIN",
        multiple=True,
        group=_GROUP,
    ),
    Option(
        "rest",
        ("--rest",),
        "--method types: integer variables type inference does not reach stay concrete "
        "or become point.",
        default="concrete",
        kind="choice",
        choices=("concrete", "point"),
        show_default=True,
        group=_GROUP,
    ),
    Option(
        "basl",
        ("--basl",),
        "BASL file defining abstractions usable in --abstract (repeatable).",
        kind="path",
        metavar="FILE",
        multiple=True,
        group=_GROUP,
    ),
)

#: the registry entry (:mod:`absmc.engines.registry`)
ENGINE = Engine(
    name="types",
    options_type=TypesOptions,
    capabilities=Capabilities(property_kinds=DEFAULT_PROPERTY_KINDS | {"ltl"}),
    description="type-based data abstraction of VAR=DOMAIN bindings with choose-free search "
    "(Dwyer et al., ICSE 2001)",
    check=_check,
    portfolio=_in_portfolio,
    options=OPTIONS,
)
