"""``ragmeter metrics``: the metrics registry, as a table or JSON."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    @app.command("metrics")
    def metrics(
        task: str | None = typer.Argument(None, help="Only this task (retrieval, answers, ...)."),
        as_json: bool = typer.Option(False, "--json", help="Print the registry as JSON."),
    ) -> None:
        """List every metric: task, canonical name, aliases, reference and direction."""
        from ragmeter import registry
        from ragmeter.io.jsonutil import dumps

        tasks = [registry.get_task(task)] if task else registry.all_tasks()
        if as_json:
            typer.echo(dumps(registry.metric_records(task), indent=2))
            return
        from rich.table import Table

        from ragmeter.terminal import make_console

        table = Table("metric", "aliases", "direction", "reference", "needs")
        for t in tasks:
            for m in t.metrics:
                table.add_row(
                    m.full_name,
                    ", ".join(m.aliases),
                    m.direction,
                    m.reference,
                    ", ".join(sorted(m.needs)),
                )
        make_console().print(table)
