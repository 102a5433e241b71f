"""Read-only queries of the results store for the report and the dashboard: every ``SELECT`` they
need is here, beside the :class:`~ragmeter.store.Store` methods the CLI uses, so that neither
``report`` nor ``web`` writes SQL over the schema.

Everything that could touch a whole per-sample series runs in the database: histograms are a
``GROUP BY`` over an index-only scan, the worst samples an index seek (``ix_samples_value``,
schema version 2), confusion counts a ``GROUP BY detail``, NER counts sums of JSON fields, the
compare page's paired statistics a join on the primary key. A page never loads a 100,000-row
run into Python.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import and_, exists, func, or_, select, true
from sqlalchemy.engine import Connection

from ragmeter.errors import UsageError
from ragmeter.store import schema

__all__ = [
    "NotFound",
    "detail_counts",
    "histogram",
    "json_sums",
    "paired_sums",
    "records",
    "run_exists",
    "run_key",
    "runs_filter",
    "sample_exists",
    "sample_page",
    "series_with_rows",
    "sum_json_fields",
    "value_range",
    "worst",
]

SORTS = ("sample_id", "value", "status")


class NotFound(UsageError):
    """A run or sample that is not in the store (the dashboard answers 404)."""


def _like(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def run_key(conn: Connection, run_id: str, store_url: str = "the store") -> int:
    runs = schema.runs
    row = conn.execute(select(runs.c.key).where(runs.c.id == run_id)).first()
    if row is None:
        raise NotFound(f"no run {run_id!r} in {store_url} (see ragmeter runs list)")
    return int(row[0])


def run_exists(conn: Connection, run_id: str) -> bool:
    """Whether a run with exactly this id is in the store (one seek on ``runs.id``)."""
    runs = schema.runs
    return conn.execute(select(runs.c.key).where(runs.c.id == run_id)).first() is not None


def sample_exists(conn: Connection, run_id: str, sample_id: str) -> bool:
    """Whether the run has a per-sample row for ``sample_id`` (the dashboard's sample URLs)."""
    runs, s = schema.runs, schema.samples
    key = conn.execute(select(runs.c.key).where(runs.c.id == run_id)).first()
    if key is None:
        return False
    hit = conn.execute(
        select(s.c.sample_id).where(s.c.run_key == key[0], s.c.sample_id == sample_id).limit(1)
    ).first()
    return hit is not None


def _series(key: int, task: str, metric: str) -> Any:
    s = schema.samples
    return and_(s.c.run_key == key, s.c.task == task, s.c.metric == metric)


def series_with_rows(
    conn: Connection, key: int, pairs: Iterable[tuple[str, str]]
) -> set[tuple[str, str]]:
    """The (task, metric) pairs among ``pairs`` that have per-sample rows: one statement of
    ``EXISTS`` seeks on the primary key."""
    pairs = list(dict.fromkeys(pairs))
    out: set[tuple[str, str]] = set()
    for start in range(0, len(pairs), 200):  # keep statements small for every backend
        chunk = pairs[start : start + 200]
        probes = [
            exists().where(_series(key, task, metric)).label(f"p{i}")
            for i, (task, metric) in enumerate(chunk)
        ]
        row = conn.execute(select(*probes)).first()
        out.update(pair for pair, hit in zip(chunk, row or (), strict=False) if hit)
    return out


def value_range(conn: Connection, key: int, task: str, metric: str) -> tuple[float, float] | None:
    """Smallest and largest scored value of a series (two seeks on ``ix_samples_value``)."""
    s = schema.samples
    where = (_series(key, task, metric), s.c.value.is_not(None))
    lo = conn.execute(select(s.c.value).where(*where).order_by(s.c.value.asc()).limit(1)).first()
    if lo is None:
        return None
    hi = conn.execute(select(s.c.value).where(*where).order_by(s.c.value.desc()).limit(1)).first()
    return float(lo[0]), float(hi[0])  # type: ignore[index]


def histogram(
    conn: Connection, key: int, task: str, metric: str, edges: Sequence[float]
) -> list[int]:
    """Counts of scored values per bin ``[edges[i], edges[i + 1])``, the last bin closed, as
    ``numpy.histogram`` counts; values below the first edge count in the first bin and values
    above the last in the last.

    One statement of range counts on ``ix_samples_value``: each bin is an index range, so the
    database reads every entry once and sorts nothing (a ``GROUP BY`` of a bin expression
    would sort the whole series).
    """
    s = schema.samples
    bins = len(edges) - 1
    counts = []
    for i in range(bins):
        cond = [_series(key, task, metric), s.c.value.is_not(None)]
        if i > 0:
            cond.append(s.c.value >= edges[i])
        if i < bins - 1:
            cond.append(s.c.value < edges[i + 1])
        counts.append(select(func.count()).where(*cond).scalar_subquery().label(f"b{i}"))
    row = conn.execute(select(*counts)).first()
    return [int(x) for x in row] if row else [0] * bins


def worst(
    conn: Connection, key: int, task: str, metric: str, k: int, *, ascending: bool = True
) -> list[dict[str, Any]]:
    """The ``k`` scored samples with the lowest (or highest) value, ties by sample id."""
    s = schema.samples
    order = (
        (s.c.value.asc(), s.c.sample_id.asc())
        if ascending
        else (
            s.c.value.desc(),
            s.c.sample_id.desc(),
        )
    )
    rows = conn.execute(
        select(s.c.sample_id, s.c.value, s.c.status, s.c.detail)
        .where(_series(key, task, metric), s.c.value.is_not(None))
        .order_by(*order)
        .limit(k)
    ).all()
    return [
        {"sample_id": r.sample_id, "value": r.value, "status": r.status, "detail": r.detail}
        for r in rows
    ]


def records(
    conn: Connection, key: int, task: str | None, sample_ids: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """Inputs, gold and outputs of some units of a task (``sample_records``), by sample id."""
    if not sample_ids:
        return {}
    rec = schema.sample_records
    query = select(rec).where(rec.c.run_key == key, rec.c.sample_id.in_(list(sample_ids)))
    if task is not None:
        query = query.where(rec.c.task == task)
    out = {}
    for r in conn.execute(query):
        body = json.loads(r.record) if r.record else {}
        out[r.sample_id] = {
            "gold_id": r.gold_id,
            "strata": json.loads(r.strata) if r.strata else {},
            **(body if isinstance(body, dict) else {"record": body}),
        }
    return out


def detail_counts(conn: Connection, key: int, task: str, metric: str) -> list[tuple[str, int]]:
    """Distinct ``detail`` texts of a series with their counts (classification gold/pred)."""
    s = schema.samples
    rows = conn.execute(
        select(s.c.detail, func.count())
        .where(_series(key, task, metric), s.c.detail.is_not(None))
        .group_by(s.c.detail)
    ).all()
    return [(r[0], int(r[1])) for r in rows]


def json_sums(
    conn: Connection, key: int, task: str, metric: str, fields: Sequence[str]
) -> dict[str, float] | None:
    """Sums of numeric fields of the JSON ``detail`` over a series (NER per-document counts);
    ``None`` when no row has such a detail.

    The database groups identical details (counts are small integers, so a 100,000-document
    run has a few hundred distinct ones) and Python adds the distinct ones up: the same on
    SQLite and PostgreSQL, and far cheaper than extracting JSON fields row by row.
    """
    return sum_json_fields(detail_counts(conn, key, task, metric), fields)


def sum_json_fields(
    counts: Iterable[tuple[str, int]], fields: Sequence[str]
) -> dict[str, float] | None:
    """Sums of numeric fields over distinct JSON details with their counts; ``None`` when no
    detail is a JSON object."""
    totals = dict.fromkeys(fields, 0.0)
    seen = False
    for detail, n in counts:
        if not detail.startswith("{"):
            continue
        try:
            parsed = json.loads(detail)
        except ValueError:
            continue
        if not isinstance(parsed, dict):
            continue
        seen = True
        for f in fields:
            v = parsed.get(f)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                totals[f] += v * n
    return totals if seen else None


def paired_sums(
    conn: Connection, key_a: int, key_b: int, task: str, metric: str
) -> tuple[int, float, float]:
    """``(n, Σd, Σd²)`` of d = b − a over the samples both runs scored (a primary-key join)."""
    s = schema.samples
    b = schema.samples.alias("b")
    d = b.c.value - s.c.value
    row = conn.execute(
        select(func.count(), func.sum(d), func.sum(d * d))
        .select_from(
            s.join(
                b,
                and_(
                    b.c.run_key == key_b,
                    b.c.task == s.c.task,
                    b.c.metric == s.c.metric,
                    b.c.sample_id == s.c.sample_id,
                ),
            )
        )
        .where(_series(key_a, task, metric), s.c.value.is_not(None), b.c.value.is_not(None))
    ).first()
    n = int(row[0] or 0) if row else 0
    return n, float(row[1] or 0.0) if n else 0.0, float(row[2] or 0.0) if n else 0.0


def sample_page(
    conn: Connection,
    key: int,
    task: str,
    metric: str,
    *,
    search: str | None = None,
    search_records: bool = False,
    status: str | None = None,
    sort: str = "sample_id",
    descending: bool = False,
    limit: int = 50,
    offset: int = 0,
) -> tuple[list[dict[str, Any]], int]:
    """One page of a series' per-sample rows and the number of rows that match.

    Sorting by sample id walks the primary key; by value, ``ix_samples_value`` (scored rows
    first in value order, then the unscored ones by id, in both directions). Search looks for
    the text (case-insensitive) in the sample id and the detail (reason, explanation), and with
    ``search_records`` also in the unit's record (question, gold, answer), which reads every
    record of the task.
    """
    if sort not in SORTS:
        raise UsageError(f"cannot sort samples by {sort!r} (expected one of {', '.join(SORTS)})")
    s, rec = schema.samples, schema.sample_records
    where = [_series(key, task, metric)]
    if status:
        where.append(s.c.status == status)
    source: Any = s
    if search:
        pattern = _like(search)
        # case-insensitive on both backends: SQLite's LIKE already is (for ASCII letters);
        # PostgreSQL needs ILIKE
        pg = conn.dialect.name == "postgresql"

        def match(col: Any) -> Any:
            return col.ilike(pattern, escape="\\") if pg else col.like(pattern, escape="\\")

        found = [match(s.c.sample_id), match(s.c.detail)]
        if search_records:
            source = s.outerjoin(
                rec,
                and_(
                    rec.c.run_key == s.c.run_key,
                    rec.c.task == s.c.task,
                    rec.c.sample_id == s.c.sample_id,
                ),
            )
            found.append(match(rec.c.record))
        where.append(or_(*found))
    cols = (s.c.sample_id, s.c.value, s.c.status, s.c.detail)
    total = int(conn.execute(select(func.count()).select_from(source).where(*where)).scalar_one())

    def fetch(extra: Any, order: Sequence[Any], lim: int, off: int) -> list[Any]:
        # a deferred join: the page's ids come from the index alone (an OFFSET skips index
        # entries, not table rows), then only those rows are read from the table
        ids = [
            r[0]
            for r in conn.execute(
                select(s.c.sample_id)
                .select_from(source)
                .where(*where, extra)
                .order_by(*order)
                .limit(lim)
                .offset(off)
            )
        ]
        if not ids:
            return []
        found = {
            r.sample_id: r
            for r in conn.execute(select(*cols).where(where[0], s.c.sample_id.in_(ids)))
        }
        return [found[i] for i in ids]

    if sort == "value":
        scored = int(
            conn.execute(
                select(func.count()).select_from(source).where(*where, s.c.value.is_not(None))
            ).scalar_one()
        )
        vorder = (
            (s.c.value.desc(), s.c.sample_id.desc())
            if descending
            else (s.c.value.asc(), s.c.sample_id.asc())
        )
        rows = []
        if offset < scored:
            rows = fetch(s.c.value.is_not(None), vorder, limit, offset)
        if len(rows) < limit:
            rows += fetch(
                s.c.value.is_(None),
                (s.c.sample_id.asc(),),
                limit - len(rows),
                max(0, offset - scored),
            )
    else:
        col = s.c[sort]
        order = (col.desc(), s.c.sample_id.desc()) if descending else (col.asc(), s.c.sample_id)
        if sort == "sample_id":
            order = (col.desc(),) if descending else (col.asc(),)
        rows = fetch(true(), order, limit, offset)
    return (
        [
            {"sample_id": r.sample_id, "value": r.value, "status": r.status, "detail": r.detail}
            for r in rows
        ],
        total,
    )


def headline_rows(
    conn: Connection, keys: Sequence[int], pairs: Sequence[tuple[str, str]]
) -> dict[int, dict[tuple[str, str], dict[str, Any]]]:
    """Overall values of some (task, metric) pairs for many runs (the runs list)."""
    if not keys or not pairs:
        return {}
    m = schema.metrics
    rows = conn.execute(
        select(m.c.run_key, m.c.task, m.c.metric, m.c.value, m.c.n, m.c.ci_low, m.c.ci_high).where(
            m.c.run_key.in_(list(keys)),
            m.c.factor.is_(None),
            or_(*[and_(m.c.task == t, m.c.metric == x) for t, x in pairs]),
        )
    ).all()
    out: dict[int, dict[tuple[str, str], dict[str, Any]]] = {}
    for r in rows:
        out.setdefault(r.run_key, {})[(r.task, r.metric)] = {
            "value": r.value,
            "n": r.n,
            "ci_low": r.ci_low,
            "ci_high": r.ci_high,
        }
    return out


def first_metrics(conn: Connection, keys: Sequence[int]) -> dict[int, list[tuple[str, str]]]:
    """Each run's headline metrics: the first metric asked for in each task that ran."""
    if not keys:
        return {}
    t = schema.run_tasks
    rows = conn.execute(
        select(t.c.run_key, t.c.task, t.c.status, t.c.metrics).where(t.c.run_key.in_(list(keys)))
    ).all()
    out: dict[int, list[tuple[str, str]]] = {}
    for r in rows:
        names = json.loads(r.metrics) if r.metrics else []
        if r.status == "ok" and names:
            out.setdefault(r.run_key, []).append((r.task, names[0]))
    return out


def distinct(conn: Connection, column: str) -> list[str]:
    runs = schema.runs
    col = runs.c[column]
    return [r[0] for r in conn.execute(select(col).distinct().order_by(col)) if r[0] is not None]


def all_tags(conn: Connection) -> list[str]:
    t = schema.run_tags
    return [r[0] for r in conn.execute(select(t.c.tag).distinct().order_by(t.c.tag))]


def project_metrics(conn: Connection, project: str) -> list[tuple[str, str]]:
    """The (task, metric) pairs with an overall value in some run of a project (trends form)."""
    r, m = schema.runs, schema.metrics
    rows = conn.execute(
        select(m.c.task, m.c.metric)
        .distinct()
        .select_from(m.join(r, r.c.key == m.c.run_key))
        .where(r.c.project == project, m.c.factor.is_(None), m.c.value.is_not(None))
    ).all()
    return [(row[0], row[1]) for row in rows]


def mapping_of(rows: Iterable[Mapping[str, Any]], key: str) -> dict[Any, Mapping[str, Any]]:
    return {r[key]: r for r in rows}


def runs_filter(
    query: Any,
    *,
    project: str | None = None,
    system: str | None = None,
    tag: str | None = None,
    evaluation: str | None = None,
    since: Any = None,
    until: Any = None,
) -> Any:
    """``query`` over ``runs`` narrowed to the filters the CLI and the dashboard offer (each
    ``None`` is no filter; ``since`` inclusive, ``until`` exclusive, naive UTC)."""
    runs = schema.runs
    if project is not None:
        query = query.where(runs.c.project == project)
    if system is not None:
        query = query.where(runs.c.system == system)
    if evaluation is not None:
        query = query.where(runs.c.evaluation_id == evaluation)
    if since is not None:
        query = query.where(runs.c.created_at >= since)
    if until is not None:
        query = query.where(runs.c.created_at < until)
    if tag is not None:
        t = schema.run_tags
        query = query.where(runs.c.key.in_(select(t.c.run_key).where(t.c.tag == tag)))
    return query


def list_runs(
    conn: Connection, *, limit: int, offset: int, **filters: Any
) -> tuple[list[Any], int]:
    """Runs newest first with the dashboard's filters, and how many match in all."""
    runs = schema.runs
    total = int(
        conn.execute(runs_filter(select(func.count()).select_from(runs), **filters)).scalar_one()
    )
    query = runs_filter(select(runs), **filters).order_by(
        runs.c.created_at.desc(), runs.c.key.desc()
    )
    rows = list(conn.execute(query.limit(limit).offset(offset)).all())
    return rows, total
