"""``ragmeter metrics``: the metrics registry, as a table, one block per metric, or JSON."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from ragmeter.registry import MetricDef, ResolvedMetric


def _range(m: MetricDef) -> str:
    lo, hi = m.range
    return f"[{'−∞' if lo is None else f'{lo:g}'}, {'∞' if hi is None else f'{hi:g}'}]"


def detail(m: MetricDef, hit: ResolvedMetric | None = None) -> str:
    """A metric as a block of labelled lines: formula and citation in full, which a table
    column would wrap beyond reading. ``hit``: the name as asked for, shown with what it
    resolved to."""
    head, notes = m.full_name, []
    if hit is not None:
        head = hit.full_name
        if hit.canonical != m.name:
            params = ", ".join(f"{k}={v}" for k, v in hit.params.items())
            notes.append(f"{m.full_name}{f' with {params}' if params else ''}")
        if hit.requested != hit.canonical:
            notes.append(f"asked as {hit.task}.{hit.requested}")
    if notes:
        head += f"  ({'; '.join(notes)})"
    rows = [
        ("aliases", ", ".join(m.aliases)),
        ("summary", m.summary),
        ("formula", m.formula),
        ("citation", m.citation),
        ("reference", m.reference),
        (
            "value",
            f"{m.direction} is better, range {_range(m)}, {m.level} level"
            if m.direction != "none"
            else f"no direction, range {_range(m)}, {m.level} level",
        ),
        ("default", "yes" if m.default else "no"),
        (
            "needs",
            ", ".join(sorted(m.needs))
            + (f" (pip install 'ragmeter[{m.extra}]')" if m.extra else ""),
        ),
        (
            "params",
            "; ".join(
                f"{p.name}: {p.type}"
                + ("" if p.default is None else f" = {p.default!r}")
                + (f" ({p.doc})" if p.doc else "")
                for p in m.params
            ),
        ),
    ]
    return "\n".join([head, *(f"  {k:<10} {v}" for k, v in rows if v)])


def register(app: typer.Typer) -> None:
    @app.command("metrics")
    def metrics(
        name: str | None = typer.Argument(
            None,
            metavar="[TASK|TASK.METRIC]",
            help="Only this task (retrieval, answers, ...), or one metric in detail "
            "(retrieval.nDCG@10; aliases and parameterised names resolve).",
        ),
        long: bool = typer.Option(
            False, "--long", "-l", help="One block per metric, with its formula and citation."
        ),
        as_json: bool = typer.Option(False, "--json", help="Print the registry as JSON."),
    ) -> None:
        """List every metric: task, canonical name, aliases, reference and direction; with
        --long or a TASK.METRIC name, each metric's formula and literature citation too."""
        from ragmeter import registry
        from ragmeter.io.jsonutil import dumps

        if name is not None and "." in name:  # task names contain no dot
            hit = registry.resolve(name)
            if as_json:
                typer.echo(dumps([registry.metric_record(hit.definition)], indent=2))
            else:
                typer.echo(detail(hit.definition, hit))
            return
        tasks = [registry.get_task(name)] if name else registry.all_tasks()
        if as_json:
            typer.echo(dumps(registry.metric_records(name), indent=2))
            return
        if long:
            typer.echo("\n\n".join(detail(m) for t in tasks for m in t.metrics))
            return
        from rich.table import Table

        from ragmeter.cli.console import make_console

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
        console = make_console()
        console.print(table)
        console.print(
            "Formulas and citations: ragmeter metrics TASK --long, or ragmeter metrics "
            "TASK.METRIC.",
            markup=False,
            highlight=False,
        )
