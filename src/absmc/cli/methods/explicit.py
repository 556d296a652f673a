"""``--method explicit``: ``--backend python|native|auto``, ``--workers N`` and ``--ray
ADDRESS|auto`` (the hash-partitioned search, :mod:`absmc.engines.explicit.parallel`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from absmc.cli.args import CheckArgs
from absmc.cli.methods.base import MethodCli
from absmc.engines.explicit import ExplicitOptions

F = TypeVar("F", bound=Callable[..., Any])


def options(f: F) -> F:
    """Add ``--workers N`` and ``--ray ADDRESS`` to a command."""
    f = click.option(
        "--ray",
        default=None,
        metavar="ADDRESS",
        help="[explicit] Run the partitioned search on Ray actors: auto = a local Ray cluster, "
        "else the address of a running one (ray start --head); needs absmc[ray].",
    )(f)
    f = click.option(
        "--workers",
        type=click.IntRange(0),
        default=0,
        metavar="N",
        help="[explicit] Search in N threads (--backend native|auto: a shared lock-free store; "
        "default: the machine's cores, from 50,000 states on) or N processes (--backend python: "
        "hash-partitioned, default 1; with --ray: N actors, default one per CPU of the cluster). "
        "[auto] Run N member engines at once (default: the machine's cores).",
    )(f)
    return f


def build(args: CheckArgs) -> ExplicitOptions:
    """The engine's options."""
    backend = args.backend if args.backend in ("native", "auto") else "python"
    return ExplicitOptions(
        backend=backend,  # type: ignore[arg-type]
        workers=args.workers,
        ray=args.ray,
    )


METHOD = MethodCli("explicit", frozenset({"backend", "workers", "ray"}), build)
