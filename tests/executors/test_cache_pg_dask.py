"""``ragmeter judge --executor dask`` with the cache on PostgreSQL: workers "on other hosts" (the
driver's host name is faked, so the session cluster's workers are not on it) share the server,
no key is sent twice, and a SQLite cache is refused there."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.executors.test_judge import METRICS, fake, fake_server  # noqa: F401 (fixtures)
from tests.helpers import invoke
from tests.judge.test_cli import samples, write_jsonl


@pytest.fixture
def elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    """The driver reports a host name of its own: every worker is then on "another host"."""
    import ragmeter.executors.judge as xjudge

    monkeypatch.setattr(xjudge, "_driver_host", lambda: "driver-host-elsewhere")


def _judge(inp: Path, cache: str, name: str, *extra: str) -> tuple[dict, str]:
    per = Path(f"per-{name}.jsonl")
    r = invoke("judge", str(inp), *METRICS, "--cache", cache, "--per-sample", str(per), *extra)
    assert r.code == 0, r.stderr
    return json.loads(r.stdout), per.read_text(encoding="utf-8")


def _scores(per_sample: str) -> list[tuple]:
    rows = map(json.loads, per_sample.splitlines())
    return [(r["id"], r["metric"], r["status"], r["value"]) for r in rows]


def test_two_workers_on_other_hosts_share_a_postgresql_cache(
    fake,  # noqa: F811
    tmp_path,
    scheduler,
    pg_cluster,
    elsewhere,
):
    from ragmeter.judge.cache_open import open_cache

    inp = write_jsonl(tmp_path / "in.jsonl", samples(9))
    local, local_rows = _judge(inp, "local.sqlite", "local")
    fake.reset()
    url = pg_cluster.new_database()
    remote, remote_rows = _judge(inp, url, "remote", "--scheduler", scheduler, "--partitions", "4")
    where = remote.pop("executor")
    assert (where["kind"], where["workers"]) == ("dask", 2)
    assert remote == local and remote_rows == local_rows  # the in-process run's results
    assert len(fake.requests) == remote["cost"]["calls_sent"] == 27
    assert max(Counter(r.digest for r in fake.requests).values()) == 1  # no key sent twice
    db = open_cache(url)
    assert len(db) == 27 and db.stats()["lookups"] == 27  # the workers wrote to the server
    db.close()
    assert not Path(".ragmeter/judge-cache.sqlite").exists()
    fake.reset()
    args = ("--scheduler", scheduler, "--partitions", "3", "--keep-work")
    again, _ = _judge(inp, url, "again", *args)
    assert fake.requests == [] and again["cost"]["cache_hits"] == 27
    # the URL reached the workers through the work dir, as given
    work = [p for p in Path(".ragmeter/work").rglob("*") if p.is_file()]
    assert any(url.split("@")[1].encode() in p.read_bytes() for p in work)
    assert again["metrics"] == remote["metrics"]


def test_a_sqlite_cache_is_refused_for_workers_on_other_hosts(
    fake,  # noqa: F811
    tmp_path,
    scheduler,
    elsewhere,
):
    inp = write_jsonl(tmp_path / "in.jsonl", samples(2))
    r = invoke("judge", str(inp), *METRICS, "--cache", "c.sqlite", "--scheduler", scheduler)
    assert r.code == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1
    assert r.stderr.startswith(
        "ragmeter judge: the SQLite judge cache cannot be shared by workers on several hosts"
    )
    assert "use --cache postgresql+psycopg://..." in r.stderr and fake.requests == []


def test_workers_waiting_for_a_key_read_the_reply_from_postgresql(
    fake,  # noqa: F811
    tmp_path,
    scheduler,
    pg_cluster,
    elsewhere,
):
    # 12 samples, 3 distinct texts: every shard holds keys that other shards are sending, so
    # workers wait for each other's replies and read them from the server
    rows = [dict(row, id=f"s{i}") for i, row in enumerate(samples(3) * 4)]
    inp = write_jsonl(tmp_path / "in.jsonl", rows)
    local, local_rows = _judge(inp, "local.sqlite", "local")
    sent_locally = len(fake.requests)
    fake.reset()
    url = pg_cluster.new_database()
    remote, remote_rows = _judge(inp, url, "remote", "--scheduler", scheduler, "--partitions", "4")
    remote.pop("executor")
    assert sent_locally == len(fake.requests) == 9  # 3 texts x 3 calls, each sent once
    assert max(Counter(r.digest for r in fake.requests).values()) == 1
    assert remote["metrics"] == local["metrics"]
    assert _scores(remote_rows) == _scores(local_rows)  # every sample's values, in input order
    assert remote["cost"]["calls_sent"] + remote["cost"]["cache_hits"] == 36
