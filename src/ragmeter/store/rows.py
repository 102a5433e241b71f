"""How the store keeps values in its columns, for both directions: timestamps as naive UTC,
JSON-valued ``Text`` columns, per-sample details always as a JSON object or array, and a run's
row as the dict every reader returns.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

__all__ = [
    "RUN_FIELDS",
    "comparison_dict",
    "detail_object",
    "gate_dict",
    "iso",
    "json_detail",
    "metric_dict",
    "run_dict",
    "task_dict",
]

RUN_FIELDS = (
    "id",
    "evaluation_id",
    "project",
    "system",
    "system_version",
    "created_at",
    "finished_at",
    "ragmeter_version",
    "config_hash",
    "dataset_hash",
    "dataset_path",
    "dataset_split",
    "n_samples",
    "status",
    "gate_status",
    "is_baseline",
    "baseline_run_id",
    "tags",
    "notes",
)


def iso(ts: datetime | None) -> str | None:
    """UTC timestamp as ISO 8601 with a ``Z`` (the store keeps naive UTC)."""
    if ts is None:
        return None
    return ts.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def naive_utc(ts: datetime | None) -> datetime | None:
    if ts is None:
        return None
    if ts.tzinfo is not None:
        ts = ts.astimezone(timezone.utc).replace(tzinfo=None)
    return ts


def loads(text: str | None, default: Any = None) -> Any:
    return json.loads(text) if text else default


def json_detail(detail: str | None) -> str | None:
    """A per-sample ``detail`` as the store keeps it: always a JSON object or array
    (``docs/runner.md``, Decisions). Engines write JSON or a plain reason (``connection error
    after 6 attempts``); a plain reason becomes ``{"reason": text}``, so every reader can parse
    every detail. Empty is None.

    >>> json_detail("connection error after 6 attempts")
    '{"reason": "connection error after 6 attempts"}'
    >>> json_detail('{"gold": "M", "pred": "A"}')
    '{"gold": "M", "pred": "A"}'
    >>> json_detail("{not json") is None, json_detail("") is None
    (False, True)
    """
    if not detail:
        return None
    text = detail.strip()
    if text[:1] in ("{", "[") and text[-1:] in ("}", "]"):
        try:
            json.loads(text)
            return detail
        except ValueError:
            pass
    return json.dumps({"reason": detail}, ensure_ascii=False)


def detail_object(detail: str | None) -> Any:
    """A stored detail parsed (a store written before details were always JSON may still
    hold plain text: that reads as ``{"reason": text}``)."""
    normal = json_detail(detail)
    return None if normal is None else json.loads(normal)


def finite(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def run_dict(row: Any) -> dict[str, Any]:
    out = {name: getattr(row, name) for name in RUN_FIELDS}
    out["created_at"] = iso(row.created_at)
    out["finished_at"] = iso(row.finished_at)
    out["tags"] = loads(row.tags, [])
    out["is_baseline"] = bool(row.is_baseline)
    return out


def task_dict(r: Mapping[str, Any]) -> dict[str, Any]:
    """A ``run_tasks`` row as readers see it."""
    return {
        "task": r["task"],
        "status": r["status"],
        "reason": r["reason"],
        "input_hash": r["input_hash"],
        "reused": bool(r["reused"]),
        "n_units": r["n_units"],
        "metrics": loads(r["metrics"], []),
        "metadata": loads(r["metadata"], {}),
        "warnings": loads(r["warnings"], []),
    }


def metric_dict(r: Mapping[str, Any]) -> dict[str, Any]:
    """A ``metrics`` row as readers see it: a non-float value comes back from its JSON."""
    return {
        "task": r["task"],
        "metric": r["metric"],
        "factor": r["factor"],
        "level": r["level"],
        "value": r["value"] if r["value_json"] is None else json.loads(r["value_json"]),
        "n": r["n"],
        "ci_low": r["ci_low"],
        "ci_high": r["ci_high"],
        "status_counts": loads(r["status_counts"], {}),
        "reason": r["reason"],
    }


def comparison_dict(r: Mapping[str, Any]) -> dict[str, Any]:
    """A ``comparisons`` row as readers see it (every column but the keys, in table order)."""
    d = {k: v for k, v in r.items() if k not in ("id", "run_key")}
    for flag in ("significant", "degenerate"):
        if d[flag] is not None:
            d[flag] = bool(d[flag])
    d["detail"] = loads(r["detail"], None)
    return d


def gate_dict(r: Mapping[str, Any]) -> dict[str, Any]:
    """A ``gate_results`` row as readers see it."""
    return {k: v for k, v in r.items() if k not in ("id", "run_key", "position")}
