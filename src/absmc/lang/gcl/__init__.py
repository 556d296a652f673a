"""The guarded-command language front end (``.gcl`` files)."""

from absmc.lang.gcl.parser import parse_gcl, parse_gcl_expr, parse_gcl_file

__all__ = ["parse_gcl", "parse_gcl_expr", "parse_gcl_file"]
