"""Pieces both classification reports use: joining gold and predictions by item id, label
checks and normalization, and P/R/F1 from per-class counts with scikit-learn's averages.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ragmeter.errors import InputError
from ragmeter.extraction.choices import EXTRA_POLICIES, MISSING_POLICIES
from ragmeter.extraction.prf import mean
from ragmeter.records.choices import expected

_LIMIT = 20


def _nan_mean(values: Sequence[float]) -> float | None:
    kept = [v for v in values if not math.isnan(v)]
    return mean(kept) if kept else None


def _nan_weighted(values: Sequence[float], weights: Sequence[float]) -> float | None:
    """Weighted mean without the undefined values; when the remaining weights are all zero,
    their unweighted mean (scikit-learn's ``_nanaverage``)."""
    num = den = 0.0
    kept = []
    for v, w in zip(values, weights, strict=True):
        if math.isnan(v):
            continue
        kept.append(v)
        num += v * w
        den += w
    if den:
        return num / den
    return mean(kept) if kept else None


def _ratio(num: np.ndarray, den: np.ndarray, zd: float) -> np.ndarray:
    out = np.full(num.shape, zd, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


def _prf_from_counts(
    tp: np.ndarray, n_pred: np.ndarray, n_true: np.ndarray, zd: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """scikit-learn's per-class P, R and F1 (F1 = 2TP/(2TP+FP+FN), ``zd`` when 0/0)."""
    tp = tp.astype(np.float64)
    p = _ratio(tp, n_pred.astype(np.float64), zd)
    r = _ratio(tp, n_true.astype(np.float64), zd)
    f = _ratio(2 * tp, (n_pred + n_true).astype(np.float64), zd)
    return p, r, f


def _averages(
    p: np.ndarray, r: np.ndarray, f: np.ndarray, support: np.ndarray, zd: float
) -> tuple[dict[str, float | None], dict[str, float | None], dict[str, str]]:
    undefined: dict[str, str] = {}
    macro = {
        "precision": _nan_mean(p.tolist()),
        "recall": _nan_mean(r.tolist()),
        "f1": _nan_mean(f.tolist()),
    }
    w = support.astype(np.float64).tolist()
    if sum(w) == 0:
        # scikit-learn's rule: with no support at all, the weights are dropped
        weighted: dict[str, float | None] = dict(macro)
        undefined["weighted"] = (
            "no gold support in the label set (unweighted mean, as scikit-learn)"
        )
    else:
        weighted = {
            "precision": _nan_weighted(p.tolist(), w),
            "recall": _nan_weighted(r.tolist(), w),
            "f1": _nan_weighted(f.tolist(), w),
        }
    for k, v in macro.items():
        if v is None:
            undefined[f"macro.{k}"] = "no label with a defined value"
    for k, v in weighted.items():
        if v is None and "weighted" not in undefined:
            undefined[f"weighted.{k}"] = "no label with a defined value"
    return macro, weighted, undefined


def _finite(x: float) -> float | None:
    return None if x is None or math.isnan(x) else float(x)


def _join(
    gold: Mapping[Any, Any],
    pred: Mapping[Any, Any],
    *,
    missing: str,
    extra: str,
    what: str = "label",
) -> tuple[list[str], list[Any], list[Any], list[str], list[str]]:
    """Join by item id: (ids, gold values, pred values or None, missing ids, extra ids)."""
    if not isinstance(gold, Mapping) or not isinstance(pred, Mapping):
        raise InputError(
            f"gold and predictions must be mappings item_id -> {what} (got "
            f"{type(gold).__name__} and {type(pred).__name__}); items are joined by id, never "
            "by position"
        )
    if missing not in MISSING_POLICIES:
        raise ValueError(f"missing={missing!r} (expected {expected(MISSING_POLICIES)})")
    if extra not in EXTRA_POLICIES:
        raise ValueError(f"extra={extra!r} (expected {expected(EXTRA_POLICIES)})")
    keys = list(gold)
    if _all_strings(keys):
        ids = keys
    else:
        ids = [str(k) for k in keys]
        if len(set(ids)) != len(ids):
            raise InputError("two gold item ids are equal as strings (expected unique ids)")
    g_vals = list(gold.values())
    if keys == list(pred):
        # the same items in the same order (the usual case): no lookups needed
        return ids, g_vals, list(pred.values()), [], []
    sentinel = object()
    p_vals = [pred.get(k, sentinel) for k in keys]
    missing_ids = [ids[i] for i, v in enumerate(p_vals) if v is sentinel]
    found = len(ids) - len(missing_ids)
    extra_ids: list[str] = []
    if found < len(pred):
        extra_ids = sorted(str(k) for k in pred if k not in gold)
        if extra == "error":
            shown = ", ".join(f"'{k}'" for k in extra_ids[:5])
            more = f" and {len(extra_ids) - 5} more" if len(extra_ids) > 5 else ""
            raise InputError(
                f"{len(extra_ids)} predicted item(s) not in gold: {shown}{more} (expected "
                "predictions for gold items only, or extra='ignore')"
            )
    if missing_ids and missing == "error":
        shown = ", ".join(f"'{k}'" for k in missing_ids[:5])
        more = f" and {len(missing_ids) - 5} more" if len(missing_ids) > 5 else ""
        raise InputError(
            f"{len(missing_ids)} gold item(s) have no prediction: {shown}{more} (expected a "
            "prediction for every gold item, or missing='as_invalid')"
        )
    p_out = [None if v is sentinel else v for v in p_vals]
    return ids, g_vals, p_out, missing_ids, extra_ids


def _all_strings(values: list[Any]) -> bool:
    """True when every value is a string (checked by pyarrow, much faster than a loop)."""
    import pyarrow as pa

    try:
        return pa.array(values, type=pa.string()).null_count == 0
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return False


def _check_labels(values: list[Any], side: str, ids: Sequence[str]) -> None:
    """Raise for the first label that is not a string (missing predictions are None)."""
    for i, v in zip(ids, values, strict=True):
        if (v is not None or side == "gold") and not isinstance(v, str):
            raise InputError(
                f"{side} label {v!r} is not a string (expected a label such as 'M')",
                location=f"item '{i}'",
            )


def _normalize_labels(
    normalize: Callable[[str], str] | None, values: list[Any], changes: dict[str, dict[str, Any]]
) -> list[Any]:
    if normalize is None:
        return values
    cache: dict[str, str] = {}
    out = []
    for v in values:
        if v is None:
            out.append(v)
            continue
        if v not in cache:
            cache[v] = normalize(v)
        nv = cache[v]
        if nv != v:
            entry = changes.setdefault(v, {"to": nv, "count": 0})
            entry["count"] += 1
        out.append(nv)
    return out
