"""``ragmeter ner``, ``classify``, ``link`` and ``agreement``: one module per command.

Thin layers over :mod:`ragmeter.extraction`: read the files (``ragmeter.io``), call the engine,
print rich tables (or ``--json``). Engines are imported inside the commands so that
``ragmeter --help`` stays fast.
"""

from __future__ import annotations

import typer

from ragmeter.cli.extraction import agreement, classify, common, link, ner

__all__ = ["common", "register"]


def register(app: typer.Typer) -> None:
    """Add the four extraction commands to ``app``, in help order."""
    for module in (ner, classify, link, agreement):
        module.register(app)
