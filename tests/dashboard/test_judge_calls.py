"""The sample page shows each judge call's prompt and reply, looked up read-only in the judge
cache by the keys the judge engine records in the stored detail (docs/dashboard.md, "Pages and
URLs")."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
from collections.abc import Iterator

import pytest
from markupsafe import escape
from starlette.testclient import TestClient

from ragmeter.report.render import url_id
from ragmeter.store import open_store
from ragmeter.web import create_app, pages
from tests.dashboard.builders import XSS_IMG, XSS_SCRIPT
from tests.dashboard.judged import EVIL_ANSWER, Judged, judged_project
from tests.helpers import invoke
from tests.judge.fake_openai import SENTINEL_KEY, FakeOpenAI

BASE = "http://127.0.0.1:8150"


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Judged]:
    server = FakeOpenAI().start()
    try:
        yield judged_project(tmp_path_factory.mktemp("judged"), server)
    finally:
        server.stop()


def sample_url(j: Judged, sample_id: str) -> str:
    return f"/runs/{url_id(j.run_id)}/samples/{url_id(sample_id)}"


def fingerprint(folder) -> dict[str, tuple[str, int]]:
    """Every file of the cache's folder: its SHA-256 and mtime."""
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(folder.iterdir())
        if p.name.startswith("judge-cache")
    }


def faithfulness(data: dict) -> dict:
    (task,) = [t for t in data["tasks"] if t["task"] == "judge"]
    return next(v for v in task["values"] if v["metric"] == "faithfulness")


def test_the_stored_detail_records_stages_and_keys_only(judged):
    with open_store(judged.url) as store:
        rows = store.samples(judged.run_id, metric="faithfulness")
    assert {r["sample_id"] for r in rows} == set(judged.sample_ids)
    db = sqlite3.connect(judged.cache.as_uri() + "?mode=ro&immutable=1", uri=True)
    cached = {k for (k,) in db.execute("SELECT key FROM judge_cache")}
    db.close()
    for r in rows:
        detail = json.loads(r["detail"])
        refs = detail["cache_keys"]
        # faithfulness: statements, then one verify call (fewer than 20 statements)
        assert [(c["stage"], c["kind"], c["repeat"]) for c in refs] == [
            ("faithfulness.statements", "call", 0),
            ("faithfulness.verify", "call", 0),
        ]
        assert all(len(c["key"]) == 64 and c["key"] in cached for c in refs)
        assert set(refs[0]) == {"stage", "kind", "repeat", "key"}
    # no prompt text in the store: the prompts' system line is only in the cache
    stored = judged.store_path.read_bytes()
    assert b"ragmeter-task:" not in stored and b"ragmeter-task:" in judged.cache.read_bytes()


def test_sample_page_shows_the_exact_prompts_and_replies_escaped(judged):
    before = fingerprint(judged.cache.parent)
    assert list(before) == ["judge-cache.sqlite"]  # the judge run closed it (no -wal left)
    client = TestClient(create_app(judged.url, judge_cache=judged.cache), base_url=BASE)
    data = client.get(sample_url(judged, judged.evil_id) + ".json").json()
    assert data["judge_cache"] == {"path": str(judged.cache), "status": "ok", "message": None}
    value = faithfulness(data)
    calls = value["judge_calls"]
    assert [c["stage"] for c in calls] == ["faithfulness.statements", "faithfulness.verify"]
    sent = [r.messages for r in judged.server.requests]
    for c in calls:
        assert c["found"] and c["note"] is None and c["valid"] is True
        assert c["messages"] in sent  # exactly what was sent to the endpoint
        assert c["model"] == "judge-test-model" and c["finish_reason"] == "stop"
    statements = json.loads(calls[0]["response"])["statements"]
    assert any(XSS_SCRIPT in s for s in statements)  # the reply quotes the answer
    assert EVIL_ANSWER in calls[0]["messages"][-1]["content"]

    page = client.get(sample_url(judged, judged.evil_id))
    assert page.status_code == 200
    text = page.text
    for c in calls:
        for m in c["messages"]:
            assert f'<pre class="judge-message">{escape(m["content"])}</pre>' in text
        assert f'<pre class="judge-response">{escape(c["response"])}</pre>' in text
        assert (
            f'<details class="judge-call"><summary>judge call: <span class="mono">{c["stage"]}'
            in text
        )
    for payload in (XSS_SCRIPT, XSS_IMG):
        assert payload not in text
        assert escape(payload) in text
    # every sample of the run resolves, and serving wrote nothing next to the cache
    for sid in judged.sample_ids:
        assert client.get(sample_url(judged, sid)).status_code == 200
    assert fingerprint(judged.cache.parent) == before


def test_a_cache_that_a_judge_run_holds_open_is_read_the_same(judged, tmp_path):
    from ragmeter.judge.cache import JudgeCache

    copy = tmp_path / "judge-cache.sqlite"
    shutil.copyfile(judged.cache, copy)
    writer = JudgeCache(copy)  # WAL mode: a -wal file exists while it is open
    try:
        writer.set_meta("touched", "1")
        assert (tmp_path / "judge-cache.sqlite-wal").exists()
        view = pages.sample_page(
            open_store(judged.url),
            judged.run_id,
            judged.evil_id,
            judge_cache=_reader(copy),
        )
        assert [c["found"] for c in faithfulness(view)["judge_calls"]] == [True, True]
    finally:
        writer.close()


def _reader(path):
    from ragmeter.judge.cache import CacheReader

    return CacheReader(path)


def test_missing_cache_and_pruned_entries_say_so(judged, tmp_path):
    missing = tmp_path / "nowhere" / "judge-cache.sqlite"
    client = TestClient(create_app(judged.url, judge_cache=missing), base_url=BASE)
    data = client.get(sample_url(judged, judged.evil_id) + ".json").json()
    assert data["judge_cache"]["status"] == "missing"
    value = faithfulness(data)
    assert value["judge_cache_note"] == f"judge cache not found at {missing}"
    assert [c["found"] for c in value["judge_calls"]] == [False, False]
    text = client.get(sample_url(judged, judged.evil_id)).text
    assert f"judge cache not found at {escape(str(missing))}" in text
    assert "faithfulness.statements" in text and not missing.exists()

    # no cache given at all (the Python API's default)
    text = (
        TestClient(create_app(judged.url), base_url=BASE)
        .get(sample_url(judged, judged.evil_id))
        .text
    )
    assert escape(pages.NO_CACHE_GIVEN) in text

    # an entry pruned since the run: that call says so, the other one still shows
    pruned = tmp_path / "pruned.sqlite"
    shutil.copyfile(judged.cache, pruned)
    first = value["judge_calls"][0]["key"]
    with sqlite3.connect(pruned) as db:
        db.execute("DELETE FROM judge_cache WHERE key = ?", (first,))
    client = TestClient(create_app(judged.url, judge_cache=pruned), base_url=BASE)
    calls = faithfulness(client.get(sample_url(judged, judged.evil_id) + ".json").json())[
        "judge_calls"
    ]
    assert [(c["found"], c["note"]) for c in calls] == [
        (False, pages.ENTRY_PRUNED),
        (True, None),
    ]
    assert escape(pages.ENTRY_PRUNED) in client.get(sample_url(judged, judged.evil_id)).text

    # a file that is not a judge cache: one line, the page still answers
    bogus = tmp_path / "bogus.sqlite"
    bogus.write_text("not a database", encoding="utf-8")
    client = TestClient(create_app(judged.url, judge_cache=bogus), base_url=BASE)
    data = client.get(sample_url(judged, judged.evil_id) + ".json").json()
    assert data["judge_cache"]["status"] == "unreadable"
    assert data["judge_cache"]["message"].startswith(f"{bogus}: cannot read the judge cache")
    assert bogus.read_text(encoding="utf-8") == "not a database"


def test_the_api_key_is_nowhere(judged):
    # it was sent (so the check below can fail) ...
    auth = {r.headers.get("authorization") for r in judged.server.requests}
    assert auth == {f"Bearer {SENTINEL_KEY}"}
    # ... and is neither in the store, the cache nor any page
    key = SENTINEL_KEY.encode()
    for path in judged.store_path.parent.rglob("*"):
        if path.is_file():
            assert key not in path.read_bytes(), path
    client = TestClient(create_app(judged.url, judge_cache=judged.cache), base_url=BASE)
    for sid in judged.sample_ids:
        for suffix in ("", ".json"):
            assert SENTINEL_KEY not in client.get(sample_url(judged, sid) + suffix).text
    assert SENTINEL_KEY not in client.get(f"/runs/{url_id(judged.run_id)}").text


def test_serve_refuses_a_judge_cache_that_does_not_exist(judged, tmp_path):
    res = invoke("serve", "--store", judged.url, "--judge-cache", str(tmp_path / "nope.sqlite"))
    assert res.code == 2
    assert res.stderr.strip() == (
        f"ragmeter serve: --judge-cache {tmp_path / 'nope.sqlite'} does not exist "
        "(expected the judge's cache file, e.g. .ragmeter/judge-cache.sqlite)"
    )


def test_the_default_judge_cache_path(monkeypatch, tmp_path):
    from ragmeter.cli.report import _judge_cache_path

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGMETER_JUDGE_CACHE", raising=False)
    assert _judge_cache_path(None) == tmp_path / ".ragmeter" / "judge-cache.sqlite"
    monkeypatch.setenv("RAGMETER_JUDGE_CACHE", "elsewhere/c.sqlite")
    assert _judge_cache_path(None) == tmp_path / "elsewhere" / "c.sqlite"
    os.makedirs(tmp_path / "given")
    (tmp_path / "given" / "c.sqlite").write_bytes(b"")
    assert _judge_cache_path(tmp_path / "given" / "c.sqlite") == tmp_path / "given" / "c.sqlite"


def test_a_reply_that_was_too_large_shows_its_reason(judged, tmp_path):
    from ragmeter.judge.replies import too_large

    # the judge caches the reason, never the body, of a reply over max_reply_bytes
    marker = tmp_path / "too-large.sqlite"
    shutil.copyfile(judged.cache, marker)
    first = faithfulness(
        pages.sample_page(
            open_store(judged.url), judged.run_id, judged.evil_id, judge_cache=_reader(marker)
        )
    )["judge_calls"][0]["key"]
    with sqlite3.connect(marker) as db:
        db.execute(
            "UPDATE judge_cache SET response_json = ?, valid = 0 WHERE key = ?",
            (json.dumps(too_large(1048576)), first),
        )
    db.close()
    client = TestClient(create_app(judged.url, judge_cache=marker), base_url=BASE)
    calls = faithfulness(client.get(sample_url(judged, judged.evil_id) + ".json").json())[
        "judge_calls"
    ]
    reason = "reply_too_large: the reply has more than 1048576 bytes (max_reply_bytes)"
    assert calls[0]["found"] and calls[0]["response"] == f"(reply not kept) {reason}"
    assert calls[1]["response"] is not None and "reply_too_large" not in calls[1]["response"]
    text = client.get(sample_url(judged, judged.evil_id)).text
    assert f'<pre class="judge-response">{escape("(reply not kept) " + reason)}</pre>' in text
