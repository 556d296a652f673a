"""Typed errors: what went wrong, as facts; the CLI phrases them (flags, exit code 2).

Engines and front ends raise these instead of ``ValueError`` or messages that name
command-line flags, so that a stray ``ValueError`` from deep code is recognisably an internal
error (exit 4) and only these, plus :class:`~absmc.ir.span.ModelError` for errors in a model
(with its source span), are usage errors (exit 2).
"""

from __future__ import annotations

from collections.abc import Sequence


class UsageError(Exception):
    """absmc was asked for something it cannot do with this input (exit 2, one line)."""


class LoadTimeout(Exception):
    """Loading the model (a front end, or the import of a Python program) took longer than the
    run's time limit: the verdict is unknown (exit 3); the message says what was loading."""


class OptionError(UsageError):
    """An option value that does not fit the model (unknown property, bad binding, ...).

    ``option`` names the option *field* it concerns (e.g. ``"properties"``, ``"bindings"``,
    ``"store"``), never a command-line flag; the CLI maps fields to its flags. ``None`` when the
    message stands on its own.
    """

    def __init__(self, message: str, option: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.option = option


class CapabilityError(UsageError):
    """An engine was asked to check a property kind, a model feature or a store it does not
    support. ``engine`` is its registry name, ``aspect`` one of ``"property kind"``,
    ``"feature"``, ``"store"``, ``value`` what was asked (e.g. ``"exclusive"``), ``what`` a
    readable description of it and ``alternatives`` the engines that do support it."""

    def __init__(
        self, engine: str, aspect: str, value: str, what: str, alternatives: Sequence[str] = ()
    ) -> None:
        self.engine = engine
        self.aspect = aspect
        self.value = value
        self.what = what
        self.alternatives = tuple(alternatives)
        others = f" (engines that do: {', '.join(self.alternatives)})" if alternatives else ""
        super().__init__(f"engine {engine} does not support {what}{others}")


class ExportError(UsageError, ValueError):
    """A model the ``target`` language (``"gcl"``, ``"promela"``) cannot express with the same
    meaning; the message names what. Also a ``ValueError`` for older callers."""

    def __init__(self, message: str, target: str) -> None:
        super().__init__(message)
        self.target = target
