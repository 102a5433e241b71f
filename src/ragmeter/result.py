"""The one result model (docs/architecture.md, principle 5; docs/conventions.md, "The Result").

Every evaluation returns a :class:`Result`: a per-sample table, aggregates and metadata. The
same object is printed, saved, stored, compared, gated, reported and served. Engines may return a
subclass with views their users expect (``per_query`` for retrieval, ``avg`` for answers); the
fields defined here are the contract the runner, store, stats and report rely on.

The per-sample table is *long*: one row per (sample id, metric), with columns

``id`` (string), ``metric`` (string, the canonical name inside the task), ``value`` (float64,
null unless the status is scored), ``status`` (the shared vocabulary of :mod:`ragmeter.status`)
and ``detail`` (string or null: a reason, or JSON with the matched items or the judge's
explanation).

A long table holds engines whose status differs per metric (the judge) as well as engines with
one status per sample, and it is the shape of the store's ``samples`` table.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from ragmeter import status as st
from ragmeter._version import __version__
from ragmeter.io.jsonutil import dumps
from ragmeter.views import require_pandas, table_csv

if TYPE_CHECKING:  # pandas is optional and imported only by to_pandas()
    import pandas as pd

__all__ = ["SAMPLES_SCHEMA", "Aggregate", "Result", "ordered_mean"]

SAMPLES_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("metric", pa.string(), nullable=False),
        pa.field("value", pa.float64()),
        pa.field("status", pa.string(), nullable=False),
        pa.field("detail", pa.string()),
    ]
)


@dataclass(frozen=True)
class Aggregate:
    """One aggregate value with its accounting.

    ``value`` is ``None`` when undefined, and then ``reason`` says why; it is never NaN.
    ``n`` is the number of samples that entered the value and ``status_counts`` counts every
    sample by status, scored or not.
    """

    value: float | int | str | None
    n: int = 0
    status_counts: Mapping[str, int] = field(default_factory=dict)
    ci_low: float | None = None
    ci_high: float | None = None
    reason: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.value, float) and not math.isfinite(self.value):
            raise ValueError("an Aggregate value is never NaN or infinite; use None and a reason")


def ordered_mean(values: np.ndarray) -> float:
    """Mean of ``values`` summed left to right, the way trec_eval and most references do.

    ``numpy.mean`` sums pairwise, which can differ in the last bits from a reference that adds
    one value at a time; callers pass values already in canonical (sorted id) order.

    >>> ordered_mean(np.array([0.1, 0.2, 0.3]))
    0.20000000000000004
    """
    if len(values) == 0:
        raise ValueError("mean of no values")
    return float(np.cumsum(values, dtype=np.float64)[-1] / len(values))


def _mean_aggregate(values: np.ndarray, statuses: Sequence[str]) -> Aggregate:
    counts = dict(sorted(Counter(statuses).items(), key=lambda kv: st.STATUSES.index(kv[0])))
    scored = np.fromiter((s in st.SCORED for s in statuses), dtype=bool, count=len(statuses))
    n = int(scored.sum())
    if n == 0:
        return Aggregate(None, 0, counts, reason="no scored samples")
    return Aggregate(ordered_mean(values[scored]), n, counts)


def _floats(values: Sequence[Any]) -> np.ndarray:
    """``values`` as float64, ``None`` as NaN (what ``float(v)`` gives for every other value)."""
    try:
        return np.array(values, dtype=np.float64)
    except (TypeError, ValueError):  # a value numpy does not convert as float() does
        return np.array([np.nan if v is None else float(v) for v in values], dtype=np.float64)


class Result:
    """Per-sample values, aggregates and metadata of one task's evaluation.

    Build one with :meth:`from_columns` (the usual way: values per metric, aggregates computed
    as means over scored samples in sorted-id order) or directly from a long table.

    >>> r = Result.from_columns(
    ...     "answers", ["q2", "q1", "q3"],
    ...     {"em": [1.0, 0.0, None]}, statuses=["ok", "ok", "no_gold"])
    >>> r.summary
    {'em': 0.5}
    >>> r.aggregates["em"].n, dict(r.aggregates["em"].status_counts)
    (2, {'ok': 2, 'no_gold': 1})
    >>> r.values("em")
    {'q1': 0.0, 'q2': 1.0}
    """

    def __init__(
        self,
        task: str,
        samples: pa.Table | None,
        aggregates: Mapping[str, Aggregate],
        *,
        strata: Mapping[str, Mapping[str, Mapping[str, Aggregate]]] | None = None,
        metadata: Mapping[str, Any] | None = None,
        warnings: Iterable[str] = (),
    ) -> None:
        if "." in task:
            raise ValueError(f"task names contain no dot: {task!r}")
        self.task = task
        table = samples if samples is not None else SAMPLES_SCHEMA.empty_table()
        # Table.cast imports pyarrow.compute (~20 ms): skip it when there is nothing to cast
        if not table.schema.equals(SAMPLES_SCHEMA, check_metadata=True):
            table = table.cast(SAMPLES_SCHEMA)
        self.samples = table
        self.aggregates: dict[str, Aggregate] = dict(aggregates)
        self.strata: dict[str, dict[str, dict[str, Aggregate]]] = {
            factor: {level: dict(aggs) for level, aggs in levels.items()}
            for factor, levels in (strata or {}).items()
        }
        self.metadata: dict[str, Any] = {"ragmeter": __version__, "task": task}
        self.metadata.update(metadata or {})
        self.warnings: list[str] = list(warnings)

    # -- construction -----------------------------------------------------------------------
    @classmethod
    def from_columns(
        cls,
        task: str,
        ids: Sequence[str],
        values: Mapping[str, Sequence[float | None]],
        *,
        statuses: Sequence[str] | Mapping[str, Sequence[str]] | None = None,
        details: Mapping[str, Sequence[str | None]] | None = None,
        aggregates: Mapping[str, Aggregate] | None = None,
        **kwargs: Any,
    ) -> Result:
        """Build a Result from per-sample columns.

        ``values`` maps each metric to one value per id. ``statuses`` is one status per id
        (shared by every metric) or a mapping metric → statuses; it defaults to ``ok``. A value
        whose status is not scored is stored as null whatever was passed. Aggregates default to
        means over scored samples in sorted-id order; pass ``aggregates`` to override some.
        """
        ids = [str(i) for i in ids]
        n = len(ids)
        if len(set(ids)) != n:
            dup = next(i for i, c in Counter(ids).items() if c > 1)
            raise ValueError(f"sample id {dup!r} appears twice")
        by_id = sorted(range(n), key=ids.__getitem__)
        order = np.array(by_id, dtype=np.int64)
        id_column = pa.array([ids[i] for i in by_id], type=pa.string())
        chunks: dict[str, list[pa.Array]] = {k: [] for k in SAMPLES_SCHEMA.names}
        computed: dict[str, Aggregate] = {}
        for metric, vals in values.items():
            if len(vals) != n:
                raise ValueError(f"{metric}: {len(vals)} values for {n} ids")
            if statuses is None:
                stat = [st.OK] * n
            elif isinstance(statuses, Mapping):
                stat = list(statuses[metric])
            else:
                stat = list(statuses)
            kinds = set(stat)
            for s in kinds:
                st.check(s)
            # (Arrow's take() would load pyarrow.compute, which the trec command keeps out)
            stat_sorted = stat if len(kinds) < 2 else [stat[i] for i in by_id]
            # whole columns at once (numpy, Arrow): a million samples take a fraction of a
            # second, where a loop over every value took seconds (benchmarks/README.md)
            scored = np.fromiter(map(st.SCORED.__contains__, stat), dtype=bool, count=n)[order]
            arr = _floats(vals)[order]  # None -> NaN
            bad = np.flatnonzero(scored & ~np.isfinite(arr))
            if len(bad):
                raise ValueError(
                    f"{metric}: sample {ids[order[bad[0]]]!r} is scored but has no finite value"
                )
            if aggregates is None or metric not in aggregates:  # else it would be replaced
                computed[metric] = _mean_aggregate(arr, stat_sorted)
            detail = list(details[metric]) if details and metric in details else None
            chunks["id"].append(id_column)
            chunks["metric"].append(pa.array([metric] * n, type=pa.string()))
            chunks["value"].append(pa.array(arr, type=pa.float64(), mask=~scored))
            chunks["status"].append(pa.array(stat_sorted, type=pa.string()))
            if detail is None or detail.count(None) == n:
                chunks["detail"].append(pa.nulls(n, type=pa.string()))
            else:
                chunks["detail"].append(pa.array([detail[i] for i in by_id], type=pa.string()))
        computed.update(aggregates or {})
        if values:
            columns = [pa.concat_arrays(chunks[k]) for k in SAMPLES_SCHEMA.names]
            table = pa.Table.from_arrays(columns, schema=SAMPLES_SCHEMA)
        else:
            table = pa.Table.from_pydict(
                {k: [] for k in SAMPLES_SCHEMA.names}, schema=SAMPLES_SCHEMA
            )
        return cls(task, table, computed, **kwargs)

    # -- views ------------------------------------------------------------------------------
    @property
    def summary(self) -> dict[str, float | int | str | None]:
        """Aggregate values by metric name."""
        return {name: agg.value for name, agg in self.aggregates.items()}

    @property
    def metrics(self) -> list[str]:
        """Metric names that have per-sample rows, in first-seen order."""
        return list(dict.fromkeys(self.samples.column("metric").to_pylist()))

    def _rows(self, metric: str) -> pa.Table:
        import pyarrow.compute as pc

        rows = self.samples.filter(pc.equal(self.samples.column("metric"), metric))
        if rows.num_rows == 0 and metric not in self.metrics:
            raise KeyError(f"no per-sample values for metric {metric!r} in task {self.task!r}")
        return rows

    def values(self, metric: str) -> dict[str, float]:
        """Sample id → value of one metric, scored samples only (the input of paired tests)."""
        rows = self._rows(metric)
        return {
            i: v
            for i, v, s in zip(
                rows.column("id").to_pylist(),
                rows.column("value").to_pylist(),
                rows.column("status").to_pylist(),
                strict=True,
            )
            if s in st.SCORED
        }

    def statuses(self, metric: str) -> dict[str, str]:
        """Sample id → status of one metric."""
        rows = self._rows(metric)
        return dict(
            zip(rows.column("id").to_pylist(), rows.column("status").to_pylist(), strict=True)
        )

    def to_pandas(self) -> pd.DataFrame:
        """The long per-sample table as a pandas DataFrame (needs pandas)."""
        require_pandas("to_pandas()")
        return self.samples.to_pandas()

    def to_csv(self) -> str:
        """The long per-sample table as CSV: ``id,metric,value,status,detail``, one row each."""
        return table_csv(self.samples)

    # -- serialisation ----------------------------------------------------------------------
    def to_dict(self, *, samples: bool = True) -> dict[str, Any]:
        """A JSON-serialisable dict; :meth:`from_dict` restores an equal Result."""
        out: dict[str, Any] = {
            "task": self.task,
            "aggregates": {k: asdict(v) for k, v in self.aggregates.items()},
            "strata": {
                f: {lv: {m: asdict(a) for m, a in aggs.items()} for lv, aggs in levels.items()}
                for f, levels in self.strata.items()
            },
            "metadata": self.metadata,
            "warnings": self.warnings,
        }
        if samples:
            out["samples"] = self.samples.to_pylist()
        return out

    def to_json(self, *, indent: int | None = None, samples: bool = True) -> str:
        return dumps(self.to_dict(samples=samples), indent=indent)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Result:
        def agg(d: Mapping[str, Any]) -> Aggregate:
            return Aggregate(**d)

        samples = data.get("samples")
        return cls(
            data["task"],
            pa.Table.from_pylist(list(samples), schema=SAMPLES_SCHEMA) if samples else None,
            {k: agg(v) for k, v in data["aggregates"].items()},
            strata={
                f: {lv: {m: agg(a) for m, a in aggs.items()} for lv, aggs in levels.items()}
                for f, levels in data.get("strata", {}).items()
            },
            metadata=data.get("metadata"),
            warnings=data.get("warnings", ()),
        )

    @classmethod
    def from_json(cls, text: str) -> Result:
        return cls.from_dict(json.loads(text))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Result):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in list(self.summary.items())[:4])
        more = ", ..." if len(self.aggregates) > 4 else ""
        return f"<Result task={self.task!r} samples={self.samples.num_rows} {shown}{more}>"
