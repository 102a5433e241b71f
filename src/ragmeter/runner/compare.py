"""Comparisons against the baseline (docs/runner.md; docs/stats.md).

Every system other than the baseline is compared with it on each compared metric:

- a sample-level metric (registry ``level: sample``): the configured paired test
  (:func:`ragmeter.stats.paired_test`) on the per-sample values both runs scored (samples one
  run could not score are left out, ``missing="intersect"``, and counted);
- a corpus-level metric (micro F1, macro F1, NIL F1): document resampling
  (:func:`ragmeter.stats.corpus_test`, docs/stats.md) on the additive per-unit statistics the
  task's adapter extracts (:meth:`TaskAdapter.sufficient_stats`); a corpus-level metric
  without them is reported with the reason and not tested.

Each row has the mean difference (run − baseline), Cohen's d_z, an optional bootstrap CI of the
difference (``compare.ci``) and the p-value corrected over the family (``per_metric``: every
system compared with that baseline on one metric; ``all``: every system and metric).
"""

from __future__ import annotations

import importlib.util
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from ragmeter import registry
from ragmeter.result import Result

__all__ = ["compare_results", "compared_metrics", "correct", "run_comparisons"]


def compared_metrics(cfg: Any) -> list[tuple[str, str]]:
    """(task, canonical) pairs to compare: ``compare.metrics``, else every metric asked for."""
    pairs: list[tuple[str, str]] = []
    if cfg.compare_metrics is not None:
        pairs.extend((m.task, m.canonical) for m in cfg.compare_metrics)
    else:
        for task, metrics in cfg.metrics.items():
            pairs.extend((task, m.canonical) for m in metrics)
    return list(dict.fromkeys(pairs))


def _level(task: str, metric: str) -> str:
    try:
        return registry.resolve(metric, task=task).definition.level
    except registry.UnknownMetricError:
        return "sample"


def _row(task: str, metric: str, settings: Any, **fields: Any) -> dict[str, Any]:
    return {
        "task": task,
        "metric": metric,
        "test": settings.test,
        "n": None,
        "mean": None,
        "baseline_mean": None,
        "mean_diff": None,
        "statistic": None,
        "p_value": None,
        "p_adjusted": None,
        "correction": settings.correction,
        "alpha": settings.alpha,
        "significant": None,
        "ci_low": None,
        "ci_high": None,
        "effect_size": None,
        "seed": settings.seed,
        "degenerate": None,
        "reason": None,
        "detail": None,
        **fields,
    }


def _from_test(row: dict[str, Any], test: Any) -> dict[str, Any]:
    es = test.effect_size or {}
    row.update(
        test=test.test,
        n=test.n,
        mean=test.mean_a,
        baseline_mean=test.mean_b,
        mean_diff=test.mean_diff,
        statistic=test.statistic,
        p_value=test.p_value,
        significant=test.significant,
        ci_low=test.ci.low if test.ci is not None else None,
        ci_high=test.ci.high if test.ci is not None else None,
        effect_size=es.get("cohens_dz"),
        degenerate=test.degenerate,
        reason=test.reason,
        detail=test.to_dict(),
    )
    if es.get("cohens_dz") is None and es.get("reason") and not row["reason"]:
        # e.g. every sample gained the same amount (up to floating-point noise): no d_z
        row["reason"] = f"no effect size: {es['reason']}"
    return row


def compare_results(
    task: str,
    metric: str,
    run: Result,
    baseline: Result,
    settings: Any,
    adapter: Any = None,
) -> dict[str, Any]:
    """One comparison row (uncorrected) of ``metric`` between two task Results."""
    from ragmeter import stats

    row = _row(task, metric, settings)
    level = _level(task, metric)
    has_rows = metric in run.metrics and metric in baseline.metrics
    if level == "sample" and has_rows:
        a, b = run.values(metric), baseline.values(metric)
        common = set(a) & set(b)
        if len(common) < 2:
            row["reason"] = f"{len(common)} samples scored by both runs (a test needs 2)"
            return row
        options: dict[str, Any] = {"missing": "intersect"}
        if settings.test == "randomization":
            options.update(n_resamples=settings.n_resamples, seed=settings.seed)
        if settings.ci:
            options["ci"] = settings.ci
        try:
            test = stats.paired_test(a, b, test=settings.test, alpha=settings.alpha, **options)
        except TypeError:  # a test without ci/seed options
            options.pop("ci", None)
            test = stats.paired_test(a, b, test=settings.test, alpha=settings.alpha, **options)
        _from_test(row, test)
        dropped = len(set(a) | set(b)) - len(common)
        if dropped:
            row["reason"] = f"{dropped} samples scored by only one run were left out" + (
                f"; {row['reason']}" if row["reason"] else ""
            )
        return row
    suff = adapter.sufficient_stats(metric, run, baseline) if adapter is not None else None
    if suff is None:
        row["reason"] = (
            f"{task}.{metric} is corpus-level and has no document-resampling test"
            if level == "corpus" or not has_rows
            else f"{task}.{metric} has no per-sample values"
        )
        return row
    docs_a, docs_b, aggregate = suff
    common = set(docs_a) & set(docs_b)
    if len(common) < 2:
        row["reason"] = f"{len(common)} units in both runs (a test needs 2)"
        return row
    test = stats.corpus_test(
        {k: docs_a[k] for k in common},
        {k: docs_b[k] for k in common},
        aggregate=aggregate,
        test="randomization",
        n_resamples=settings.n_resamples,
        seed=settings.seed,
        ci_method=None,
        alpha=settings.alpha,
    )
    _from_test(row, test)
    row["test"] = test.test
    if settings.ci:
        ci = stats.corpus_test(
            {k: docs_a[k] for k in common},
            {k: docs_b[k] for k in common},
            aggregate=aggregate,
            test="bootstrap",
            n_resamples=settings.n_resamples,
            seed=settings.seed,
            ci_method=settings.ci,
            alpha=settings.alpha,
        ).ci
        if ci is not None:
            row["ci_low"], row["ci_high"] = ci.low, ci.high
    return row


def correct(rows: list[dict[str, Any]], settings: Any) -> list[dict[str, Any]]:
    """Set ``p_adjusted`` and ``significant`` over the family (``compare.family``)."""
    from ragmeter import stats

    families: dict[Any, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        if r["p_value"] is None:
            continue
        key = (
            (r["baseline"],)
            if settings.family == "all"
            else (r["baseline"], r["task"], r["metric"])
        )
        families[key].append(i)
    for members in families.values():
        adjusted = stats.adjust(
            [rows[i]["p_value"] for i in members], settings.correction, alpha=settings.alpha
        )
        for j, i in enumerate(members):
            rows[i]["p_adjusted"] = adjusted.p_adjusted[j]
            rows[i]["significant"] = bool(adjusted.reject[j])
            rows[i]["family_size"] = adjusted.m
    return rows


def run_comparisons(
    cfg: Any, system_runs: Mapping[str, Any], dispatch: Any = None
) -> tuple[list[dict[str, Any]], list[str]]:
    """Comparison rows of an evaluation and notes on what was left out.

    Every system is compared with ``compare.baseline`` on the compared metrics, and with the
    baseline of each no-regression rule on that rule's metrics. With a remote ``dispatch``
    (:class:`~ragmeter.runner.dispatch.UnitDispatcher`) each test is one shard on its executor;
    the corrections are computed here either way.
    """
    from ragmeter.runner.config import CompareConfig
    from ragmeter.runner.tasks import get_adapter

    wanted: dict[str, list[tuple[str, str]]] = defaultdict(list)
    if cfg.baseline is not None:
        wanted[cfg.baseline].extend(compared_metrics(cfg))
    for rule in cfg.rules:
        if rule.kind == "no_regression" and rule.canonical is not None:
            wanted[rule.baseline].append((rule.task, rule.canonical))
    if not wanted:
        return [], []
    if importlib.util.find_spec("ragmeter.stats") is None:
        return [], ["comparisons skipped: ragmeter.stats is not part of this build"]
    settings = cfg.model.compare or CompareConfig()
    rows: list[dict[str, Any]] = []
    tests: list[tuple[int, tuple[Any, ...], dict[str, str]]] = []
    for baseline, pairs in wanted.items():
        base_run = system_runs[baseline]
        for name, srun in system_runs.items():
            if name == baseline:
                continue
            for task, metric in dict.fromkeys(pairs):
                mine, theirs = srun.tasks.get(task), base_run.tasks.get(task)
                common = {"system": name, "baseline": baseline}
                if mine is None or theirs is None or mine.result is None or theirs.result is None:
                    why = next(
                        (f"{t.system}: {t.reason}" for t in (mine, theirs) if t and t.reason),
                        f"task {task} has no result for both systems",
                    )
                    rows.append(_row(task, metric, settings, reason=why, **common))
                    continue
                if mine.status != "ok" or theirs.status != "ok":
                    reason = mine.reason if mine.status != "ok" else theirs.reason
                    rows.append(_row(task, metric, settings, reason=reason, **common))
                    continue
                tests.append((len(rows), (task, metric, mine.result, theirs.result), common))
                rows.append(common)
    calls = [(*args, settings) for _, args, _ in tests]
    if dispatch is not None and dispatch.remote:
        done = dispatch.map(compare_row, calls, "comparisons")
    else:
        done = [compare_results(*c[:5], get_adapter(c[0])) for c in calls]
    for (i, _, common), row in zip(tests, done, strict=True):
        rows[i] = {**row, **common}
    return correct(rows, settings), []


def compare_row(
    task: str, metric: str, run: Result, baseline: Result, settings: Any
) -> dict[str, Any]:
    """One uncorrected comparison row (:func:`compare_results`)."""
    from ragmeter.runner.tasks import get_adapter

    return compare_results(task, metric, run, baseline, settings, get_adapter(task))
