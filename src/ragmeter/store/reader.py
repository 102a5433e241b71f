"""What the report reads about some runs, from the store or from an evaluation held in memory.

:class:`StoreReader` answers over an open :class:`~ragmeter.store.Store` (the queries of
:mod:`ragmeter.store.read`, inside one connection); :class:`~ragmeter.store.memory.MemoryReader`
answers the same questions over the :class:`~ragmeter.store.RunRecord` objects of an evaluation
that was not stored (``ragmeter run --no-store --report``), so a report needs no database.

Both are addressed by run id and return what the store's readers return, value for value:
run fields (:meth:`get_run`), tasks, metrics with strata, comparisons and gate verdicts, and
the per-series questions the report asks (which series have per-sample rows, the worst
samples, their records, detail counts, value ranges and histograms).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy.engine import Connection

from ragmeter.store import read
from ragmeter.store.store import Store

__all__ = ["StoreReader"]


class StoreReader:
    """The report's questions answered by a store. The per-sample questions are asked inside
    :meth:`connected`: one connection, so one read transaction, for all of them."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.url = store.url
        self._conn: Connection | None = None
        self._keys: dict[str, int] = {}

    @contextmanager
    def connected(self) -> Iterator[StoreReader]:
        with self.store.connect() as conn:
            self._conn = conn
            try:
                yield self
            finally:
                self._conn = None

    @property
    def _c(self) -> Connection:
        if self._conn is None:
            raise RuntimeError("per-sample questions are asked inside StoreReader.connected()")
        return self._conn

    def _key(self, run_id: str) -> int:
        if run_id not in self._keys:
            self._keys[run_id] = read.run_key(self._c, run_id, self.url)
        return self._keys[run_id]

    # -- runs: what the Store's own readers return ---------------------------------------------
    def resolve(self, ref: str) -> list[str]:
        return self.store.resolve(ref)

    def get_run(self, run_id: str, *, full: bool = True) -> dict[str, Any]:
        return self.store.get_run(run_id, full=full)

    def tasks(self, run_id: str) -> list[dict[str, Any]]:
        return self.store.tasks(run_id)

    def metrics(self, run_id: str, *, strata: bool = False) -> list[dict[str, Any]]:
        return self.store.metrics(run_id, strata=strata)

    def comparisons(self, run_id: str) -> list[dict[str, Any]]:
        return self.store.comparisons(run_id)

    def gates(self, run_id: str) -> list[dict[str, Any]]:
        return self.store.gates(run_id)

    # -- per-sample series ---------------------------------------------------------------------
    def series_with_rows(
        self, run_id: str, pairs: Iterable[tuple[str, str]]
    ) -> set[tuple[str, str]]:
        return read.series_with_rows(self._c, self._key(run_id), pairs)

    def worst(
        self, run_id: str, task: str, metric: str, k: int, *, ascending: bool = True
    ) -> list[dict[str, Any]]:
        return read.worst(self._c, self._key(run_id), task, metric, k, ascending=ascending)

    def records(
        self, run_id: str, task: str | None, sample_ids: Sequence[str]
    ) -> dict[str, dict[str, Any]]:
        return read.records(self._c, self._key(run_id), task, sample_ids)

    def detail_counts(self, run_id: str, task: str, metric: str) -> list[tuple[str, int]]:
        return read.detail_counts(self._c, self._key(run_id), task, metric)

    def json_sums(
        self, run_id: str, task: str, metric: str, fields: Sequence[str]
    ) -> dict[str, float] | None:
        return read.json_sums(self._c, self._key(run_id), task, metric, fields)

    def value_range(self, run_id: str, task: str, metric: str) -> tuple[float, float] | None:
        return read.value_range(self._c, self._key(run_id), task, metric)

    def histogram(self, run_id: str, task: str, metric: str, edges: Sequence[float]) -> list[int]:
        return read.histogram(self._c, self._key(run_id), task, metric, edges)
