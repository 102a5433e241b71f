"""``ragmeter mcp`` as a process: stdio (every tool once) and streamable HTTP on loopback."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.helpers import REPO
from tests.mcp.session import open_session


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO / "src"), env.get("PYTHONPATH")) if p)
    return env


def stdio_params(root: Path, *extra: str):
    from mcp import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "ragmeter", "mcp", "--root", str(root), *extra],
        env=child_env(),
    )


def test_every_tool_over_stdio(work):
    (work / "answers.jsonl").write_text(
        '{"id": 1, "pred_answer": "Paris", "golden_answers": ["paris"]}\n'
        '{"id": 2, "pred_answer": "Lyon", "golden_answers": ["Marseille"]}\n',
        encoding="utf-8",
    )
    (work / "warn.run").write_text(
        (work / "results.test").read_text(encoding="utf-8") + "999 Q0 dX 1 1.0 STANDARD\n",
        encoding="utf-8",
    )

    async def go():
        async with open_session(stdio_params(work)) as s:
            out = {}
            out["evaluate"] = await s.call_ok("evaluate", {"pred_ls": ["a b"], "gt_ls": [["a"]]})
            out["evaluate_trec"] = await s.call_ok(
                "evaluate_trec", {"run_path": "results.test", "qrels_path": "qrels.test"}
            )
            out["evaluate_trec_pvalue"] = await s.call_ok(
                "evaluate_trec_pvalue",
                {"run_new_path": "results.test", "run_old_path": "results.reversed",
                 "qrels_path": "qrels.test", "metrics": ["map"], "n_resamples": 99},
            )  # fmt: skip
            # a run query without judgments: a warning on stderr, the stream stays intact
            out["trec"] = await s.call_ok("trec", {"qrels_path": "qrels.test",
                                                   "run_path": "warn.run"})  # fmt: skip
            out["grounded"] = await s.call_ok(
                "grounded", {"gold_path": "gold.jsonl", "trace_path": "trace.jsonl"}
            )
            out["answers"] = await s.call_ok(
                "answers", {"input_path": "answers.jsonl", "metrics": ["em", "f1"]}
            )
            out["steps"] = await s.call_ok(
                "steps", {"reference_path": "reference_1.yaml",
                          "responses_path": "responses_1.jsonl"}
            )  # fmt: skip
            out["run"] = await s.call_ok("run", {"config_path": "ragmeter.yaml"})
            ids = out["run"]["run_ids"]
            out["list_runs"] = await s.call_ok("list_runs", {"limit": 0})
            out["show_run"] = await s.call_ok("show_run", {"run_id": ids[0]})
            out["gate"] = await s.call_ok("gate", {"run": ids[1]})
            out["compare"] = await s.call_ok("compare", {"runs": ids})
            out["list_metrics"] = await s.call_ok("list_metrics", {"task": "answers"})
            return out

    out = asyncio.run(go())
    assert out["evaluate"]["eval_res"]["acc"] == [1.0]
    assert out["evaluate_trec"]["eval_res"]["P@10"] == 0.3
    assert out["evaluate_trec_pvalue"]["eval_res"]["map"]["A_mean"] == pytest.approx(0.178545, 1e-5)
    assert any("1 query in warn.run has no judgments" in w for w in out["trec"]["warnings"])
    assert out["grounded"]["precision"] == 0.375
    assert (out["answers"]["avg_em"], out["answers"]["ragmeter"]["profile"]) == (0.5, "squad")
    assert out["steps"]["aggregates"]
    assert out["gate"]["exit_status"] == 1
    pairs = out["compare"]["pairs"]
    assert {p["metric"] for p in pairs} == {"retrieval.RR", "retrieval.nDCG@10"}
    assert {m["task"] for m in out["list_metrics"]["metrics"]} == {"answers"}


def _initialize_line() -> bytes:
    msg = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    return (json.dumps(msg) + "\n").encode()


def test_stdio_stdout_is_protocol_only_and_eof_exits_0(work):
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragmeter", "mcp", "--root", str(work)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(),
    )
    assert proc.stderr.readline().decode().strip() == "ragmeter mcp: serving stdio"
    proc.stdin.write(_initialize_line())
    proc.stdin.flush()
    reply = json.loads(proc.stdout.readline())
    assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "ragmeter"
    proc.stdin.close()
    assert proc.wait(timeout=5) == 0
    assert proc.stdout.read() == b""  # nothing but protocol messages on stdout


def test_stdio_sigterm_exits_0(work):
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragmeter", "mcp", "--root", str(work)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(),
    )
    assert proc.stderr.readline().decode().strip() == "ragmeter mcp: serving stdio"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == 0
    proc.stdin.close()


class HttpServer:
    """``ragmeter mcp --transport http --port 0``; the URL comes from the first stderr line."""

    def __init__(self, root: Path, *extra: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ragmeter", "mcp", "--transport", "http", "--port", "0",
             "--root", str(root), *extra],
            stderr=subprocess.PIPE,
            env=child_env(),
        )  # fmt: skip
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.append(self.proc.stderr.readline().decode()))
        reader.start()
        reader.join(timeout=60)
        assert line, "the server printed no startup line"
        prefix = "ragmeter mcp: serving "
        assert line[0].startswith(prefix), line[0]
        self.url = line[0][len(prefix) :].strip()


def test_http_round_trip_rebinding_check_and_sigterm(work):
    server = HttpServer(work)
    try:
        assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/mcp")

        async def go():
            async with open_session(server.url) as s:
                return await s.call_ok(
                    "evaluate_trec",
                    {"run_path": "results.test", "qrels_path": "qrels.test", "ks": [10]},
                )

        assert asyncio.run(go())["eval_res"]["P@10"] == 0.3
        u = urlparse(server.url)
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
        conn.request(
            "POST",
            u.path,
            body=_initialize_line(),
            headers={
                "Host": "evil.example",
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
            },
        )
        resp = conn.getresponse()
        assert resp.status == 421
        assert b"Invalid Host header" in resp.read()
        conn.close()
    finally:
        server.proc.send_signal(signal.SIGTERM)
        start = time.monotonic()
        code = server.proc.wait(timeout=15)
    assert code == 0, f"exit {code} after {time.monotonic() - start:.1f} s"
