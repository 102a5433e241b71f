"""The results store on SQLite and on a real PostgreSQL server (docs/runner.md, "The results
store")."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta, timezone

import pyarrow as pa
import pytest
from sqlalchemy import text

from ragmeter.errors import InputError, UsageError
from ragmeter.result import Aggregate, Result
from ragmeter.store import (
    RunRecord,
    SampleRecord,
    Store,
    TaskRecord,
    migrations,
    open_store,
    schema,
)
from tests.helpers import REPO

T0 = datetime(2025, 6, 1, 12, 0, tzinfo=timezone.utc)


def make_result(n: int = 3, task: str = "answers") -> Result:
    ids = [f"q{i}" for i in range(n)]
    values = [i / max(n, 1) for i in range(n)]
    statuses = ["ok"] * n
    if n:
        statuses[-1] = "no_gold"
    res = Result.from_columns(
        task,
        ids,
        {"em": values, "f1": [v / 2 for v in values]},
        statuses=statuses,
        details={"em": [json.dumps({"why": i}) for i in ids]},
    )
    res.strata = {"country": {"NL": {"em": Aggregate(0.25, 2, {"ok": 2})}}}
    return res


def make_run(
    run_id: str, *, system: str = "bm25", project: str = "p", created=T0, **kw
) -> RunRecord:
    result = kw.pop("result", None) or make_result()
    records = [
        SampleRecord(i, f"g-{i}", {"country": "NL"}, {"input": {"question": f"<b>{i}</b>"}})
        for i in result.samples.column("id").unique().to_pylist()
    ]
    tasks = [
        TaskRecord(
            "answers",
            "ok",
            input_hash="h" * 64,
            metrics=["em", "f1"],
            result=result,
            records=records,
        ),
        TaskRecord("judge", "skipped", reason="no LLM configured"),
    ]
    return RunRecord(
        id=run_id,
        evaluation_id=kw.pop("evaluation_id", run_id.rsplit("-", 1)[0]),
        project=project,
        system=system,
        created_at=created,
        config_hash="c" * 64,
        dataset_hash="d" * 64,
        tags=kw.pop("tags", ["nightly"]),
        config={"project": project},
        tasks=tasks,
        comparisons=kw.pop("comparisons", []),
        gates=kw.pop("gates", []),
        **kw,
    )


def test_write_and_read_back(store_url):
    with open_store(store_url) as store:
        gates = [
            {
                "rule": "answers.em >= 0.3",
                "kind": "min",
                "metric": "answers.em",
                "value": 0.1667,
                "threshold": 0.3,
                "verdict": "FAIL",
                "reason": "0.1667 is not >= 0.3",
            }
        ]
        comps = [
            {
                "baseline_run_id": "e1-base",
                "task": "answers",
                "metric": "em",
                "test": "randomization",
                "p_value": 0.5,
                "p_adjusted": 0.5,
                "mean_diff": -0.1,
                "significant": False,
                "seed": 42,
                "detail": {"n": 2},
            }
        ]
        store.write(
            [
                make_run("e1-base", is_baseline=True),
                make_run("e1-bm25", gates=gates, comparisons=comps, gate_status="fail"),
            ]
        )
        runs = store.list_runs()
        assert [r["id"] for r in runs] == ["e1-bm25", "e1-base"]  # same time: newest key first
        run = store.get_run("e1-bm25")
        assert run["created_at"] == "2025-06-01T12:00:00.000000Z"
        assert run["gate_status"] == "fail" and run["tags"] == ["nightly"]
        assert run["config"] == {"project": "p"}
        metrics = {(m["task"], m["metric"]): m for m in store.metrics("e1-bm25")}
        em = metrics[("answers", "em")]
        assert em["value"] == pytest.approx(1 / 6) and em["n"] == 2
        assert em["status_counts"] == {"ok": 2, "no_gold": 1}
        strata = [m for m in store.metrics("e1-bm25", strata=True) if m["factor"]]
        assert strata == [
            {
                "task": "answers",
                "metric": "em",
                "factor": "country",
                "level": "NL",
                "value": 0.25,
                "n": 2,
                "ci_low": None,
                "ci_high": None,
                "status_counts": {"ok": 2},
                "reason": None,
            }
        ]
        assert store.sample_values("e1-bm25", "answers", "em") == {"q0": 0.0, "q1": 1 / 3}
        tasks = store.tasks("e1-bm25")
        assert [(t["task"], t["status"], t["reason"]) for t in tasks] == [
            ("answers", "ok", None),
            ("judge", "skipped", "no LLM configured"),
        ]
        assert store.gates("e1-bm25")[0]["verdict"] == "FAIL"
        c = store.comparisons("e1-bm25")[0]
        assert (c["p_value"], c["significant"], c["detail"]) == (0.5, False, {"n": 2})
        sample = store.sample("e1-bm25", "q1")
        assert sample["records"]["answers"]["input"]["question"] == "<b>q1</b>"
        assert sample["records"]["answers"]["strata"] == {"country": "NL"}
        assert {(v["metric"], v["value"]) for v in sample["values"]} == {
            ("em", 1 / 3),
            ("f1", 1 / 6),
        }


def test_samples_page_sort_filter_search(store_url):
    res = Result.from_columns(
        "answers",
        [f"s{i:03d}" for i in range(100)],
        {"em": [(i * 37 % 100) / 100 for i in range(100)]},
    )
    with open_store(store_url) as store:
        store.write([make_run("e2-x", result=res)])
        page = store.samples(
            "e2-x", metric="em", order_by="value", descending=True, limit=3, offset=2
        )
        assert [p["value"] for p in page] == [0.97, 0.96, 0.95]
        assert store.count_samples("e2-x", metric="em") == 100
        assert store.count_samples("e2-x", search="s04") == 10
        assert [r["sample_id"] for r in store.samples("e2-x", limit=2)] == ["s000", "s001"]
        assert store.count_samples("e2-x", search="100%") == 0  # LIKE wildcards are literal
        table = store.sample_table("e2-x")
        assert table.num_rows == 100 and table.column_names[:3] == ["task", "id", "metric"]


def test_list_filters_and_resolve(store_url):
    with open_store(store_url) as store:
        for i in range(5):
            store.write(
                [
                    make_run(
                        f"e{i}-a",
                        system="a" if i % 2 else "b",
                        project="p1" if i < 3 else "p2",
                        created=T0 + timedelta(minutes=i),
                        tags=["t1"] if i == 4 else [],
                    )
                ]
            )
        assert [r["id"] for r in store.list_runs(project="p1")] == ["e2-a", "e1-a", "e0-a"]
        assert [r["id"] for r in store.list_runs(system="a")] == ["e3-a", "e1-a"]
        assert [r["id"] for r in store.list_runs(tag="t1")] == ["e4-a"]
        assert [r["id"] for r in store.list_runs(limit=2, offset=1)] == ["e3-a", "e2-a"]
        assert store.count_runs(project="p2") == 2
        assert store.resolve("latest") == ["e4-a"]
        assert store.resolve("e3") == ["e3-a"]  # an evaluation id names its runs
        assert store.resolve("e1-") == ["e1-a"]  # a unique prefix
        with pytest.raises(UsageError, match="no run 'zzz'"):
            store.resolve("zzz")
        assert [p["created_at"][:16] for p in store.trends("p1", "answers", "em")] == [
            "2025-06-01T12:00",
            "2025-06-01T12:01",
            "2025-06-01T12:02",
        ]


def test_delete_removes_everything(store_url):
    with open_store(store_url) as store:
        store.write([make_run("e9-a"), make_run("e9-b")])
        store.delete("e9-a")
        assert [r["id"] for r in store.list_runs()] == ["e9-b"]
        expected = {"samples": 6, "sample_records": 3, "metrics": 3, "run_tasks": 2, "run_tags": 1}
        with store.engine.connect() as conn:
            for table, count in expected.items():
                assert conn.execute(text(f"SELECT count(*) FROM {table}")).scalar_one() == count
        assert store.sample_values("e9-b", "answers", "em")
        with pytest.raises(UsageError):
            store.get_run("e9-a")


def test_duplicate_run_id_writes_nothing(store_url):
    with open_store(store_url) as store:
        store.write([make_run("e5-a")])
        with pytest.raises(UsageError, match="already in the store"):
            store.write([make_run("e6-a"), make_run("e5-a")])
        assert [r["id"] for r in store.list_runs()] == ["e5-a"]  # e6-a rolled back too


def test_failure_mid_write_leaves_nothing(store_url, monkeypatch):
    from ragmeter.store import write as store_mod  # where the rows of a run are inserted

    with open_store(store_url) as store:
        real = store_mod._bulk_insert
        calls = {"n": 0}

        def flaky(conn, table, columns, rows):
            calls["n"] += 1
            if calls["n"] == 2:
                raise RuntimeError("disk full")
            return real(conn, table, columns, rows)

        monkeypatch.setattr(store_mod, "_bulk_insert", flaky)
        with pytest.raises(RuntimeError, match="disk full"):
            store.write([make_run("e7-a")])
        assert store.list_runs() == []
        with store.engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM samples")).scalar_one() == 0


def test_export_is_json_serialisable(store_url):
    with open_store(store_url) as store:
        store.write([make_run("e8-a")])
        data = store.export("e8-a")
    text_ = json.dumps(data)
    assert data["format"] == "ragmeter-run/1"
    assert len(data["samples"]) == 6 and "NaN" not in text_
    assert [r["sample_id"] for r in data["records"]] == ["q0", "q1", "q2"]
    assert data["records"][0]["input"] == {"question": "<b>q0</b>"}


def test_every_stored_detail_is_json(store_url):
    """docs/runner.md, Decisions: detail is JSON. A plain reason (the judge's 'connection error
    after 6 attempts') is stored as {"reason": ...}; JSON stays as written; export parses it."""
    res = Result.from_columns(
        "answers",
        ["q0", "q1", "q2", "q3", "q4"],
        {"em": [None, 1.0, None, 0.5, 0.0]},
        statuses=["timeout", "ok", "parse_error", "ok", "ok"],
        details={
            "em": [
                "connection error after 6 attempts",
                '{"gold": "M", "pred": "M"}',
                "{half a json",
                None,
                "[1, 2]",
            ]
        },
    )
    with open_store(store_url) as store:
        store.write([make_run("e9-a", result=res)])
        raw = {r["sample_id"]: r["detail"] for r in store.samples("e9-a", metric="em")}
        assert raw == {
            "q0": '{"reason": "connection error after 6 attempts"}',
            "q1": '{"gold": "M", "pred": "M"}',
            "q2": '{"reason": "{half a json"}',
            "q3": None,
            "q4": "[1, 2]",
        }
        exported = {
            r["sample_id"]: r["detail"]
            for r in store.export("e9-a")["samples"]
            if r["metric"] == "em"
        }
    assert exported == {
        "q0": {"reason": "connection error after 6 attempts"},
        "q1": {"gold": "M", "pred": "M"},
        "q2": {"reason": "{half a json"},
        "q3": None,
        "q4": [1, 2],
    }
    # the report and dashboard read the wrapped reason as a reason
    from ragmeter.report.view import parse_detail

    assert parse_detail(raw["q0"])["reason"] == "connection error after 6 attempts"
    assert parse_detail(raw["q1"])["fields"] == {"gold": "M", "pred": "M"}


def test_a_new_sqlite_store_is_in_wal_mode(tmp_path):
    """docs/runner.md, "The results store": SQLite (WAL). The mode is persistent: a plain sqlite3
    connection, which sets nothing itself, sees it too."""
    import sqlite3

    db = tmp_path / "new.db"
    with open_store(f"sqlite:///{db}") as store:
        store.write([make_run("e10-a")])
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    plain = sqlite3.connect(db)
    try:
        assert plain.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        plain.close()


def test_newer_schema_is_refused(tmp_path):
    url = f"sqlite:///{tmp_path / 'x.db'}"
    with open_store(url) as store, store.engine.begin() as conn:
        conn.execute(schema.meta.update().values(value="99"))
    with pytest.raises(InputError) as exc:
        open_store(url)
    assert str(exc.value) == (
        f"{url}: the store has schema version 99, written by a newer ragmeter; ragmeter 0.1.0 "
        f"reads versions up to {schema.SCHEMA_VERSION} (upgrade ragmeter)"
    )


def test_not_a_ragmeter_database(tmp_path):
    import sqlite3

    path = tmp_path / "other.db"
    sqlite3.connect(path).execute("CREATE TABLE runs (x int)").connection.commit()
    with pytest.raises(UsageError) as exc:
        open_store(path)
    assert str(exc.value) == (
        f"the store sqlite:///{path} is not a ragmeter results store (it has tables runs but no "
        "ragmeter_meta; expected a ragmeter store or an empty database)"
    )


def test_migrations_upgrade_an_older_store(store_url, monkeypatch):
    """A v1 store opened by a build with a v2 migration is upgraded in place, data kept."""
    with open_store(store_url) as store:
        store.write([make_run("e1-a")])

    def add_column(conn):
        conn.execute(text("ALTER TABLE runs ADD COLUMN reviewer VARCHAR(100)"))

    nxt = schema.SCHEMA_VERSION + 1
    monkeypatch.setattr(schema, "SCHEMA_VERSION", nxt)
    monkeypatch.setattr(
        migrations,
        "MIGRATIONS",
        (*migrations.MIGRATIONS, migrations.Migration(nxt, "runs.reviewer", add_column)),
    )
    with open_store(store_url) as store:
        assert store.schema_version == nxt
        with store.engine.connect() as conn:
            assert migrations.read_version(conn) == nxt
            conn.execute(text("SELECT reviewer FROM runs")).all()
        assert [r["id"] for r in store.list_runs()] == ["e1-a"]


def _index_names(conn) -> set[str]:
    from sqlalchemy import inspect

    return {ix["name"] for ix in inspect(conn).get_indexes("samples")}


def test_version_1_store_gains_the_samples_value_index(store_url):
    """Migration 2 (dashboard.md: sorted paging and worst samples) on a real v1 store."""
    with open_store(store_url) as store:
        store.write([make_run("e1-a")])
        with store.engine.begin() as conn:  # turn it into what ragmeter 0.1 wrote
            conn.execute(text("DROP INDEX ix_samples_value"))
            conn.execute(schema.meta.update().values(value="1"))
    with open_store(store_url) as store:
        assert store.schema_version == schema.SCHEMA_VERSION == 2
        with store.engine.connect() as conn:
            assert migrations.read_version(conn) == 2
            assert "ix_samples_value" in _index_names(conn)
        rows = store.samples("e1-a", metric="em", order_by="value", descending=True)
        assert [r["sample_id"] for r in rows] == ["q1", "q0", "q2"]


def test_new_store_has_the_samples_value_index(store_url):
    with open_store(store_url) as store, store.engine.connect() as conn:
        assert "ix_samples_value" in _index_names(conn)


def test_failed_migration_keeps_the_old_version(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'm.db'}"
    open_store(url).close()

    def broken(conn):
        conn.execute(text("ALTER TABLE runs ADD COLUMN a INT"))
        raise RuntimeError("boom")

    current = schema.SCHEMA_VERSION
    monkeypatch.setattr(schema, "SCHEMA_VERSION", current + 1)
    monkeypatch.setattr(
        migrations,
        "MIGRATIONS",
        (*migrations.MIGRATIONS, migrations.Migration(current + 1, "x", broken)),
    )
    with pytest.raises(RuntimeError, match="boom"):
        open_store(url)
    monkeypatch.setattr(schema, "SCHEMA_VERSION", current)
    with Store(url) as store, store.engine.connect() as conn:
        assert migrations.read_version(conn) == current
        cols = [r[1] for r in conn.execute(text("PRAGMA table_info(runs)"))]
        assert "a" not in cols


def test_urls_and_errors(tmp_path):
    from ragmeter.store.engine import display_url, normalize_url

    assert normalize_url("runs.db").drivername == "sqlite"
    assert normalize_url("postgresql://u:p@h/db").drivername == "postgresql+psycopg"
    assert display_url("postgresql://u:secret@h/db") == "postgresql+psycopg://u:***@h/db"
    with pytest.raises(UsageError, match="unsupported store backend 'mysql'"):
        normalize_url("mysql://h/db")


CONCURRENT = textwrap.dedent(
    """
    import sys
    from datetime import datetime, timezone
    sys.path[:0] = [{src!r}, {root!r}]
    from tests.runner.test_store import make_run, make_result
    from ragmeter.store import open_store
    with open_store(sys.argv[1]) as store:
        for i in range(5):
            store.write([make_run(f"{{sys.argv[2]}}{{i}}-a", result=make_result(2000))])
    """
)


def test_two_processes_writing_at_once_both_succeed(store_url, tmp_path):
    script = tmp_path / "writer.py"
    script.write_text(CONCURRENT.format(src=str(REPO / "src"), root=str(REPO)))
    open_store(store_url).close()  # schema first, as `ragmeter run` would
    procs = [
        subprocess.Popen([sys.executable, str(script), store_url, name], stderr=subprocess.PIPE)
        for name in ("x", "y")
    ]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err.decode()
    with open_store(store_url) as store:
        ids = sorted(r["id"] for r in store.list_runs(limit=None))
        assert ids == sorted([f"x{i}-a" for i in range(5)] + [f"y{i}-a" for i in range(5)])
        for run_id in ids:
            assert store.count_samples(run_id) == 4000


def test_two_processes_creating_one_store(store_url, tmp_path):
    """Both processes open an empty database at once: one creates the schema, both write."""
    script = tmp_path / "writer.py"
    script.write_text(CONCURRENT.format(src=str(REPO / "src"), root=str(REPO)))
    procs = [
        subprocess.Popen([sys.executable, str(script), store_url, name], stderr=subprocess.PIPE)
        for name in ("p", "q")
    ]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err.decode()
    with open_store(store_url) as store:
        assert store.count_runs() == 10


def test_large_result_roundtrip(tmp_path):
    n = 20_000
    table = pa.table(
        {
            "id": [f"q{i:06d}" for i in range(n)] * 3,
            "metric": ["a"] * n + ["b"] * n + ["c"] * n,
            "value": [float(i % 7) for i in range(3 * n)],
            "status": ["ok"] * (3 * n),
            "detail": [None] * (3 * n),
        }
    )
    res = Result("retrieval", table, {"a": Aggregate(3.0, n, {"ok": n})})
    with open_store(tmp_path / "big.db") as store:
        store.write([make_run("big-a", result=res)])
        assert store.count_samples("big-a") == 3 * n
        got = store.sample_table("big-a")
        assert got.column("value").to_pylist()[:8] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 0.0]
