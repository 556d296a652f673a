"""Per-method command-line options: each module builds one engine's frozen options from the
parsed ``absmc check`` arguments and names the method-specific arguments it reads.

An engine in the registry without a module here still works with ``--method NAME``: its
declared options (``Engine.options``) are parsed, refused for other methods, and handed to its
``Engine.build_options`` (without one: its default options).
"""

from __future__ import annotations

import dataclasses

from absmc.cli.args import CheckArgs
from absmc.cli.methods import component, explicit, fourvalued, symbolic, typeabs, under
from absmc.cli.methods.base import MethodCli, names
from absmc.engines import registry
from absmc.engines.portfolio import PortfolioOptions

__all__ = ["MethodCli", "all_params", "method_cli", "owners", "owners_text"]


def _methods() -> dict[str, MethodCli]:
    singles = (
        explicit.METHOD,
        under.METHOD,
        typeabs.METHOD,
        fourvalued.METHOD,
        symbolic.METHOD,
    )
    out = {m.engine: m for m in singles}
    out["auto"] = MethodCli("auto", frozenset(p for m in singles for p in m.params), _auto)
    out["component"] = component.METHOD
    return out


def _auto(args: CheckArgs) -> PortfolioOptions:
    """``--method auto``: every member engine's options from the same arguments (each engine
    decides by itself whether and how it takes part, ``Engine.portfolio``); ``--workers N`` is
    the number of member processes at once (default: the machine's cores), not the explicit
    member's threads."""
    own = dataclasses.replace(args, workers=0)
    members = tuple((e.name, method_cli(e.name).build(own)) for e in registry.MEMBERS)
    return PortfolioOptions(members, workers=args.workers or None)


def method_cli(name: str) -> MethodCli:
    """The CLI side of engine ``name`` (a default one for engines without a module)."""
    found = _methods().get(name)
    if found is not None:
        return found
    engine = registry.get(name)
    build = engine.build_options
    if build is None:
        return MethodCli(name, names(engine.options), lambda _args: engine.default_options())
    declared = engine.options

    def from_args(args: CheckArgs) -> object:
        return build({o.name: args.value(o.name) for o in declared})

    return MethodCli(name, names(declared), from_args)


def all_params() -> frozenset[str]:
    """Every method-specific argument of any method (``auto`` takes them all)."""
    built_in = frozenset(p for m in _methods().values() for p in m.params)
    return built_in | names(o for e in registry.ENGINES for o in e.options)


def owners(param: str) -> list[str]:
    """The methods (in registry order) that read ``param``."""
    return [n for n in registry.names() if param in method_cli(n).params and n != "auto"]


def owners_text(param: str) -> str:
    """Where ``param`` applies, for messages: ``--method A, --method B and --method C``; an
    engine that reads its own files is named by them (``Python programs (.py)``)."""
    where = [registry.get(n).where() for n in owners(param)]
    return f"{', '.join(where[:-1])} and {where[-1]}" if len(where) > 1 else where[0]
