"""``ragmeter serve`` for real (a subprocess answering HTTP), its errors, and ``ragmeter run
--report`` (stored or not)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest

from tests.dashboard.browser import free_port
from tests.helpers import REPO, invoke


def test_serve_answers_on_loopback_and_stops_cleanly(project):
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragmeter", "serve", "--store", project.url, "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/index.json", timeout=2)
                break
            except httpx.TransportError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(proc.stderr.read().decode()) from None
                time.sleep(0.1)
        assert r.status_code == 200
        assert r.json()["pager"]["total"] == 13
        assert httpx.post(f"http://127.0.0.1:{port}/").status_code == 405
        # bound to the loopback interface only
        with socket.socket() as s:
            s.settimeout(1)
            other = _non_loopback_address()
            if other is not None:
                assert s.connect_ex((other, port)) != 0
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err.decode()
    text = err.decode()
    assert f"ragmeter dashboard: http://127.0.0.1:{port}/" in text
    assert "read-only" in text and "Traceback" not in text


def _non_loopback_address() -> str | None:
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # no packet is sent: this only picks a source address
            addr = s.getsockname()[0]
    except OSError:
        return None
    return None if addr.startswith("127.") else addr


def test_serve_errors_are_one_line(project, tmp_path):
    res = invoke("serve", "--store", str(tmp_path / "none.db"))
    assert res.code == 2
    assert res.stderr == (
        f"ragmeter serve: no results store at {tmp_path / 'none.db'} (ragmeter run writes one; "
        "or pass --store URL)\n"
    )
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        res = invoke("serve", "--store", project.url, "--port", str(port))
    assert res.code == 2
    assert res.stderr.startswith(f"ragmeter serve: cannot listen on 127.0.0.1:{port} (")
    assert res.stderr.endswith("; pick another --port\n")
    assert invoke("serve", "--port", "0").code == 2


def test_serve_without_the_web_extra(monkeypatch, project):
    monkeypatch.setitem(sys.modules, "starlette", None)
    res = invoke("serve", "--store", project.url)
    assert res.code == 2
    assert res.stderr == (
        "ragmeter serve: the dashboard needs ragmeter[web] (starlette is not installed): "
        "pip install 'ragmeter[web]'\n"
    )


def test_serve_on_a_public_address_warns_and_accepts_any_host(monkeypatch, project):
    import uvicorn

    seen = {}

    def fake_run(app, **kw):
        seen.update(kw, app=app)

    monkeypatch.setattr(uvicorn, "run", fake_run)
    monkeypatch.setattr("ragmeter.cli.report._check_port", lambda host, port: None)
    res = invoke("serve", "--store", project.url, "--host", "0.0.0.0", "--port", "8999")
    assert res.code == 0, res.stderr
    assert seen["host"] == "0.0.0.0" and seen["port"] == 8999
    assert "no login, so anyone who can reach it can read every stored run" in res.stderr
    from starlette.testclient import TestClient

    client = TestClient(seen["app"], base_url="http://dashboard.lan:8999")
    assert client.get("/").status_code == 200


@pytest.mark.parametrize("store", [True, False])
def test_run_writes_the_report(tmp_path, monkeypatch, store):
    from tests.runner import toy

    toy.install()
    try:
        config = toy.write_project(tmp_path / "project")
        monkeypatch.chdir(tmp_path)
        args = ["run", str(config), "--report", "-q", "--no-cache"]
        if not store:
            args.append("--no-store")
        res = invoke(*args)
    finally:
        toy.uninstall()
    assert res.code == 0, res.stderr
    reports = list((tmp_path / "results").glob("*/report.html"))
    assert len(reports) == 1
    assert f"report: {reports[0].relative_to(tmp_path)}" in res.stderr
    html = reports[0].read_text()
    assert "toy-project" in html and "base" in html and "good" in html
    assert (tmp_path / ".ragmeter" / "ragmeter.db").exists() == store
