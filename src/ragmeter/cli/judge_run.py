"""What ``ragmeter judge`` does once its flags are checked: judge, resume, write, report.

The judge engine is imported inside :func:`_run_judge` so ``ragmeter --help`` stays fast.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any


def _err(line: str) -> None:
    print(line, file=sys.stderr)


def _progress(enabled: bool) -> Any:
    """A rich progress bar on stderr (only on a terminal), or ``None``."""
    if not enabled or not sys.stderr.isatty():
        return None
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

    from ragmeter.cli.console import transient_progress

    return transient_progress(
        TextColumn("judge"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[info]}", markup=False),  # model names and costs: text
        TimeElapsedColumn(),
    )


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


def _executor(a: dict[str, Any]) -> Any:
    """The Dask executor the flags or the environment name, or None to judge in-process."""
    from ragmeter.errors import UsageError
    from ragmeter.executors.options import settings_from_flags

    flags = {k: a.get(k) for k in ("executor", "workers", "scheduler", "partitions")}
    xsettings = settings_from_flags(
        "judge",
        (str(a["input_path"]),),
        worker_memory=a.get("worker_memory"),
        work_dir=a.get("work_dir"),
        keep_work=a.get("keep_work"),
        **flags,
    )
    if xsettings.is_local:
        return None
    if a["fmt"] == "graphrag" or a["resume"]:
        what = "--format graphrag" if a["fmt"] == "graphrag" else "--resume"
        raise UsageError(
            f"{what} does not run under --executor dask yet (expected the in-process "
            "executor; under Dask a re-run resumes from the work dir by itself)",
            command="judge",
        )
    return xsettings


def _run_judge(a: dict[str, Any]) -> int:
    import asyncio

    from ragmeter.errors import Interrupted, UsageError
    from ragmeter.io.jsonutil import dumps
    from ragmeter.io.judge import parse_key_map, read_samples, required_inputs
    from ragmeter.judge.client import FatalJudgeError
    from ragmeter.judge.config import load_config_file, resolve_config
    from ragmeter.judge.engine import aevaluate, llm_installed, plan_metrics

    xsettings = _executor(a)  # refused combinations are found before anything is read
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
        from ragmeter.judge.cache import is_cache_url
        from ragmeter.judge.cache_open import open_cache
        from ragmeter.judge.estimate import estimate, format_estimate, merge_estimates

        db = None
        if cfg.cache_path is not None and (
            is_cache_url(cfg.cache_path) or Path(cfg.cache_path).exists()
        ):
            db = open_cache(cfg.cache_path)
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
    if not configured:
        xsettings = None  # nothing to send: every metric is needs_llm, reported in-process
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
            if xsettings is not None:  # shards on workers, one coordinator (docs/scaleout.md)
                from ragmeter.executors.judge import judge_on

                options = {
                    "no_claims_as": a["no_claims_as"],
                    "refresh_cache": a["refresh_cache"],
                    "retry_errors": a["retry_errors"],
                }
                ((samples, group_metrics),) = groups
                judged, where = judge_on(
                    xsettings,
                    samples,
                    group_metrics,
                    cfg,
                    options=options,
                    on_outcome=writer,
                    on_progress=on_progress,
                )
                results = [judged]
            else:
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
        if xsettings is not None:
            summary["executor"] = where
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
