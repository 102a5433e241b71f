"""The report's content, read from the store: one JSON-ready dict that the templates render.

:func:`build_report` gathers everything ``docs/dashboard.md`` ("What the sections show") lists
for some runs (usually the systems of one evaluation): the header, per-task metric tables with
CIs and the best value of each row marked, comparisons against the baseline, per-stratum
breakdowns, error analysis and retrieval distributions with the precision-recall curve. The
dashboard's run page shows the same dict for one run, and its ``.json`` form is this dict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any

from ragmeter._version import __version__
from ragmeter.report import analysis, distributions, error_analysis
from ragmeter.report.common import (
    Charts,
    all_metrics,
    metric_info,
    num,
    parse_detail,
    record_summary,
    task_order_key,
)
from ragmeter.store import Store, read
from ragmeter.store.reader import StoreReader
from ragmeter.store.rows import RUN_FIELDS

__all__ = [
    "build_report",
    "metric_info",
    "parse_detail",
    "record_summary",
    "task_order_key",
]

MISSING_LEVEL = "__missing__"


def _run_summary(run: Mapping[str, Any], index: int) -> dict[str, Any]:
    out = {k: run.get(k) for k in RUN_FIELDS}
    out["series"] = index
    return out


def _verdict(statuses: Sequence[str | None]) -> str | None:
    present = [s for s in statuses if s]
    if not present:
        return None
    if "fail" in present:
        return "fail"
    return "pass" if "pass" in present else "skip"


def _cell(row: Mapping[str, Any] | None) -> dict[str, Any]:
    if row is None:
        return {"value": None, "n": None, "ci_low": None, "ci_high": None, "reason": "not run"}
    return {
        "value": row["value"],
        "n": row["n"],
        "ci_low": row["ci_low"],
        "ci_high": row["ci_high"],
        "reason": row["reason"],
        "status_counts": row["status_counts"],
    }


def build_report(
    store: Store | Any,
    run_ids: Sequence[str],
    *,
    worst: int = 5,
    bins: int = 20,
    title: str | None = None,
    derive_limit: int | None = None,
) -> dict[str, Any]:
    """Everything the report shows for ``run_ids`` (resolved run ids, in column order).

    ``derive_limit``: when the engine stored no confusion matrix or NER counts, they are
    counted from per-sample details, which reads the whole series; above this many rows that
    is left for a request of its own (the dashboard's budget), ``None`` always counts (report).

    ``store`` is a :class:`~ragmeter.store.Store` or a reader of
    :mod:`ragmeter.store.reader` (e.g. a :class:`~ragmeter.store.memory.MemoryReader` over runs
    that were not stored).
    """
    if isinstance(store, Store):
        store = StoreReader(store)
    if not run_ids:
        raise read.NotFound("no runs to report on")
    run_ids = list(dict.fromkeys(run_ids))
    charts = Charts()
    full = {rid: store.get_run(rid, full=True) for rid in run_ids}
    runs = [_run_summary(full[rid], i) for i, rid in enumerate(run_ids)]
    systems = {r["id"]: r["system"] for r in runs}
    tasks_by_run = {rid: {t["task"]: t for t in store.tasks(rid)} for rid in run_ids}
    metric_rows = {rid: store.metrics(rid, strata=True) for rid in run_ids}
    with store.connected() as reader:
        task_order = _task_order(tasks_by_run, metric_rows, run_ids)
        overall = {
            rid: {(m["task"], m["metric"]): m for m in metric_rows[rid] if m["factor"] is None}
            for rid in run_ids
        }
        asked = _asked(tasks_by_run, overall, run_ids, task_order)
        with_rows = {rid: reader.series_with_rows(rid, overall[rid].keys()) for rid in run_ids}
        tasks = _task_tables(task_order, tasks_by_run, overall, asked, run_ids)
        strata = _strata(task_order, metric_rows, asked, run_ids, runs, charts)
        errors = error_analysis.errors(
            reader,
            task_order,
            tasks_by_run,
            overall,
            asked,
            with_rows,
            runs,
            worst,
            derive_limit,
        )
        retrieval = distributions.retrieval(
            reader, overall, asked, with_rows, runs, charts, bins, tasks_by_run
        )
    series = []
    for task in task_order:
        names = [*asked[task], *all_metrics(task, overall, run_ids)]
        for name in dict.fromkeys(names):
            if any((task, name) in with_rows[rid] for rid in run_ids):
                series.append({"task": task, "metric": name, "name": f"{task}.{name}"})
    comparisons = _comparisons(
        store, runs, systems, {rid: full[rid].get("config") for rid in run_ids}
    )
    gates = [
        {"run_id": r["id"], "system": r["system"], "outcomes": store.gates(r["id"])} for r in runs
    ]
    projects = list(dict.fromkeys(r["project"] for r in runs))
    datasets = list(
        {
            (r["dataset_path"], r["dataset_hash"], r["dataset_split"], r["n_samples"]): None
            for r in runs
        }
    )
    if title is None:
        title = " · ".join(projects)
    return {
        "format": "ragmeter-report/1",
        "title": title,
        "generated_at": datetime.now(timezone.utc)
        .isoformat(timespec="seconds")
        .replace("+00:00", "Z"),
        "ragmeter_version": __version__,
        "store": store.url,
        "runs": runs,
        "header": {
            "projects": projects,
            "evaluations": list(dict.fromkeys(r["evaluation_id"] for r in runs)),
            "datasets": [
                {"path": p, "sha256": h, "split": s, "n_samples": n} for p, h, s, n in datasets
            ],
            "verdict": _verdict([r["gate_status"] for r in runs]),
            "stratify_by": list(
                dict.fromkeys(
                    f for rid in run_ids for f in full[rid]["metadata"].get("stratify_by", [])
                )
            ),
            "system_calls": _system_calls(runs, full),
        },
        "tasks": tasks,
        "comparisons": comparisons,
        "strata": strata,
        "errors": errors,
        "retrieval": retrieval,
        "gates": gates,
        "series": series,
        "charts": charts.specs,
    }


def _system_calls(
    runs: Sequence[Mapping[str, Any]], full: Mapping[str, Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Live systems' calls per run and method: calls made, cache hits, errors, wall time."""
    out = []
    for r in runs:
        meta = full[r["id"]].get("metadata") or {}
        stats = meta.get("system_calls")
        if not isinstance(stats, Mapping):
            continue
        call = meta.get("system_call") or {}
        out.append(
            {
                "run_id": r["id"],
                "system": r["system"],
                "call": call.get("call"),
                "init_keys": list(call.get("init_keys") or []),
                "version": call.get("version"),
                "methods": [{"method": m, **dict(v)} for m, v in stats.items()],
            }
        )
    return out


def _task_order(
    tasks_by_run: Mapping[str, Mapping[str, Any]],
    metric_rows: Mapping[str, Sequence[Mapping[str, Any]]],
    run_ids: Sequence[str],
) -> list[str]:
    names = {t for rid in run_ids for t in tasks_by_run[rid]}
    names |= {m["task"] for rid in run_ids for m in metric_rows[rid]}
    return sorted(names, key=task_order_key)


def _asked(
    tasks_by_run: Mapping[str, Mapping[str, Any]],
    overall: Mapping[str, Mapping[tuple[str, str], Any]],
    run_ids: Sequence[str],
    task_order: Sequence[str],
) -> dict[str, list[str]]:
    """Per task, the metrics asked for (the config's order), then every other aggregate."""
    out: dict[str, list[str]] = {}
    for task in task_order:
        names: list[str] = []
        for rid in run_ids:
            t = tasks_by_run[rid].get(task)
            names.extend(t["metrics"] if t else [])
        names = list(dict.fromkeys(names))
        out[task] = names
    return out


def _task_tables(
    task_order: Sequence[str],
    tasks_by_run: Mapping[str, Mapping[str, Any]],
    overall: Mapping[str, Mapping[tuple[str, str], Any]],
    asked: Mapping[str, Sequence[str]],
    run_ids: Sequence[str],
) -> list[dict[str, Any]]:
    out = []
    for task in task_order:
        present = all_metrics(task, overall, run_ids)
        # the 11 IPrec@r points have their own table and curve; they stay in "more values"
        main = [m for m in asked[task] if m in present and analysis.iprec_point(m) is None]
        main = main or [m for m in present if analysis.iprec_point(m) is None][:8]
        rest = [m for m in present if m not in main]
        status = []
        for rid in run_ids:
            t = tasks_by_run[rid].get(task)
            status.append(
                {
                    "status": t["status"] if t else "absent",
                    "reason": t["reason"] if t else "task not configured for this run",
                    "reused": bool(t and t["reused"]),
                    "warnings": list(t["warnings"]) if t else [],
                    "n_units": t["n_units"] if t else None,
                }
            )

        def rows(names: Sequence[str], task: str = task) -> list[dict[str, Any]]:
            result = []
            for name in names:
                info = metric_info(task, name)
                cells = [_cell(overall[rid].get((task, name))) for rid in run_ids]
                flags = analysis.best_flags([c["value"] for c in cells], info["direction"])
                for c, best in zip(cells, flags, strict=True):
                    c["best"] = best
                result.append({**info, "cells": cells})
            return result

        out.append(
            {
                "task": task,
                "summary": _task_summary(task),
                "runs": status,
                "metrics": rows(main),
                "more_metrics": rows(rest),
            }
        )
    return out


@lru_cache(maxsize=64)
def _task_summary(task: str) -> str:
    from ragmeter import registry

    try:
        return registry.get_task(task).summary
    except Exception:
        return ""


def _strata(
    task_order: Sequence[str],
    metric_rows: Mapping[str, Sequence[Mapping[str, Any]]],
    asked: Mapping[str, Sequence[str]],
    run_ids: Sequence[str],
    runs: Sequence[Mapping[str, Any]],
    charts: Charts,
) -> list[dict[str, Any]]:
    # {(task, factor): {level: {metric: {rid: row}}}}
    grouped: dict[tuple[str, str], dict[str, dict[str, dict[str, Any]]]] = {}
    for rid in run_ids:
        for m in metric_rows[rid]:
            if m["factor"] is None:
                continue
            levels = grouped.setdefault((m["task"], m["factor"]), {})
            levels.setdefault(m["level"], {}).setdefault(m["metric"], {})[rid] = m
    out = []
    for task in task_order:
        for (t, factor), levels in grouped.items():
            if t != task:
                continue
            present = list(dict.fromkeys(name for lv in levels.values() for name in lv))
            metrics = [m for m in asked[task] if m in present] or present[:4]
            level_names = sorted(levels, key=lambda lv: (lv == MISSING_LEVEL, lv))
            rows = []
            for lv in level_names:
                cells = []
                for name in metrics:
                    for rid in run_ids:
                        row = levels[lv].get(name, {}).get(rid)
                        cells.append(
                            {
                                "value": row["value"] if row else None,
                                "n": row["n"] if row else None,
                                "reason": row["reason"] if row else None,
                            }
                        )
                rows.append(
                    {
                        "level": lv,
                        "label": "(missing)" if lv == MISSING_LEVEL else lv,
                        "cells": cells,
                    }
                )
            headline = metrics[0] if metrics else None
            chart = None
            if headline is not None:
                info = metric_info(task, headline)
                chart = charts.add(
                    {
                        "kind": "bars",
                        "title": f"{task}.{headline} by {factor}",
                        "categories": [r["label"] for r in rows],
                        "category_label": factor,
                        "y_label": f"{task}.{headline}",
                        "y_range": info["range"],
                        "series": [
                            {
                                "label": runs[i]["system"],
                                "color": runs[i]["series"],
                                "values": [
                                    num(levels[lv].get(headline, {}).get(rid, {}).get("value"))
                                    for lv in level_names
                                ],
                            }
                            for i, rid in enumerate(run_ids)
                        ],
                    }
                )
            out.append(
                {
                    "task": task,
                    "factor": factor,
                    "metrics": metrics,
                    "levels": rows,
                    "chart": chart,
                    "chart_metric": headline,
                }
            )
    return out


def _comparisons(
    store: Any,
    runs: Sequence[Mapping[str, Any]],
    systems: Mapping[str, str],
    configs: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    out = []
    for r in runs:
        rows = store.comparisons(r["id"])
        if not rows:
            continue
        by_baseline: dict[str, list[dict[str, Any]]] = {}
        for c in rows:
            info = metric_info(c["task"], c["metric"])
            c = dict(c)
            c["direction"] = info["direction"]
            c["tooltip"] = info["tooltip"]
            c["verdict"] = _comparison_verdict(c, info["direction"])
            c["ci_reason"] = analysis.ci_reason(c, (configs or {}).get(r["id"]))
            by_baseline.setdefault(c["baseline_run_id"], []).append(c)
        for baseline, items in by_baseline.items():
            out.append(
                {
                    "run_id": r["id"],
                    "system": r["system"],
                    "baseline_run_id": baseline,
                    "baseline_system": systems.get(baseline) or _system_of(store, baseline),
                    "rows": items,
                }
            )
    return out


def _system_of(store: Any, run_id: str) -> str:
    try:
        return store.get_run(run_id, full=False)["system"]
    except Exception:
        return run_id


def _comparison_verdict(c: Mapping[str, Any], direction: str) -> str | None:
    """``better`` / ``worse`` for a significant difference in a directed metric."""
    if (
        not c.get("significant")
        or c.get("mean_diff") is None
        or direction
        not in (
            "higher",
            "lower",
        )
    ):
        return None
    up = c["mean_diff"] > 0
    return "better" if up == (direction == "higher") else "worse"
