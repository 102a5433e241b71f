"""The report's retrieval distributions: a histogram per metric over fixed bins (counted in the
database), per-query value ranges and the interpolated precision-recall curve.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter.report import analysis
from ragmeter.report.common import Charts, all_metrics, metric_info, num

__all__ = ["retrieval"]


def retrieval(
    reader: Any,
    overall: Mapping[str, Mapping[tuple[str, str], Any]],
    asked: Mapping[str, Sequence[str]],
    with_rows: Mapping[str, set[tuple[str, str]]],
    runs: Sequence[Mapping[str, Any]],
    charts: Charts,
    bins: int,
    tasks_by_run: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any] | None:
    run_ids = [r["id"] for r in runs]
    if not any(t == "retrieval" for rid in run_ids for (t, _) in overall[rid]):
        return None
    names = [m for m in asked.get("retrieval", []) if analysis.iprec_point(m) is None]
    if not names:
        names = [
            m for m in all_metrics("retrieval", overall, run_ids) if analysis.iprec_point(m) is None
        ]
    distributions = []
    for name in names:
        having = [r for r in runs if ("retrieval", name) in with_rows[r["id"]]]
        if not having:
            continue
        info = metric_info("retrieval", name)
        lo, hi = info["range"]
        if lo is None or hi is None:
            found = [reader.value_range(r["id"], "retrieval", name) for r in having]
            found = [f for f in found if f is not None]
            if not found:
                continue
            lo = min(f[0] for f in found) if lo is None else lo
            hi = max(f[1] for f in found) if hi is None else hi
        edges = analysis.bin_edges(float(lo), float(hi), bins)
        series = []
        for r in having:
            counts = reader.histogram(r["id"], "retrieval", name, edges)
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
                points.setdefault(r, {})[rid] = num(row["value"])
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
        (float(r), num(p)) for r, p in zip(recall, precision, strict=False) if num(r) is not None
    ]
