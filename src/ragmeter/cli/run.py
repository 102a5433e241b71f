"""``ragmeter run``, ``ragmeter gate`` and ``ragmeter runs`` (docs/runner.md)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from ragmeter.cli.stores import STORE_HELP, command_errors, stored
from ragmeter.executors.options import (
    ExecutorOpt,
    KeepWorkOpt,
    PartitionsOpt,
    SchedulerOpt,
    WorkDirOpt,
    WorkerMemoryOpt,
    WorkersOpt,
)

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
        cache_dir: Annotated[
            Path,
            typer.Option("--cache-dir", help="Where finished task results are kept for re-use."),
        ] = Path(".ragmeter/cache"),
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
        systems_cache: Annotated[
            Path,
            typer.Option(
                "--systems-cache",
                help="SQLite cache of live systems' calls (a re-run calls nothing again).",
            ),
        ] = Path(".ragmeter/systems-cache.sqlite"),
        refresh_system: Annotated[
            list[str] | None,
            typer.Option(
                "--refresh-system",
                help="Drop this live system's cached calls first (repeatable).",
            ),
        ] = None,
        executor: ExecutorOpt = None,
        workers: WorkersOpt = None,
        scheduler: SchedulerOpt = None,
        partitions: PartitionsOpt = None,
        worker_memory: WorkerMemoryOpt = None,
        work_dir: WorkDirOpt = None,
        keep_work: KeepWorkOpt = None,
    ) -> int:
        """Evaluate every system of CONFIG on every task, compare, gate and store the runs.

        Systems with call: are called first (docs/systems.md); their outputs are written to
        results/<evaluation-id>/outputs/<system>/. With --workers or --scheduler (or the
        config's executor: block) the tasks and comparisons run on Dask (docs/scaleout.md).
        Exit status: 0 all gates pass, 1 a gate failed, 2 bad input (or a live system past its
        max_errors), 130 interrupted.
        """
        from ragmeter.errors import UsageError
        from ragmeter.runner.config import load_config
        from ragmeter.runner.pipeline import RichProgress, run_pipeline

        if str(config) == "-":
            # the paths inside a config are relative to its folder, which stdin does not have
            raise UsageError(
                "the config cannot come from stdin (its paths are relative to its folder; "
                "expected a file)",
                command="run",
            )
        cfg = load_config(config)
        _check_results_dir(results_dir)
        if not no_store:  # a store that cannot be written is found before the work, not after
            from ragmeter.store.checks import probe_store

            with command_errors("run"):
                probe_store(store or cfg.model.store)
        progress = None if (quiet or (as_json and not sys.stderr.isatty())) else RichProgress()
        result = run_pipeline(
            cfg,
            cache_dir=None if no_cache else cache_dir,
            progress=progress,
            strict_gates=strict_gates,
            systems_cache=systems_cache,
            refresh_systems=refresh_system or (),
            results_dir=results_dir,
            executor={
                "executor": executor,
                "workers": workers,
                "scheduler": scheduler,
                "partitions": partitions,
                "worker_memory": worker_memory,
                "work_dir": work_dir,
                "keep_work": keep_work,
            },
        )
        with command_errors("run"):
            result.save(store, results_dir=results_dir, write_store=not no_store)
        if report:
            _write_report(result)
        summary = result.summary
        if as_json:
            from ragmeter.io.jsonutil import dumps

            typer.echo(dumps(summary, indent=2))
        else:
            from ragmeter.cli.console import make_console
            from ragmeter.cli.run_display import print_summary

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
        output: Annotated[
            Path | None,
            typer.Option("--output", "-o", help="Also write the outcomes as JSON here."),
        ] = None,
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
        if output is not None:  # written whatever the verdict: a CI job keeps it as an artifact
            from ragmeter.io.files import atomic_write
            from ragmeter.io.jsonutil import dumps

            with atomic_write(output) as fh:
                fh.write(dumps(data, indent=2) + "\n")
        if as_json:
            from ragmeter.io.jsonutil import dumps

            typer.echo(dumps(data, indent=2))
        elif not report.outcomes:
            typer.echo("no gate rules apply (the run's config has no gates; add --rule)")
        else:
            from ragmeter.cli.console import make_console
            from ragmeter.cli.run_display import print_gate_report

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

        from ragmeter.cli.console import make_console

        if not rows:
            typer.echo(f"no runs in {url}")
            return
        # run ids are what `runs show/export` take: never cut or wrapped, whatever the width
        # (the other columns wrap instead)
        table = Table()
        table.add_column("id", no_wrap=True, min_width=max(len(r["id"]) for r in rows))
        for name in ("project", "system", "version", "created (UTC)", "gate", "tags"):
            table.add_column(name, overflow="fold")
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
        from ragmeter.cli.console import make_console

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

        with stored(store, "runs delete", write=True) as handle:
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
        run: Annotated[
            str,
            typer.Argument(
                help="A run id, unique prefix, evaluation id or 'latest' (an evaluation exports "
                "every system's run; --system picks one)."
            ),
        ],
        system: Annotated[
            str | None,
            typer.Option("--system", help="Only the run of this system (in an evaluation)."),
        ] = None,
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
        """Export runs: JSON with everything, or their per-sample values as Parquet.

        One run gives one JSON object; an evaluation (e.g. 'latest' with two systems) gives a
        JSON array with one object per run, as runs show --json does. Parquet has a run_id
        column.
        """
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
        if fmt == "parquet" and output is None:
            raise UsageError("--format parquet needs --output FILE", command="runs export")
        with stored(store, "runs export") as handle:
            run_ids = _pick_system(handle, run, system)
            if fmt == "parquet":
                import pyarrow as pa
                import pyarrow.parquet as pq

                parts = []
                for run_id in run_ids:
                    part = handle.sample_table(run_id)
                    column = pa.array([run_id] * part.num_rows, pa.string())
                    parts.append(part.add_column(0, "run_id", column))
                table = pa.concat_tables(parts)
                with _written(output, "runs export"), atomic_write(output, "wb") as fh:  # type: ignore[arg-type]
                    pq.write_table(table, fh)
                runs_note = f" of {len(run_ids)} runs" if len(run_ids) > 1 else ""
                typer.echo(
                    f"wrote {table.num_rows} per-sample values{runs_note} to {output}", err=True
                )
                return
            data = [handle.export(i, samples=not no_samples) for i in run_ids]
            text = dumps(data[0] if len(data) == 1 else data, indent=2)
        if output is None:
            typer.echo(text)
        else:
            with _written(output, "runs export"), atomic_write(output) as fh:
                fh.write(text + "\n")
            typer.echo(f"wrote {output}", err=True)


@contextmanager
def _written(path: Path, command: str) -> Iterator[None]:
    """A file that cannot be written (full disk, no permission) is one line naming it."""
    from ragmeter.errors import UsageError

    try:
        yield
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}", command=command) from None


def _check_results_dir(folder: Path) -> None:
    """A results folder that cannot be written is found before the work (the save checks
    again: this only spares a long run that could never be saved)."""
    import os

    from ragmeter.errors import UsageError

    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing.exists() and not existing.is_dir():
        what = "is a file" if existing == folder else f"is under the file {existing}"
        raise UsageError(
            f"cannot write the results folder {folder}: it {what} (--results-dir picks another "
            "folder)",
            command="run",
        )
    if existing.exists() and not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(
            f"cannot write the results folder {folder}: {existing} is read-only; nothing was "
            "written (--results-dir picks another folder)",
            command="run",
        )


def _pick_system(handle, ref: str, system: str | None) -> list[str]:  # type: ignore[no-untyped-def]
    """The runs ``ref`` names, or with ``--system`` the one run of that system among them."""
    from ragmeter.errors import UsageError

    ids = handle.resolve(ref)
    if system is None:
        return ids
    names = {i: handle.get_run(i, full=False)["system"] for i in ids}
    picked = [i for i in ids if names[i] == system]
    if not picked:
        has = ", ".join(sorted(set(names.values())))
        raise UsageError(
            f"{ref!r} has no run of system {system!r} (it has {has})", command="runs export"
        )
    return picked


def _print_run(data: dict, console) -> None:  # type: ignore[no-untyped-def]
    from rich.table import Table

    from ragmeter.cli.console import styled
    from ragmeter.cli.run_display import print_gate_report

    run = data["run"]
    console.print(
        styled(
            (run["id"], "bold"),
            f"  {run['project']} · {run['system']}"
            + (f" {run['system_version']}" if run["system_version"] else "")
            + ("  (baseline)" if run["is_baseline"] else ""),
        ),
        highlight=False,
    )
    digest = (run["dataset_hash"] or "")[:12]
    console.print(
        f"created {run['created_at']} · ragmeter {run['ragmeter_version']} · dataset "
        f"{run['dataset_path']} ({run['n_samples']} samples, sha256 {digest})",
        highlight=False,
    )
    meta = run.get("metadata") or {}
    if meta.get("system_calls"):  # a live system (docs/systems.md)
        call = meta.get("system_call") or {}
        console.print(f"called {call.get('call')}", highlight=False)
        for method, v in meta["system_calls"].items():
            console.print(
                f"  {method}: {v['calls']} calls, {v['cache_hits']} cache hits, "
                f"{v['errors']} errors, {v['seconds']:.2f} s",
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
            console.print(
                styled((f"{t['task']} skipped", "yellow"), f": {t['reason']}"), highlight=False
            )
    if data["gates"]:
        outcomes = [{**g, "system": run["system"]} for g in data["gates"]]
        counts = {
            v: sum(1 for g in outcomes if g["verdict"] == v) for v in ("PASS", "FAIL", "SKIP")
        }
        print_gate_report(
            {"rules": outcomes, "passed": counts["FAIL"] == 0, "counts": counts}, console
        )


def _write_report(result) -> None:  # type: ignore[no-untyped-def]
    """``--report``: the HTML report of docs/dashboard.md, when the report module is installed."""
    try:
        from ragmeter.report import write_evaluation_report
    except (ModuleNotFoundError, ImportError):
        typer.echo(
            "ragmeter run: --report skipped: the HTML report is not part of this build", err=True
        )
        return
    # from the store the runs were saved to, or (--no-store) from the run records in memory
    target = write_evaluation_report(result)
    typer.echo(f"report: {target}", err=True)
