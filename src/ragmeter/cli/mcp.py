"""``ragmeter mcp`` in the typer app's help and completion; the lean path in entry.py (which
runs ``ragmeter.mcp.command``) handles real calls (docs/mcp.md)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    @app.command(
        "mcp",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
        add_help_option=False,
    )
    def mcp(ctx: typer.Context) -> int:
        """Serve ragmeter's evaluators as MCP tools (UltraRAG-compatible)."""
        from ragmeter.cli.entry import main

        return main(["mcp", *ctx.args])
