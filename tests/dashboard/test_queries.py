"""The report's store queries on SQLite and on a real PostgreSQL server, against numpy and
plain Python over the same values."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from ragmeter.report import analysis, queries
from ragmeter.result import Result
from ragmeter.store import RunRecord, SampleRecord, TaskRecord, open_store

T0 = datetime(2025, 3, 1, tzinfo=timezone.utc)
N = 157


def _values(seed: int) -> tuple[list[str], list[float | None], list[str], list[str | None]]:
    rng = np.random.default_rng(seed)
    ids = [f"q{i:04d}" for i in rng.permutation(N)]
    # ties, both ends of [0, 1] and values exactly on bin edges
    vals = np.round(rng.uniform(0, 1, N) * 20) / 20
    vals[:5] = [0.0, 1.0, 0.05, 0.95, 0.5]
    statuses = ["ok"] * N
    out: list[float | None] = [float(v) for v in vals]
    for i in (7, 8, 9):
        statuses[i] = "no_gold"
        out[i] = None
    statuses[10] = "missing_zeroed"
    out[10] = 0.0
    details = [
        json.dumps(
            {"COR": int(i % 4), "MIS": int(i % 3), "gold": "AB"[i % 2], "pred": "AB"[i % 3 % 2]}
        )
        if i % 5
        else f"plain reason {i}"
        for i in range(N)
    ]
    details[3] = "needle 50% of_it"
    return ids, out, statuses, details


def _run(run_id: str, seed: int, created: datetime, **kw) -> RunRecord:
    ids, vals, statuses, details = _values(seed)
    res = Result.from_columns(
        "retrieval", ids, {"nDCG@10": vals}, statuses=statuses, details={"nDCG@10": details}
    )
    records = [SampleRecord(i, i, {}, {"input": {"question": f"question about {i}"}}) for i in ids]
    return RunRecord(
        id=run_id,
        evaluation_id=run_id,
        project=kw.pop("project", "p"),
        system=kw.pop("system", "s"),
        created_at=created,
        config_hash="c" * 64,
        tasks=[TaskRecord("retrieval", "ok", metrics=["nDCG@10"], result=res, records=records)],
        **kw,
    )


@pytest.fixture
def store(any_store_url):
    with open_store(any_store_url) as s:
        s.write([_run("a", 1, T0)])
        s.write([_run("b", 2, T0 + timedelta(days=1), system="t", tags=["x"])])
        yield s


def _key(store, run_id):
    with store.engine.connect() as conn:
        return queries.run_key(conn, run_id)


def test_histogram_matches_numpy(store):
    _ids, vals, _statuses, _ = _values(1)
    scored = np.array([v for v in vals if v is not None])
    edges = analysis.bin_edges(0.0, 1.0, 20)
    with store.engine.connect() as conn:
        got = queries.histogram(conn, _key(store, "a"), "retrieval", "nDCG@10", edges)
        coarse = queries.histogram(conn, _key(store, "a"), "retrieval", "nDCG@10", [0.2, 0.6])
    assert got == np.histogram(scored, bins=edges)[0].tolist()
    assert sum(got) == N - 3
    # one bin holds everything, values outside the edges included
    assert coarse == [N - 3]


def test_value_range_worst_and_series(store):
    ids, vals, _, details = _values(1)
    pairs = sorted(
        ((v, i, d) for i, v, d in zip(ids, vals, details, strict=True) if v is not None),
        key=lambda t: (t[0], t[1]),
    )
    key = _key(store, "a")
    with store.engine.connect() as conn:
        assert queries.value_range(conn, key, "retrieval", "nDCG@10") == (0.0, 1.0)
        assert queries.value_range(conn, key, "retrieval", "RR") is None
        low = queries.worst(conn, key, "retrieval", "nDCG@10", 6)
        high = queries.worst(conn, key, "retrieval", "nDCG@10", 4, ascending=False)
        assert queries.series_with_rows(
            conn, key, [("retrieval", "nDCG@10"), ("retrieval", "RR"), ("answers", "f1")]
        ) == {("retrieval", "nDCG@10")}
    assert [(r["value"], r["sample_id"]) for r in low] == [(v, i) for v, i, _ in pairs[:6]]
    assert [(r["value"], r["sample_id"]) for r in high] == [
        (v, i) for v, i, _ in sorted(pairs, key=lambda t: (t[0], t[1]), reverse=True)[:4]
    ]
    assert low[0]["detail"] == pairs[0][2]


@pytest.mark.parametrize("sort", ["sample_id", "value", "status"])
@pytest.mark.parametrize("descending", [False, True])
def test_sample_pages_cover_the_series_in_order(store, sort, descending):
    ids, vals, statuses, _ = _values(1)
    rows = list(zip(ids, vals, statuses, strict=True))
    if sort == "sample_id":
        expected = sorted(rows, key=lambda r: r[0], reverse=descending)
    elif sort == "status":
        expected = sorted(rows, key=lambda r: (r[2], r[0]), reverse=descending)
    else:  # scored rows by value (ties by id, same direction), then unscored ones by id
        scored = sorted(
            (r for r in rows if r[1] is not None), key=lambda r: (r[1], r[0]), reverse=descending
        )
        expected = scored + sorted(r for r in rows if r[1] is None)
    key = _key(store, "a")
    got = []
    with store.engine.connect() as conn:
        for page in range(4):
            chunk, total = queries.sample_page(
                conn,
                key,
                "retrieval",
                "nDCG@10",
                sort=sort,
                descending=descending,
                limit=50,
                offset=50 * page,
            )
            assert total == N
            got.extend((r["sample_id"], r["value"], r["status"]) for r in chunk)
    assert got == expected


def test_sample_page_search_and_status(store):
    key = _key(store, "a")
    ids, _, _statuses, details = _values(1)
    with store.engine.connect() as conn:
        # LIKE wildcards in the search text are literal
        rows, total = queries.sample_page(conn, key, "retrieval", "nDCG@10", search="50% of_")
        assert total == 1 and rows[0]["sample_id"] == ids[3]
        rows, total = queries.sample_page(conn, key, "retrieval", "nDCG@10", search="plain reason")
        assert total == sum(d.startswith("plain reason") for d in details)
        assert (
            queries.sample_page(conn, key, "retrieval", "nDCG@10", search="PLAIN Reason")[1]
            == total
        )
        assert queries.sample_page(conn, key, "retrieval", "nDCG@10", search=ids[20])[1] == 1
        # the record's question is searched only when asked
        q = f"question about {ids[20]}"
        assert queries.sample_page(conn, key, "retrieval", "nDCG@10", search=q)[1] == 0
        assert (
            queries.sample_page(conn, key, "retrieval", "nDCG@10", search=q, search_records=True)[1]
            == 1
        )
        rows, total = queries.sample_page(conn, key, "retrieval", "nDCG@10", status="no_gold")
        assert total == 3 and {r["value"] for r in rows} == {None}
        with pytest.raises(queries.UsageError, match="cannot sort samples by 'detail'"):
            queries.sample_page(conn, key, "retrieval", "nDCG@10", sort="detail")


def test_detail_counts_json_sums_and_paired_sums(store):
    ids_a, vals_a, _, details = _values(1)
    ids_b, vals_b, _, _ = _values(2)
    ka, kb = _key(store, "a"), _key(store, "b")
    with store.engine.connect() as conn:
        counts = dict(queries.detail_counts(conn, ka, "retrieval", "nDCG@10"))
        sums = queries.json_sums(conn, ka, "retrieval", "nDCG@10", ("COR", "MIS", "SPU"))
        n, sd, sd2 = queries.paired_sums(conn, ka, kb, "retrieval", "nDCG@10")
        assert queries.json_sums(conn, ka, "retrieval", "RR", ("COR",)) is None
    assert sum(counts.values()) == N
    parsed = [json.loads(d) for d in details if d.startswith("{")]
    assert sums == {
        "COR": sum(p["COR"] for p in parsed),
        "MIS": sum(p["MIS"] for p in parsed),
        "SPU": 0.0,
    }
    a = dict(zip(ids_a, vals_a, strict=True))
    b = dict(zip(ids_b, vals_b, strict=True))
    d = np.array([b[i] - a[i] for i in sorted(a) if a[i] is not None and b[i] is not None])
    assert n == len(d)
    assert sd == pytest.approx(d.sum(), abs=1e-9)
    assert sd2 == pytest.approx((d * d).sum(), abs=1e-9)


def test_run_filters_and_headlines(store):
    with store.engine.connect() as conn:
        rows, total = queries.list_runs(conn, limit=10, offset=0)
        assert total == 2 and [r.id for r in rows] == ["b", "a"]
        rows, total = queries.list_runs(conn, limit=10, offset=0, tag="x")
        assert [r.id for r in rows] == ["b"]
        rows, total = queries.list_runs(conn, limit=10, offset=0, system="s")
        assert [r.id for r in rows] == ["a"]
        since = (T0 + timedelta(hours=12)).replace(tzinfo=None)
        assert queries.list_runs(conn, limit=10, offset=0, since=since)[1] == 1
        assert queries.list_runs(conn, limit=10, offset=0, until=since)[1] == 1
        assert queries.list_runs(conn, limit=1, offset=1)[0][0].id == "a"
        keys = [r.key for r in queries.list_runs(conn, limit=10, offset=0)[0]]
        first = queries.first_metrics(conn, keys)
        assert all(v == [("retrieval", "nDCG@10")] for v in first.values())
        values = queries.headline_rows(conn, keys, [("retrieval", "nDCG@10")])
        assert len(values) == 2
        assert queries.distinct(conn, "system") == ["s", "t"]
        assert queries.all_tags(conn) == ["x"]
        assert queries.project_metrics(conn, "p") == [("retrieval", "nDCG@10")]
        with pytest.raises(queries.NotFound, match="no run 'zzz'"):
            queries.run_key(conn, "zzz")
