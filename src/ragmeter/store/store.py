"""The results store: write evaluations transactionally, read runs back for CLI, report and web.

Every evaluation (all runs of one ``ragmeter run``) is written in one transaction: readers see all
of it or none of it, and a crash half-way leaves nothing behind. Per-sample values go in through
the driver's fastest path (``executemany`` on SQLite, ``COPY`` on PostgreSQL), sorted by the
primary key so the B-tree only ever appends.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

import pyarrow as pa
from sqlalchemy import and_, delete, func, or_, select
from sqlalchemy.engine import Connection, Engine

from ragmeter import status as st
from ragmeter._version import __version__
from ragmeter.errors import UsageError
from ragmeter.io.jsonutil import dumps
from ragmeter.result import SAMPLES_SCHEMA, Aggregate
from ragmeter.store import schema
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

__all__ = ["Store", "open_store", "probe_store"]

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

_SAMPLE_COLUMNS = ("run_key", "task", "metric", "sample_id", "value", "status", "detail")
_RECORD_COLUMNS = ("run_key", "task", "sample_id", "gold_id", "strata", "record")


def iso(ts: datetime | None) -> str | None:
    """UTC timestamp as ISO 8601 with a ``Z`` (the store keeps naive UTC)."""
    if ts is None:
        return None
    return ts.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def _naive_utc(ts: datetime | None) -> datetime | None:
    if ts is None:
        return None
    if ts.tzinfo is not None:
        ts = ts.astimezone(timezone.utc).replace(tzinfo=None)
    return ts


def _fast_dumps(obj: Any) -> str:
    """JSON of plain records (the common case) without the recursive conversion of
    :func:`~ragmeter.io.jsonutil.dumps`, which is only used when something is not plain."""
    try:
        return json.dumps(obj, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return dumps(obj)


def _loads(text: str | None, default: Any = None) -> Any:
    return json.loads(text) if text else default


def json_detail(detail: str | None) -> str | None:
    """A per-sample ``detail`` as the store keeps it: always a JSON object or array (runner.md
    §4). Engines write JSON or a plain reason (``connection error after 6 attempts``); a plain
    reason becomes ``{"reason": text}``, so every reader can parse every detail. Empty is None.

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


def _finite(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _metric_row(
    run_key: int, task: str, metric: str, agg: Aggregate, factor: str | None, level: str | None
) -> dict[str, Any]:
    value, value_json = None, None
    if isinstance(agg.value, bool) or (agg.value is not None and not isinstance(agg.value, float)):
        if isinstance(agg.value, int) and not isinstance(agg.value, bool):
            value = float(agg.value)
        else:
            value_json = dumps(agg.value)
    elif agg.value is not None:
        value = float(agg.value)
    return {
        "run_key": run_key,
        "task": task,
        "metric": metric,
        "factor": factor,
        "level": level,
        "value": value,
        "value_json": value_json,
        "n": int(agg.n),
        "ci_low": _finite(agg.ci_low),
        "ci_high": _finite(agg.ci_high),
        "status_counts": dumps(dict(agg.status_counts)),
        "reason": agg.reason,
    }


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
                keys[run.id] = self._insert_run(conn, run)
            for run in runs:
                self._insert_children(conn, keys[run.id], run)
        return [r.id for r in runs]

    def _insert_run(self, conn: Connection, run: RunRecord) -> int:
        exists = conn.execute(select(schema.runs.c.key).where(schema.runs.c.id == run.id)).first()
        if exists:
            raise UsageError(f"a run with id {run.id!r} is already in the store {self.url}")
        result = conn.execute(
            schema.runs.insert().values(
                id=run.id,
                evaluation_id=run.evaluation_id,
                project=run.project,
                system=run.system,
                system_version=run.system_version,
                created_at=_naive_utc(run.created_at),
                finished_at=_naive_utc(run.finished_at),
                ragmeter_version=__version__,
                config_hash=run.config_hash,
                dataset_hash=run.dataset_hash,
                dataset_path=run.dataset_path,
                dataset_split=run.dataset_split,
                n_samples=run.n_samples,
                status="complete",
                gate_status=run.gate_status,
                is_baseline=bool(run.is_baseline),
                baseline_run_id=run.baseline_run_id,
                tags=dumps(list(run.tags)),
                notes=run.notes,
                config=dumps(run.config),
                metadata=dumps(run.metadata),
            )
        )
        return int(result.inserted_primary_key[0])

    def _insert_children(self, conn: Connection, key: int, run: RunRecord) -> None:
        if run.tags:
            conn.execute(
                schema.run_tags.insert(),
                [{"run_key": key, "tag": t} for t in dict.fromkeys(run.tags)],
            )
        task_rows, metric_rows = [], []
        for t in run.tasks:
            task_rows.append(
                {
                    "run_key": key,
                    "task": t.task,
                    "status": t.status,
                    "reason": t.reason,
                    "input_hash": t.input_hash,
                    "reused": bool(t.reused),
                    "n_units": len(t.records) if t.records else None,
                    "metrics": dumps(list(t.metrics)),
                    "metadata": dumps(t.metadata),
                    "warnings": dumps(list(t.warnings)),
                }
            )
            if t.result is None:
                continue
            for name, agg in t.result.aggregates.items():
                metric_rows.append(_metric_row(key, t.task, name, agg, None, None))
            for factor, levels in t.result.strata.items():
                for level, aggs in levels.items():
                    for name, agg in aggs.items():
                        metric_rows.append(_metric_row(key, t.task, name, agg, factor, str(level)))
        if task_rows:
            conn.execute(schema.run_tasks.insert(), task_rows)
        if metric_rows:
            conn.execute(schema.metrics.insert(), metric_rows)
        for t in run.tasks:
            if t.result is not None and t.result.samples.num_rows:
                _bulk_insert(conn, schema.samples.name, _SAMPLE_COLUMNS, _sample_rows(key, t))
            if t.records:
                rows = sorted(
                    (
                        (
                            key,
                            t.task,
                            r.sample_id,
                            r.gold_id,
                            _fast_dumps(r.strata),
                            _fast_dumps(r.record),
                        )
                        for r in t.records
                    ),
                    key=lambda row: row[2],
                )
                _bulk_insert(conn, schema.sample_records.name, _RECORD_COLUMNS, rows)
        if run.comparisons:
            conn.execute(
                schema.comparisons.insert(),
                [_comparison_row(key, c) for c in run.comparisons],
            )
        if run.gates:
            conn.execute(
                schema.gate_results.insert(),
                [
                    {
                        "run_key": key,
                        "position": i,
                        "rule": g["rule"],
                        "kind": g["kind"],
                        "metric": g["metric"],
                        "value": _finite(g.get("value")),
                        "threshold": _finite(g.get("threshold")),
                        "p_value": _finite(g.get("p_value")),
                        "baseline_run_id": g.get("baseline_run_id"),
                        "verdict": g["verdict"],
                        "reason": g.get("reason"),
                    }
                    for i, g in enumerate(run.gates)
                ],
            )

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
        query = select(runs)
        if project is not None:
            query = query.where(runs.c.project == project)
        if system is not None:
            query = query.where(runs.c.system == system)
        if evaluation is not None:
            query = query.where(runs.c.evaluation_id == evaluation)
        if since is not None:
            query = query.where(runs.c.created_at >= _naive_utc(since))
        if tag is not None:
            query = query.where(
                runs.c.key.in_(
                    select(schema.run_tags.c.run_key).where(schema.run_tags.c.tag == tag)
                )
            )
        query = query.order_by(runs.c.created_at.desc(), runs.c.key.desc()).offset(offset)
        if limit is not None:
            query = query.limit(limit)
        with self._read() as conn:
            return [_run_dict(r) for r in conn.execute(query)]

    def count_runs(self, *, project: str | None = None, system: str | None = None) -> int:
        runs = schema.runs
        query = select(func.count()).select_from(runs)
        if project is not None:
            query = query.where(runs.c.project == project)
        if system is not None:
            query = query.where(runs.c.system == system)
        with self._read() as conn:
            return int(conn.execute(query).scalar_one())

    def get_run(self, run_id: str, *, full: bool = True) -> dict[str, Any]:
        """One run's fields; with ``full``, also its config and metadata."""
        with self._read() as conn:
            row = self._run_row(conn, run_id)
        out = _run_dict(row)
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
        order = _task_order()
        out = [
            {
                "task": r.task,
                "status": r.status,
                "reason": r.reason,
                "input_hash": r.input_hash,
                "reused": bool(r.reused),
                "n_units": r.n_units,
                "metrics": _loads(r.metrics, []),
                "metadata": _loads(r.metadata, {}),
                "warnings": _loads(r.warnings, []),
            }
            for r in rows
        ]
        return sorted(out, key=lambda d: order(d["task"]))

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
        return [
            {
                "task": r.task,
                "metric": r.metric,
                "factor": r.factor,
                "level": r.level,
                "value": r.value if r.value_json is None else json.loads(r.value_json),
                "n": r.n,
                "ci_low": r.ci_low,
                "ci_high": r.ci_high,
                "status_counts": _loads(r.status_counts, {}),
                "reason": r.reason,
            }
            for r in rows
        ]

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
        out = []
        for r in rows:
            d = {k: v for k, v in r._mapping.items() if k not in ("id", "run_key")}
            for flag in ("significant", "degenerate"):
                if d[flag] is not None:
                    d[flag] = bool(d[flag])
            d["detail"] = _loads(r.detail, None)
            out.append(d)
        return out

    def gates(self, run_id: str) -> list[dict[str, Any]]:
        g = schema.gate_results
        with self._read() as conn:
            key = self._key(conn, run_id)
            rows = conn.execute(select(g).where(g.c.run_key == key).order_by(g.c.position)).all()
        return [
            {k: v for k, v in r._mapping.items() if k not in ("id", "run_key", "position")}
            for r in rows
        ]

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


def _run_dict(row: Any) -> dict[str, Any]:
    out = {name: getattr(row, name) for name in RUN_FIELDS}
    out["created_at"] = iso(row.created_at)
    out["finished_at"] = iso(row.finished_at)
    out["tags"] = _loads(row.tags, [])
    out["is_baseline"] = bool(row.is_baseline)
    return out


def _task_order() -> Any:
    from ragmeter.registry import TASK_PROVIDERS

    names = list(TASK_PROVIDERS)
    return lambda t: (names.index(t) if t in names else len(names), t)


def _sample_rows(key: int, task_record: Any) -> Iterator[tuple[Any, ...]]:
    import pyarrow.compute as pc

    table = task_record.result.samples.cast(SAMPLES_SCHEMA)
    order = pc.sort_indices(table, sort_keys=[("metric", "ascending"), ("id", "ascending")])
    table = table.take(order)
    task = task_record.task
    normal: dict[str | None, str | None] = {}  # details repeat (labels, reasons): check each once
    details = []
    for d in table.column("detail").to_pylist():
        if d not in normal:
            normal[d] = json_detail(d)
        details.append(normal[d])
    return zip(
        [key] * table.num_rows,
        [task] * table.num_rows,
        table.column("metric").to_pylist(),
        table.column("id").to_pylist(),
        table.column("value").to_pylist(),
        table.column("status").to_pylist(),
        details,
        strict=True,
    )


def _bulk_insert(
    conn: Connection, table: str, columns: Sequence[str], rows: Iterable[tuple[Any, ...]]
) -> None:
    """Insert many rows through the driver's fast path, inside the caller's transaction."""
    if conn.dialect.name == "postgresql":
        raw = conn.connection.driver_connection
        sql = f"COPY {table} ({', '.join(columns)}) FROM STDIN"
        with raw.cursor() as cur, cur.copy(sql) as copy:  # type: ignore[union-attr]
            for row in rows:
                copy.write_row(row)
        return
    placeholders = ", ".join("?" for _ in columns)
    cur = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
    try:
        cur.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({placeholders})", rows)
    finally:
        cur.close()


def _comparison_row(key: int, c: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "run_key": key,
        "baseline_run_id": c["baseline_run_id"],
        "task": c["task"],
        "metric": c["metric"],
        "test": c["test"],
        "n": c.get("n"),
        "mean": _finite(c.get("mean")),
        "baseline_mean": _finite(c.get("baseline_mean")),
        "mean_diff": _finite(c.get("mean_diff")),
        "statistic": _finite(c.get("statistic")),
        "p_value": _finite(c.get("p_value")),
        "p_adjusted": _finite(c.get("p_adjusted")),
        "correction": c.get("correction"),
        "alpha": _finite(c.get("alpha")),
        "significant": c.get("significant"),
        "ci_low": _finite(c.get("ci_low")),
        "ci_high": _finite(c.get("ci_high")),
        "effect_size": _finite(c.get("effect_size")),
        "seed": c.get("seed"),
        "degenerate": c.get("degenerate"),
        "reason": c.get("reason"),
        "detail": dumps(c.get("detail")) if c.get("detail") is not None else None,
    }


def open_store(url: str | os.PathLike[str] | None = None, *, readonly: bool = False) -> Store:
    """Open the store at ``url`` (default: the local SQLite): creating or upgrading it if
    needed, or, with ``readonly=True``, only reading an existing store."""
    return Store(url, readonly=readonly)
