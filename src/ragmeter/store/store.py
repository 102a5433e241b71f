"""The results store: write evaluations transactionally, read runs back for CLI, report and web.

Every evaluation (all runs of one ``ragmeter run``) is written in one transaction: readers see all
of it or none of it, and a crash half-way leaves nothing behind. The rows themselves are built in
:mod:`ragmeter.store.write`; the report's and dashboard's queries (histograms, worst samples,
paging) are in :mod:`ragmeter.store.read`; :class:`Store` is the one handle over both.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pyarrow as pa
from sqlalchemy import and_, delete, func, or_, select
from sqlalchemy.engine import Connection, Engine

from ragmeter import status as st
from ragmeter.errors import UsageError
from ragmeter.result import Aggregate
from ragmeter.store import read, schema
from ragmeter.store.checks import check_sqlite_file, probe_store
from ragmeter.store.engine import (
    DEFAULT_STORE,
    display_url,
    make_engine,
    normalize_url,
    sqlite_path,
)
from ragmeter.store.errors import database_errors
from ragmeter.store.migrations import check_schema, ensure_schema
from ragmeter.store.records import RunRecord

# the column encodings live in rows.py; these names stay importable from here
from ragmeter.store.rows import (
    RUN_FIELDS,
    comparison_dict,
    detail_object,
    gate_dict,
    iso,
    json_detail,
    metric_dict,
    run_dict,
    task_dict,
)
from ragmeter.store.rows import loads as _loads
from ragmeter.store.rows import naive_utc as _naive_utc
from ragmeter.store.write import insert_children, insert_run

__all__ = [
    "RUN_FIELDS",
    "Store",
    "detail_object",
    "iso",
    "json_detail",
    "open_store",
    "probe_store",
]


class Store:
    """A results store at ``url`` (see :mod:`ragmeter.store.engine` for the accepted forms).

    Opening creates the schema if the database is empty and upgrades an older one. With
    ``readonly=True`` (what the reading commands use) it changes nothing: the store must exist
    and be a ragmeter store, SQLite is opened read-only, and writing methods fail.
    ``pool_size`` bounds the connections held open at once (the dashboard sets it).
    """

    def __init__(
        self,
        url: str | os.PathLike[str] | None = None,
        *,
        readonly: bool = False,
        pool_size: int = 5,
    ) -> None:
        parsed = normalize_url(url if url is not None else DEFAULT_STORE)
        self.url = display_url(parsed)
        self.readonly = readonly
        check_sqlite_file(parsed, self.url, must_exist=readonly)
        if not readonly and sqlite_path(parsed) is not None:
            # the writer switches SQLite to WAL on connect: look first, read-only, so that a
            # foreign or damaged file is refused untouched
            probe_store(parsed.render_as_string(hide_password=False))
        with database_errors(self.url, writing=not readonly):
            self.engine: Engine = make_engine(parsed, readonly=readonly, pool_size=pool_size)
            try:
                if readonly:
                    with self.engine.connect() as conn:
                        self.schema_version = check_schema(conn, self.url)
                else:
                    self.schema_version = ensure_schema(self.engine, self.url)
            except BaseException:
                self.engine.dispose()
                raise

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Store {self.url}>"

    # -- connections ----------------------------------------------------------------------------
    def _read(self) -> Connection:
        return self.engine.connect()

    def connect(self) -> Connection:
        """A connection for the queries of :mod:`ragmeter.store.read` (a context manager; one
        read transaction for everything asked inside it)."""
        return self.engine.connect()

    def _write(self) -> Connection:
        return self.engine.connect().execution_options(ragmeter_write=True)

    # -- writing --------------------------------------------------------------------------------
    def write(self, runs: Sequence[RunRecord]) -> list[str]:
        """Store the runs of one evaluation in one transaction; return their ids.

        A database failure (read-only file, full disk, missing privilege) rolls the transaction
        back and is raised as one :class:`UsageError` naming the store and the cause.
        """
        with database_errors(self.url, writing=True), self._write() as conn, conn.begin():
            keys: dict[str, int] = {}
            for run in runs:
                keys[run.id] = insert_run(conn, run, self.url)
            for run in runs:
                insert_children(conn, keys[run.id], run)
        return [r.id for r in runs]

    # -- finding runs ---------------------------------------------------------------------------
    def _run_row(self, conn: Connection, run_id: str) -> Any:
        row = conn.execute(select(schema.runs).where(schema.runs.c.id == run_id)).first()
        if row is None:
            raise UsageError(f"no run {run_id!r} in the store {self.url} (see ragmeter runs list)")
        return row

    def _key(self, conn: Connection, run_id: str) -> int:
        return int(self._run_row(conn, run_id).key)

    def resolve(self, ref: str) -> list[str]:
        """Run ids named by ``ref``: a run id, an evaluation id, ``latest``, or a unique prefix.

        ``latest`` is the newest evaluation; an evaluation id names all of its runs.
        """
        runs = schema.runs
        with self._read() as conn:
            if ref == "latest":
                row = conn.execute(
                    select(runs.c.evaluation_id)
                    .order_by(runs.c.created_at.desc(), runs.c.key.desc())
                    .limit(1)
                ).first()
                if row is None:
                    raise UsageError(f"the store {self.url} has no runs yet")
                ref = row[0]
            if conn.execute(select(runs.c.id).where(runs.c.id == ref)).first():
                return [ref]
            ids = [
                r[0]
                for r in conn.execute(
                    select(runs.c.id).where(runs.c.evaluation_id == ref).order_by(runs.c.key)
                )
            ]
            if ids:
                return ids
            pattern = ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            hits = [
                r[0]
                for r in conn.execute(
                    select(runs.c.id).where(runs.c.id.like(pattern, escape="\\")).limit(11)
                )
            ]
        if len(hits) == 1:
            return hits
        if len(hits) > 1:
            shown = ", ".join(hits[:5]) + (", ..." if len(hits) > 5 else "")
            raise UsageError(f"run {ref!r} is ambiguous: it starts {shown}")
        raise UsageError(f"no run {ref!r} in the store {self.url} (see ragmeter runs list)")

    def resolve_one(self, ref: str) -> str:
        ids = self.resolve(ref)
        if len(ids) != 1:
            raise UsageError(f"{ref!r} names {len(ids)} runs ({', '.join(ids)}); name one run id")
        return ids[0]

    def list_runs(
        self,
        *,
        project: str | None = None,
        system: str | None = None,
        tag: str | None = None,
        evaluation: str | None = None,
        since: datetime | None = None,
        limit: int | None = 50,
        offset: int = 0,
    ) -> list[dict[str, Any]]:
        """Runs, newest first, with the filters the CLI and dashboard offer."""
        runs = schema.runs
        query = read.runs_filter(
            select(runs),
            project=project,
            system=system,
            tag=tag,
            evaluation=evaluation,
            since=_naive_utc(since),
        )
        query = query.order_by(runs.c.created_at.desc(), runs.c.key.desc()).offset(offset)
        if limit is not None:
            query = query.limit(limit)
        with self._read() as conn:
            return [run_dict(r) for r in conn.execute(query)]

    def count_runs(self, *, project: str | None = None, system: str | None = None) -> int:
        query = read.runs_filter(
            select(func.count()).select_from(schema.runs), project=project, system=system
        )
        with self._read() as conn:
            return int(conn.execute(query).scalar_one())

    def get_run(self, run_id: str, *, full: bool = True) -> dict[str, Any]:
        """One run's fields; with ``full``, also its config and metadata."""
        with self._read() as conn:
            row = self._run_row(conn, run_id)
        out = run_dict(row)
        if full:
            out["config"] = _loads(row.config, {})
            out["metadata"] = _loads(row.metadata, {})
        return out

    # -- reading a run --------------------------------------------------------------------------
    def tasks(self, run_id: str) -> list[dict[str, Any]]:
        t = schema.run_tasks
        with self._read() as conn:
            key = self._key(conn, run_id)
            rows = conn.execute(select(t).where(t.c.run_key == key)).all()
        order = task_order()
        return sorted((task_dict(r._mapping) for r in rows), key=lambda d: order(d["task"]))

    def metrics(
        self, run_id: str, *, task: str | None = None, strata: bool = False
    ) -> list[dict[str, Any]]:
        """Aggregates of a run: overall rows (``factor`` None), plus strata rows if asked."""
        m = schema.metrics
        with self._read() as conn:
            key = self._key(conn, run_id)
            query = select(m).where(m.c.run_key == key)
            if task is not None:
                query = query.where(m.c.task == task)
            if not strata:
                query = query.where(m.c.factor.is_(None))
            rows = conn.execute(query.order_by(m.c.id)).all()
        return [metric_dict(r._mapping) for r in rows]

    def aggregates(self, run_id: str) -> dict[str, dict[str, Aggregate]]:
        """Overall aggregates by task, as :class:`~ragmeter.result.Aggregate` objects."""
        out: dict[str, dict[str, Aggregate]] = {}
        for row in self.metrics(run_id):
            out.setdefault(row["task"], {})[row["metric"]] = Aggregate(
                row["value"],
                row["n"],
                row["status_counts"],
                row["ci_low"],
                row["ci_high"],
                row["reason"],
            )
        return out

    def comparisons(self, run_id: str) -> list[dict[str, Any]]:
        c = schema.comparisons
        with self._read() as conn:
            key = self._key(conn, run_id)
            rows = conn.execute(select(c).where(c.c.run_key == key).order_by(c.c.id)).all()
        return [comparison_dict(r._mapping) for r in rows]

    def gates(self, run_id: str) -> list[dict[str, Any]]:
        g = schema.gate_results
        with self._read() as conn:
            key = self._key(conn, run_id)
            rows = conn.execute(select(g).where(g.c.run_key == key).order_by(g.c.position)).all()
        return [gate_dict(r._mapping) for r in rows]

    def series(self, run_id: str) -> list[tuple[str, str]]:
        """The (task, metric) pairs that have per-sample values in the run."""
        m = schema.metrics
        with self._read() as conn:
            key = self._key(conn, run_id)
            rows = conn.execute(
                select(m.c.task, m.c.metric).where(m.c.run_key == key, m.c.factor.is_(None))
            ).all()
        return [(r.task, r.metric) for r in rows]

    def samples(
        self,
        run_id: str,
        *,
        task: str | None = None,
        metric: str | None = None,
        status: str | None = None,
        search: str | None = None,
        order_by: str = "sample_id",
        descending: bool = False,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[dict[str, Any]]:
        """Per-sample rows, filtered, sorted and paged in the database."""
        s = schema.samples
        with self._read() as conn:
            key = self._key(conn, run_id)
            query = self._samples_query(key, task, metric, status, search)
            if order_by not in ("sample_id", "value", "metric", "status"):
                raise UsageError(f"cannot sort samples by {order_by!r}")
            col = s.c[order_by]
            primary = col.desc() if descending else col.asc()
            if order_by == "value":  # NULLs (unscored) last either way
                query = query.order_by(s.c.value.is_(None), primary, s.c.sample_id)
            else:
                query = query.order_by(primary, s.c.task, s.c.metric, s.c.sample_id)
            query = query.offset(offset)
            if limit is not None:
                query = query.limit(limit)
            rows = conn.execute(query).all()
        return [
            {
                "task": r.task,
                "metric": r.metric,
                "sample_id": r.sample_id,
                "value": r.value,
                "status": r.status,
                "detail": r.detail,
            }
            for r in rows
        ]

    def count_samples(
        self,
        run_id: str,
        *,
        task: str | None = None,
        metric: str | None = None,
        status: str | None = None,
        search: str | None = None,
    ) -> int:
        with self._read() as conn:
            key = self._key(conn, run_id)
            sub = self._samples_query(key, task, metric, status, search).subquery()
            return int(conn.execute(select(func.count()).select_from(sub)).scalar_one())

    @staticmethod
    def _samples_query(
        key: int, task: str | None, metric: str | None, status: str | None, search: str | None
    ) -> Any:
        s = schema.samples
        query = select(s).where(s.c.run_key == key)
        if task is not None:
            query = query.where(s.c.task == task)
        if metric is not None:
            query = query.where(s.c.metric == metric)
        if status is not None:
            query = query.where(s.c.status == status)
        if search:
            pattern = "%" + search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            pattern += "%"
            query = query.where(
                or_(s.c.sample_id.like(pattern, escape="\\"), s.c.detail.like(pattern, escape="\\"))
            )
        return query

    def sample_table(self, run_id: str, *, task: str | None = None) -> pa.Table:
        """The run's per-sample values as an Arrow table (``task`` plus the Result columns)."""
        s = schema.samples
        with self._read() as conn:
            key = self._key(conn, run_id)
            query = select(s.c.task, s.c.sample_id, s.c.metric, s.c.value, s.c.status, s.c.detail)
            query = query.where(s.c.run_key == key)
            if task is not None:
                query = query.where(s.c.task == task)
            rows = conn.execute(query.order_by(s.c.task, s.c.metric, s.c.sample_id)).all()
        cols = list(zip(*rows, strict=True)) if rows else [[] for _ in range(6)]
        return pa.table(
            {
                "task": pa.array(cols[0], pa.string()),
                "id": pa.array(cols[1], pa.string()),
                "metric": pa.array(cols[2], pa.string()),
                "value": pa.array(cols[3], pa.float64()),
                "status": pa.array(cols[4], pa.string()),
                "detail": pa.array(cols[5], pa.string()),
            }
        )

    def sample_values(self, run_id: str, task: str, metric: str) -> dict[str, float]:
        """Sample id → value of one metric, scored rows only (the input of paired tests)."""
        s = schema.samples
        with self._read() as conn:
            key = self._key(conn, run_id)
            rows = conn.execute(
                select(s.c.sample_id, s.c.value).where(
                    s.c.run_key == key,
                    s.c.task == task,
                    s.c.metric == metric,
                    s.c.status.in_(sorted(st.SCORED)),
                )
            ).all()
        return {r.sample_id: float(r.value) for r in rows}

    def sample(self, run_id: str, sample_id: str) -> dict[str, Any]:
        """Everything about one unit: its records (per task) and every metric value."""
        s, rec, m = schema.samples, schema.sample_records, schema.metrics
        with self._read() as conn:
            key = self._key(conn, run_id)
            pairs = conn.execute(
                select(m.c.task, m.c.metric).where(m.c.run_key == key, m.c.factor.is_(None))
            ).all()
            values = []
            for task, metric in sorted(set(pairs)):  # one primary-key seek per series
                values.extend(
                    conn.execute(
                        select(s).where(
                            s.c.run_key == key,
                            s.c.task == task,
                            s.c.metric == metric,
                            s.c.sample_id == sample_id,
                        )
                    ).all()
                )
            records = conn.execute(
                select(rec).where(rec.c.run_key == key, rec.c.sample_id == sample_id)
            ).all()
        if not values and not records:
            raise UsageError(f"run {run_id!r} has no sample {sample_id!r}")
        return {
            "run_id": run_id,
            "sample_id": sample_id,
            "records": {
                r.task: {
                    "gold_id": r.gold_id,
                    "strata": _loads(r.strata, {}),
                    **_loads(r.record, {}),
                }
                for r in records
            },
            "values": [
                {
                    "task": v.task,
                    "metric": v.metric,
                    "value": v.value,
                    "status": v.status,
                    "detail": v.detail,
                }
                for v in values
            ],
        }

    def records(
        self, run_id: str, *, task: str | None = None, limit: int | None = None, offset: int = 0
    ) -> list[dict[str, Any]]:
        """Each unit's inputs, gold and outputs (what a sample page shows), by task and id."""
        rec = schema.sample_records
        with self._read() as conn:
            key = self._key(conn, run_id)
            query = select(rec).where(rec.c.run_key == key)
            if task is not None:
                query = query.where(rec.c.task == task)
            query = query.order_by(rec.c.task, rec.c.sample_id).offset(offset)
            if limit is not None:
                query = query.limit(limit)
            rows = conn.execute(query).all()
        return [
            {
                "task": r.task,
                "sample_id": r.sample_id,
                "gold_id": r.gold_id,
                "strata": _loads(r.strata, {}),
                **_loads(r.record, {}),
            }
            for r in rows
        ]

    def trends(self, project: str, task: str, metric: str) -> list[dict[str, Any]]:
        """A metric's overall value in every run of a project, oldest first."""
        r, m = schema.runs, schema.metrics
        query = (
            select(r.c.id, r.c.system, r.c.system_version, r.c.created_at, m.c.value, m.c.n)
            .join(m, and_(m.c.run_key == r.c.key, m.c.factor.is_(None)))
            .where(r.c.project == project, m.c.task == task, m.c.metric == metric)
            .order_by(r.c.created_at, r.c.key)
        )
        with self._read() as conn:
            return [
                {
                    "run_id": row.id,
                    "system": row.system,
                    "system_version": row.system_version,
                    "created_at": iso(row.created_at),
                    "value": row.value,
                    "n": row.n,
                }
                for row in conn.execute(query)
            ]

    # -- deleting and exporting -----------------------------------------------------------------
    def delete(self, run_id: str) -> None:
        """Remove one run and everything that hangs off it, in one transaction."""
        with database_errors(self.url, writing=True), self._write() as conn, conn.begin():
            key = self._key(conn, run_id)
            for table in (
                schema.samples,
                schema.sample_records,
                schema.metrics,
                schema.comparisons,
                schema.gate_results,
                schema.run_tasks,
                schema.run_tags,
            ):
                conn.execute(delete(table).where(table.c.run_key == key))
            conn.execute(delete(schema.runs).where(schema.runs.c.key == key))

    def export(self, run_id: str, *, samples: bool = True) -> dict[str, Any]:
        """A run as one JSON-serialisable dict (what ``ragmeter runs export`` writes)."""
        out: dict[str, Any] = {
            "format": "ragmeter-run/1",
            "run": self.get_run(run_id),
            "tasks": self.tasks(run_id),
            "metrics": self.metrics(run_id, strata=True),
            "comparisons": self.comparisons(run_id),
            "gates": self.gates(run_id),
        }
        if samples:
            out["samples"] = [
                {**row, "detail": detail_object(row["detail"])} for row in self.samples(run_id)
            ]
            out["records"] = self.records(run_id)
        return out


def task_order() -> Any:
    """Sort key of task names: the registry's task order, unknown tasks last by name."""
    from ragmeter.registry import TASK_PROVIDERS

    names = list(TASK_PROVIDERS)
    return lambda t: (names.index(t) if t in names else len(names), t)


def open_store(url: str | os.PathLike[str] | None = None, *, readonly: bool = False) -> Store:
    """Open the store at ``url`` (default: the local SQLite): creating or upgrading it if
    needed, or, with ``readonly=True``, only reading an existing store."""
    return Store(url, readonly=readonly)
