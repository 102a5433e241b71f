"""The judge cache's contract on both backends (a SQLite file, a PostgreSQL database), writers
of one key in two processes, and ``ragmeter judge --cache postgresql://...`` end to end."""

from __future__ import annotations

import json
import multiprocessing
import socket
import sys
import time
from pathlib import Path

import pytest

from ragmeter.errors import InputError
from ragmeter.judge.cache import SCHEMA_VERSION, JudgeCache
from ragmeter.judge.cache_open import open_cache, open_reader
from ragmeter.judge.ledger import LEDGER_FIELDS
from tests.helpers import invoke
from tests.judge.fake_openai import SENTINEL_KEY
from tests.judge.test_cli import samples, write_jsonl

PASSWORD = "pw-SENTINEL-5e1d"  # trust authentication accepts it; it must never be shown
DAY = 86_400.0


@pytest.fixture(params=["sqlite", "postgresql"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new, empty cache of each backend."""
    if request.param == "sqlite":
        return str(tmp_path / "cache.sqlite")
    return request.getfixturevalue("pg_cluster").new_database()


def _put(db: JudgeCache, key: str, response: dict, *, valid: bool = True, request=True) -> None:
    db.put(
        key,
        model="judge-model",
        prompt_version="faithfulness.verify@1",
        params={"temperature": 0, "max_tokens": 64},
        request={"messages": [{"role": "user", "content": f"ask {key} é"}]} if request else None,
        response=response,
        valid=valid,
        latency_ms=12.5,
        tokens_in=100,
        tokens_out=20,
    )


def _ledger(run_id: str, *, hit: bool, cost: float | None) -> dict:
    row = dict.fromkeys(LEDGER_FIELDS)
    row.update(run_id=run_id, metric="faithfulness", cache_hit=hit, cost_usd=cost, status="ok")
    row.update(created=time.time(), repeat=0, attempts=1, prompt_tokens=100)
    return row


def test_entries_round_trip_replace_and_read_back(target):
    t0 = time.time()
    db = open_cache(target)
    assert db.get("k1") is None and len(db) == 0 and db.keys() == set()
    reply = {"choices": [{"text": "ok é \u0000 ✓"}], "usage": {"prompt_tokens": 100}}
    _put(db, "k1", reply)
    _put(db, "k2", {"text": "not json"}, valid=False)
    db.close()

    again = open_cache(target)  # every reply was committed as it arrived
    entry = again.get("k1")
    assert entry is not None and entry.response == reply and entry.valid is True
    assert t0 <= entry.created <= time.time()
    assert again.get("k2").valid is False and len(again) == 2 and again.keys() == {"k1", "k2"}
    _put(again, "k1", {"text": "fresh"}, valid=False)  # --refresh-cache overwrites
    again.mark_valid("k2", True)
    assert again.get("k1").response == {"text": "fresh"} and again.get("k1").valid is False
    assert again.get("k2").valid is True and len(again) == 2
    rows = list(again.export())
    assert [r["key"] for r in rows] == ["k2", "k1"]  # in order of creation
    assert rows[1] == {
        "key": "k1",
        "model": "judge-model",
        "prompt_version": "faithfulness.verify@1",
        "params": {"max_tokens": 64, "temperature": 0},
        "request": {"messages": [{"role": "user", "content": "ask k1 é"}]},
        "response": {"text": "fresh"},
        "valid": False,
        "created": rows[1]["created"],
        "latency_ms": 12.5,
        "tokens_in": 100,
        "tokens_out": 20,
    }
    again.close()

    found = open_reader(target).lookup(["k1", "k2", "absent", "k1"])
    assert sorted(found) == ["k1", "k2"]
    assert found["k2"]["messages"] == [{"role": "user", "content": "ask k2 é"}]
    assert found["k1"]["response"] == {"text": "fresh"} and found["k2"]["valid"] is True
    assert open_reader(target).lookup([]) == {}


def test_ledger_meta_stats_and_requests_left_out(target):
    db = open_cache(target, store_requests=False)
    _put(db, "a", {"v": 1})
    _put(db, "b", {"v": 2}, valid=False)
    db.write_ledger(_ledger("run1", hit=False, cost=0.015))
    db.write_ledger(_ledger("run1", hit=False, cost=None))  # an unknown price
    db.write_ledger(_ledger("run2", hit=True, cost=0.0))
    assert db.get_meta("negotiation:x|m") is None
    db.set_meta("negotiation:x|m", '{"structured": "json_schema"}')
    db.set_meta("negotiation:x|m", '{"structured": "json_object"}')
    stats = db.stats()
    assert stats["size_bytes"] > 0
    del stats["size_bytes"]
    assert stats == {
        "path": stats["path"],
        "entries": 2,
        "valid": 1,
        "invalid": 1,
        "models": {"judge-model": 2},
        "oldest": stats["oldest"],
        "newest": stats["newest"],
        "runs": 2,
        "lookups": 3,
        "hit_rate": 1 / 3,
        "lifetime_usd": 0.015,
        "usd_unknown_calls": 1,
    }
    assert stats["oldest"] <= stats["newest"]
    assert [r["request"] for r in db.export()] == [None, None]  # --cache-no-requests
    db.close()
    reopened = open_cache(target)
    assert reopened.get_meta("negotiation:x|m") == '{"structured": "json_object"}'
    assert reopened.stats()["lookups"] == 3  # the batched ledger rows were committed on close
    reopened.close()


def test_prune_deletes_only_older_entries(target, monkeypatch):
    db = open_cache(target)
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() - 40 * DAY)
    _put(db, "old", {"v": 0})
    monkeypatch.setattr(time, "time", real)
    _put(db, "new", {"v": 1})
    assert db.prune(30 * DAY) == 1
    assert db.keys() == {"new"} and db.prune(30 * DAY) == 0
    db.close()


def test_an_unknown_schema_version_is_refused(target):
    db = open_cache(target)
    db.db.execute("UPDATE meta SET v = '99' WHERE k = 'schema_version'")
    db.close()
    with pytest.raises(
        InputError, match=f"schema version 99 is not supported .expected {SCHEMA_VERSION}"
    ):
        open_cache(target)


def _writer(target: str, me: int, start: object, errors: object) -> None:
    """One worker process: open the (new) cache at the same moment as the other, then store
    300 shared keys and 100 of its own."""
    try:
        start.wait(60)  # type: ignore[attr-defined]
        db = open_cache(target)
        for i in range(300):
            _put(db, f"shared-{i}", {"writer": me, "i": i})
            _put(db, f"own-{me}-{i % 100}", {"writer": me})
        db.close()
    except BaseException as exc:  # reported to the test through the queue
        errors.put(f"{type(exc).__name__}: {exc}")  # type: ignore[attr-defined]


def test_opening_a_database_in_use_waits_for_no_writer(pg_cluster):
    """A worker opens the cache while another holds a write open on it: the tables exist, so
    the opening only reads (index creation would wait for that write, and two such waits
    deadlocked two workers)."""
    import threading

    url = pg_cluster.new_database()
    writer = open_cache(url)
    writer._begin()
    writer.db.execute("LOCK TABLE judge_cache IN ROW EXCLUSIVE MODE")
    opened: list[JudgeCache] = []
    t = threading.Thread(target=lambda: opened.append(open_cache(url)), daemon=True)
    t.start()
    t.join(10)
    try:
        assert opened, "opening the cache waited for another connection's open write"
        assert opened[0].get("k") is None
    finally:
        writer.commit()
        t.join(10)
        for db in [writer, *opened]:
            db.close()


def test_two_processes_writing_the_same_keys_never_fail(target):
    ctx = multiprocessing.get_context("spawn")
    start, errors = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(target, me, start, errors)) for me in (0, 1)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0]
    assert errors.empty(), errors.get()
    db = open_cache(target)
    assert len(db) == 300 + 2 * 100  # each shared key stored once
    assert {db.get(f"shared-{i}").response["writer"] for i in range(300)} <= {0, 1}
    assert all(db.get(f"shared-{i}").response["i"] == i for i in range(300))
    db.close()


# -- the command line -------------------------------------------------------------------------


METRICS = ("-m", "faithfulness", "-m", "context_precision")


def _judge(inp: Path, cache: str, name: str) -> tuple[str, dict, str, str]:
    out, per = Path(f"{name}.json"), Path(f"{name}.jsonl")
    res = invoke(
        "judge",
        str(inp),
        *METRICS,
        "--cache",
        cache,
        "--output",
        str(out),
        "--per-sample",
        str(per),
    )
    assert res.code == 0, res.stderr
    return out.read_text(), json.loads(out.read_text()), per.read_text(), res.stdout + res.stderr


def _canonical(text: str) -> str:
    return json.dumps(json.loads(text), sort_keys=True)


def _scores(per_sample: str) -> list[tuple]:
    rows = map(json.loads, per_sample.splitlines())
    return [(r["id"], r["metric"], r["status"], r["value"]) for r in rows]


def test_a_run_on_postgresql_equals_one_on_sqlite_and_a_rerun_is_all_hits(
    tmp_path, pg_cluster, judge_env, fake
):
    inp = write_jsonl(tmp_path / "in.jsonl", samples(5))
    text_sql, _, per_sql, _ = _judge(inp, str(tmp_path / "c.sqlite"), "sqlite")
    sent_sql = len(fake.requests)
    fake.reset()
    url = pg_cluster.new_database().replace("//ragmeter@", f"//ragmeter:{PASSWORD}@")
    text_pg, remote, per_pg, shown = _judge(inp, url, "pg")
    # byte for byte, but for the order of the per-metric cost block, which follows the order in
    # which the first call of each metric finished (so two SQLite runs differ in it too)
    assert per_pg == per_sql and _canonical(text_pg) == _canonical(text_sql)
    assert sent_sql == len(fake.requests) == remote["cost"]["calls_sent"] == 15
    fake.reset()
    _, again, per_again, shown_again = _judge(inp, url, "again")
    assert fake.requests == []
    assert again["cost"]["cache_hits"] == 15 and again["cost"]["calls_sent"] == 0
    assert again["metrics"] == remote["metrics"]
    assert _scores(per_again) == _scores(per_pg)  # the records' call counts are per run
    dry = invoke("judge", str(inp), *METRICS, "--cache", url, "--dry-run", "--json")
    assert dry.code == 0, dry.stderr
    # every first-stage call is found in the PostgreSQL cache (5 statements + 5 usefulness)
    assert json.loads(dry.stdout)["total"]["cached"] == 10 and fake.requests == []
    stats = invoke("cache", "stats", "--cache", url)
    assert stats.code == 0, stats.stderr
    assert "cache        postgresql+psycopg://ragmeter:***@127.0.0.1:" in stats.stdout
    assert "hit rate     50.0% of 30 lookups over 2 runs" in stats.stdout
    export = tmp_path / "export.jsonl"
    assert invoke("cache", "export", str(export), "--cache", url).code == 0
    assert len(export.read_text().splitlines()) == 15
    written = [p.read_text(errors="replace") for p in tmp_path.iterdir() if p.is_file()]
    # the API key is in no table of the PostgreSQL cache (judge_cache, judge_ledger, meta)
    import psycopg

    with psycopg.connect(url.replace("+psycopg", "")) as conn:
        for table in ("judge_cache", "judge_ledger", "meta"):
            dump = conn.execute(f"SELECT {table}::text FROM {table}").fetchall()
            assert dump and SENTINEL_KEY not in repr(dump)
    for text in [*written, shown, shown_again, stats.stdout + stats.stderr]:
        assert PASSWORD not in text


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_unreachable_server_is_one_line_exit_2_without_the_password(tmp_path, judge_env, fake):
    from ragmeter.store.engine import CONNECT_TIMEOUT_S

    inp = write_jsonl(tmp_path / "in.jsonl", samples(1))
    url = f"postgresql://ragmeter:{PASSWORD}@127.0.0.1:{_closed_port()}/cache"
    t0 = time.monotonic()
    res = invoke("judge", str(inp), "-m", "faithfulness", "--cache", url)
    assert time.monotonic() - t0 < CONNECT_TIMEOUT_S
    assert res.code == 2 and res.stdout == "" and len(res.stderr.splitlines()) == 1
    assert "cannot connect to the judge cache" in res.stderr and "ragmeter:***@" in res.stderr
    assert PASSWORD not in res.stderr and fake.requests == []
    stats = invoke("cache", "stats", "--cache", url)
    assert stats.code == 2 and PASSWORD not in stats.stderr


def test_without_psycopg_the_extra_is_named(tmp_path, judge_env, fake, monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg fails
    inp = write_jsonl(tmp_path / "in.jsonl", samples(1))
    res = invoke("judge", str(inp), "-m", "faithfulness", "--cache", "postgresql://h/cache")
    assert res.code == 2 and len(res.stderr.splitlines()) == 1
    assert "pip install 'ragmeter[postgres]'" in res.stderr and fake.requests == []


def test_an_unsupported_cache_url_is_refused(tmp_path, judge_env, fake):
    inp = write_jsonl(tmp_path / "in.jsonl", samples(1))
    res = invoke("judge", str(inp), "-m", "faithfulness", "--cache", f"mysql://u:{PASSWORD}@h/c")
    assert res.code == 2 and len(res.stderr.splitlines()) == 1
    assert "unsupported judge cache 'mysql://u:***@h/c'" in res.stderr


def test_dask_refuses_a_password_in_the_url(tmp_path, judge_env, fake):
    inp = write_jsonl(tmp_path / "in.jsonl", samples(1))
    url = f"postgresql://ragmeter:{PASSWORD}@127.0.0.1:{_closed_port()}/cache"
    res = invoke("judge", str(inp), "-m", "faithfulness", "--cache", url, "--executor", "dask")
    assert res.code == 2 and len(res.stderr.splitlines()) == 1, res.stderr
    assert "PGPASSWORD" in res.stderr and PASSWORD not in res.stderr
    assert fake.requests == [] and not (tmp_path / ".ragmeter" / "work").exists()


def test_the_dashboard_reads_a_postgresql_cache_without_showing_the_password(
    pg_cluster, tmp_path, monkeypatch
):
    from ragmeter.cli.report import _judge_cache_path
    from ragmeter.web.pages import _judge_calls

    url = pg_cluster.new_database().replace("//ragmeter@", f"//ragmeter:{PASSWORD}@")
    db = open_cache(url)
    _put(db, "k1", {"text": "Supported.", "finish_reason": "stop"})
    db.close()
    monkeypatch.setenv("RAGMETER_JUDGE_CACHE", url)
    assert _judge_cache_path(None) == url and _judge_cache_path(url) == url
    values = [{"cache_keys": [{"stage": "faithfulness.verify", "key": "k1"}, {"key": "gone"}]}]
    state = _judge_calls(values, open_reader(url))
    assert state["status"] == "ok" and PASSWORD not in json.dumps(state)
    assert state["path"].startswith("postgresql+psycopg://ragmeter:***@127.0.0.1:")
    first, second = values[0]["judge_calls"]
    assert (first["found"], first["response"], first["valid"]) == (True, "Supported.", True)
    assert first["messages"] == [{"role": "user", "content": "ask k1 é"}]
    assert second["found"] is False
    closed = f"postgresql://ragmeter:{PASSWORD}@127.0.0.1:{_closed_port()}/cache"
    state = _judge_calls(values, open_reader(closed))
    assert (
        state["status"] == "unreadable" and "cannot connect to the judge cache" in state["message"]
    )
    assert PASSWORD not in json.dumps(state)


def test_a_runner_config_keeps_a_cache_url_and_joins_a_relative_file(tmp_path):
    from ragmeter.runner.judge_settings import resolve_judge

    url = "postgresql://ragmeter@cache-host/judge"
    block = {"model": "m", "base_url": "http://127.0.0.1:9/v1"}
    assert resolve_judge({**block, "cache": url}, str(tmp_path)).config.cache_path == url
    joined = resolve_judge({**block, "cache": "c.sqlite"}, str(tmp_path)).config.cache_path
    assert joined == str(tmp_path / "c.sqlite")


def test_a_server_gone_during_a_run_is_one_line_naming_the_cache(pg_cluster):
    import psycopg

    url = pg_cluster.new_database().replace("//ragmeter@", f"//ragmeter:{PASSWORD}@")
    db = open_cache(url)
    _put(db, "k1", {"v": 1})
    pid = db.db.conn.info.backend_pid
    admin = url.rsplit("/", 1)[0].replace("+psycopg", "") + "/postgres"
    with psycopg.connect(admin, autocommit=True) as c:  # the server ends this session
        c.execute("SELECT pg_terminate_backend(%s)", (pid,))
    with pytest.raises(
        InputError, match=r"^postgresql\+psycopg://ragmeter:\*\*\*@.*: the judge cache failed"
    ) as info:
        db.get("k1")
    assert PASSWORD not in str(info.value) and "\n" not in str(info.value)
    db.close()
