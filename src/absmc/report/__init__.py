"""Rendering of results: text (rich) and JSON."""
