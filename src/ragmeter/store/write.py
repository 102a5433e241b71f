"""Writing one evaluation's runs: the rows of every table, inside the caller's transaction.

Per-sample values go in through the driver's fastest path (``executemany`` on SQLite, ``COPY`` on
PostgreSQL), sorted by the primary key so the B-tree only ever appends.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection

from ragmeter._version import __version__
from ragmeter.errors import UsageError
from ragmeter.io.jsonutil import dumps
from ragmeter.result import SAMPLES_SCHEMA, Aggregate
from ragmeter.store import schema
from ragmeter.store.records import RunRecord
from ragmeter.store.rows import finite as _finite
from ragmeter.store.rows import json_detail
from ragmeter.store.rows import naive_utc as _naive_utc

__all__ = [
    "comparison_rows",
    "gate_rows",
    "insert_children",
    "insert_run",
    "metric_rows",
    "record_rows",
    "run_row",
    "sample_rows",
    "task_rows",
]

_SAMPLE_COLUMNS = ("run_key", "task", "metric", "sample_id", "value", "status", "detail")
_RECORD_COLUMNS = ("run_key", "task", "sample_id", "gold_id", "strata", "record")


def _fast_dumps(obj: Any) -> str:
    """JSON of plain records (the common case) without the recursive conversion of
    :func:`~ragmeter.io.jsonutil.dumps`, which is only used when something is not plain."""
    try:
        return json.dumps(obj, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return dumps(obj)


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


def run_row(run: RunRecord) -> dict[str, Any]:
    """The ``runs`` row of a run (without its key)."""
    return {
        "id": run.id,
        "evaluation_id": run.evaluation_id,
        "project": run.project,
        "system": run.system,
        "system_version": run.system_version,
        "created_at": _naive_utc(run.created_at),
        "finished_at": _naive_utc(run.finished_at),
        "ragmeter_version": __version__,
        "config_hash": run.config_hash,
        "dataset_hash": run.dataset_hash,
        "dataset_path": run.dataset_path,
        "dataset_split": run.dataset_split,
        "n_samples": run.n_samples,
        "status": "complete",
        "gate_status": run.gate_status,
        "is_baseline": bool(run.is_baseline),
        "baseline_run_id": run.baseline_run_id,
        "tags": dumps(list(run.tags)),
        "notes": run.notes,
        "config": dumps(run.config),
        "metadata": dumps(run.metadata),
    }


def task_rows(key: int, run: RunRecord) -> list[dict[str, Any]]:
    """The ``run_tasks`` rows of a run: which tasks ran or were skipped, and why."""
    return [
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
        for t in run.tasks
    ]


def metric_rows(key: int, run: RunRecord) -> list[dict[str, Any]]:
    """The ``metrics`` rows of a run, in the order they are inserted (and read back): per task,
    the overall aggregates, then each stratum's."""
    rows = []
    for t in run.tasks:
        if t.result is None:
            continue
        for name, agg in t.result.aggregates.items():
            rows.append(_metric_row(key, t.task, name, agg, None, None))
        for factor, levels in t.result.strata.items():
            for level, aggs in levels.items():
                for name, agg in aggs.items():
                    rows.append(_metric_row(key, t.task, name, agg, factor, str(level)))
    return rows


def record_rows(key: int, task_record: Any) -> list[tuple[Any, ...]]:
    """The ``sample_records`` rows of a task, sorted by sample id (the primary key's order)."""
    return sorted(
        (
            (
                key,
                task_record.task,
                r.sample_id,
                r.gold_id,
                _fast_dumps(r.strata),
                _fast_dumps(r.record),
            )
            for r in task_record.records
        ),
        key=lambda row: row[2],
    )


def comparison_rows(key: int, run: RunRecord) -> list[dict[str, Any]]:
    """The ``comparisons`` rows of a run: its tests against the baseline."""
    return [_comparison_row(key, c) for c in run.comparisons]


def gate_rows(key: int, run: RunRecord) -> list[dict[str, Any]]:
    """The ``gate_results`` rows of a run, in the order the gates were declared."""
    return [
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
    ]


def insert_run(conn: Connection, run: RunRecord, url: str) -> int:
    """Insert a run's row; its key. A run id already in the store is refused."""
    exists = conn.execute(select(schema.runs.c.key).where(schema.runs.c.id == run.id)).first()
    if exists:
        raise UsageError(f"a run with id {run.id!r} is already in the store {url}")
    result = conn.execute(schema.runs.insert().values(**run_row(run)))
    return int(result.inserted_primary_key[0])


def insert_children(conn: Connection, key: int, run: RunRecord) -> None:
    """Insert everything that hangs off a run's key: tags, tasks, metrics, per-sample values
    and records, comparisons and gate verdicts."""
    if run.tags:
        conn.execute(
            schema.run_tags.insert(),
            [{"run_key": key, "tag": t} for t in dict.fromkeys(run.tags)],
        )
    tasks, metrics = task_rows(key, run), metric_rows(key, run)
    if tasks:
        conn.execute(schema.run_tasks.insert(), tasks)
    if metrics:
        conn.execute(schema.metrics.insert(), metrics)
    for t in run.tasks:
        if t.result is not None and t.result.samples.num_rows:
            _bulk_insert(conn, schema.samples.name, _SAMPLE_COLUMNS, sample_rows(key, t))
        if t.records:
            _bulk_insert(conn, schema.sample_records.name, _RECORD_COLUMNS, record_rows(key, t))
    if run.comparisons:
        conn.execute(schema.comparisons.insert(), comparison_rows(key, run))
    if run.gates:
        conn.execute(schema.gate_results.insert(), gate_rows(key, run))


def sample_rows(key: int, task_record: Any) -> Iterator[tuple[Any, ...]]:
    """The ``samples`` rows of a task, sorted by metric and sample id (the primary key's order),
    each detail as :func:`~ragmeter.store.rows.json_detail` keeps it."""
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
