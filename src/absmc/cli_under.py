"""Options ``absmc check`` takes for ``--method under`` (paper 000), kept in one place:
:func:`under_options` adds them to a command, :func:`under_from` builds the engine options."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from absmc.engines.under import UnderOptions
    from absmc.ir.system import System

F = TypeVar("F", bound=Callable[..., Any])


class UnderUsageError(ValueError):
    """An ``--method under`` option that does not fit (reported as a usage error)."""


def under_options(f: F) -> F:
    """Add ``--seed-predicates``, ``--max-iterations``, ``--prover``,
    ``--concrete-after``, ``--local-predicates`` and ``--table`` to a command."""
    options = [
        click.option(
            "--seed-predicates",
            default="",
            metavar="guards,property",
            help="[under] Also seed with the atoms of all guards and/or of the properties.",
        ),
        click.option(
            "--max-iterations",
            type=click.IntRange(1),
            default=50,
            show_default=True,
            help="[under] Refinement iterations before giving up (unknown).",
        ),
        click.option(
            "--prover",
            type=click.Choice(["z3", "none"]),
            default="z3",
            show_default=True,
            help="[under] z3: exactness checks; none: lightweight syntactic refinement.",
        ),
        click.option(
            "--concrete-after",
            type=click.IntRange(1),
            default=None,
            metavar="K",
            help="[under] Add concrete-state predicates for a command inexact K iterations in a "
            "row (makes refinement terminate on finite systems).",
        ),
        click.option(
            "--local-predicates",
            is_flag=True,
            help="[under] Attach new predicates to the program counter that produced them.",
        ),
        click.option("--table", is_flag=True, help="[under] Print the per-iteration table."),
    ]
    for opt in reversed(options):
        f = opt(f)
    return f


def under_from(
    system: System,
    store: str,
    seed_predicates: str,
    max_iterations: int,
    prover: str,
    concrete_after: int | None,
    local_predicates: bool,
) -> UnderOptions:
    """The :class:`~absmc.engines.under.UnderOptions` of the command-line options (seed
    predicates from ``--predicate`` are already in ``system.predicates``)."""
    from absmc.engines.under import UnderOptions

    seeds = {s.strip() for s in seed_predicates.split(",") if s.strip()}
    if not seeds <= {"guards", "property"}:
        raise UnderUsageError(
            f"--seed-predicates takes guards and/or property, not {seed_predicates!r}"
        )
    if store not in ("exact", "range"):
        raise UnderUsageError("--method under takes --store exact (abstract matching) or range")
    return UnderOptions(
        seed_predicates=frozenset(seeds),  # type: ignore[arg-type]
        max_iterations=max_iterations,
        prover=prover,  # type: ignore[arg-type]
        store="range" if store == "range" else "abstract",
        concrete_after=concrete_after,
        local_predicates=local_predicates,
    )
