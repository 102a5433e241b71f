"""The report's questions answered over an evaluation held in memory, without a database.

``ragmeter run --no-store --report`` has its runs as :class:`~ragmeter.store.RunRecord` objects
and nowhere to read them back from. :class:`MemoryReader` builds each table's rows with the
very functions the store writes them with (:mod:`ragmeter.store.write`), gives every value the
type its column would give it back (SQLite stores a NaN as NULL, a flag as a boolean), and
decodes them with the store's own decoders (:mod:`ragmeter.store.rows`). So the report of an
evaluation is the same whether it was stored first or not; only its footer, which names where
the runs were read from, differs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Boolean, Float, Integer, Table

from ragmeter.errors import UsageError
from ragmeter.store import schema, write
from ragmeter.store.read import NotFound, sum_json_fields
from ragmeter.store.records import RunRecord
from ragmeter.store.rows import comparison_dict, gate_dict, metric_dict, run_dict, task_dict
from ragmeter.store.rows import loads as _loads
from ragmeter.store.store import task_order

__all__ = ["NOT_STORED", "MemoryReader"]

NOT_STORED = "the evaluation's own results (not stored)"
"""Where a report of runs that were not stored says it read them from."""


def _as_column(table: Table, row: Mapping[str, Any]) -> dict[str, Any]:
    """``row`` with each value as the column gives it back, keys in the table's column order."""
    out: dict[str, Any] = {}
    for col in table.columns:
        v = row.get(col.name)
        if v is not None:
            if isinstance(col.type, Boolean):
                v = bool(v)
            elif isinstance(col.type, Integer):
                v = int(v)
            elif isinstance(col.type, Float):
                v = float(v)
                if math.isnan(v):  # SQLite keeps a NaN as NULL
                    v = None
        out[col.name] = v
    return out


class _Run:
    """One run's rows, built once."""

    def __init__(self, run: RunRecord) -> None:
        self.row = _as_column(schema.runs, write.run_row(run))
        self.tasks = [_as_column(schema.run_tasks, r) for r in write.task_rows(0, run)]
        self.metrics = [_as_column(schema.metrics, r) for r in write.metric_rows(0, run)]
        self.comparisons = [
            _as_column(schema.comparisons, r) for r in write.comparison_rows(0, run)
        ]
        self.gates = [_as_column(schema.gate_results, r) for r in write.gate_rows(0, run)]
        # per (task, metric): (sample_id, value, status, detail) in primary-key order
        self.series: dict[tuple[str, str], list[tuple[str, float | None, str, str | None]]] = {}
        self.records: dict[tuple[str, str], tuple[Any, ...]] = {}
        for t in run.tasks:
            if t.result is not None and t.result.samples.num_rows:
                for _, task, metric, sid, value, status, detail in write.sample_rows(0, t):
                    if value is not None:
                        value = float(value)
                        if math.isnan(value):
                            value = None
                    self.series.setdefault((task, metric), []).append((sid, value, status, detail))
            if t.records:
                for row in write.record_rows(0, t):
                    self.records[(row[1], row[2])] = row

    def scored(self, task: str, metric: str) -> list[tuple[str, float, str, str | None]]:
        return [r for r in self.series.get((task, metric), []) if r[1] is not None]  # type: ignore[misc]


class MemoryReader:
    """The runs of one evaluation, read as the report reads a store (see
    :mod:`ragmeter.store.reader`)."""

    def __init__(self, runs: Sequence[RunRecord], url: str = NOT_STORED) -> None:
        self.url = url
        self._records = {r.id: r for r in runs}
        self._runs: dict[str, _Run] = {}

    @contextmanager
    def connected(self) -> Iterator[MemoryReader]:
        yield self  # nothing to open

    def _run(self, run_id: str) -> _Run:
        if run_id not in self._runs:
            if run_id not in self._records:
                raise NotFound(f"no run {run_id!r} in {self.url}")
            self._runs[run_id] = _Run(self._records[run_id])
        return self._runs[run_id]

    # -- runs ----------------------------------------------------------------------------------
    def resolve(self, ref: str) -> list[str]:
        """Run ids named by ``ref``: a run id, the evaluation's id or ``latest`` (all runs)."""
        if ref in self._records:
            return [ref]
        ids = [r.id for r in self._records.values() if ref in ("latest", r.evaluation_id)]
        if not ids:
            raise UsageError(f"no run {ref!r} in {self.url}")
        return ids

    def get_run(self, run_id: str, *, full: bool = True) -> dict[str, Any]:
        row = self._run(run_id).row
        out = run_dict(_Attrs(row))
        if full:
            out["config"] = _loads(row["config"], {})
            out["metadata"] = _loads(row["metadata"], {})
        return out

    def tasks(self, run_id: str) -> list[dict[str, Any]]:
        order = task_order()
        return sorted(
            (task_dict(r) for r in self._run(run_id).tasks), key=lambda d: order(d["task"])
        )

    def metrics(self, run_id: str, *, strata: bool = False) -> list[dict[str, Any]]:
        rows = self._run(run_id).metrics
        return [metric_dict(r) for r in rows if strata or r["factor"] is None]

    def comparisons(self, run_id: str) -> list[dict[str, Any]]:
        return [comparison_dict(r) for r in self._run(run_id).comparisons]

    def gates(self, run_id: str) -> list[dict[str, Any]]:
        return [gate_dict(r) for r in self._run(run_id).gates]

    # -- per-sample series ---------------------------------------------------------------------
    def series_with_rows(
        self, run_id: str, pairs: Iterable[tuple[str, str]]
    ) -> set[tuple[str, str]]:
        series = self._run(run_id).series
        return {p for p in pairs if series.get(p)}

    def worst(
        self, run_id: str, task: str, metric: str, k: int, *, ascending: bool = True
    ) -> list[dict[str, Any]]:
        rows = sorted(
            self._run(run_id).scored(task, metric),
            key=lambda r: (r[1], r[0]),
            reverse=not ascending,
        )[:k]
        return [{"sample_id": s, "value": v, "status": st, "detail": d} for s, v, st, d in rows]

    def records(
        self, run_id: str, task: str | None, sample_ids: Sequence[str]
    ) -> dict[str, dict[str, Any]]:
        out = {}
        wanted = set(sample_ids)
        for (rtask, sid), row in self._run(run_id).records.items():
            if sid in wanted and (task is None or rtask == task):
                body = _loads(row[5], {})
                out[sid] = {
                    "gold_id": row[3],
                    "strata": _loads(row[4], {}),
                    **(body if isinstance(body, dict) else {"record": body}),
                }
        return out

    def detail_counts(self, run_id: str, task: str, metric: str) -> list[tuple[str, int]]:
        counts: dict[str, int] = {}
        for _, _, _, detail in self._run(run_id).series.get((task, metric), []):
            if detail is not None:
                counts[detail] = counts.get(detail, 0) + 1
        return sorted(counts.items())  # the order of SQLite's GROUP BY

    def json_sums(
        self, run_id: str, task: str, metric: str, fields: Sequence[str]
    ) -> dict[str, float] | None:
        return sum_json_fields(self.detail_counts(run_id, task, metric), fields)

    def value_range(self, run_id: str, task: str, metric: str) -> tuple[float, float] | None:
        values = [r[1] for r in self._run(run_id).scored(task, metric)]
        return (float(min(values)), float(max(values))) if values else None

    def histogram(self, run_id: str, task: str, metric: str, edges: Sequence[float]) -> list[int]:
        """Counts per bin as :func:`ragmeter.store.read.histogram` counts them."""
        bins = len(edges) - 1
        counts = [0] * bins
        for _, v, _, _ in self._run(run_id).scored(task, metric):
            for i in range(bins):
                if (i == 0 or v >= edges[i]) and (i == bins - 1 or v < edges[i + 1]):
                    counts[i] += 1
        return counts


class _Attrs:
    """A row dict read by attribute, as :func:`~ragmeter.store.rows.run_dict` reads a row."""

    def __init__(self, row: Mapping[str, Any]) -> None:
        self.__dict__.update(row)
