"""Renderers print a Report; they compute nothing (counts and exit code come from the report)."""
