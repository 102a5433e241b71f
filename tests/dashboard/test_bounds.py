"""The dashboard under hostile requests: out-of-range dates, huge parameters, more concurrent
requests than it works on at once (docs/dashboard.md, "Limits"), and ``serve`` on a bad host."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from starlette.testclient import TestClient

from ragmeter.report.render import url_id
from ragmeter.store import open_store
from ragmeter.web import create_app, pages
from tests.dashboard.browser import serve
from tests.helpers import invoke

BASE = "http://127.0.0.1:8150"


@pytest.fixture(scope="module")
def client(project):
    return TestClient(create_app(project.store), base_url=BASE)


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (
            "until=9999-12-31",
            "until: '9999-12-31' is out of range (expected a date up to 9999-12-30)",
        ),
        (
            "until=9999-12-31T23:00:00-05:00",
            "until: '9999-12-31T23:00:00-05:00' is out of range (expected a date from "
            "0001-01-02 to 9999-12-30)",
        ),
        (
            "since=0001-01-01T00:00:00%2B01:00",
            "since: '0001-01-01T00:00:00+01:00' is out of range (expected a date from "
            "0001-01-02 to 9999-12-30)",
        ),
        ("until=2025-13-01", "until: '2025-13-01' is not a date (expected YYYY-MM-DD)"),
    ],
)
def test_dates_out_of_range_are_400(client, query, message):
    for path in ("/", "/index.json"):
        r = client.get(f"{path}?{query}")
        assert r.status_code == 400, r.text[:200]
        if path.endswith(".json"):
            assert r.json() == {"error": message, "status": 400}
        else:
            assert message.replace("'", "&#39;") in r.text


def test_a_normal_until_still_filters(client, project):
    everything = client.get("/index.json").json()["pager"]["total"]
    assert client.get("/index.json?until=9999-12-30").json()["pager"]["total"] == everything
    assert client.get("/index.json?until=2000-01-01").json()["pager"]["total"] == 0


def asgi_get(app, target: str) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    """GET ``target`` straight through the ASGI app: HTTP clients refuse URLs this long."""
    import asyncio
    from urllib.parse import unquote

    path, _, query = target.partition("?")
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": unquote(path),
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1:8150")],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8150),
    }
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, body.decode()


def test_huge_parameters_are_400_before_any_query(project, monkeypatch):
    app = create_app(project.store)
    rid = project.evaluation.run_ids[0]
    huge = "x" * 100_000
    called = []
    monkeypatch.setattr(pages, "run_page", lambda *a, **k: called.append(a))
    expected = "100,000 characters long (expected at most 1,000)"
    for url in (
        f"/runs/{url_id(rid)}?q={huge}",
        f"/runs/{url_id(rid)}.json?q={huge}",
        f"/compare?run={huge}&run={rid}",
        f"/compare.json?runs={huge}",
        f"/?project={huge}",
        f"/trends?metric={huge}",
    ):
        status, body = asgi_get(app, url)
        assert status == 400, (url[:60], status)
        if ".json" in url:
            assert json.loads(body)["error"].endswith(expected)
        else:
            assert expected in body
    assert called == []
    many = "&".join(f"p{i}=1" for i in range(60))
    status, body = asgi_get(app, f"/index.json?{many}")
    assert (status, json.loads(body)["error"]) == (
        400,
        "60 query parameters (expected at most 50)",
    )


def test_a_compare_page_of_too_many_runs_is_400(client):
    runs = ",".join(f"r{i}" for i in range(21))
    r = client.get(f"/compare.json?runs={runs}")
    assert r.status_code == 400
    assert r.json()["error"] == "runs: 21 runs named (a compare page shows at most 20)"


def test_saturated_dashboard_answers_503_quickly(project, monkeypatch):
    """max_busy=1: while one page is being built, the others wait busy_wait_s and get a 503
    with Retry-After; once it is done, pages answer again."""
    entered, release = threading.Event(), threading.Event()
    real = pages.runs_page

    def slow(store, params):  # type: ignore[no-untyped-def]
        entered.set()
        assert release.wait(30)
        return real(store, params)

    monkeypatch.setattr(pages, "runs_page", slow)
    app = create_app(project.url, max_busy=1, busy_wait_s=0.2)
    with serve(app) as base, ThreadPoolExecutor(8) as pool:
        first = pool.submit(httpx.get, f"{base}/index.json", timeout=30)
        assert entered.wait(30)
        others = [pool.submit(httpx.get, f"{base}/index.json", timeout=30) for _ in range(5)]
        busy = [f.result() for f in others]
        release.set()
        done = first.result()
        after = httpx.get(f"{base}/index.json", timeout=30)
    assert done.status_code == 200 and done.json()["pager"]["total"] == 13
    assert [r.status_code for r in busy] == [503] * 5
    assert busy[0].headers["retry-after"] == "1"
    assert busy[0].json() == {
        "error": "the dashboard is busy (1 pages in progress); try again in a moment",
        "status": 503,
    }
    assert after.status_code == 200


def test_the_dashboard_opens_the_store_read_only(tmp_path):
    import sqlite3

    path = tmp_path / "app.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE users (id int)")
    conn.commit()
    conn.close()
    with pytest.raises(Exception, match="is not a ragmeter results store"):
        create_app(f"sqlite:///{path}")
    with open_store(tmp_path / "store.db") as store:
        store.write([])
    app = create_app(f"sqlite:///{tmp_path / 'store.db'}")
    assert app.state.store.readonly
    r = TestClient(app, base_url=BASE).get("/index.json")
    assert r.status_code == 200 and r.json()["pager"]["total"] == 0


@pytest.mark.parametrize(
    ("host", "message"),
    [
        ("999.1.1.1", "--host '999.1.1.1' is not a valid address or a name this machine can"),
        ("no such host!", "--host 'no such host!' is not a valid address"),
    ],
)
def test_serve_on_an_invalid_host(project, host, message):
    res = invoke("serve", "--store", project.url, "--host", host, "--port", "8999")
    assert res.code == 2
    assert res.stderr.startswith(f"ragmeter serve: {message}") and res.stderr.count("\n") == 1
    assert "pick another --port" not in res.stderr


def test_serve_on_an_address_this_machine_does_not_have(project):
    res = invoke("serve", "--store", project.url, "--host", "192.0.2.77", "--port", "8999")
    assert res.code == 2
    assert res.stderr == (
        "ragmeter serve: cannot listen on 192.0.2.77:8999 (Cannot assign requested address); "
        "192.0.2.77 is not an address of this machine; use e.g. 127.0.0.1\n"
    )
