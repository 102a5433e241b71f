"""``ragmeter trec`` in the typer app's help; the lean path in entry.py handles real calls."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    @app.command(
        "trec",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
        add_help_option=False,
    )
    def trec(ctx: typer.Context) -> int:
        """trec_eval drop-in: ragmeter trec \\[options] QRELS RUN (same flags and output)."""
        from ragmeter.cli.entry import main

        return main(["trec", *ctx.args])
