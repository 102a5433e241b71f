"""In-process clients: mcp 2.x with the framed handshake (UltraRAG's path) and direct dispatch,
or mcp 1.x over in-memory streams. Schemas, structured results, errors, progress, modes."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest

from ragmeter._version import __version__
from ragmeter.mcp import progress
from ragmeter.mcp.compat import CompatTools
from ragmeter.mcp.paths import Roots
from ragmeter.mcp.server import build_server
from ragmeter.mcp.settings import Settings
from ragmeter.mcp.tools import OwnTools
from tests.helpers import DATA
from tests.mcp.conftest import FIXED_TIME, vector
from tests.mcp.session import in_process_modes, open_session

ALL = [
    "evaluate", "evaluate_trec", "evaluate_trec_pvalue", "trec", "answers", "grounded", "steps",
    "judge",
    "compare",
    "gate", "run", "list_runs", "show_run", "list_metrics",
]  # fmt: skip
SIGNATURES = json.loads((DATA / "ultrarag" / "signatures.json").read_text(encoding="utf-8"))


def server_for(root: Path, **kw):
    tools = kw.pop("tools", "all")
    return build_server(
        Settings(roots=Roots([str(root)]), clock=lambda: FIXED_TIME, **kw), tools=tools
    )


def run(coro):
    return asyncio.run(coro)


@pytest.fixture(scope="module")
def server(work):
    return server_for(work)


@pytest.mark.parametrize("mode", in_process_modes())
def test_listing_schemas_and_annotations(server, mode):
    async def go():
        async with open_session(server, mode=mode) as s:
            return await s.list_tools()

    tools = {t.name: t for t in run(go())}
    assert list(tools) == ALL
    for name, sig in SIGNATURES["tools"].items():
        props = list(tools[name].input_schema["properties"])
        # UltraRAG's parameters first, in its order; ragmeter's extras after them
        assert props[: len(sig["params"])] == sig["params"], name
        assert "ctx" not in props
    for t in tools.values():
        assert t.output_schema is not None and t.output_schema["type"] == "object", t.name
    assert tools["trec"].annotations["readOnlyHint"] is True
    assert tools["evaluate"].annotations["readOnlyHint"] is False
    assert tools["run"].annotations["openWorldHint"] is True


@pytest.mark.parametrize("mode", in_process_modes())
def test_results_and_errors(server, work, mode):
    vec = vector("cli_vectors", "cli-ultrarag-01")
    rows = vec["input_jsonl"]

    async def go():
        async with open_session(server, mode=mode) as s:
            ev = await s.call_ok(
                "evaluate",
                {
                    "pred_ls": [r["pred_answer"] for r in rows],
                    "gt_ls": [r["golden_answers"] for r in rows],
                    "metrics": ["em", "f1", "rouge-l"],
                },
            )
            trec = await s.call_ok(
                "evaluate_trec",
                {"run_path": "results.test", "qrels_path": "qrels.test", "ks": [10]},
            )
            bad = await s.call_tool(
                "evaluate_trec", {"run_path": "bad.run", "qrels_path": "qrels.test"}
            )
            outside = await s.call_tool(
                "trec", {"qrels_path": "qrels.test", "run_path": "../results.test"}
            )
            mismatch = await s.call_tool("evaluate", {"pred_ls": ["a"], "gt_ls": ["a", "b"]})
            wrong_type = await s.call_tool(
                "evaluate_trec",
                {"run_path": "results.test", "qrels_path": "qrels.test", "ks": "ten"},
            )
            after = await s.call_ok("list_metrics", {"task": "retrieval"})
            return ev, trec, bad, outside, mismatch, wrong_type, after

    ev, trec, bad, outside, mismatch, wrong_type, after = run(go())  # fmt: skip
    assert ev["eval_res"] == vec["expected_metrics_output"]
    assert trec["eval_res"]["P@10"] == 0.3
    assert bad[2] is True and bad[0] is None
    assert bad[1].startswith("Error executing tool evaluate_trec: bad.run:2: ")
    assert outside[2] is True
    assert outside[1] == (
        "Error executing tool trec: ragmeter mcp: path '../results.test' is outside the allowed "
        f"roots ({work})"
    )
    assert mismatch[1] == (
        "Error executing tool evaluate: ragmeter mcp: evaluate: pred_ls: 1 items, gt_ls: 2 "
        "(expected equal lengths)"
    )
    assert wrong_type[2] is True  # the SDK's schema validation, before ragmeter runs
    assert after["metrics"][0]["task"] == "retrieval"  # the server kept serving


def test_unexpected_exception_is_one_line(work, monkeypatch, caplog):
    def boom(self, task=None):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(OwnTools, "list_metrics", boom)
    srv = server_for(work, tools="list_metrics")

    async def go():
        async with open_session(srv, mode=in_process_modes()[0]) as s:
            return await s.call_tool("list_metrics", {})

    _, text, is_error = run(go())
    assert is_error is True
    assert text == (
        f"Error executing tool list_metrics: internal error in ragmeter {__version__} "
        "(details in the server log)"
    )
    assert "secret internals" in caplog.text  # the traceback is in the server's log


def test_ultrarag_mode_wraps_own_tools_and_serves_build(work):
    srv = server_for(work, ultrarag=True, tools="grounded,evaluate")

    async def go():
        async with open_session(srv, mode=in_process_modes()[0]) as s:
            names = [t.name for t in await s.list_tools()]
            res = await s.call_ok(
                "grounded", {"gold_path": "gold.jsonl", "trace_path": "trace.jsonl"}
            )
            return names, res

    names, res = run(go())
    assert names == ["grounded", "evaluate", "build"]
    assert list(res) == ["grounded_res"]
    assert res["grounded_res"]["pass"] is False and res["grounded_res"]["exit_status"] == 1


def test_run_reports_progress_and_a_failed_gate_is_a_result(work):
    srv = server_for(work)
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done, total, message):
        seen.append((done, total, message))

    async def go():
        async with open_session(srv, mode=in_process_modes()[0]) as s:
            structured, text, is_error = await s.call_tool(
                "run", {"config_path": "ragmeter.yaml"}, progress=on_progress
            )
            assert not is_error, text
            runs = await s.call_ok("list_runs", {})
            gate = await s.call_ok("gate", {"run": structured["run_ids"][1]})
            shown = await s.call_ok("show_run", {"run_id": structured["run_ids"][0]})
            cmp = await s.call_ok(
                "compare",
                {
                    "runs": structured["run_ids"],
                    "metrics": ["retrieval.nDCG@10"],
                    "format": "ultrarag",
                },
            )
            return structured, runs, gate, shown, cmp

    out, runs, gate, shown, cmp = run(go())
    assert out["pass"] is False and out["exit_status"] == 1
    assert seen and seen[-1][0] == seen[-1][1] and seen[-1][2] == "retrieval"
    assert {r["id"] for r in runs["runs"]} >= set(out["run_ids"])
    assert gate["pass"] is False and gate["rules"][0]["verdict"] == "FAIL"
    assert shown["run"]["id"] == out["run_ids"][0]
    res = cmp["retrieval.nDCG@10"]
    assert res["diff"] == pytest.approx(res["A_mean"] - res["B_mean"])
    assert (work / out["results_dir"] / "summary.json").exists()


def test_a_cancelled_call_writes_nothing(work):
    state = progress.CallState()
    state.cancelled.set()
    token = progress.bind(state)
    try:
        with pytest.raises(Exception, match="cancelled"):
            CompatTools(Settings(roots=Roots([str(work)]))).evaluate_trec_pvalue(
                "results.test", "results.reversed", "qrels.test", save_path="cancelled.json"
            )
    finally:
        progress.unbind(token)
    assert not (work / "cancelled.json").exists()


def test_a_protocol_cancellation_stops_the_engine_and_writes_nothing(work, monkeypatch):
    """notifications/cancelled over the framed protocol: the worker stops at its next check,
    nothing is saved, and the same session keeps serving."""
    stopped = threading.Event()
    check = progress.CallState.check

    def spying_check(self):
        try:
            check(self)
        except Exception:
            stopped.set()
            raise

    monkeypatch.setattr(progress.CallState, "check", spying_check)
    srv = server_for(work, tools="evaluate_trec_pvalue,list_metrics")
    args = {
        "run_new_path": "results.test",
        "run_old_path": "results.reversed",
        "qrels_path": "qrels.test",
        "save_path": "protocol-cancelled.json",
    }

    async def go():
        async with open_session(srv, mode=in_process_modes()[0]) as s:
            await s.call_cancelled("evaluate_trec_pvalue", args)
            assert await asyncio.to_thread(stopped.wait, 30)
            return await s.call_ok("list_metrics", {"task": "retrieval"})

    listed = run(go())
    assert listed["metrics"]  # the server still answers after the cancellation
    assert not list(work.glob("protocol-cancelled*"))


def test_run_progress_of_a_skipped_task_claims_no_work():
    seen: list[tuple[float, float, str]] = []
    bar = progress.RunProgress(progress.CallState(lambda *a: seen.append(a), clock=lambda: 0.0))
    done, skipped = bar.add("retrieval", 4), bar.add("judge", 6)
    bar.advance(done, 4)
    bar.finish(done)
    bar.finish(skipped, skipped=True)  # no system was scored on it
    assert seen[-1] == (4, 4, "judge")
