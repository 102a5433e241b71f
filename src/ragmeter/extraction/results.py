"""Building :class:`ragmeter.result.Result` objects from the extraction reports.

The reports hold their per-document (or per-item, per-mention) values as numpy arrays; this
module turns them into the long per-sample table in one vectorized step, without a Python loop
over rows, and attaches the report's own aggregates (corpus-level values such as micro F1 are
not means of the rows).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from ragmeter import status as st
from ragmeter.result import SAMPLES_SCHEMA, Aggregate, Result

__all__ = ["Column", "build_result", "hash_labels"]


@dataclass
class Column:
    """Per-sample values of one metric: ``values`` aligned with the ids; ``statuses`` one per
    id (or one shared string); ``details`` optional strings."""

    metric: str
    values: np.ndarray
    statuses: np.ndarray | str = st.OK
    details: Sequence[str | None] | None = None


def build_result(
    task: str,
    ids: Sequence[str],
    columns: Sequence[Column],
    aggregates: Mapping[str, Aggregate],
    *,
    metadata: Mapping[str, Any] | None = None,
    warnings: Sequence[str] = (),
) -> Result:
    """A Result whose rows are ``columns`` (ids must be unique and sorted) and whose aggregates
    are the given ones. A value whose status is not scored is stored as null."""
    ids = list(ids)
    n = len(ids)
    if ids != sorted(ids) or len(set(ids)) != n:
        raise ValueError("ids must be unique and sorted")
    id_col, metric_col, value_col, status_col, detail_col = [], [], [], [], []
    id_arr = pa.array(ids, type=pa.string())
    for col in columns:
        vals = np.asarray(col.values, dtype=np.float64)
        if vals.shape != (n,):
            raise ValueError(f"{col.metric}: {vals.shape} values for {n} ids")
        if isinstance(col.statuses, str):
            st.check(col.statuses)
            statuses = pa.repeat(col.statuses, n).cast(pa.string())
            scored = np.full(n, col.statuses in st.SCORED)
        else:
            stat = np.asarray(col.statuses).astype(str)
            uniq, inverse = np.unique(stat, return_inverse=True)
            for s in uniq.tolist():
                st.check(s)
            statuses = pa.DictionaryArray.from_arrays(
                pa.array(inverse.astype(np.int32)), pa.array(uniq.tolist(), type=pa.string())
            ).cast(pa.string())
            scored = np.isin(uniq, list(st.SCORED))[inverse]
        bad = scored & ~np.isfinite(vals)
        if bad.any():
            raise ValueError(
                f"{col.metric}: sample {ids[int(np.flatnonzero(bad)[0])]!r} is scored "
                "but has no finite value"
            )
        mask = ~scored
        id_col.append(id_arr)
        metric_col.append(pa.repeat(col.metric, n).cast(pa.string()))
        value_col.append(pa.array(np.where(mask, 0.0, vals), mask=mask, type=pa.float64()))
        status_col.append(statuses)
        detail_col.append(
            pa.array(list(col.details), type=pa.string())
            if col.details is not None
            else pa.nulls(n, type=pa.string())
        )

    def cat(parts: list[pa.Array], typ: pa.DataType) -> pa.ChunkedArray:
        return pa.chunked_array(parts, type=typ) if parts else pa.chunked_array([], type=typ)

    table = pa.Table.from_arrays(
        [
            cat(id_col, pa.string()),
            cat(metric_col, pa.string()),
            cat(value_col, pa.float64()),
            cat(status_col, pa.string()),
            cat(detail_col, pa.string()),
        ],
        schema=SAMPLES_SCHEMA,
    )
    return Result(task, table, aggregates, metadata=metadata, warnings=warnings)


def aggregate(
    value: float | None,
    *,
    n: int,
    status_counts: Mapping[str, int] | None = None,
    reason: str | None = None,
) -> Aggregate:
    """An Aggregate with a finite value or ``None`` and a reason."""
    if value is not None and isinstance(value, float) and not math.isfinite(value):
        value, reason = None, reason or "undefined"
    return Aggregate(
        value,
        n,
        dict(status_counts) if status_counts is not None else ({st.OK: n} if n else {}),
        reason=reason if value is None else None,
    )


def status_counts(statuses: np.ndarray | str, n: int) -> dict[str, int]:
    if isinstance(statuses, str):
        return {statuses: n} if n else {}
    counts = Counter(np.asarray(statuses, dtype=object).tolist())
    return {s: counts[s] for s in st.STATUSES if counts.get(s)}


def hash_labels(labels: Sequence[str] | None) -> str | None:
    """SHA-256 of a label set (sorted, one per line), for ``settings``."""
    if labels is None:
        return None
    import hashlib

    return hashlib.sha256("\n".join(sorted(set(labels))).encode("utf-8")).hexdigest()


def library_versions() -> dict[str, str]:
    """Versions of ragmeter and the libraries whose results the numbers depend on."""
    import scipy

    from ragmeter._version import __version__

    return {"ragmeter": __version__, "numpy": np.__version__, "scipy": scipy.__version__}
