"""What every section of the report needs: a metric's facts from the registry (direction, summary,
formula, citation, range), the task order, per-sample details and records shortened for a table,
chart specs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from ragmeter.report import analysis

__all__ = [
    "Charts",
    "all_metrics",
    "metric_info",
    "num",
    "parse_detail",
    "record_summary",
    "task_order_key",
    "tooltip",
]


@lru_cache(maxsize=4096)
def _registry_info(
    task: str, metric: str
) -> tuple[str, str, str, float | None, float | None, str, str]:
    from ragmeter import registry

    try:
        d = registry.resolve(metric, task=task).definition
    except Exception:  # engine not in this build, or a report key path the registry lacks
        return ("higher", "", "sample", None, None, "", "")
    lo, hi = d.range
    return (d.direction, d.summary, d.level, lo, hi, d.formula, d.citation)


def tooltip(summary: str, formula: str, citation: str) -> str:
    """A metric's hover text: what it is, what is computed, where the definition comes from
    (one line each; browsers show the line breaks of a ``title``).

    >>> print(tooltip("exact match", "max_g [n(p) = n(g)]", "Rajpurkar et al. 2016"))
    exact match
    = max_g [n(p) = n(g)]
    Rajpurkar et al. 2016
    """
    return "\n".join(x for x in (summary, formula and f"= {formula}", citation) if x)


def task_order_key(task: str) -> tuple[int, str]:
    """Sort key of task names: the registry's runner order, then any other task by name."""
    from ragmeter.registry import TASK_PROVIDERS

    names = list(TASK_PROVIDERS)
    return (names.index(task) if task in names else len(names), task)


def metric_info(task: str, metric: str) -> dict[str, Any]:
    """Direction, summary, formula, citation, level and range of a metric from the registry (the
    report keeps no list of its own), and ``tooltip``, the three texts for a hover; unknown
    metrics count as higher-is-better sample-level values."""
    direction, summary, level, lo, hi, formula, citation = _registry_info(task, metric)
    if analysis.iprec_point(metric) is not None:
        lo, hi = 0.0, 1.0
    return {
        "task": task,
        "metric": metric,
        "name": f"{task}.{metric}",
        "direction": direction,
        "summary": summary,
        "formula": formula,
        "citation": citation,
        "tooltip": tooltip(summary, formula, citation),
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


class Charts:
    """Chart specs of one page, keyed by element id (rendered as one JSON block)."""

    def __init__(self, prefix: str = "c") -> None:
        self.specs: dict[str, dict[str, Any]] = {}
        self.prefix = prefix

    def add(self, spec: dict[str, Any]) -> str:
        cid = f"{self.prefix}{len(self.specs) + 1}"
        self.specs[cid] = spec
        return cid


def all_metrics(
    task: str, overall: Mapping[str, Mapping[tuple[str, str], Any]], run_ids: Sequence[str]
) -> list[str]:
    return list(dict.fromkeys(m for rid in run_ids for (t, m) in overall[rid] if t == task))


def num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
