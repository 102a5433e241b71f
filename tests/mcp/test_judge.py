"""The ``judge`` tool: the endpoint comes only from the server, the budget only goes down, no key
in a result or log, and no endpoint means ``needs_llm`` (a result, not an error)."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from ragmeter.judge.config import HINT
from ragmeter.mcp.paths import Roots
from ragmeter.mcp.server import build_server
from ragmeter.mcp.settings import Settings
from tests.judge.fake_openai import SENTINEL_KEY, FakeOpenAI
from tests.mcp.session import in_process_modes, open_session

# the judge's settings a developer may have exported; no test reads them
ENV_VARS = (
    "OPENAI_API_KEY",
    "RAGMETER_LLM_BASE_URL",
    "RAGMETER_LLM_MODEL",
    "RAGMETER_JUDGE_CACHE",
    "RAGMETER_PRICES",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
)


def samples(n: int) -> list[dict]:
    return [
        {
            "id": f"q{i}",
            "question": f"Question {i}?",
            "answer": f"Answer {i}. Extra {i}.",
            "reference": f"Answer {i}.",
            "contexts": [f"answer {i} is here", "noise"],
        }
        for i in range(n)
    ]


@pytest.fixture
def root(tmp_path, monkeypatch):
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "in.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in samples(3)), encoding="utf-8"
    )
    return tmp_path


@pytest.fixture(scope="module")
def fake():
    server = FakeOpenAI().start()
    yield server
    server.stop()


def call(server, name, args):
    async def go():
        async with open_session(server, mode=in_process_modes()[0]) as s:
            tools = {t.name: t for t in await s.list_tools()}
            return tools, await s.call_tool(name, args)

    return asyncio.run(go())


def test_no_endpoint_is_needs_llm_with_the_hint(root):
    server = build_server(Settings(roots=Roots([str(root)])), tools="judge")
    tools, (structured, text, is_error) = call(
        server, "judge", {"input_path": "in.jsonl", "metrics": ["faithfulness"]}
    )
    assert is_error is False, text
    m = structured["metrics"]["faithfulness"]
    assert (m["mean"], m["n"], m["status_counts"]) == (None, 3, {"needs_llm": 3})
    assert structured["warnings"] == [HINT]
    # the client has no way to name an endpoint, a model or a key
    props = set(tools["judge"].input_schema["properties"])
    assert props == {"input_path", "metrics", "max_cost_usd", "dry_run", "repeats", "format",
                     "keys", "include_samples", "reference_path"}  # fmt: skip


def test_server_endpoint_budget_lowered_never_raised_and_no_key_anywhere(
    root, fake, monkeypatch, caplog
):
    fake.reset()
    monkeypatch.setenv("RAGMETER_LLM_BASE_URL", fake.url)
    monkeypatch.setenv("RAGMETER_LLM_MODEL", "judge-test-model")
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)
    caplog.set_level(logging.DEBUG)
    settings = Settings(roots=Roots([str(root)]), judge_max_cost=0.5)
    server = build_server(settings, tools="judge")
    args = {"input_path": "in.jsonl", "metrics": ["faithfulness"], "max_cost_usd": 5.0}
    _, (structured, text, is_error) = call(server, "judge", args)
    assert is_error is False, text
    assert structured["budget_usd"] == 0.5  # asked 5.0, the server allows 0.5
    assert structured["metrics"]["faithfulness"]["mean"] == 0.5
    assert structured["judge"]["model"] == "judge-test-model"
    assert len(fake.requests) > 0
    _, (lower, _, _) = call(server, "judge", {**args, "max_cost_usd": 0.1})
    assert lower["budget_usd"] == 0.1
    assert SENTINEL_KEY not in text and SENTINEL_KEY not in caplog.text
    assert (root / ".ragmeter").exists()  # the request cache lives under the root


def test_graphrag_format_gives_the_cli_json(root):
    """format="graphrag": graphrag-eval records in, the summary `ragmeter judge --format
    graphrag` prints out (here without an endpoint: needs_llm, a result and not an error)."""
    from tests.helpers import CONFORMANCE, invoke

    src = CONFORMANCE / "graphrag_eval/tests-with-llm/test_data/evaluation_1.yaml"
    (root / "evaluation_1.yaml").write_bytes(src.read_bytes())
    server = build_server(Settings(roots=Roots([str(root)])), tools="judge")
    args = {
        "input_path": "evaluation_1.yaml",
        "metrics": ["answer_correctness", "retrieval_context_f1"],
        "format": "graphrag",
    }
    tools, (structured, text, is_error) = call(server, "judge", args)
    assert is_error is False, text
    cli = invoke(
        "judge", str(root / "evaluation_1.yaml"), "--format", "graphrag",
        "-m", "answer_correctness", "-m", "retrieval_context_f1",
    )  # fmt: skip
    assert cli.code == 0, cli.stderr
    expected = json.loads(cli.stdout)
    assert {k: v for k, v in structured.items() if k not in ("warnings", "budget_usd")} == expected
    assert structured["warnings"] == [HINT] and structured["budget_usd"] == 0.0
    assert tools["judge"].input_schema["properties"]["format"]["enum"] == ["ragmeter", "graphrag"]
    # the dry run estimates both groups (questions and retrieval steps) and sends nothing
    _, (est, text, is_error) = call(server, "judge", {**args, "dry_run": True})
    assert is_error is False, text
    cli_est = invoke(
        "judge", str(root / "evaluation_1.yaml"), "--format", "graphrag", "--dry-run", "--json",
        "-m", "answer_correctness", "-m", "retrieval_context_f1",
    )  # fmt: skip
    assert cli_est.code == 0, cli_est.stderr
    expected_est = json.loads(cli_est.stdout)
    assert (est["max_cost_usd"], expected_est["max_cost_usd"]) == (0.0, None)  # the server's cap
    drop = ("budget_usd", "max_cost_usd")
    assert {k: v for k, v in est.items() if k not in drop} == {
        k: v for k, v in expected_est.items() if k not in drop
    }
    assert est["metrics"]
    # a plain judge sample is not a graphrag-eval record: the CLI's one-line message
    _, (_, text, is_error) = call(server, "judge", {**args, "input_path": "in.jsonl"})
    assert is_error is True
    assert "in.jsonl:1: a plain judge sample, not a graphrag-eval record" in text
