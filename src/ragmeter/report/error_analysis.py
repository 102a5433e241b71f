"""The report's error analysis: the worst samples of each metric with their inputs, status
counts, the type-classification confusion matrix and NER errors by kind, read through
:mod:`ragmeter.store.read` (index seeks and ``GROUP BY``, never a whole series in Python).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter import status as st
from ragmeter.report import analysis
from ragmeter.report.common import metric_info, parse_detail, record_summary

__all__ = ["errors"]


def errors(
    reader: Any,
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
                rows = reader.worst(rid, task, name, k, ascending=info["direction"] == "higher")
                recs = reader.records(rid, task, [x["sample_id"] for x in rows])
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
                block = _confusion(reader, rid, t["classification"], with_rows[rid])
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
            counts, source = _ner_counts(reader, rid, t["ner"], with_rows[rid])
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
    reader: Any, key: str, task: Mapping[str, Any], with_rows: set[tuple[str, str]]
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
        for detail, n in reader.detail_counts(key, "classification", "accuracy"):
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
    reader: Any, key: str, task: Mapping[str, Any], with_rows: set[tuple[str, str]]
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
        sums = reader.json_sums(key, "ner", metric, _NER_FIELDS)
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
