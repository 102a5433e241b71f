"""``ragmeter run``, ``ragmeter gate`` and ``ragmeter runs`` (``specs/runner.md``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ragmeter.cli.stores import STORE_HELP, stored

RUN_STORE_HELP = (
    "Results store URL (sqlite:///PATH or postgresql://...); default: the config's store:, "
    "else sqlite:///.ragmeter/ragmeter.db."
)


def register(app: typer.Typer) -> None:
    @app.command("run")
    def run(
        config: Annotated[Path, typer.Argument(help="The ragmeter.yaml to run.")],
        store: Annotated[str | None, typer.Option("--store", help=RUN_STORE_HELP)] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
        report: Annotated[
            bool, typer.Option("--report", help="Also write report.html into the results folder.")
        ] = False,
        results_dir: Annotated[
            Path, typer.Option("--results-dir", help="Where results/<evaluation-id>/ goes.")
        ] = Path("results"),
        cache_dir: Annotated[Path, typer.Option()] = Path(
            ".ragmeter/cache",
            "--cache-dir",
            help="Where finished task results are kept for re-use.",
        ),
        no_cache: Annotated[
            bool,
            typer.Option(
                "--no-cache", help="Recompute every task even if its inputs did not change."
            ),
        ] = False,
        no_store: Annotated[
            bool,
            typer.Option("--no-store", help="Do not write to the store (results folder only)."),
        ] = False,
        strict_gates: Annotated[
            bool | None,
            typer.Option("--strict-gates/--no-strict-gates", help="Count SKIP gate rules as FAIL."),
        ] = None,
        quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
    ) -> int:
        """Evaluate every system of CONFIG on every task, compare, gate and store the runs.

        Exit status: 0 all gates pass, 1 a gate failed, 2 bad input.
        """
        from ragmeter.runner.config import load_config
        from ragmeter.runner.pipeline import RichProgress, run_pipeline

        cfg = load_config(config)
        progress = None if (quiet or (as_json and not sys.stderr.isatty())) else RichProgress()
        result = run_pipeline(
            cfg,
            cache_dir=None if no_cache else cache_dir,
            progress=progress,
            strict_gates=strict_gates,
        )
        result.save(
            store,
            results_dir=results_dir,
            write_store=not no_store,
        )
        if report:
            _write_report(result)
        summary = result.summary()
        if as_json:
            from ragmeter.io.jsonutil import dumps

            typer.echo(dumps(summary, indent=2))
        else:
            from ragmeter.runner.display import make_console, print_summary

            print_summary(summary, make_console())
        return result.exit_status

    @app.command("gate")
    def gate(
        runs: Annotated[
            list[str], typer.Argument(help="Run ids, evaluation ids, unique prefixes, or 'latest'.")
        ],
        baseline: Annotated[
            str | None, typer.Option("--baseline", help="Run to test no-regression rules against.")
        ] = None,
        rule: Annotated[
            list[str] | None,
            typer.Option(
                "--rule",
                help="TASK.METRIC>=X, TASK.METRIC<=X or no_regression:TASK.METRIC[,...] "
                "(default: the run's own gates).",
            ),
        ] = None,
        profile: Annotated[
            list[str] | None,
            typer.Option("--profile", help="A built-in rule set: heritage, grounded."),
        ] = None,
        store: Annotated[str | None, typer.Option("--store", help=STORE_HELP)] = None,
        strict_gates: Annotated[
            bool | None,
            typer.Option("--strict-gates/--no-strict-gates", help="Count SKIP as FAIL."),
        ] = None,
        as_json: Annotated[
            bool, typer.Option("--json", help="Print the outcomes as JSON.")
        ] = False,
    ) -> int:
        """Evaluate gate rules on stored runs: PASS/FAIL/SKIP per rule; exit 1 on any FAIL."""
        from ragmeter.runner.stored_gates import gate_stored

        with stored(store, "gate") as handle:
            report = gate_stored(
                handle,
                runs,
                baseline=baseline,
                rules=rule or (),
                profiles=profile or (),
                strict=strict_gates,
            )
        data = report.to_dict()
        if as_json:
            from ragmeter.io.jsonutil import dumps

            typer.echo(dumps(data, indent=2))
        elif not report.outcomes:
            typer.echo("no gate rules apply (the run's config has no gates; add --rule)")
        else:
            from ragmeter.runner.display import make_console, print_gate_report

            print_gate_report(data, make_console())
        return 0 if report.passed else 1

    runs_app = typer.Typer(
        help="List, show, delete and export stored runs.",
        no_args_is_help=True,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.add_typer(runs_app, name="runs")

    @runs_app.command("list")
    def runs_list(
        project: Annotated[str | None, typer.Option("--project", help="Only this project.")] = None,
        system: Annotated[str | None, typer.Option("--system", help="Only this system.")] = None,
        tag: Annotated[str | None, typer.Option("--tag", help="Only runs with this tag.")] = None,
        evaluation: Annotated[
            str | None, typer.Option("--evaluation", help="Only this evaluation.")
        ] = None,
        limit: Annotated[
            int, typer.Option("--limit", min=0, help="At most this many (0: all).")
        ] = 50,
        offset: Annotated[int, typer.Option("--offset", min=0)] = 0,
        store: Annotated[str | None, typer.Option("--store", help=STORE_HELP)] = None,
        as_json: Annotated[
            bool, typer.Option("--json", help="Print a JSON array of runs.")
        ] = False,
    ) -> None:
        """Stored runs, newest first."""
        with stored(store, "runs list") as handle:
            rows = handle.list_runs(
                project=project,
                system=system,
                tag=tag,
                evaluation=evaluation,
                limit=limit or None,
                offset=offset,
            )
            url = handle.url
        if as_json:
            from ragmeter.io.jsonutil import dumps

            typer.echo(dumps(rows, indent=2))
            return
        from rich.table import Table

        from ragmeter.runner.display import make_console

        if not rows:
            typer.echo(f"no runs in {url}")
            return
        table = Table("id", "project", "system", "version", "created (UTC)", "gate", "tags")
        for r in rows:
            table.add_row(
                r["id"],
                r["project"],
                r["system"] + (" (baseline)" if r["is_baseline"] else ""),
                r["system_version"] or "",
                (r["created_at"] or "")[:19].replace("T", " "),
                r["gate_status"] or "",
                ", ".join(r["tags"]),
            )
        make_console().print(table)

    @runs_app.command("show")
    def runs_show(
        run: Annotated[str, typer.Argument(help="A run id (or unique prefix, or 'latest').")],
        store: Annotated[str | None, typer.Option("--store", help=STORE_HELP)] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print the run as JSON.")] = False,
    ) -> None:
        """One run: its fields, tasks, metrics, comparisons and gate outcomes."""
        with stored(store, "runs show") as handle:
            ids = handle.resolve(run)
            data = [handle.export(i, samples=False) for i in ids]
        if as_json:
            from ragmeter.io.jsonutil import dumps

            typer.echo(dumps(data[0] if len(data) == 1 else data, indent=2))
            return
        from ragmeter.runner.display import make_console

        for item in data:
            _print_run(item, make_console())

    @runs_app.command("delete")
    def runs_delete(
        runs: Annotated[list[str], typer.Argument(help="Run ids or evaluation ids.")],
        yes: Annotated[
            bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")
        ] = False,
        store: Annotated[str | None, typer.Option("--store", help=STORE_HELP)] = None,
        as_json: Annotated[
            bool, typer.Option("--json", help="Print the deleted ids as JSON.")
        ] = False,
    ) -> None:
        """Delete runs (each in one transaction)."""
        from ragmeter.errors import UsageError

        with stored(store, "runs delete") as handle:
            ids: list[str] = []
            for ref in runs:
                ids.extend(i for i in handle.resolve(ref) if i not in ids)
            if not yes:
                if not sys.stdin.isatty():
                    raise UsageError(
                        f"would delete {len(ids)} run(s): {', '.join(ids)}; add --yes",
                        command="runs delete",
                    )
                typer.confirm(f"delete {len(ids)} run(s): {', '.join(ids)}?", abort=True)
            for run_id in ids:
                handle.delete(run_id)
        if as_json:
            from ragmeter.io.jsonutil import dumps

            typer.echo(dumps({"deleted": ids}))
        else:
            for run_id in ids:
                typer.echo(f"deleted {run_id}")

    @runs_app.command("export")
    def runs_export(
        run: Annotated[str, typer.Argument(help="A run id (or unique prefix, or 'latest').")],
        output: Annotated[
            Path | None, typer.Option("--output", "-o", help="File (default stdout).")
        ] = None,
        fmt: Annotated[
            str, typer.Option("--format", help="json (everything) or parquet (per-sample values).")
        ] = "json",
        no_samples: Annotated[
            bool, typer.Option("--no-samples", help="Leave per-sample values out.")
        ] = False,
        store: Annotated[str | None, typer.Option("--store", help=STORE_HELP)] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Same as --format json.")] = False,
    ) -> None:
        """Export a run: JSON with everything, or its per-sample values as Parquet."""
        from ragmeter.errors import UsageError
        from ragmeter.io.files import atomic_write
        from ragmeter.io.jsonutil import dumps

        if as_json and fmt != "json":  # as `answers` does: a contradiction is not resolved
            raise UsageError(
                f"--json and --format {fmt} contradict each other", command="runs export"
            )
        if fmt not in ("json", "parquet"):
            raise UsageError(
                f"unknown format {fmt!r} (expected json or parquet)", command="runs export"
            )
        with stored(store, "runs export") as handle:
            run_id = handle.resolve_one(run)
            if fmt == "parquet":
                if output is None:
                    raise UsageError("--format parquet needs --output FILE", command="runs export")
                import pyarrow.parquet as pq

                table = handle.sample_table(run_id)
                with atomic_write(output, "wb") as fh:
                    pq.write_table(table, fh)
                typer.echo(f"wrote {table.num_rows} per-sample values to {output}", err=True)
                return
            text = dumps(handle.export(run_id, samples=not no_samples), indent=2)
        if output is None:
            typer.echo(text)
        else:
            with atomic_write(output) as fh:
                fh.write(text + "\n")
            typer.echo(f"wrote {output}", err=True)


def _print_run(data: dict, console) -> None:  # type: ignore[no-untyped-def]
    from rich.table import Table

    from ragmeter.runner.display import print_gate_report

    run = data["run"]
    console.print(
        f"[bold]{run['id']}[/bold]  {run['project']} · {run['system']}"
        + (f" {run['system_version']}" if run["system_version"] else "")
        + ("  (baseline)" if run["is_baseline"] else ""),
        highlight=False,
    )
    digest = (run["dataset_hash"] or "")[:12]
    console.print(
        f"created {run['created_at']} · ragmeter {run['ragmeter_version']} · dataset "
        f"{run['dataset_path']} ({run['n_samples']} samples, sha256 {digest})",
        highlight=False,
    )
    table = Table("task", "metric", "value", "95% CI", "n", "statuses")
    for m in data["metrics"]:
        if m["factor"] is not None:
            continue
        value = m["value"]
        shown = (
            "–" if value is None else (f"{value:.4f}" if isinstance(value, float) else str(value))
        )
        ci = (
            f"[{m['ci_low']:.3f}, {m['ci_high']:.3f}]"
            if m["ci_low"] is not None and m["ci_high"] is not None
            else ""
        )
        statuses = ", ".join(f"{k} {v}" for k, v in m["status_counts"].items())
        table.add_row(m["task"], m["metric"], shown, ci, str(m["n"]), statuses)
    console.print(table)
    for t in data["tasks"]:
        if t["status"] != "ok":
            console.print(f"[yellow]{t['task']} skipped[/yellow]: {t['reason']}", highlight=False)
    if data["gates"]:
        outcomes = [{**g, "system": run["system"]} for g in data["gates"]]
        counts = {
            v: sum(1 for g in outcomes if g["verdict"] == v) for v in ("PASS", "FAIL", "SKIP")
        }
        print_gate_report(
            {"rules": outcomes, "passed": counts["FAIL"] == 0, "counts": counts}, console
        )


def _write_report(result) -> None:  # type: ignore[no-untyped-def]
    """``--report``: the HTML report of dashboard.md §1, when the report module is installed."""
    try:
        from ragmeter.report import write_evaluation_report
    except (ModuleNotFoundError, ImportError):
        typer.echo(
            "ragmeter run: --report skipped: the HTML report is not part of this build", err=True
        )
        return
    # from the store the runs were saved to, or (--no-store) from a throwaway one
    target = write_evaluation_report(result)
    typer.echo(f"report: {target}", err=True)
