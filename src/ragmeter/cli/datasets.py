"""``ragmeter dataset stats|validate``: what a gold-standard file holds, and every problem in it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

FORMAT_HELP = "Gold format: ragmeter, graphrag-eval, ultrarag, grounded or trec."
PROFILE_HELP = (
    "Label set gold type labels must come from: heritage (default, as the classification task), "
    "a profile file (YAML/JSON), or none."
)


def register(app: typer.Typer) -> None:
    dataset_app = typer.Typer(
        help="Gold-standard datasets: statistics and validation.",
        no_args_is_help=True,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.add_typer(dataset_app, name="dataset")

    @dataset_app.command("stats")
    def stats(
        gold: Annotated[Path, typer.Argument(help="The gold file (JSONL, ragmeter format).")],
        fmt: Annotated[str, typer.Option("--format", help=FORMAT_HELP)] = "ragmeter",
        offsets: Annotated[
            str,
            typer.Option(
                "--on-offset-mismatch",
                help="error (default), relocate (move a span to its unique occurrence) or skip.",
            ),
        ] = "error",
        profile: Annotated[str, typer.Option("--profile", help=PROFILE_HELP)] = "heritage",
        as_json: Annotated[
            bool, typer.Option("--json", help="Print the statistics as JSON.")
        ] = False,
        output: Annotated[
            Path | None,
            typer.Option("--output", "-o", help="Also write the statistics as JSON here."),
        ] = None,
    ) -> None:
        """Counts per task and stratum, NIL ratio, answerable ratio, languages, labels."""
        from ragmeter.datasets import describe, load_gold
        from ragmeter.datasets.gold import label_errors

        label_set = _profile(profile)
        loaded = load_gold(gold, fmt=_fmt(fmt), on_offset_mismatch=_policy(offsets))
        if label_set is not None:
            for error in label_errors(list(loaded), label_set, loaded.path):
                raise error
        data = describe(loaded)
        if output is not None:
            from ragmeter.io.files import atomic_write
            from ragmeter.io.jsonutil import dumps

            with atomic_write(output) as fh:
                fh.write(dumps(data, indent=2) + "\n")
        if as_json:
            from ragmeter.io.jsonutil import dumps

            typer.echo(dumps(data, indent=2))
            return
        _print_stats(data)

    @dataset_app.command("validate")
    def validate(
        gold: Annotated[Path, typer.Argument(help="The gold file (JSONL, ragmeter format).")],
        fmt: Annotated[str, typer.Option("--format", help=FORMAT_HELP)] = "ragmeter",
        profile: Annotated[str, typer.Option("--profile", help=PROFILE_HELP)] = "heritage",
    ) -> int:
        """Check every sample and list every problem, one line each; exit 2 if there is any."""
        from ragmeter.datasets.validate import validate_file

        problems, n = validate_file(gold, fmt=_fmt(fmt), profile=_profile(profile))
        for line in problems:
            typer.echo(line, err=True)
        if problems:
            typer.echo(f"{gold}: {len(problems)} problem(s) in {n} samples", err=True)
            return 2
        typer.echo(f"{gold}: {n} samples, no problems")
        return 0


def _fmt(value: str) -> str:
    from ragmeter.datasets.formats import FORMATS
    from ragmeter.errors import UsageError

    if value not in FORMATS:
        raise UsageError(
            f"unknown format {value!r} (expected one of {', '.join(FORMATS)})", command="dataset"
        )
    return value


def _profile(value: str):  # type: ignore[no-untyped-def]
    """The label profile named by --profile (None for 'none')."""
    from ragmeter.errors import InputError, UsageError

    if value == "none":
        return None
    try:
        from ragmeter.extraction.profiles import get_profile
    except ModuleNotFoundError:  # the extraction engine is not part of this build
        return None
    try:
        return get_profile(value)
    except InputError as exc:
        if exc.path is not None:  # a profile file that exists but is bad
            raise
        raise UsageError(f"--profile: {exc.message}", command="dataset") from None


def _policy(value: str):  # type: ignore[no-untyped-def]
    from ragmeter.errors import UsageError

    if value not in ("error", "relocate", "skip"):
        raise UsageError(
            f"unknown --on-offset-mismatch {value!r} (expected error, relocate or skip)",
            command="dataset",
        )
    return value


def _print_stats(data: dict) -> None:
    from rich.table import Table

    from ragmeter.cli.console import make_console, styled

    console = make_console()
    console.print(
        styled(
            (str(data["path"]), "bold"),
            f"  {data['samples']} samples, {data['qa_pairs']} QA pairs "
            f"(format {data['format']}, sha256 {data['sha256'][:12]})",
        ),
        highlight=False,
    )
    table = Table("task", "units", "samples", "details", title="per task", title_justify="left")
    for task, info in data["tasks"].items():
        extra = ", ".join(f"{k} {v}" for k, v in info.items() if k not in ("units", "samples"))
        table.add_row(task, str(info["units"]), str(info["samples"]), extra)
    console.print(table)

    def ratio(x: float | None) -> str:
        return "–" if x is None else f"{x:.1%}"

    console.print(
        f"NIL ratio {ratio(data['nil_ratio'])} · answerable ratio "
        f"{ratio(data['answerable_ratio'])} · languages "
        + ", ".join(f"{k} {v}" for k, v in data["languages"].items()),
        highlight=False,
    )
    shown_values = 12
    for factor, counts in data["strata"].items():
        t = Table(factor, "samples", "share", title=f"stratum {factor}", title_justify="left")
        total = sum(counts.values())
        for value, n in list(counts.items())[:shown_values]:
            t.add_row(value, str(n), f"{n / total:.1%}")
        rest = list(counts.values())[shown_values:]
        if rest:
            t.add_row(f"… {len(rest)} more values", str(sum(rest)), f"{sum(rest) / total:.1%}")
        console.print(t)
    for kind, counts in data["labels"].items():
        if counts:
            console.print(
                f"{kind} labels: " + ", ".join(f"{k} {v}" for k, v in counts.items()),
                highlight=False,
            )
