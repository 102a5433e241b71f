"""The steps judge (docs/steps.md), graphrag-eval v6 configs, ``ragmeter answer-correctness``."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import sys
import types

import pytest

from ragmeter.errors import InputError, UsageError
from ragmeter.judge.adapters import (
    BLANK_MESSAGE,
    JudgeCallError,
    StepsJudge,
    graphrag_settings,
    parse_claims_text,
    steps_judge,
    validate_claims,
)
from tests.helpers import CONFORMANCE, invoke
from tests.judge.fake_openai import SENTINEL_KEY
from tests.judge.test_metrics import FakeEmbedder

GRAPHRAG = CONFORMANCE / "graphrag_eval"


def arun(coro):
    return asyncio.run(coro)


@pytest.fixture
def judge(make_config):
    def make(**kw):
        emb = kw.pop("embedder", None)
        return StepsJudge(make_config(**kw), embedder=emb, load_embedder=False)

    return make


def test_protocol_methods(fake, judge):
    fake.script("rel", lambda req: {"questions": ["a?", "b?", "c?"], "noncommittal": False})
    j = judge(embedder=FakeEmbedder({"a?": 0.9, "b?": 0.9, "c?": 0.9}), price_in=1.0, price_out=1.0)
    assert j.supports_relevance

    async def go():
        try:
            rel = await j.answer_relevance("Q?", "An answer [[rm-test:rel]]")
            rec = await j.context_recall("Q", "Alpha one. Beta two.", ["alpha one"])
            prec = await j.context_precision("Q", "Alpha one.", ["alpha one", "noise"])
            claims = await j.answer_correctness("Q", "OSLO T1. OSLO T2.", "OSLO T2. OSLO T1.")
            text = await j.complete("Say hi")
            return rel, rec, prec, claims, text
        finally:
            await j.aclose()

    rel, rec, prec, claims, text = arun(go())
    assert rel["value"] == pytest.approx(0.9) and rel["error"] is None and rel["reason"] is None
    assert rel["cost"] == pytest.approx(120 / 1e6)  # one call of 100 + 20 tokens at $1/Mtok
    assert (rec["value"], rec["error"], rec["cost"]) == (0.5, None, pytest.approx(240 / 1e6))
    assert prec["value"] == 1.0
    assert claims == {"reference": 2, "actual": 2, "matching": 2, "reason": "ok"}
    assert text == "2\t2\t2\tfree text reason"
    free = fake.requests[-1]
    assert free.messages == [{"role": "user", "content": "Say hi"}]
    assert "response_format" not in free.body


def test_protocol_failures(fake, judge):
    j = judge(max_attempts=2)

    async def go():
        try:
            rec = await j.context_recall("Q", "Ref [[rm-test:malformed]]", ["c"])
            claims = await j.answer_correctness("Q", "R [[rm-test:refusal]]", "A")
            blank = await j.answer_correctness("", "  ", "A")
            with pytest.raises(JudgeCallError, match=r"^refused: content_filter$"):
                await j.complete("x [[rm-test:content_filter]]")
            rel = await j.answer_relevance("Q", "A")
            return rec, claims, blank, rel
        finally:
            await j.aclose()

    rec, claims, blank, rel = arun(go())
    assert rec["value"] is None and rec["error"].startswith("parse_error: not valid JSON")
    assert claims == {"error": "refused: refusal: I can't help with that request."}
    assert blank == {"error": "no_claims: empty reference"}
    assert not j.supports_relevance and rel["error"].startswith("needs_llm")


def test_counts_from_empty_claim_lists_reach_the_steps_validation(fake, judge):
    j = judge()
    claims = arun(j.answer_correctness("Q", "R [[rm-test:no_claims]]", "A"))
    assert claims == {"reference": 0, "actual": 0, "matching": 0, "reason": "none"}
    assert validate_claims(claims) == "Invalid claims counts combination: 0\t0\t0"
    arun(j.aclose())


def test_custom_correctness_prompt_uses_upstream_text_format(fake, make_config):
    j = StepsJudge(
        make_config(),
        correctness_prompt="Prompt with {question} {reference_answer} {actual_answer} {{x}}",
        load_embedder=False,
    )
    claims = arun(j.answer_correctness("Q1", "Ref", "Ans"))
    assert claims == {"reference": 2, "actual": 2, "matching": 2, "reason": "free text reason"}
    assert fake.requests[0].messages[0]["content"] == "Prompt with Q1 Ref Ans {x}"
    arun(j.aclose())


def test_steps_judge_without_a_judge_is_a_usage_error():
    with pytest.raises(UsageError) as exc:
        steps_judge({"llm": {"generation": {"provider": "openai", "model": "gpt-4o-mini"}}})
    assert str(exc.value) == (
        "ragmeter steps: the config asks for LLM-judged keys but no LLM judge is configured "
        "(model gpt-4o-mini, no base URL): set OPENAI_API_KEY for OpenAI's URL, or give "
        "api_base / RAGMETER_LLM_BASE_URL for another server, and a model"
    )


def test_steps_judge_from_a_graphrag_config_file(fake, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)
    cfg = tmp_path / "config.yaml"
    cfg.write_text(
        "llm:\n  generation:\n    provider: openai_like\n    model: judge-test-model\n"
        f"    api_base: {fake.url}\n"
        "answer_correctness:\n  prompt: 'Q {question} R {reference_answer} A {actual_answer}'\n"
    )
    j = steps_judge(cfg, load_embedder=False)
    assert j.correctness_prompt.startswith("Q {question}")
    assert arun(j.answer_correctness("q", "r", "a"))["matching"] == 2
    arun(j.aclose())


def test_judge_is_reusable_across_event_loops(fake, judge):
    j = judge()
    first = arun(j.context_precision("Q", "R", ["good"]))
    second = arun(j.context_precision("Q2", "R", ["good"]))  # a second asyncio.run, same judge
    assert first["value"] == second["value"] == 1.0
    arun(j.aclose())


# -- claims text and counts (upstream rules, docs/steps.md) --------------------------------------


def test_claims_text_rules():
    assert parse_claims_text("2\t3\t1\treason\textra") == {
        "reference": 2,
        "actual": 3,
        "matching": 1,
        "reason": "reason",
    }
    assert parse_claims_text("2\t3\t1") == {"error": "Expected 4 tab-separated values: 2\t3\t1"}
    assert parse_claims_text("x\t3\t1\tr") == {
        "error": "Claims counts should be ints: ['x', '3', '1', 'r']"
    }
    assert (
        validate_claims({"reference": 1, "actual": 1, "matching": 2})
        == "Invalid claims counts combination: 1\t1\t2"
    )
    assert validate_claims({"reference": 2, "actual": 3, "matching": 1}) is None


# -- graphrag-eval v6 configuration ---------------------------------------------------------------


def test_conformance_configs_map_onto_judge_settings():
    import yaml

    data = yaml.safe_load((GRAPHRAG / "tests-with-llm/test_data/config-openai.yaml").read_text())
    settings, warnings = graphrag_settings(data)
    assert settings == {
        "provider": "openai",
        "model": "gpt-4o-mini",
        "temperature": 0.0,
        "max_tokens": 8192,
        "max_tokens_cap": 8192,
        "extra_params": {},
        "embedding_model": "text-embedding-3-small",
    }
    assert warnings == [
        "llm.embedding model 'text-embedding-3-small' is not used: ragmeter's answer "
        "relevance uses its offline all-MiniLM-L6-v2 embedder"
    ]
    legal = yaml.safe_load((GRAPHRAG / "system-tests/config/legal-config.yaml").read_text())
    s, w = graphrag_settings(legal)
    assert (s["model"], s["max_tokens"], w) == ("gpt-5.4-2026-03-05", 4096, [])


@pytest.mark.parametrize(
    ("provider", "url"),
    [
        ("hosted_vllm", "http://localhost:8000/v1"),
        ("vllm", "http://localhost:8000/v1"),
        ("ollama", "http://localhost:11434/v1"),
        ("ollama_chat", "http://localhost:11434/v1"),
        ("lm_studio", "http://localhost:1234/v1"),
    ],
)
def test_provider_default_urls(provider, url):
    s, _ = graphrag_settings({"llm": {"generation": {"provider": provider, "model": "m"}}})
    assert s["base_url"] == url and s["provider"] == provider


def test_provider_rules():
    with pytest.raises(InputError, match="needs api_base"):
        graphrag_settings({"llm": {"generation": {"provider": "llamacpp", "model": "m"}}})
    s, _ = graphrag_settings(
        {
            "llm": {
                "generation": {
                    "provider": "llamacpp",
                    "model": "m",
                    "api_base": "http://localhost:8080/v1",
                }
            }
        }
    )
    assert s["base_url"] == "http://localhost:8080/v1"
    with pytest.raises(InputError, match="store the key in an environment variable"):
        graphrag_settings(
            {"llm": {"generation": {"provider": "openai", "model": "m", "api_key": "sk"}}}
        )
    with pytest.raises(InputError, match=r"pip install 'ragmeter\[litellm\]'"):
        graphrag_settings({"llm": {"generation": {"provider": "azure", "model": "m"}}})


def test_azure_config_error_names_file_and_line(tmp_path):
    from ragmeter.judge.config import load_config_file

    f = tmp_path / "config-azure.yaml"
    f.write_bytes((GRAPHRAG / "tests-with-llm/test_data/config-azure.yaml").read_bytes())
    with pytest.raises(InputError) as exc:
        load_config_file(f)
    assert str(exc.value).startswith(
        f"{f}:3: llm.generation.provider: provider 'azure' is not OpenAI-compatible"
    )


def test_litellm_client_with_a_stub_module(fake, monkeypatch):
    """The LiteLLM client maps providers onto ``provider/model`` and never loads the cost map."""
    seen = {}

    async def acompletion(**kw):
        seen.update(kw)
        msg = types.SimpleNamespace(content='{"statements": ["A."]}', refusal=None)
        choice = types.SimpleNamespace(message=msg, finish_reason="stop", logprobs=None)
        usage = types.SimpleNamespace(
            prompt_tokens=10, completion_tokens=5, prompt_tokens_details=None
        )
        return types.SimpleNamespace(choices=[choice], usage=usage, model="azure/gpt")

    stub = types.ModuleType("litellm")
    stub.acompletion = acompletion
    monkeypatch.setitem(sys.modules, "litellm", stub)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "recorded")  # restored after the test
    monkeypatch.delenv("LITELLM_LOCAL_MODEL_COST_MAP")
    import ragmeter.judge as rj
    from ragmeter.judge.config import resolve_config

    cfg = resolve_config(
        {"provider": "azure", "model": "gpt", "base_url": "https://x.example/v1"},
        environ={"OPENAI_API_KEY": SENTINEL_KEY},
    )
    assert cfg.is_litellm
    res = rj.evaluate(
        [rj.Sample("q", question="Q", answer="A.", contexts=())],
        ["faithfulness"],
        config=__import__("dataclasses").replace(cfg, cache_path=None),
    )
    assert res.statuses("faithfulness") == {"q": "ok"}
    assert (
        seen["model"] == "azure/gpt"
        and seen["num_retries"] == 0
        and seen["api_base"] == "https://x.example/v1"
    )
    assert seen["response_format"]["type"] == "json_schema"
    import os

    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"


# -- ragmeter answer-correctness ------------------------------------------------------------------


def write_tsv(path, rows, header=("Question", "Reference answer", "Actual answer")):
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t")
        w.writerow(header)
        w.writerows(rows)
    return path


def read_tsv(path):
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8")), delimiter="\t"))


def test_answer_correctness_command_example(tmp_path, judge_env, fake):
    def claims(reason):
        return lambda req: {
            "reference_claims": ["x"],
            "answer_claims": ["x"],
            "matches": [{"reference": 1, "answer": 1}],
            "reason": reason,
        }

    fake.script("good", claims("Good match"))
    fake.script("perfect", claims("Perfect match"))
    inp = write_tsv(
        tmp_path / "in.tsv",
        [
            ["Q1", "R1 [[rm-test:good]]", "A1"],
            ["Q2", "R2 [[rm-test:perfect]]", "A2"],
            ["  ", "R3", "A3"],
            ["Q4", "R4 [[rm-test:always_429]]", "A4"],
        ],
    )
    out = tmp_path / "sub" / "out.tsv"
    res = invoke("answer-correctness", "-i", str(inp), "-o", str(out))
    assert res.code == 0, res.stderr
    assert read_tsv(out) == [
        ["#Reference", "#PTarget", "#Matching", "Reasoning", "Error"],
        ["1", "1", "1", "Good match", ""],
        ["1", "1", "1", "Perfect match", ""],
        ["", "", "", "", BLANK_MESSAGE],
        ["", "", "", "", "timeout: HTTP 429 after 6 attempts"],
    ]
    fake.requests.clear()
    assert invoke("answer-correctness", "-i", str(inp), "-o", str(out)).code == 0
    assert len(fake.requests) == 6  # only the timed-out row is asked again (6 attempts)


def test_answer_correctness_stops_on_a_rejected_key(tmp_path, judge_env, fake):
    """401 is fatal (docs/judge.md): one redacted line, exit 2, no output file."""
    inp = write_tsv(tmp_path / "in.tsv", [["Q1", "R1 [[rm-test:auth]]", "A1"]])
    out = tmp_path / "out.tsv"
    res = invoke("answer-correctness", "-i", str(inp), "-o", str(out))
    assert res.code == 2
    assert res.stderr.startswith("ragmeter answer-correctness: HTTP 401")
    assert SENTINEL_KEY not in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_answer_correctness_upstream_prompt_config(tmp_path, fake, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)
    cfg = tmp_path / "config.yaml"
    cfg.write_text(
        "llm:\n  generation:\n    provider: openai\n    model: judge-test-model\n"
        f"    api_base: {fake.url}\n"
        "answer_correctness:\n"
        "  prompt: 'Prompt with {question} {reference_answer} {actual_answer}'\n"
    )
    inp = write_tsv(
        tmp_path / "in.tsv",
        [["Q1", "Ref", "Ans"]],
        header=("Id", "Question", "Reference answer", "Actual answer")[1:],
    )
    out = tmp_path / "out.tsv"
    assert invoke("answer-correctness", "-i", str(inp), "-o", str(out), "-c", str(cfg)).code == 0
    assert read_tsv(out)[1] == ["2", "2", "2", "free text reason", ""]
    assert fake.requests[0].messages[0]["content"] == "Prompt with Q1 Ref Ans"
    assert out.read_bytes().endswith(b"\r\n")  # csv line ends, as upstream writes them


def test_answer_correctness_v5_keeps_the_reason_of_invalid_counts(tmp_path, judge_env, fake):
    fake.script(
        "zero",
        lambda req: {
            "reference_claims": ["x"],
            "answer_claims": [],
            "matches": [],
            "reason": "nothing claimed",
        },
    )
    inp = write_tsv(tmp_path / "in.tsv", [["Q", "R [[rm-test:zero]]", "A"]])
    out = tmp_path / "out.tsv"
    invoke("answer-correctness", "-i", str(inp), "-o", str(out))
    assert read_tsv(out)[1] == ["", "", "", "", "Invalid claims counts combination: 1\t0\t0"]
    invoke("answer-correctness", "-i", str(inp), "-o", str(out), "--compat", "graphrag-eval-5")
    assert read_tsv(out)[1] == [
        "",
        "",
        "",
        "nothing claimed",
        "Invalid claims counts combination: 1\t0\t0",
    ]


def test_answer_correctness_input_and_usage_errors(tmp_path, judge_env, fake, monkeypatch):
    out = tmp_path / "out.tsv"
    bad = write_tsv(tmp_path / "bad.tsv", [["Q", "A"]], header=("Question", "Actual answer"))
    res = invoke("answer-correctness", "-i", str(bad), "-o", str(out))
    assert res.code == 2
    assert res.stderr == (
        f'{bad}:1: missing column "Reference answer" (expected columns Question, '
        "Reference answer, Actual answer)\n"
    )
    assert not out.exists()
    short = tmp_path / "short.tsv"
    short.write_text(
        "Question\tReference answer\tActual answer\nQ\tR\tA\nQ2\tR2\n", encoding="utf-8"
    )
    res = invoke("answer-correctness", "-i", str(short), "-o", str(out))
    assert (res.code, res.stderr) == (
        2,
        f"{short}:3: 2 fields (expected at least 3: Question, Reference answer, Actual answer)\n",
    )
    disabled = tmp_path / "c.yaml"
    disabled.write_text(
        f"llm:\n  generation:\n    provider: openai\n    model: m\n    api_base: {fake.url}\n"
        "answer_correctness:\n  enabled: false\n"
    )
    good = write_tsv(tmp_path / "in.tsv", [["Q", "R", "A"]])
    res = invoke("answer-correctness", "-i", str(good), "-o", str(out), "-c", str(disabled))
    assert res.code == 2 and "answer_correctness.enabled: false" in res.stderr
    monkeypatch.delenv("RAGMETER_LLM_MODEL")
    res = invoke("answer-correctness", "-i", str(good), "-o", str(out))
    assert res.code == 2 and res.stderr.startswith(
        "ragmeter answer-correctness: no LLM is configured"
    )
    assert not out.exists() and fake.requests == []


def test_answer_correctness_handles_huge_fields(tmp_path, judge_env, fake):
    big = "word " * 60000  # larger than csv's default 128 KiB field limit
    inp = write_tsv(tmp_path / "in.tsv", [["Q", "R.", big]])
    out = tmp_path / "out.tsv"
    assert invoke("answer-correctness", "-i", str(inp), "-o", str(out)).code == 0
    assert len(read_tsv(out)) == 2
    _ = json
