"""Per-stratum breakdowns: each metric's aggregate within each value of each strata factor.

Units inherit the strata of their gold sample (a QA pair also offers its own ``answer_type``,
``template_id`` and ``answerable`` as factors). For a sample-level metric the stratum value is the
mean of the per-sample values in the stratum, over scored samples in sorted-id order, the same
rule as the overall aggregate; a corpus-level metric (micro F1, grounded precision) is recomputed
by the engine on the stratum's units.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ragmeter import registry
from ragmeter import status as st
from ragmeter.datasets.describe import MISSING
from ragmeter.datasets.views import Unit
from ragmeter.result import Aggregate, Result, ordered_mean

__all__ = ["QA_FACTORS", "metric_level", "stratify", "unit_strata"]

QA_FACTORS = ("answer_type", "template_id", "answerable")


def unit_strata(unit: Unit, factors: Sequence[str]) -> dict[str, str]:
    """The stratum value of ``unit`` for each factor (``__missing__`` when it has none)."""
    out = {}
    for f in factors:
        value = unit.sample.strata.get(f)
        if value is None and unit.qa is not None and f in QA_FACTORS:
            value = getattr(unit.qa, f)
        if isinstance(value, bool):
            value = str(value).lower()
        out[f] = MISSING if value is None else str(value)
    return out


def metric_level(task: str, metric: str, has_rows: bool) -> str:
    """``sample`` or ``corpus`` for an aggregate key of a task's Result."""
    try:
        return registry.resolve(metric, task=task).definition.level
    except (registry.UnknownMetricError, ValueError):
        return "sample" if has_rows else "corpus"


def _status_counts(statuses: Sequence[str]) -> dict[str, int]:
    counts = Counter(statuses)
    order = {s: i for i, s in enumerate(st.STATUSES)}
    return dict(sorted(counts.items(), key=lambda kv: order.get(kv[0], len(order))))


def stratify(
    result: Result,
    units: Sequence[Unit],
    factors: Sequence[str],
    *,
    unit_of: Callable[[str], str] = lambda x: x,
    evaluate_subset: Callable[[Sequence[Unit]], Result] | None = None,
) -> dict[str, dict[str, dict[str, Aggregate]]]:
    """Per-stratum aggregates ``{factor: {level: {metric: Aggregate}}}`` of one task's Result."""
    if not factors or not units:
        return {}
    by_unit = {u.id: unit_strata(u, factors) for u in units}
    table = result.samples
    ids = table.column("id").to_pylist()
    metrics = table.column("metric").to_pylist()
    values = table.column("value").to_numpy(zero_copy_only=False)
    statuses = table.column("status").to_pylist()
    rows_by_metric: dict[str, list[int]] = defaultdict(list)
    for i, m in enumerate(metrics):
        rows_by_metric[m].append(i)
    out: dict[str, dict[str, dict[str, Aggregate]]] = {}
    corpus = [
        m
        for m in result.aggregates
        if metric_level(result.task, m, m in rows_by_metric) == "corpus"
    ]
    for factor in factors:
        levels: dict[str, list[Unit]] = defaultdict(list)
        for u in units:
            levels[by_unit[u.id][factor]].append(u)
        per_level: dict[str, dict[str, Aggregate]] = {lv: {} for lv in sorted(levels)}
        for metric, rows in rows_by_metric.items():
            if metric in corpus:
                continue
            grouped: dict[str, list[tuple[str, int]]] = defaultdict(list)
            for i in rows:
                lvl = by_unit.get(unit_of(ids[i]), {}).get(factor)
                if lvl is not None:
                    grouped[lvl].append((ids[i], i))
            for lv, picked in grouped.items():
                picked.sort()
                idx = np.array([i for _, i in picked], dtype=np.int64)
                stats = [statuses[i] for i in idx]
                scored = np.array([s in st.SCORED for s in stats], dtype=bool)
                n = int(scored.sum())
                counts = _status_counts(stats)
                if n == 0:
                    per_level[lv][metric] = Aggregate(None, 0, counts, reason="no scored samples")
                else:
                    per_level[lv][metric] = Aggregate(ordered_mean(values[idx][scored]), n, counts)
        if corpus and evaluate_subset is not None:
            for lv, members in levels.items():
                sub = evaluate_subset(members)
                for metric in corpus:
                    if metric in sub.aggregates:
                        per_level[lv][metric] = sub.aggregates[metric]
        out[factor] = {lv: aggs for lv, aggs in per_level.items() if aggs}
    return out


def strata_to_dict(strata: Mapping[str, Mapping[str, Mapping[str, Aggregate]]]) -> dict[str, Any]:
    from dataclasses import asdict

    return {
        f: {lv: {m: asdict(a) for m, a in aggs.items()} for lv, aggs in levels.items()}
        for f, levels in strata.items()
    }
