"""``ragmeter.steps`` with the real steps judge against the fake server (docs/judge.md)."""

from __future__ import annotations

import json

import pytest
import yaml

from ragmeter import steps
from tests.helpers import CONFORMANCE
from tests.judge.fake_openai import SENTINEL_KEY, Reply
from tests.judge.test_metrics import FakeEmbedder

DATA = CONFORMANCE / "graphrag_eval/tests-with-llm/test_data"
QID = "c10bbc8dce98a4b8832d125134a16153"


def inputs():
    reference = yaml.safe_load((DATA / "reference_1.yaml").read_text())
    responses = {}
    for line in (DATA / "actual_responses_1.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec["question_id"] == QID:
            responses[QID] = rec
    return reference, responses


def scripted(req):
    if req.stage == "answer_relevance.questions":
        return {"questions": ["a?", "b?", "c?"], "noncommittal": False}
    if req.stage == "context_recall.statements":
        return {"statements": ["S1.", "S2.", "S3.", "S4."]}
    if req.stage == "context_recall.attribute":
        return {
            "verdicts": [
                {"index": i, "attributed": i != 4, "evidence": [], "reason": ""}
                for i in range(1, 5)
            ]
        }
    if req.stage == "context_precision.usefulness":
        n = len(req.numbered("chunk"))
        return {"verdicts": [{"index": i, "useful": i == n, "reason": ""} for i in range(1, n + 1)]}
    return None  # the custom correctness prompt: the default "2\t2\t2\tfree text reason"


@pytest.fixture
def v6_config(fake, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)
    path = tmp_path / "config.yaml"
    path.write_text(
        "llm:\n  generation:\n    provider: openai\n    model: judge-test-model\n"
        f"    api_base: {fake.url}\n"
        "  embedding:\n    provider: openai\n    model: text-embedding-3-small\n"
        "answer_correctness:\n"
        "  prompt: 'Q: {question} R: {reference_answer} A: {actual_answer}'\n"
    )
    return path


def test_steps_pipeline_with_the_judge(fake, v6_config):
    import ragmeter.judge as rj

    fake.script("*", scripted)
    judge = rj.steps_judge(v6_config, embedder=FakeEmbedder({"a?": 0.9, "b?": 0.9, "c?": 0.9}))
    reference, responses = inputs()
    (rec,) = steps.run_evaluation(reference, responses, v6_config, judge=judge)
    assert rec["answer_relevance"] == pytest.approx(0.9)
    assert (
        rec["answer_reference_claims_count"],
        rec["answer_actual_claims_count"],
        rec["answer_matching_claims_count"],
        rec["answer_correctness_reason"],
    ) == (2, 2, 2, "free text reason")
    assert (rec["answer_recall"], rec["answer_precision"], rec["answer_f1"]) == (1.0, 1.0, 1.0)
    step = rec["actual_steps"][0]
    # 3 of 4 statements attributed; chunks [not useful, useful] → AP 0.5; F1 0.6
    for prefix in ("retrieval_answer", "retrieval_context"):
        assert step[f"{prefix}_recall"] == 0.75
        assert step[f"{prefix}_precision"] == 0.5
        assert step[f"{prefix}_f1"] == pytest.approx(0.6)
    prompt = next(r for r in fake.requests if r.stage is None)
    assert prompt.messages[0]["content"] == (
        "Q: List all transformers within Substation OSLO R: OSLO T1, OSLO T2 A: "
        + responses[QID]["actual_answer"]
    )
    agg = steps.compute_aggregates([rec])
    assert agg["micro"]["retrieval_answer_f1"]["mean"] == pytest.approx(0.6)
    # a second run is served entirely from the judge cache
    fake.requests.clear()
    (again,) = steps.run_evaluation(reference, responses, v6_config, judge=judge)
    assert fake.requests == [] and again == rec


def test_judge_failures_become_error_keys_and_statuses(fake, v6_config):
    import ragmeter.judge as rj

    def failing(req):
        if req.stage == "answer_relevance.questions":
            return Reply(
                status=429, headers={"retry-after-ms": "1"}, error={"message": "slow down"}
            )
        return scripted(req)

    fake.script("*", failing)
    judge = rj.steps_judge(v6_config, embedder=FakeEmbedder({}))
    reference, responses = inputs()
    (rec,) = steps.run_evaluation(reference, responses, v6_config, judge=judge)
    assert rec["answer_relevance_error"] == "timeout: HTTP 429 after 6 attempts"
    res = steps.to_result([rec])
    assert res.statuses("answer_relevance") == {QID: "timeout"}


def test_steps_builds_its_judge_from_the_v6_config(fake, v6_config):
    fake.script("*", scripted)
    reference, responses = inputs()
    (rec,) = steps.run_evaluation(reference, responses, v6_config)
    assert rec["answer_f1"] == 1.0
    assert rec["actual_steps"][0]["retrieval_answer_recall"] == 0.75
