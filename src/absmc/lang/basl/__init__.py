"""BASL-like abstraction specifications (paper 001, Fig. 1): the syntax front end."""

from absmc.lang.basl.parser import (
    BaslAbstraction,
    BaslCase,
    BaslClause,
    BaslOperator,
    parse_basl,
    parse_basl_file,
)

__all__ = [
    "BaslAbstraction",
    "BaslCase",
    "BaslClause",
    "BaslOperator",
    "parse_basl",
    "parse_basl_file",
]
