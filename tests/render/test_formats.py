"""The one table of output formats (ascend_doctor/render/formats.py) is what every command offers and renders."""

from __future__ import annotations

import importlib

import click

from ascend_doctor.cli import cli
from ascend_doctor.cli.output import format_for_path
from ascend_doctor.render.formats import DOCUMENTS, FORMATS


def _commands(group, prefix=()):
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, (*prefix, name))
        else:
            yield (*prefix, name), cmd


def test_every_format_option_offers_a_document_kind_of_the_table():
    offered = {}
    for path, cmd in _commands(cli):
        for p in cmd.params:
            if "--format" in getattr(p, "opts", ()):
                offered[" ".join(path)] = tuple(p.type.choices)
    assert offered and all(choices in DOCUMENTS.values() for choices in offered.values()), offered
    assert offered["check"] == DOCUMENTS["report"] and offered["plan"] == DOCUMENTS["plan"]


def test_every_renderer_of_the_table_exists_and_every_extension_maps_back():
    for f in FORMATS.values():
        if f.renders:
            module, function = f.renders
            assert callable(getattr(importlib.import_module(f"ascend_doctor.render.{module}"), function)), f.name
        for ext in f.extensions:
            assert format_for_path(f"report{ext}") == f.name
    assert format_for_path("x.sarif.json") == "sarif" and format_for_path("x.unknown") == "console"
