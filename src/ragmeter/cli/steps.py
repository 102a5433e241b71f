"""``ragmeter steps``: score an agent's tool-call steps against reference steps (graphrag-eval
compatible; docs/steps.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

HELP = (
    "Score agent steps (SPARQL queries, retrievals, lookups…) against reference steps and "
    "aggregate per template: graphrag-eval's inputs and output keys, its numbers with --compat."
)


def register(app: typer.Typer) -> None:
    @app.command("steps", help=HELP)
    def steps(
        reference: Annotated[
            Path,
            typer.Option("--reference", help="Reference dataset: YAML or JSON list of templates."),
        ],
        responses: Annotated[
            Path,
            typer.Option(
                "--responses",
                help="Agent responses: JSONL, a JSON array, or a JSON object keyed by question id.",
            ),
        ],
        output: Annotated[
            Path | None,
            typer.Option(
                "--output", "-o", help="Per-question records (.yaml, .yml, .json or .jsonl)."
            ),
        ] = None,
        aggregates: Annotated[
            Path | None,
            typer.Option(
                "--aggregates", help="Per-template, micro and macro statistics (.yaml or .json)."
            ),
        ] = None,
        compat: Annotated[
            str | None,
            typer.Option(
                "--compat",
                help="Reproduce graphrag-eval's numbers: graphrag-eval-6 or graphrag-eval-5.",
            ),
        ] = None,
        config: Annotated[
            Path | None,
            typer.Option("--config", help="graphrag-eval v6 config enabling LLM-judged keys."),
        ] = None,
        on_missing: Annotated[
            str,
            typer.Option(
                "--on-missing",
                help="A question without a response: error, or error-sample (scored as an error).",
            ),
        ] = "error",
        no_name_check: Annotated[
            bool,
            typer.Option(
                "--no-name-check", help="Accept near-miss spellings of special step names."
            ),
        ] = False,
        strict: Annotated[
            bool, typer.Option("--strict", help="Treat warnings as input errors.")
        ] = False,
        as_json: Annotated[
            bool, typer.Option("--json", help="Print the aggregates as JSON.")
        ] = False,
    ) -> None:
        import asyncio
        import sys

        from ragmeter.errors import UsageError
        from ragmeter.io import graphrag as gio
        from ragmeter.io.files import atomic_write
        from ragmeter.io.jsonutil import dumps
        from ragmeter.steps.aggregates import compute_aggregates
        from ragmeter.steps.modes import COMPAT_CHOICES, check_compat
        from ragmeter.steps.pipeline import evaluate

        if compat is not None and compat not in COMPAT_CHOICES:
            raise UsageError(
                f"--compat {compat!r} is not a mode (expected {' or '.join(COMPAT_CHOICES)})",
                command="steps",
            )
        if on_missing not in ("error", "error-sample"):
            raise UsageError(
                f"--on-missing {on_missing!r} (expected error or error-sample)", command="steps"
            )
        mode = check_compat(compat)
        kinds = {}
        targets = (("--output", output, True), ("--aggregates", aggregates, False))
        for option, path, jsonl in targets:
            if path is not None:
                try:
                    kinds[option] = gio.output_kind(path, allow_jsonl=jsonl)
                except Exception as exc:  # an unknown extension is a usage error
                    raise UsageError(f"{option} {path}: {exc}", command="steps") from None

        located = gio.load_reference(reference)
        entries, responses_name = gio.load_responses(responses)
        steps_config = None
        if config is not None:
            from ragmeter.steps.config import load_config

            steps_config = load_config(config)

        judging = steps_config is not None and steps_config.needs_judge
        progress = _progress_bar() if judging else None
        try:
            result = asyncio.run(
                evaluate(
                    located,
                    entries,
                    responses_name,
                    compat=mode,
                    config=steps_config,
                    on_missing=on_missing,
                    check_names=not no_name_check,
                    strict=strict,
                    progress=progress.update if progress is not None else None,
                )
            )
        finally:
            if progress is not None:
                progress.close()
        for line in result.warnings:
            print(f"warning: {line}", file=sys.stderr)
        summary = compute_aggregates(result.records, config, compat=compat)

        texts = []  # render everything first: on any error nothing is written
        if output is not None:
            texts.append((output, gio.render_records(result.records, kinds["--output"])))
        if aggregates is not None:
            texts.append((aggregates, gio.render_aggregates(summary, kinds["--aggregates"])))
        for path, text in texts:
            with atomic_write(path) as fh:
                fh.write(text)

        if as_json:
            typer.echo(dumps(summary, indent=2))
        elif output is None and aggregates is None:
            _print_table(summary)


class _Progress:
    """A rich progress bar on stderr that appears only once judging takes over a second."""

    def __init__(self) -> None:
        import time

        self._start = time.monotonic()
        self._bar = None
        self._task = None

    def update(self, done: int, total: int) -> None:
        import time

        if self._bar is None:
            if time.monotonic() - self._start < 1.0:
                return
            from ragmeter.cli.console import transient_progress

            self._bar = transient_progress()
            self._bar.start()
            self._task = self._bar.add_task("judging questions", total=total)
        self._bar.update(self._task, completed=done)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


def _progress_bar() -> _Progress:
    return _Progress()


def _mean(block: dict, key: str = "steps_score") -> str:
    stats = block.get(key)
    from ragmeter.cli.console import NO_SCORE, decimals

    return NO_SCORE if not isinstance(stats, dict) else decimals(stats["mean"], missing=NO_SCORE)


def _print_table(summary: dict) -> None:
    from rich.table import Table

    from ragmeter.cli.console import make_console

    table = Table()
    table.add_column("template", overflow="fold")
    table.add_column("successes", justify="right")
    table.add_column("errors", justify="right")
    table.add_column("steps_score mean", justify="right")
    for tid, block in summary["per_template"].items():
        table.add_row(
            str(tid),
            str(block["number_of_success_samples"]),
            str(block["number_of_error_samples"]),
            _mean(block),
        )
    micro = summary["micro"]
    table.add_section()
    table.add_row(
        "micro",
        str(micro["number_of_success_samples"]),
        str(micro["number_of_error_samples"]),
        _mean(micro),
    )
    macro = summary["macro"]
    table.add_row("macro", "", "", _mean(macro))
    make_console(soft_wrap=True, pipe_width=None).print(table)
