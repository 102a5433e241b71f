"""The report's content, read from the store: one JSON-ready dict that the templates render.

:func:`build_report` gathers everything ``docs/dashboard.md`` ("What the sections show") lists
for some runs (usually the systems of one evaluation): the header, per-task metric tables with
CIs and the best value of each row marked, comparisons against the baseline, per-stratum
breakdowns, error analysis and retrieval distributions with the precision-recall curve. The
dashboard's run page shows the same dict for one run, and its ``.json`` form is this dict.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any

from ragmeter import status as st
from ragmeter._version import __version__
from ragmeter.report import analysis
from ragmeter.store import Store, read
from ragmeter.store.store import RUN_FIELDS

__all__ = ["build_report", "metric_info", "parse_detail", "task_order_key"]

MISSING_LEVEL = "__missing__"


@lru_cache(maxsize=4096)
def _registry_info(task: str, metric: str) -> tuple[str, str, str, float | None, float | None]:
    from ragmeter import registry

    try:
        d = registry.resolve(metric, task=task).definition
    except Exception:  # engine not in this build, or a report key path the registry lacks
        return ("higher", "", "sample", None, None)
    lo, hi = d.range
    return (d.direction, d.summary, d.level, lo, hi)


def task_order_key(task: str) -> tuple[int, str]:
    """Sort key of task names: the registry's runner order, then any other task by name."""
    from ragmeter.registry import TASK_PROVIDERS

    names = list(TASK_PROVIDERS)
    return (names.index(task) if task in names else len(names), task)


def metric_info(task: str, metric: str) -> dict[str, Any]:
    """Direction, summary, level and range of a metric from the registry (the report keeps no
    list of its own); unknown metrics count as higher-is-better sample-level values."""
    direction, summary, level, lo, hi = _registry_info(task, metric)
    if analysis.iprec_point(metric) is not None:
        lo, hi = 0.0, 1.0
    return {
        "task": task,
        "metric": metric,
        "name": f"{task}.{metric}",
        "direction": direction,
        "summary": summary,
        "level": level,
        "range": [lo, hi],
    }


def parse_detail(detail: str | None) -> dict[str, Any]:
    """A per-sample ``detail`` split into what pages show: a plain reason, or JSON fields with
    the judge's explanation (and any cached prompt/response) pulled out, and the judge-cache
    references of its calls (``cache_keys``: stage, kind, repeat, key) set apart for the
    dashboard to look up.

    >>> parse_detail("no relevant document retrieved")["reason"]
    'no relevant document retrieved'
    >>> d = parse_detail('{"explanation": "2 of 3 claims supported", "reference": 3}')
    >>> d["explanation"], d["fields"]
    ('2 of 3 claims supported', {'reference': 3})
    """
    out: dict[str, Any] = {
        "raw": detail,
        "reason": None,
        "explanation": None,
        "fields": {},
        "prompt": None,
        "response": None,
        "cache_keys": [],
    }
    if detail is None:
        return out
    text = detail.strip()
    parsed: Any = None
    if text.startswith("{"):
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
    if not isinstance(parsed, dict):
        out["reason"] = detail
        return out
    fields = dict(parsed)
    for key in ("explanation", "reason", "prompt", "response"):
        value = fields.pop(key, None)
        if value is not None:
            out[key] = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if out["prompt"] is None and "messages" in fields:
        out["prompt"] = json.dumps(fields.pop("messages"), ensure_ascii=False, indent=1)
    refs = fields.get("cache_keys")
    if isinstance(refs, list) and all(
        isinstance(r, dict) and isinstance(r.get("key"), str) for r in refs
    ):
        out["cache_keys"] = fields.pop("cache_keys")
    out["fields"] = fields
    return out


def _short(value: Any, limit: int = 400) -> str:
    """A compact one-line rendering of a record field (strings as they are)."""
    if value is None:
        return ""
    if isinstance(value, str):
        text = value
    elif isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        text = " | ".join(str(v) for v in value)
    else:
        text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def record_summary(record: Mapping[str, Any] | None) -> dict[str, str]:
    """Question (or input), gold and prediction of a unit's record, each as one short line."""
    if not record:
        return {"input": "", "gold": "", "output": ""}
    out = {}
    for part in ("input", "gold", "output"):
        value = record.get(part)
        if isinstance(value, Mapping):
            if len(value) == 1:
                value = next(iter(value.values()))
            elif part == "input" and "question" in value:
                value = value["question"]
            elif part == "output" and "answer" in value:
                value = value["answer"]
        out[part] = _short(value)
    return out


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


class _Charts:
    """Chart specs of one page, keyed by element id (rendered as one JSON block)."""

    def __init__(self, prefix: str = "c") -> None:
        self.specs: dict[str, dict[str, Any]] = {}
        self.prefix = prefix

    def add(self, spec: dict[str, Any]) -> str:
        cid = f"{self.prefix}{len(self.specs) + 1}"
        self.specs[cid] = spec
        return cid


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
    store: Store,
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
    """
    if not run_ids:
        raise read.NotFound("no runs to report on")
    run_ids = list(dict.fromkeys(run_ids))
    charts = _Charts()
    full = {rid: store.get_run(rid, full=True) for rid in run_ids}
    runs = [_run_summary(full[rid], i) for i, rid in enumerate(run_ids)]
    systems = {r["id"]: r["system"] for r in runs}
    tasks_by_run = {rid: {t["task"]: t for t in store.tasks(rid)} for rid in run_ids}
    metric_rows = {rid: store.metrics(rid, strata=True) for rid in run_ids}
    with store.engine.connect() as conn:
        keys = {rid: read.run_key(conn, rid, store.url) for rid in run_ids}
        task_order = _task_order(tasks_by_run, metric_rows, run_ids)
        overall = {
            rid: {(m["task"], m["metric"]): m for m in metric_rows[rid] if m["factor"] is None}
            for rid in run_ids
        }
        asked = _asked(tasks_by_run, overall, run_ids, task_order)
        with_rows = {
            rid: read.series_with_rows(conn, keys[rid], overall[rid].keys()) for rid in run_ids
        }
        tasks = _task_tables(task_order, tasks_by_run, overall, asked, run_ids)
        strata = _strata(task_order, metric_rows, asked, run_ids, runs, charts)
        errors = _errors(
            conn,
            keys,
            task_order,
            tasks_by_run,
            overall,
            asked,
            with_rows,
            runs,
            worst,
            derive_limit,
        )
        retrieval = _retrieval(
            conn, keys, overall, asked, with_rows, runs, charts, bins, tasks_by_run
        )
    series = []
    for task in task_order:
        names = [*asked[task], *_all_metrics(task, overall, run_ids)]
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


def _all_metrics(
    task: str, overall: Mapping[str, Mapping[tuple[str, str], Any]], run_ids: Sequence[str]
) -> list[str]:
    return list(dict.fromkeys(m for rid in run_ids for (t, m) in overall[rid] if t == task))


def _task_tables(
    task_order: Sequence[str],
    tasks_by_run: Mapping[str, Mapping[str, Any]],
    overall: Mapping[str, Mapping[tuple[str, str], Any]],
    asked: Mapping[str, Sequence[str]],
    run_ids: Sequence[str],
) -> list[dict[str, Any]]:
    out = []
    for task in task_order:
        present = _all_metrics(task, overall, run_ids)
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
    charts: _Charts,
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
                                    _num(levels[lv].get(headline, {}).get(rid, {}).get("value"))
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


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _errors(
    conn: Any,
    keys: Mapping[str, int],
    task_order: Sequence[str],
    tasks_by_run: Mapping[str, Mapping[str, Any]],
    overall: Mapping[str, Mapping[tuple[str, str], Any]],
    asked: Mapping[str, Sequence[str]],
    with_rows: Mapping[str, set[tuple[str, str]]],
    runs: Sequence[Mapping[str, Any]],
    k: int,
    derive_limit: int | None = None,
) -> dict[str, Any]:
    run_ids = [r["id"] for r in runs]
    # worst samples of every asked sample-level metric with per-sample rows
    worst_blocks = []
    for task in task_order:
        names = [m for m in asked[task] if analysis.iprec_point(m) is None]
        for name in names:
            info = metric_info(task, name)
            if info["direction"] not in ("higher", "lower"):
                continue
            per_run = []
            for r in runs:
                rid = r["id"]
                if (task, name) not in with_rows[rid]:
                    continue
                rows = read.worst(
                    conn, keys[rid], task, name, k, ascending=info["direction"] == "higher"
                )
                recs = read.records(conn, keys[rid], task, [x["sample_id"] for x in rows])
                for x in rows:
                    d = parse_detail(x.pop("detail"))
                    del d["cache_keys"]  # only the dashboard's sample page looks them up
                    x.update(d)
                    x.update(record_summary(recs.get(x["sample_id"])))
                per_run.append({"run_id": rid, "system": r["system"], "samples": rows})
            if per_run:
                worst_blocks.append({**info, "runs": per_run})
    # status counts of every metric that has a non-ok status somewhere, plus the asked ones
    seen_status: set[str] = set()
    status_rows = []
    for task in task_order:
        names = list(
            dict.fromkeys(
                [*asked[task], *[m for rid in run_ids for (t, m) in overall[rid] if t == task]]
            )
        )
        for name in names:
            for r in runs:
                row = overall[r["id"]].get((task, name))
                if row is None:
                    continue
                counts = {s: int(c) for s, c in (row["status_counts"] or {}).items() if c}
                if not set(counts) - {st.OK}:
                    continue  # every sample scored: nothing to explain
                seen_status.update(counts)
                status_rows.append(
                    {
                        "task": task,
                        "metric": name,
                        "run_id": r["id"],
                        "system": r["system"],
                        "n": row["n"],
                        "counts": counts,
                        "reason": row["reason"],
                    }
                )
    statuses = [s for s in st.STATUSES if s in seen_status] + sorted(seen_status - set(st.STATUSES))
    confusion = []
    ner_runs = []
    deferred = []

    def rows_of(rid: str, task: str, metric: str) -> int:
        row = overall[rid].get((task, metric))
        return sum((row or {}).get("status_counts", {}).values()) if row else 0

    for r in runs:
        rid = r["id"]
        t = tasks_by_run[rid]
        if "classification" in t and t["classification"]["status"] == "ok":
            meta = t["classification"].get("metadata") or {}
            n_rows = rows_of(rid, "classification", "accuracy")
            if (
                "confusion_matrix" not in meta
                and derive_limit is not None
                and n_rows > derive_limit
            ):
                deferred.append({"what": "confusion matrix", "system": r["system"], "rows": n_rows})
            else:
                block = _confusion(conn, keys[rid], t["classification"], with_rows[rid])
                if block is not None:
                    confusion.append({"run_id": rid, "system": r["system"], **block})
        if "ner" in t and t["ner"]["status"] == "ok":
            meta = t["ner"].get("metadata") or {}
            n_rows = rows_of(rid, "ner", "overall.strict.f1")
            if not (meta.get("counts") or meta.get("overall_counts")) and (
                derive_limit is not None and n_rows > derive_limit
            ):
                deferred.append(
                    {"what": "NER errors by kind", "system": r["system"], "rows": n_rows}
                )
                continue
            counts, source = _ner_counts(conn, keys[rid], t["ner"], with_rows[rid])
            kinds = analysis.ner_error_kinds(counts) if counts else None
            if kinds is not None:
                ner_runs.append(
                    {
                        "run_id": rid,
                        "system": r["system"],
                        "kinds": kinds,
                        "source": source,
                        "confusions": _ner_confusions(t["ner"]["metadata"]),
                    }
                )
    ner = None
    if ner_runs:
        present = [key for key, _ in analysis.NER_KINDS if any(key in x["kinds"] for x in ner_runs)]
        labels = dict(analysis.NER_KINDS)
        ner = {"kinds": [[key, labels[key]] for key in present], "runs": ner_runs}
    return {
        "worst": worst_blocks,
        "worst_k": k,
        "status_counts": {"statuses": statuses, "rows": status_rows},
        "confusion": confusion,
        "ner": ner,
        "deferred": deferred,
    }


def _confusion(
    conn: Any, key: int, task: Mapping[str, Any], with_rows: set[tuple[str, str]]
) -> dict[str, Any] | None:
    """The type-classification confusion matrix: the engine's own when the task metadata has
    it, else counted from the per-item details (``{"gold": ..., "pred": ...}``)."""
    meta = task.get("metadata") or {}
    labels_used = meta.get("labels_used")
    cm = meta.get("confusion_matrix")
    source = "engine"
    if isinstance(cm, Mapping) and cm.get("labels") and cm.get("matrix"):
        labels, matrix = list(cm["labels"]), [list(map(int, row)) for row in cm["matrix"]]
    else:
        if ("classification", "accuracy") not in with_rows:
            return None
        pairs = []
        for detail, n in read.detail_counts(conn, key, "classification", "accuracy"):
            try:
                d = json.loads(detail)
            except ValueError:
                continue
            if isinstance(d, Mapping) and "gold" in d and "pred" in d:
                pairs.append((str(d["gold"]), str(d["pred"]), n))
        if not pairs:
            return None
        labels, matrix = analysis.confusion_from_pairs(pairs, labels_used)
        source = "per-item details"
    total = sum(map(sum, matrix))
    correct = sum(matrix[i][i] for i in range(len(labels)))
    rows = []
    for i, lab in enumerate(labels):
        row_total = sum(matrix[i])
        if lab == analysis.INVALID_LABEL and not row_total:
            continue  # a column only: no gold item has the sentinel
        rows.append(
            {
                "label": lab,
                "total": row_total,
                "cells": [
                    {
                        "count": n,
                        "share": n / row_total if row_total else 0.0,
                        "heat": round(10 * n / row_total) if row_total else 0,
                        "diag": i == j,
                    }
                    for j, n in enumerate(matrix[i])
                ],
            }
        )
    return {
        "labels": labels,
        "matrix": matrix,
        "rows": rows,
        "total": total,
        "errors": total - correct,
        "top": analysis.top_confusions(labels, matrix, 10),
        "source": source,
    }


_NER_FIELDS = ("COR", "INC", "PAR", "MIS", "SPU", "POS", "ACT")


def _ner_counts(
    conn: Any, key: int, task: Mapping[str, Any], with_rows: set[tuple[str, str]]
) -> tuple[dict[str, dict[str, float]], str]:
    """Per-schema counts summed over documents: the task metadata's ``counts`` when the
    pipeline stored them, else the sums of the per-document counts that the engine puts in
    the detail of each ``overall.<schema>.f1`` row."""
    meta = task.get("metadata") or {}
    stored = meta.get("counts") or meta.get("overall_counts")
    if isinstance(stored, Mapping) and stored:
        return {s: dict(c) for s, c in stored.items() if isinstance(c, Mapping)}, "engine"
    out = {}
    for schema_name in ("strict", "exact", "partial", "type"):
        metric = f"overall.{schema_name}.f1"
        if ("ner", metric) not in with_rows:
            continue
        sums = read.json_sums(conn, key, "ner", metric, _NER_FIELDS)
        if sums:
            out[schema_name] = sums
    return out, "per-document details"


def _ner_confusions(meta: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    raw = (meta or {}).get("confusions") or []
    out = []
    for item in raw[:10]:
        if isinstance(item, Sequence) and len(item) == 3:
            out.append({"gold": item[0], "pred": item[1], "count": item[2]})
        elif isinstance(item, Mapping):
            out.append(dict(item))
    return out


def _retrieval(
    conn: Any,
    keys: Mapping[str, int],
    overall: Mapping[str, Mapping[tuple[str, str], Any]],
    asked: Mapping[str, Sequence[str]],
    with_rows: Mapping[str, set[tuple[str, str]]],
    runs: Sequence[Mapping[str, Any]],
    charts: _Charts,
    bins: int,
    tasks_by_run: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any] | None:
    run_ids = [r["id"] for r in runs]
    if not any(t == "retrieval" for rid in run_ids for (t, _) in overall[rid]):
        return None
    names = [m for m in asked.get("retrieval", []) if analysis.iprec_point(m) is None]
    if not names:
        names = [
            m
            for m in _all_metrics("retrieval", overall, run_ids)
            if analysis.iprec_point(m) is None
        ]
    distributions = []
    for name in names:
        having = [r for r in runs if ("retrieval", name) in with_rows[r["id"]]]
        if not having:
            continue
        info = metric_info("retrieval", name)
        lo, hi = info["range"]
        if lo is None or hi is None:
            found = [read.value_range(conn, keys[r["id"]], "retrieval", name) for r in having]
            found = [f for f in found if f is not None]
            if not found:
                continue
            lo = min(f[0] for f in found) if lo is None else lo
            hi = max(f[1] for f in found) if hi is None else hi
        edges = analysis.bin_edges(float(lo), float(hi), bins)
        series = []
        for r in having:
            counts = read.histogram(conn, keys[r["id"]], "retrieval", name, edges)
            series.append(
                {"label": r["system"], "color": r["series"], "values": counts, "run_id": r["id"]}
            )
        categories = [f"{a:.2f}–{b:.2f}" for a, b in itertools.pairwise(edges)]
        chart = charts.add(
            {
                "kind": "bars",
                "title": f"retrieval.{name}: queries per value",
                "categories": categories,
                "y_label": "queries",
                "x_label": f"retrieval.{name}",
                "series": [{k: v for k, v in s.items() if k != "run_id"} for s in series],
            }
        )
        distributions.append(
            {**info, "edges": edges, "chart": chart, "runs": series, "categories": categories}
        )
    curve = None
    points: dict[float, dict[str, float | None]] = {}
    for rid in run_ids:
        # the runner stores trec_eval's 11 points in the task metadata (not as metrics); points
        # asked for as metrics (IPrec@r, any level) are added to them
        for r, v in _stored_curve(((tasks_by_run or {}).get(rid) or {}).get("retrieval")):
            points.setdefault(r, {})[rid] = v
        for (task, name), row in overall[rid].items():
            r = analysis.iprec_point(name) if task == "retrieval" else None
            if r is not None:
                points.setdefault(r, {})[rid] = _num(row["value"])
    if len(points) >= 2:
        recall = sorted(points)
        series = [
            {
                "label": r["system"],
                "color": r["series"],
                "values": [points[x].get(r["id"]) for x in recall],
            }
            for r in runs
            if any(points[x].get(r["id"]) is not None for x in recall)
        ]
        chart = charts.add(
            {
                "kind": "lines",
                "title": "interpolated precision at recall (iprec_at_recall)",
                "x": recall,
                "x_label": "recall",
                "y_label": "interpolated precision",
                "x_range": [0, 1],
                "y_range": [0, 1],
                "series": series,
            }
        )
        curve = {"recall": recall, "runs": series, "chart": chart}
    return {"distributions": distributions, "pr_curve": curve}


def _stored_curve(task: Mapping[str, Any] | None) -> list[tuple[float, float | None]]:
    """The ``(recall, precision)`` points of a retrieval task's ``metadata["pr_curve"]``."""
    curve = ((task or {}).get("metadata") or {}).get("pr_curve")
    if not isinstance(curve, Mapping):
        return []
    recall, precision = curve.get("recall"), curve.get("precision")
    if not isinstance(recall, list) or not isinstance(precision, list):
        return []
    return [
        (float(r), _num(p)) for r, p in zip(recall, precision, strict=False) if _num(r) is not None
    ]


def _comparisons(
    store: Store,
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


def _system_of(store: Store, run_id: str) -> str:
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
