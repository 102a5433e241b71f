"""ragmeter's own MCP tools: thin layers over the library, returning the CLI's ``--json``.

``trec`` is ``ragmeter trec --format json``, ``grounded`` the object ``ragmeter grounded``
prints, ``steps`` the aggregates of ``ragmeter steps --json``, ``compare`` / ``gate`` / ``run``
/ ``list_runs`` / ``show_run`` the JSON of ``ragmeter compare``, ``gate``, ``run``, ``runs list``
and ``runs show``, ``list_metrics`` the JSON of ``ragmeter metrics``. Every file goes through
the roots rule; every store is the one the operator chose. No SDK module is imported here.
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Literal

from ragmeter.errors import UsageError
from ragmeter.mcp import progress
from ragmeter.mcp.paths import shown_as
from ragmeter.mcp.settings import Settings

__all__ = ["OwnTools"]


def _command_errors(command: str) -> Any:
    from ragmeter.cli.stores import command_errors

    return command_errors(command)


class OwnTools:
    """The tools that have no UltraRAG counterpart, bound to the server's settings."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    # -- helpers --------------------------------------------------------------------------

    def _files(self, **paths: str) -> tuple[dict[str, Path], dict[Path, str]]:
        resolved = {k: self.settings.roots.resolve(v) for k, v in paths.items()}
        return resolved, {resolved[k]: v for k, v in paths.items()}

    def _cap(self, out: dict[str, Any], key: str, tool: str) -> dict[str, Any]:
        """Per-sample content over ``max_rows``: the first rows, ``truncated``, the full file."""
        rows = out.get(key)
        limit = self.settings.max_rows
        if rows is None or len(rows) <= limit:
            return out
        out["truncated"] = True
        if not self.settings.read_only:
            from ragmeter.io.files import atomic_write
            from ragmeter.io.jsonutil import dumps

            stamp = self.settings.clock().strftime("%Y%m%dT%H%M%S%f")
            name = f"results/mcp/{tool}-{key}-{stamp}.json"
            with atomic_write(self.settings.roots.for_writing(name)) as fh:
                fh.write(dumps(rows, indent=2) + "\n")
            out["complete_file"] = name
        if isinstance(rows, dict):
            out[key] = dict(list(rows.items())[:limit])
        else:
            out[key] = list(rows)[:limit]
        return out

    # -- evaluation tools -----------------------------------------------------------------

    def trec(
        self,
        qrels_path: str,
        run_path: str,
        measures: list[str] | None = None,
        relevance_level: int = 1,
        complete: bool = False,
        max_docs: int | None = None,
        judged_only: bool = False,
        gain: Literal["linear", "exp"] = "linear",
        per_query: bool = False,
        qrels_format: Literal["trec", "tsv", "jsonl"] = "trec",
        run_format: Literal["trec", "jsonl"] = "trec",
        dedupe: Literal["first", "max"] | None = None,
    ) -> dict[str, Any]:
        """Score a retrieval run against qrels exactly like trec_eval 10.0 (ragmeter trec --json).

        qrels_path: relevance judgments (TREC qrels, TSV or JSONL).
        run_path: the ranked run (TREC or JSONL).
        measures: trec_eval or ir_measures names (map, P.5,10, nDCG@10, RR...; default official).
        relevance_level: lowest grade that counts as relevant (-l).
        complete: score judged queries missing from the run as 0 (-c).
        max_docs: keep the first N ranked documents per query (-M).
        judged_only: drop unjudged documents, then renumber the ranks (-J).
        gain: gain of ndcg and ndcg_cut: linear (trec_eval) or exp.
        per_query: add per-query values (capped at the server's row limit).
        qrels_format: trec, tsv or jsonl.
        run_format: trec or jsonl.
        dedupe: keep one line per duplicated (qid, docno): first or max (default: error).
        """
        from ragmeter.cli import trec_main as trec_cli

        files, names = self._files(qrels_path=qrels_path, run_path=run_path)
        argv: list[str] = []
        for m in measures or ["official"]:
            argv += ["-m", m]
        argv += ["-l", str(relevance_level), "--gain", gain, "--format", "json"]
        argv += ["--qrels-format", qrels_format, "--run-format", run_format]
        if complete:
            argv.append("-c")
        if max_docs is not None:
            argv += ["-M", str(max_docs)]
        if judged_only:
            argv.append("-J")
        if per_query:
            argv.append("-q")
        if dedupe is not None:
            argv += ["--dedupe", dedupe]
        argv += [str(files["qrels_path"]), str(files["run_path"])]
        with shown_as(names):
            try:
                text, _ = trec_cli._run(trec_cli._parse(argv))  # warnings: the document's own
            except trec_cli._Usage as exc:
                raise UsageError(str(exc), command="trec") from None
        doc = _renamed(json.loads(text), {str(k): v for k, v in names.items()})
        return self._cap(doc, "per_query", "trec") if per_query else doc

    def grounded(
        self,
        gold_path: str,
        trace_path: str,
        k: int = 5,
        gates: str = "precision=0.80,chr=0.75,under=0.05,over=0.10",
        refusal_token: str = "not in context",
        missing_trace: Literal["answered", "refused", "error"] = "answered",
        details: bool = False,
    ) -> dict[str, Any]:
        """Grounded QA: precision, citation hit rate, refusals and recall@k, with gates
        (ragmeter grounded). A failed gate is "pass": false, not an error.

        gold_path: gold JSONL (qid, answerable, gold_claim_substr, gold_citations).
        trace_path: trace JSONL (qid, retrieved_ids, answer_json).
        k: cutoff of recall@k.
        gates: precision>=, chr>=, under<=, over<= (and recall>=) as name=value pairs.
        refusal_token: the answer text that means "I refuse".
        missing_trace: a gold qid without trace counts as answered, refused or error.
        details: add the per-item records (capped at the server's row limit).
        """
        from ragmeter.answers import grounded as engine
        from ragmeter.io.jsonl import iter_jsonl

        try:
            engine.parse_gates(gates)
            if k < 1:
                raise UsageError(f"--k must be a positive integer, not {k}")
        except UsageError as exc:
            raise UsageError(exc.message, command="grounded") from None
        files, names = self._files(gold_path=gold_path, trace_path=trace_path)
        with shown_as(names):
            gold_rows = list(iter_jsonl(files["gold_path"]))
            trace_rows = list(iter_jsonl(files["trace_path"]))
            try:
                report = engine.score(
                    gold_rows,
                    trace_rows,
                    k=k,
                    gates=gates,
                    refusal_token=refusal_token,
                    missing_trace=missing_trace,
                    gold_path=gold_path,
                    trace_path=trace_path,
                )
            except UsageError as exc:
                if exc.command is None:
                    raise UsageError(exc.message, command="grounded") from None
                raise
        out = json.loads(report.to_json())
        out["warnings"] = [w.line() for w in report.warnings]
        out["exit_status"] = 0 if report.passed else 1
        if details:
            out["details"] = list(report.items)
            self._cap(out, "details", "grounded")
        return out

    def steps(
        self,
        reference_path: str,
        responses_path: str,
        compat: Literal["graphrag-eval-6", "graphrag-eval-5"] | None = None,
        on_missing: Literal["error", "error-sample"] = "error",
        check_names: bool = True,
        strict: bool = False,
        include_records: bool = False,
    ) -> dict[str, Any]:
        """Score an agent's tool-call steps against reference steps, graphrag-eval compatible
        (ragmeter steps --json): per-template, micro and macro aggregates.

        reference_path: reference dataset, YAML or JSON list of templates.
        responses_path: agent responses: JSONL, a JSON array, or an object keyed by question id.
        compat: reproduce graphrag-eval's numbers: graphrag-eval-6 or graphrag-eval-5.
        on_missing: a question without a response: error, or error-sample (scored as an error).
        check_names: reject near-miss spellings of special step names.
        strict: treat warnings as input errors.
        include_records: add the per-question records (capped at the server's row limit).
        """
        import asyncio

        from ragmeter.io import graphrag as gio
        from ragmeter.steps.aggregates import compute_aggregates
        from ragmeter.steps.modes import check_compat
        from ragmeter.steps.pipeline import evaluate

        mode = check_compat(compat)
        files, names = self._files(reference_path=reference_path, responses_path=responses_path)
        with shown_as(names):
            located = gio.load_reference(files["reference_path"])
            entries, responses_name = gio.load_responses(files["responses_path"])
            # LLM-judged keys need a judge config; a client cannot name one (docs/mcp.md)
            result = asyncio.run(
                evaluate(
                    located,
                    entries,
                    responses_name,
                    compat=mode,
                    config=None,
                    on_missing=on_missing,
                    check_names=check_names,
                    strict=strict,
                    progress=lambda done, total: progress.report(done, total, "steps"),
                )
            )
            summary = compute_aggregates(result.records, None, compat=compat)
        from ragmeter.io.jsonutil import to_jsonable

        out: dict[str, Any] = {"aggregates": to_jsonable(summary)}
        if include_records:
            out["records"] = to_jsonable(list(result.records))
            self._cap(out, "records", "steps")
        out["warnings"] = list(result.warnings)
        return out

    # -- stored runs ----------------------------------------------------------------------

    def _store(self, command: str) -> Any:
        from ragmeter.cli.stores import stored

        return stored(self.settings.store_url(), command)

    def compare(
        self,
        runs: list[str],
        metrics: list[str] | None = None,
        test: Literal["randomization", "t", "wilcoxon", "bootstrap"] = "randomization",
        correction: Literal["holm", "bonferroni", "bh", "by", "none"] = "holm",
        family: Literal["per_metric", "all"] = "per_metric",
        alpha: float = 0.05,
        ci: Literal["bca", "percentile", "basic"] | None = None,
        seed: int = 42,
        missing: Literal["error", "fill", "intersect"] = "error",
        format: Literal["dict", "ultrarag", "table"] = "dict",
    ) -> dict[str, Any]:
        """Compare stored runs with paired significance tests, corrections and effect sizes
        (ragmeter compare RUN RUN --json).

        runs: run ids, evaluation ids, unique prefixes, 'latest', or results/<id>/ folders.
        metrics: task.metric names (retrieval.nDCG@10, answers.f1; default: shared defaults).
        test: randomization, t, wilcoxon or bootstrap.
        correction: multiple-comparison correction: holm, bonferroni, bh, by or none.
        family: correct per metric or over all metrics.
        alpha: significance level.
        ci: bootstrap confidence interval of each difference: bca, percentile or basic.
        seed: seed of every random draw.
        missing: a sample one run lacks: error, fill (0.0) or intersect.
        format: dict (the CLI's JSON), ultrarag (exactly two runs) or table (text).
        """
        from ragmeter.cli import stored_runs as sr
        from ragmeter.stats import compare

        roots = self.settings.roots
        # a results/<id>/ folder is a path (checked against the roots); anything else is an id
        refs = [str(roots.resolve(r)) if (roots.first / r).exists() else r for r in runs]
        with _command_errors("compare"), ExitStack() as stack:
            loaded = sr.load_runs(refs, self.settings.store_url(), stack)
            systems = sr.system_names(loaded, [])
            keys = sr.resolve_metrics(metrics, loaded) if metrics else sr.default_metrics(loaded)
            if not keys:
                raise UsageError(
                    "the runs share no default sample-level metric; name them in metrics",
                    command="compare",
                )
            scores, names, info, directions = sr.stored_scores(
                loaded, systems, keys, required=bool(metrics)
            )
            if format == "ultrarag" and len(systems) != 2:
                raise UsageError(
                    f"the UltraRAG output compares 2 runs (A = first, B = second), got "
                    f"{len(systems)}",
                    command="compare",
                )
            report = compare(
                scores,
                metrics=names,
                test=test,
                correction=correction,
                family=family,
                alpha=alpha,
                seed=seed,
                missing=missing,
                fill_value=0.0 if missing == "fill" else None,
                ci=ci,
                directions=directions,
                on_progress=_test_progress,
            )
        if format == "ultrarag":
            return report.to_ultrarag(systems[0], systems[1], alpha=alpha)
        if format == "table":
            return {"text": report.to_table()}
        data = report.to_dict()
        data["inputs"] = info
        return data

    def gate(
        self,
        run: str,
        baseline: str | None = None,
        rules: list[str] | None = None,
        strict: bool = False,
    ) -> dict[str, Any]:
        """Apply gate rules to a stored run (ragmeter gate --json): PASS/FAIL/SKIP per rule.
        A failed gate is "pass": false with exit_status 1, not an error.

        run: a run id, evaluation id, unique prefix or 'latest'.
        baseline: the run that no_regression rules compare against.
        rules: TASK.METRIC>=X, TASK.METRIC<=X or no_regression:TASK.METRIC
            (default: the run's own gates).
        strict: count SKIP as FAIL.
        """
        from ragmeter.runner.stored_gates import gate_stored

        with self._store("gate") as handle:
            report = gate_stored(
                handle, [run], baseline=baseline, rules=rules or (), strict=strict or None
            )
        data = report.to_dict()
        data["pass"] = bool(report.passed)
        data["exit_status"] = 0 if report.passed else 1
        return data

    def run(
        self,
        config_path: str | None = None,
        report: bool = False,
        store: str | None = None,
        max_cost_usd: float | None = None,
    ) -> dict[str, Any]:
        """Run a whole evaluation config (ragmeter run --json): every system on every task,
        comparisons, gates, stored runs. A failed gate is "pass": false, not an error.

        config_path: the ragmeter.yaml to run (default: the server's --config).
        report: also write report.html into the results folder.
        store: results store URL; only the one the operator configured is accepted.
        max_cost_usd: judge budget of this run; capped at the server's --judge-max-cost.
        """
        from ragmeter.runner.config import load_config
        from ragmeter.runner.pipeline import run_pipeline

        s = self.settings
        s.refuse_write("run", "run")
        allowed = s.store_url()
        if store is not None and store != allowed:
            raise UsageError(
                f"run: store {store!r} is not the server's store (only {allowed} is allowed)",
                command="mcp",
            )
        if config_path is None:
            if s.config is None:
                raise UsageError(
                    "run: no config_path given and the server has no --config", command="mcp"
                )
            path, shown = s.config, str(s.config)
        else:
            path, shown = s.roots.resolve(config_path), config_path
        with shown_as({path: shown}):
            cfg = load_config(path)
            own = s.config is not None and Path(path).resolve() == Path(s.config).resolve()
            if cfg.model.judge is not None and not own:
                raise UsageError(
                    f"run: {shown} has a judge: block; the judge's endpoint, model and key "
                    "come only from the server's --config",
                    command="mcp",
                )
            budget = _cap_judge_budget(cfg, s.judge_max_cost, max_cost_usd)
            result = run_pipeline(
                cfg,
                cache_dir=s.roots.first / ".ragmeter" / "cache",
                progress=progress.RunProgress(progress.current()),
            )
            saved = result.save(allowed, results_dir=s.roots.first / "results")
        out = dict(result.summary)
        out["run_ids"] = _run_ids(saved, out)
        out["results_dir"] = s.roots.display(s.roots.first / "results" / result.evaluation_id)
        if report:
            from ragmeter.report import write_evaluation_report

            out["report_path"] = s.roots.display(Path(write_evaluation_report(result)))
        if budget is not None:
            out["judge_budget_usd"] = budget
        out["pass"] = result.exit_status == 0
        out["exit_status"] = result.exit_status
        return out

    def list_runs(
        self,
        project: str | None = None,
        system: str | None = None,
        tag: str | None = None,
        limit: int = 20,
    ) -> dict[str, Any]:
        """Stored runs, newest first (ragmeter runs list --json), under "runs".

        project: only this project.
        system: only this system.
        tag: only runs with this tag.
        limit: at most this many runs (0: all).
        """
        with self._store("runs list") as handle:
            rows = handle.list_runs(project=project, system=system, tag=tag, limit=limit or None)
        return {"runs": rows}

    def show_run(
        self, run_id: str, metrics: list[str] | None = None, strata: bool = False
    ) -> dict[str, Any]:
        """One stored run: fields, tasks, aggregates with n, CI and status counts, comparisons
        and gate outcomes (ragmeter runs show --json), without per-sample values.

        run_id: a run id, unique prefix or 'latest'.
        metrics: only these aggregates, as task.metric (retrieval.nDCG@10, answers.f1).
        strata: also the per-stratum aggregates.
        """
        from ragmeter import registry

        with self._store("runs show") as handle:
            run = handle.resolve_one(run_id)
            data = dict(handle.export(run, samples=False))
        rows = [r for r in data.get("metrics", []) if strata or r.get("factor") is None]
        if metrics:
            wanted = set()
            for name in metrics:
                task, _, metric = name.partition(".")
                try:
                    wanted.add((task, registry.resolve(metric, task=task).canonical))
                except registry.UnknownMetricError as exc:
                    raise UsageError(f"{name}: {exc.message}", command="runs show") from None
            rows = [r for r in rows if (r["task"], r["metric"]) in wanted]
        data["metrics"] = rows
        return data

    def list_metrics(self, task: str | None = None) -> dict[str, Any]:
        """The metrics registry (ragmeter metrics --json), under "metrics": canonical name,
        aliases, direction, range, formula, literature citation, reference implementation, and
        whether an LLM or embeddings are needed.

        task: only this task (retrieval, answers, grounded, judge, steps, ner, ...).
        """
        from ragmeter import registry
        from ragmeter.io.jsonutil import to_jsonable

        return {"metrics": to_jsonable(registry.metric_records(task))}


def _test_progress(done: int, total: int) -> None:
    """compare's per-test callback: stop a cancelled call, report tests done so far."""
    progress.check()
    progress.report(done, total, "significance tests")


def _cap_judge_budget(cfg: Any, cap: float, asked: float | None) -> float | None:
    """The ``judge`` task spends at most the server's cap: the config's own
    ``tasks.judge.max_cost_usd`` and the client's ``max_cost_usd`` may only lower it."""
    if asked is not None and asked < 0:
        raise UsageError(f"run: max_cost_usd must be ≥ 0, not {asked}", command="mcp")
    opts = cfg.tasks.get("judge")
    if opts is None:
        return None
    budget = min(v for v in (cap, asked, opts.max_cost_usd) if v is not None)
    cfg.tasks["judge"] = opts.model_copy(update={"max_cost_usd": budget})
    return budget


def _renamed(obj: Any, names: dict[str, str]) -> Any:
    """Every string equal to a resolved path replaced by the client's spelling of it."""
    if isinstance(obj, str):
        for resolved in sorted(names, key=len, reverse=True):
            obj = obj.replace(resolved, names[resolved])
        return obj
    if isinstance(obj, dict):
        return {k: _renamed(v, names) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_renamed(v, names) for v in obj]
    return obj


def _run_ids(saved: Any, summary: dict[str, Any]) -> list[str]:
    """The stored run ids of one evaluation, from what ``save`` returned or the summary."""
    if isinstance(saved, dict):
        ids = saved.get("run_ids") or saved.get("runs")
        if isinstance(ids, dict):
            return [str(v) for v in ids.values()]
        if isinstance(ids, list):
            return [str(v) for v in ids]
    systems = summary.get("systems")
    if isinstance(systems, dict):
        return [str(v["run_id"]) for v in systems.values() if isinstance(v, dict) and "run_id" in v]
    return []
