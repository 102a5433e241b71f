"""``ragmeter judge``, ``ragmeter cache`` and ``ragmeter answer-correctness`` (docs/judge.md;
docs/steps.md). Engines are imported inside the commands so ``ragmeter --help`` stays fast."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

import typer

from ragmeter.cli.answer_correctness import AC_COLUMNS, AC_HEADER, _run_answer_correctness
from ragmeter.cli.judge_run import _run_judge, _write_jsonl
from ragmeter.executors.options import (
    ExecutorOpt,
    KeepWorkOpt,
    PartitionsOpt,
    SchedulerOpt,
    WorkDirOpt,
    WorkerMemoryOpt,
    WorkersOpt,
)

# Running a judgement and answer-correctness live in sibling modules; their public names stay
# importable from here.
__all__ = ["AC_COLUMNS", "AC_HEADER", "parse_duration", "register"]

_STATUSES_HELP = "parse_error,timeout,refused,budget_exceeded,needs_llm,no_claims"


def parse_duration(text: str) -> float:
    """``30d``, ``12h``, ``90m``, ``45s``, ``2w`` → seconds.

    >>> parse_duration("30d"), parse_duration("1.5h")
    (2592000.0, 5400.0)
    """
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", text)
    if not m:
        from ragmeter.errors import UsageError

        raise UsageError(
            f"--older-than {text!r} (expected e.g. 30d, 12h, 90m)", command="cache prune"
        )
    return float(m.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}[m.group(2)]


def _check_number(flag: str, value: float | None, low: float, *, strict: bool) -> None:
    """A float option: finite and above ``low`` (NaN is named NaN, not "out of range").

    >>> _check_number("--max-cost", float("nan"), 0.0, strict=False)
    Traceback (most recent call last):
    ragmeter.errors.UsageError: ragmeter judge: --max-cost nan is NaN (expected a number >= 0)
    """
    import math

    from ragmeter.errors import UsageError

    if value is None:
        return
    expected = f"a number {'>' if strict else '>='} {low:g}"
    if math.isnan(value):
        raise UsageError(f"{flag} nan is NaN (expected {expected})", command="judge")
    if math.isinf(value):
        raise UsageError(f"{flag} {value} is infinite (expected {expected})", command="judge")
    if value < low or (strict and value == low):
        raise UsageError(f"{flag} {value:g} (expected {expected})", command="judge")


def _fail_on(value: str | None) -> set[str]:
    from ragmeter import status as st
    from ragmeter.errors import UsageError

    if not value:
        return set()
    out = {s.strip() for s in value.split(",") if s.strip()}
    bad = sorted(out - set(st.STATUSES))
    if bad:
        raise UsageError(
            f"--fail-on {bad[0]!r} is not a status (expected {_STATUSES_HELP})", command="judge"
        )
    return out


def register(app: typer.Typer) -> None:
    @app.command("judge")
    def judge(
        input_path: Annotated[
            Path,
            typer.Argument(
                metavar="INPUT.jsonl", help="Samples, one JSON object per line (- for stdin)."
            ),
        ],
        metric: Annotated[
            list[str] | None,
            typer.Option(
                "-m", "--metric", help="Metric (repeatable); default: the judge task's default set."
            ),
        ] = None,
        config: Annotated[
            Path | None,
            typer.Option(
                "--config",
                help="ragmeter.yaml (judge: and tasks.judge), or a graphrag-eval v6 config.",
            ),
        ] = None,
        base_url: str | None = typer.Option(None, "--base-url", help="OpenAI-compatible base URL."),
        model: str | None = typer.Option(None, "--model", help="Judge model (no default)."),
        per_sample: Annotated[
            Path | None,
            typer.Option("--per-sample", help="Write one JSON line per sample × metric."),
        ] = None,
        output: Annotated[
            Path | None,
            typer.Option("--output", "-o", help="Write the summary JSON here instead of stdout."),
        ] = None,
        ledger: Annotated[
            Path | None, typer.Option("--ledger", help="Write the per-call ledger as JSONL.")
        ] = None,
        key: Annotated[
            list[str] | None,
            typer.Option("--key", help="Map an input key: canonical=field (repeatable)."),
        ] = None,
        fmt: str = typer.Option("ragmeter", "--format", help="ragmeter | graphrag."),
        reference: Annotated[
            Path | None,
            typer.Option(
                "--reference",
                help="graphrag-eval reference file (--format graphrag with a responses file).",
            ),
        ] = None,
        repeats: int | None = typer.Option(
            None, "--repeats", min=1, help="Run each metric N times per sample."
        ),
        concurrency: int | None = typer.Option(
            None, "--concurrency", min=1, help="Requests in flight (default 8)."
        ),
        # float options are range-checked in the body, where NaN can be named as NaN
        rpm: float | None = typer.Option(None, "--rpm", help="Requests per minute."),
        tpm: float | None = typer.Option(None, "--tpm", help="Tokens per minute."),
        timeout: float | None = typer.Option(
            None, "--timeout", help="Seconds per attempt (default 120)."
        ),
        max_attempts: int | None = typer.Option(
            None, "--max-attempts", min=1, help="Attempts per call (default 6)."
        ),
        cache: Annotated[
            str | None,
            typer.Option(
                "--cache",
                help="Cache file (default .ragmeter/judge-cache.sqlite) or postgresql:// URL.",
            ),
        ] = None,
        no_cache: bool = typer.Option(
            False, "--no-cache", help="Use no cache file (in-memory only)."
        ),
        refresh_cache: bool = typer.Option(
            False, "--refresh-cache", help="Ignore cached replies and overwrite them."
        ),
        retry_errors: bool = typer.Option(
            False, "--retry-errors", help="Re-send calls whose cached reply was invalid."
        ),
        resume: bool = typer.Option(
            False, "--resume", help="Skip samples finished in <output>.partial.jsonl."
        ),
        cache_no_requests: bool = typer.Option(
            False, "--cache-no-requests", help="Do not store request texts in the cache."
        ),
        dry_run: bool = typer.Option(
            False, "--dry-run", help="Estimate calls, tokens and USD; send nothing."
        ),
        max_cost: float | None = typer.Option(
            None, "--max-cost", help="Stop starting calls before this much USD is spent."
        ),
        price_in: float | None = typer.Option(
            None, "--price-in", help="USD per million input tokens."
        ),
        price_out: float | None = typer.Option(
            None, "--price-out", help="USD per million output tokens."
        ),
        structured: str | None = typer.Option(
            None, "--structured", help="auto | json_schema | json_object | prompt."
        ),
        per_chunk: bool = typer.Option(
            False, "--per-chunk", help="One call per chunk (context precision, entity recall)."
        ),
        no_claims_as: float | None = typer.Option(
            None, "--no-claims-as", help="Fold no_claims into means as 0 or 1."
        ),
        fail_on: str | None = typer.Option(
            None,
            "--fail-on",
            help=f"Exit 1 if any sample has one of these statuses ({_STATUSES_HELP}).",
        ),
        as_json: bool = typer.Option(
            False,
            "--json",
            help="JSON output (the summary is JSON anyway; also the dry-run estimate).",
        ),
        executor: ExecutorOpt = None,
        workers: WorkersOpt = None,
        scheduler: SchedulerOpt = None,
        partitions: PartitionsOpt = None,
        worker_memory: WorkerMemoryOpt = None,
        work_dir: WorkDirOpt = None,
        keep_work: KeepWorkOpt = None,
    ) -> int:
        """LLM-judged metrics: faithfulness, relevance, context metrics, claims, rubrics."""
        from ragmeter.errors import UsageError

        for flag, value, low, strict in (
            ("--rpm", rpm, 0.0, True),
            ("--tpm", tpm, 1.0, False),
            ("--timeout", timeout, 0.0, True),
            ("--max-cost", max_cost, 0.0, False),
            ("--price-in", price_in, 0.0, False),
            ("--price-out", price_out, 0.0, False),
        ):
            _check_number(flag, value, low, strict=strict)

        if structured is not None:
            from ragmeter.judge.config import STRUCTURED_MODES

            if structured not in STRUCTURED_MODES:
                expected = f"{', '.join(STRUCTURED_MODES[:-1])} or {STRUCTURED_MODES[-1]}"
                raise UsageError(
                    f"--structured {structured!r} (expected {expected})", command="judge"
                )
        if no_claims_as is not None and no_claims_as not in (0.0, 1.0):
            raise UsageError(f"--no-claims-as {no_claims_as:g} (expected 0 or 1)", command="judge")
        if fmt not in ("ragmeter", "graphrag"):
            raise UsageError(f"--format {fmt!r} (expected ragmeter or graphrag)", command="judge")
        if no_cache and cache is not None:
            raise UsageError("--cache and --no-cache exclude each other", command="judge")
        if reference is not None and fmt != "graphrag":
            raise UsageError("--reference needs --format graphrag", command="judge")
        statuses_to_fail = _fail_on(fail_on)
        return _run_judge(locals())

    cache_app = typer.Typer(
        help="The judge's request cache: stats, prune, export.", no_args_is_help=True
    )

    @cache_app.command("stats")
    def cache_stats(
        cache: Annotated[
            str | None, typer.Option("--cache", help="Cache file or postgresql:// URL.")
        ] = None,
        as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    ) -> None:
        """Entries, size, hit rate and lifetime spend."""
        from ragmeter.io.jsonutil import dumps

        db = _open_cache(cache, "cache stats")
        try:
            stats = db.stats()
        finally:
            db.close()
        if as_json:
            typer.echo(dumps(stats, indent=2))
            return
        hit = "n/a" if stats["hit_rate"] is None else f"{stats['hit_rate']:.1%}"
        typer.echo(f"cache        {stats['path']}")
        typer.echo(f"entries      {stats['entries']} ({stats['invalid']} invalid)")
        typer.echo(f"size         {stats['size_bytes']:,} bytes")
        typer.echo(f"hit rate     {hit} of {stats['lookups']} lookups over {stats['runs']} runs")
        spend = f"{stats['lifetime_usd']:.6f} USD"
        if stats["usd_unknown_calls"]:
            spend += f" (+{stats['usd_unknown_calls']} calls of unknown price)"
        typer.echo(f"spend        {spend}")
        for m, n in stats["models"].items():
            typer.echo(f"model        {m}: {n}")

    @cache_app.command("prune")
    def cache_prune(
        older_than: str = typer.Option(
            ..., "--older-than", help="Delete entries older than this (30d, 12h, …)."
        ),
        cache: Annotated[
            str | None, typer.Option("--cache", help="Cache file or postgresql:// URL.")
        ] = None,
        as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    ) -> None:
        """Delete old cache entries."""
        seconds = parse_duration(older_than)
        db = _open_cache(cache, "cache prune")
        try:
            n = db.prune(seconds)
        finally:
            db.close()
        if as_json:
            typer.echo(f'{{"deleted": {n}}}')
        else:
            typer.echo(f"deleted {n} entries older than {older_than}")

    @cache_app.command("export")
    def cache_export(
        out: Annotated[
            Path, typer.Argument(metavar="OUT.jsonl", help="Where to write the entries.")
        ],
        cache: Annotated[
            str | None, typer.Option("--cache", help="Cache file or postgresql:// URL.")
        ] = None,
    ) -> None:
        """Write every cache entry as JSON lines (requests, replies, validity)."""
        db = _open_cache(cache, "cache export")
        try:
            _write_jsonl(out, list(db.export()))
        finally:
            db.close()

    app.add_typer(cache_app, name="cache")

    @app.command("answer-correctness")
    def answer_correctness(
        in_file: Annotated[
            Path,
            typer.Option(
                "-i", "--in-file", help="TSV with Question, Reference answer, Actual answer."
            ),
        ],
        out_file: Annotated[
            Path,
            typer.Option(
                "-o",
                "--out-file",
                help="Output TSV (#Reference, #PTarget, #Matching, Reasoning, Error).",
            ),
        ],
        config_path: Annotated[
            Path | None,
            typer.Option(
                "-c", "--config-path", "--config", help="graphrag-eval v6 config (llm.generation)."
            ),
        ] = None,
        compat: str | None = typer.Option(
            None, "--compat", help="graphrag-eval-5 | graphrag-eval-6."
        ),
    ) -> None:
        """graphrag-eval's answer-correctness command: claim counts per TSV row."""
        _run_answer_correctness(in_file, out_file, config_path, compat)


def _open_cache(path: str | None, command: str) -> Any:
    import os

    from ragmeter.errors import UsageError
    from ragmeter.judge.cache import is_cache_url
    from ragmeter.judge.cache_open import open_cache

    given = path or os.environ.get("RAGMETER_JUDGE_CACHE") or ".ragmeter/judge-cache.sqlite"
    try:
        if is_cache_url(given):  # a server: the tables are created if the database is new
            return open_cache(given)
    except UsageError as exc:
        raise UsageError(exc.message, command=command) from None
    target = Path(given)
    if not target.exists():
        raise UsageError(f"no judge cache at {target}", command=command)
    return open_cache(target)
