"""What the ``ner``, ``classification`` and ``linking`` adapters share: error locations and the
additive per-unit statistics of their corpus-level metrics (for document resampling)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import pyarrow.compute as pc

from ragmeter import status as st
from ragmeter.errors import InputError
from ragmeter.result import Result
from ragmeter.runner.outputs import OutputFile

__all__ = ["check_gold_labels", "details", "in_file", "prf"]


@contextmanager
def in_file(output: OutputFile) -> Iterator[None]:
    """Re-raise an engine's InputError about a prediction with the entities file and line.

    Engine errors name a location (``document 's001'``, ``prediction 3: mention 'm1'``); the
    record's id is looked up among the file's ids to recover its line.
    """
    try:
        yield
    except InputError as exc:
        if exc.path is not None:
            raise
        location = exc.location or ""
        line = next((ln for sid, ln in output.lines.items() if f"'{sid}'" in location), None)
        raise InputError(exc.message, path=output.path, line=line, location=exc.location) from None


def check_gold_labels(
    ctx: Any, labels_of: Callable[[Any], list[tuple[str, str]]], allowed: Sequence[str], what: str
) -> None:
    """Every gold label of the units must be in ``allowed``: an error names the gold file, the
    sample's line and the key path (the engine would name only the item)."""
    known = set(allowed)
    for u in ctx.units:
        for key, label in labels_of(u):
            if label not in known:
                raise InputError(
                    f"{label!r} is not a {what} label (expected one of {' '.join(allowed)}; "
                    "labels are compared exactly)",
                    path=ctx.gold.path,
                    line=u.sample.line,
                    location=f"sample '{u.sample.id}': {key}",
                )


def details(result: Result, metric: str) -> dict[str, dict[str, Any]]:
    """Unit id → parsed ``detail`` JSON of the scored rows of ``metric`` (parsed once per Result:
    strata and comparisons both ask)."""
    cache: dict[str, dict[str, dict[str, Any]]] = result.__dict__.setdefault("_details", {})
    if metric not in cache:
        cache[metric] = _parse_details(result, metric)
    return cache[metric]


def _parse_details(result: Result, metric: str) -> dict[str, dict[str, Any]]:
    table = result.samples.filter(pc.equal(result.samples.column("metric"), metric))
    out = {}
    for i, s, d in zip(
        table.column("id").to_pylist(),
        table.column("status").to_pylist(),
        table.column("detail").to_pylist(),
        strict=True,
    ):
        if s in st.SCORED and d:
            out[i] = json.loads(d)
    return out


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    safe = np.where(den > 0, den, 1.0)
    return np.where(den > 0, num / safe, 0.0)


def prf(key: str) -> Callable[[np.ndarray], np.ndarray]:
    """Aggregate of summed ``(tp, pos, act)``: precision tp/act, recall tp/pos or F1
    2tp/(pos+act), 0 where the denominator is 0 (``zero_division=0``, the engines' default)."""

    def aggregate(s: np.ndarray) -> np.ndarray:
        s = np.asarray(s, dtype=np.float64)
        tp, pos, act = s[..., 0], s[..., 1], s[..., 2]
        if key == "precision":
            return _ratio(tp, act)
        if key == "recall":
            return _ratio(tp, pos)
        return _ratio(2 * tp, pos + act)

    return aggregate


def label_stats(pairs: dict[str, tuple[str, str]], labels: list[str]) -> dict[str, np.ndarray]:
    """Item → [tp per label, fp per label, fn per label] (single-label classification)."""
    index = {lab: i for i, lab in enumerate(labels)}
    n = len(labels)
    out = {}
    for item, (gold, pred) in pairs.items():
        v = np.zeros(3 * n)
        if gold == pred and gold in index:
            v[index[gold]] = 1
        else:
            if pred in index:
                v[n + index[pred]] = 1
            if gold in index:
                v[2 * n + index[gold]] = 1
        out[item] = v
    return out


def label_aggregate(avg: str, key: str, n: int, fixed: bool) -> Callable[[np.ndarray], np.ndarray]:
    """micro / macro / weighted P, R or F1 of summed :func:`label_stats` (labels with no gold
    and no prediction are left out unless the label set is fixed)."""

    def aggregate(s: np.ndarray) -> np.ndarray:
        s = np.asarray(s, dtype=np.float64)
        tp, fp, fn = s[..., :n], s[..., n : 2 * n], s[..., 2 * n :]
        if avg == "micro":
            t, f_p, f_n = tp.sum(-1), fp.sum(-1), fn.sum(-1)
            if key == "precision":
                return _ratio(t, t + f_p)
            if key == "recall":
                return _ratio(t, t + f_n)
            return _ratio(2 * t, 2 * t + f_p + f_n)
        if key == "precision":
            per = _ratio(tp, tp + fp)
        elif key == "recall":
            per = _ratio(tp, tp + fn)
        else:
            per = _ratio(2 * tp, 2 * tp + fp + fn)
        active = np.ones_like(tp) if fixed else ((tp + fp + fn) > 0).astype(np.float64)
        if avg == "weighted":
            w = (tp + fn) * active
            return _ratio((per * w).sum(-1), w.sum(-1))
        return _ratio((per * active).sum(-1), active.sum(-1))

    return aggregate
