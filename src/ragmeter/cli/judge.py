"""``ragmeter judge``, ``ragmeter cache`` and ``ragmeter answer-correctness`` (docs/judge.md;
docs/steps.md). Engines are imported inside the commands so ``ragmeter --help`` stays fast."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

_STATUSES_HELP = "parse_error,timeout,refused,budget_exceeded,needs_llm,no_claims"


def _err(line: str) -> None:
    print(line, file=sys.stderr)


def _progress(enabled: bool) -> Any:
    """A rich progress bar on stderr (only on a terminal), or ``None``."""
    if not enabled or not sys.stderr.isatty():
        return None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ragmeter.terminal import make_console

    return Progress(
        TextColumn("judge"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[info]}", markup=False),  # model names and costs: text
        TimeElapsedColumn(),
        console=make_console(stderr=True),
        transient=True,
    )


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


# -- partial results (resume) ---------------------------------------------------------------


def _partial_path(per_sample: Path | None, output: Path | None) -> Path | None:
    base = per_sample or output
    return None if base is None else base.with_name(base.name + ".partial.jsonl")


def _load_partial(path: Path) -> dict[tuple[str, str, int], Any]:
    import json

    from ragmeter import status as st
    from ragmeter.judge.metrics._common import Outcome, Part

    done: dict[tuple[str, str, int], Any] = {}
    if not path.exists():
        return done
    with open(path, encoding="utf-8") as fh:
        for raw in fh:
            try:
                rec = json.loads(raw)
            except json.JSONDecodeError:
                continue  # a line cut by the interruption
            if rec.get("status") not in (st.OK, st.NO_CLAIMS):
                continue
            parts = {k: Part(v[0], v[1], v[2]) for k, v in rec["parts"].items()}
            done[(rec["id"], rec["pipeline"], int(rec["repeat"]))] = Outcome(
                parts, rec.get("explanation"), rec.get("fields") or {}
            )
    return done


class _PartialWriter:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.fh = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()

    def __call__(self, sid: str, pipe: str, repeat: int, outcome: Any, stats: Any) -> None:
        if self.fh is None:
            return
        from ragmeter.io.jsonutil import dumps

        self.fh.write(
            dumps(
                {
                    "id": sid,
                    "pipeline": pipe,
                    "repeat": repeat,
                    "status": outcome.status,
                    "parts": {k: [p.status, p.detail, p.value] for k, p in outcome.parts.items()},
                    "explanation": outcome.explanation,
                    "fields": outcome.fields,
                }
            )
            + "\n"
        )
        self.fh.flush()

    def close(self, *, remove: bool) -> None:
        if self.fh is not None:
            self.fh.close()
            if remove and self.path is not None:
                self.path.unlink(missing_ok=True)


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    from ragmeter.io.files import atomic_write
    from ragmeter.io.jsonutil import dumps

    with atomic_write(path) as fh:
        for row in rows:
            fh.write(dumps(row) + "\n")


def _write_records(path: Path, rows: list[dict[str, Any]]) -> None:
    """Per-sample records: YAML or JSON array by extension, JSON lines otherwise."""
    from ragmeter.io.files import atomic_write
    from ragmeter.io.jsonutil import dumps, to_jsonable

    name = path.name.lower()
    if name.endswith((".yaml", ".yml")):
        import yaml

        with atomic_write(path) as fh:
            yaml.safe_dump(to_jsonable(rows), fh, sort_keys=False, allow_unicode=True)
    elif name.endswith(".json"):
        with atomic_write(path) as fh:
            fh.write(dumps(rows, indent=2) + "\n")
    else:
        _write_jsonl(path, rows)


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
            Path | None,
            typer.Option("--cache", help="Cache file (default .ragmeter/judge-cache.sqlite)."),
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

        if structured is not None and structured not in (
            "auto",
            "json_schema",
            "json_object",
            "prompt",
        ):
            raise UsageError(
                f"--structured {structured!r} (expected auto, json_schema, json_object or prompt)",
                command="judge",
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
        cache: Annotated[Path | None, typer.Option("--cache", help="Cache file.")] = None,
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
        cache: Annotated[Path | None, typer.Option("--cache", help="Cache file.")] = None,
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
        cache: Annotated[Path | None, typer.Option("--cache", help="Cache file.")] = None,
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


def _open_cache(path: Path | None, command: str) -> Any:
    import os

    from ragmeter.errors import UsageError
    from ragmeter.judge.cache import JudgeCache

    target = path or Path(os.environ.get("RAGMETER_JUDGE_CACHE") or ".ragmeter/judge-cache.sqlite")
    if not target.exists():
        raise UsageError(f"no judge cache at {target}", command=command)
    return JudgeCache(target)


def _run_judge(a: dict[str, Any]) -> int:
    import asyncio

    from ragmeter.errors import Interrupted, UsageError
    from ragmeter.io.jsonutil import dumps
    from ragmeter.io.judge import parse_key_map, read_samples, required_inputs
    from ragmeter.judge.client import FatalJudgeError
    from ragmeter.judge.config import load_config_file, resolve_config
    from ragmeter.judge.engine import aevaluate, llm_installed, plan_metrics

    loaded = load_config_file(a["config"]) if a["config"] is not None else None
    for w in loaded.warnings if loaded else ():
        _err(f"warning: {w}")
    flags = {
        "base_url": a["base_url"],
        "model": a["model"],
        "repeats": a["repeats"],
        "concurrency": a["concurrency"],
        "rpm": a["rpm"],
        "tpm": a["tpm"],
        "timeout_s": a["timeout"],
        "max_attempts": a["max_attempts"],
        "max_cost_usd": a["max_cost"],
        "price_in": a["price_in"],
        "price_out": a["price_out"],
        "structured": a["structured"],
        "per_chunk": True if a["per_chunk"] else None,
        "cache_requests": False if a["cache_no_requests"] else None,
    }
    if a["cache"] is not None:
        flags["cache_path"] = str(a["cache"])
    cfg = resolve_config(flags, settings=loaded.settings if loaded else None)
    if a["no_cache"]:
        import dataclasses

        cfg = dataclasses.replace(cfg, cache_path=None)

    metrics = list(a["metric"] or ()) or (loaded.metrics if loaded and loaded.metrics else None)
    if not metrics:
        from ragmeter import registry

        metrics = [m.name for m in registry.get_task("judge").metrics if m.default]
    plan = plan_metrics(metrics, cfg.rubrics)
    rubric_inputs = {r.name: r.inputs for r in cfg.rubrics}
    key_map = parse_key_map(a["key"] or ())

    # groups of (samples, metrics): one group, or with --format graphrag one for the questions
    # and one per step family (a step sample is judged only by its family)
    if a["fmt"] == "graphrag":
        from ragmeter.judge.graphrag import DEFAULT_METRICS, judge_groups, read_graphrag

        if not list(a["metric"] or ()) and not (loaded and loaded.metrics):
            metrics = list(DEFAULT_METRICS)
            plan = plan_metrics(metrics, cfg.rubrics)
        gr = read_graphrag(a["input_path"], reference=a["reference"], pipelines=plan.pipelines)
        groups = judge_groups(gr, plan.pipelines)
    else:
        gr = None
        groups = [
            (
                read_samples(
                    a["input_path"],
                    key_map=key_map,
                    required=required_inputs(plan.pipelines, rubric_inputs),
                ),
                metrics,
            )
        ]

    if a["dry_run"]:
        from ragmeter.judge.cache import JudgeCache
        from ragmeter.judge.estimate import estimate, format_estimate, merge_estimates

        db = None
        if cfg.cache_path is not None and Path(cfg.cache_path).exists():
            db = JudgeCache(cfg.cache_path)
        try:
            ests = [estimate(s, m, config=cfg, cache=db) for s, m in groups]
        finally:
            if db is not None:
                db.close()
        est = ests[0] if len(ests) == 1 else merge_estimates(ests, cfg)
        if a["as_json"]:
            print(dumps(est.to_dict(), indent=2))
        else:
            print(format_estimate(est))
        return 0

    configured = cfg.configured and llm_installed(cfg)
    if configured and cfg.max_cost_usd is not None:
        from ragmeter.judge.config import is_local_endpoint
        from ragmeter.judge.ledger import PriceTable

        price = PriceTable(cfg.prices, price_in=cfg.price_in, price_out=cfg.price_out).resolve(
            cfg.model, local=is_local_endpoint(cfg.effective_base_url)
        )
        if price is None:
            raise UsageError(
                f"--max-cost needs a price for model {cfg.model!r} "
                "(give --price-in and --price-out, or a price file)",
                command="judge",
            )

    partial = _partial_path(a["per_sample"], a["output"])
    if a["resume"] and partial is None:
        raise UsageError(
            "--resume needs --per-sample or --output (the partial file lives next to it)",
            command="judge",
        )
    done = _load_partial(partial) if (a["resume"] and partial is not None) else {}
    if partial is not None and not a["resume"] and partial.exists():
        partial.unlink()
    writer = _PartialWriter(partial if configured else None)

    bar = _progress(configured)
    task = None

    def on_progress(p: dict[str, Any]) -> None:
        if bar is not None and task is not None:
            bar.update(
                task,
                completed=p["done"],
                total=p["total"],
                info=f"calls {p['calls_sent']}  hits {p['cache_hits']}  ${p['usd']:.4f}",
            )

    finished = False
    try:
        if bar is not None:
            bar.start()
            task = bar.add_task("judge", total=1, info="")

        async def run_all() -> list[Any]:
            out = []
            for samples, group_metrics in groups:
                out.append(
                    await aevaluate(
                        samples,
                        group_metrics,
                        config=cfg,
                        no_claims_as=a["no_claims_as"],
                        refresh_cache=a["refresh_cache"],
                        retry_errors=a["retry_errors"],
                        resume=done,
                        on_outcome=writer,
                        on_progress=on_progress,
                    )
                )
            return out

        try:
            results = asyncio.run(run_all())
        except FatalJudgeError as exc:
            raise UsageError(str(exc), command="judge") from None
        except KeyboardInterrupt:
            kept = f"; finished samples in {partial}" if partial is not None else ""
            raise Interrupted(
                f"ragmeter judge: interrupted; finished calls are in the cache{kept}"
            ) from None
        finished = True
    finally:
        if bar is not None:
            bar.stop()
        writer.close(remove=False)

    for w in dict.fromkeys(w for r in results for w in r.warnings):
        _err(w)
    ledger_rows = [row for r in results for row in r.ledger_rows]
    if gr is not None:
        from ragmeter.judge.graphrag import graphrag_output

        summary, records = graphrag_output(gr, results)
    else:
        (result,) = results
        summary, records = result.summary_json(), result.records
    if a["per_sample"] is not None:
        _write_records(a["per_sample"], records)
    if a["ledger"] is not None:
        _write_jsonl(a["ledger"], ledger_rows)
    text = dumps(summary, indent=2)
    if a["output"] is not None:
        from ragmeter.io.files import atomic_write

        with atomic_write(a["output"]) as fh:
            fh.write(text + "\n")
    else:
        print(text)
    if finished:
        writer.close(remove=True)

    if a["statuses_to_fail"]:
        hit = {
            s
            for r in results
            for s in r.samples.column("status").to_pylist()
            if s in a["statuses_to_fail"]
        }
        if hit:
            _err(f"ragmeter judge: samples with status {', '.join(sorted(hit))} (--fail-on)")
            return 1
    return 0


# -- ragmeter answer-correctness (docs/steps.md) -------------------------------------------

AC_COLUMNS = ("Question", "Reference answer", "Actual answer")
AC_HEADER = ["#Reference", "#PTarget", "#Matching", "Reasoning", "Error"]


def _read_tsv(path: Path) -> list[tuple[int, list[str]]]:
    import csv

    from ragmeter.errors import InputError
    from ragmeter.io.files import open_text

    csv.field_size_limit(sys.maxsize)  # upstream fixed its field-size limit too (#91)
    name = str(path)
    rows: list[tuple[int, list[str]]] = []
    with open_text(name) as fh:
        reader = csv.reader(fh, delimiter="\t")
        try:
            header = next(reader, None)
            if header is None:
                raise InputError(
                    f"empty file (expected a header with {', '.join(AC_COLUMNS)})",
                    path=name,
                    line=1,
                )
            for col in AC_COLUMNS:
                if col not in header:
                    raise InputError(
                        f'missing column "{col}" (expected columns {", ".join(AC_COLUMNS)})',
                        path=name,
                        line=1,
                    )
            idx = [header.index(c) for c in AC_COLUMNS]
            need = max(idx) + 1
            start = reader.line_num + 1
            for row in reader:
                if not row:
                    start = reader.line_num + 1
                    continue
                if len(row) < need:
                    raise InputError(
                        f"{len(row)} fields (expected at least {need}: {', '.join(AC_COLUMNS)})",
                        path=name,
                        line=start,
                    )
                rows.append((start, [row[i] for i in idx]))
                start = reader.line_num + 1
        except csv.Error as exc:
            raise InputError(f"not valid TSV ({exc})", path=name, line=reader.line_num) from None
    if not rows:
        # a header alone is not an evaluation: writing a header-only TSV and exiting 0 would
        # read as "every row scored" to a script
        raise InputError(
            f"no samples (expected at least one row of {', '.join(AC_COLUMNS)} after the header)",
            path=name,
            line=2,
        )
    return rows


def _run_answer_correctness(
    in_file: Path, out_file: Path, config_path: Path | None, compat: str | None
) -> None:
    import asyncio
    import csv

    from ragmeter.errors import UsageError
    from ragmeter.io.files import atomic_write
    from ragmeter.judge.adapters import (
        BLANK_MESSAGE,
        correctness_prompt,
        steps_judge,
        validate_claims,
    )
    from ragmeter.judge.client import FatalJudgeError
    from ragmeter.judge.config import HINT, load_config_file, resolve_config

    if compat not in (None, "graphrag-eval-5", "graphrag-eval-6"):
        raise UsageError(
            f"--compat {compat!r} (expected graphrag-eval-5 or graphrag-eval-6)",
            command="answer-correctness",
        )
    prompt = None
    if config_path is not None:
        loaded = load_config_file(config_path)
        for w in loaded.warnings:
            _err(f"warning: {w}")
        data = loaded.graphrag or {}
        ac = data.get("answer_correctness")
        if isinstance(ac, dict) and ac.get("enabled") is False:
            raise UsageError(
                "answer correctness is disabled in the config (answer_correctness.enabled: false)",
                command="answer-correctness",
            )
        prompt = correctness_prompt(data)
        cfg = resolve_config(settings=loaded.settings)
    else:
        cfg = resolve_config()
    if not cfg.configured:
        raise UsageError(
            "no LLM is configured (give -c CONFIG with llm.generation, or "
            + HINT.split(": ", 1)[1].rstrip(".")
            + ")",
            command="answer-correctness",
        )
    rows = _read_tsv(in_file)
    v5 = compat == "graphrag-eval-5"

    async def main() -> list[list[str]]:
        judge = steps_judge(cfg, correctness_prompt=prompt)
        gate = asyncio.Semaphore(2 * cfg.concurrency)

        async def one(q: str, r: str, a: str) -> list[str]:
            if any(not s.strip() for s in (q, r, a)):
                return ["", "", "", "", BLANK_MESSAGE]
            async with gate:
                claims = await judge.answer_correctness(q, r, a)
            if "error" in claims:
                return ["", "", "", "", claims["error"]]
            problem = validate_claims(claims)
            if problem is not None:
                return ["", "", "", claims.get("reason", "") if v5 else "", problem]
            return [
                str(claims["reference"]),
                str(claims["actual"]),
                str(claims["matching"]),
                claims["reason"],
                "",
            ]

        try:
            return await asyncio.gather(*(one(*vals) for _, vals in rows))
        finally:
            await judge.aclose()

    try:
        out_rows = asyncio.run(main())
    except FatalJudgeError as exc:  # 401/403/404, exhausted quota: stop, nothing written
        raise UsageError(str(exc), command="answer-correctness") from None
    with atomic_write(out_file) as fh:
        writer = csv.writer(fh, delimiter="\t")
        writer.writerow(AC_HEADER)
        writer.writerows(out_rows)
