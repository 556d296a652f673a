"""Engines: explicit search and the abstraction methods, each consuming an ``ir.System``."""
