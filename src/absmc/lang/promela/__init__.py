"""Promela: export of IR Systems to Promela (the front end comes with the Promela issue)."""

from absmc.lang.promela.export import to_promela

__all__ = ["to_promela"]
