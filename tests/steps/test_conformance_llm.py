"""LLM-judged keys with a stub judge (docs/steps.md; fixtures F6–F13 and V5)."""

from __future__ import annotations

import copy
import warnings

import pytest
import yaml

from ragmeter.errors import UsageError
from ragmeter.steps import InputError, JudgeCallError, compute_aggregates, run_evaluation
from ragmeter.steps.config import load_config
from tests.steps.common import (
    GE,
    LLM,
    V5_LLM,
    assert_same,
    load_yaml,
    read_responses,
    strip_keys,
)

CONFIG = LLM / "config-openai.yaml"
CUSTOM_CONFIG = LLM / "config-openai-and-custom-evaluations.yaml"
QID = "c10bbc8dce98a4b8832d125134a16153"

CUSTOM_ANSWERS = {
    "my_answer_relevance": "0.9\tThe answer contains relevant information except for the "
    "sentence about total revenue",
    "retrieval_recall": "0.5\t0.67\tThere are 4 reference claims and 3 actual claims; "
    "2 claims match",
    "sparql_recall": "0.75\t0.6\tThe reference answer has 4 claims; there are 5 SPARQL "
    "results; 3 claims match",
}


class StubJudge:
    """Every judgement 0.9; answer correctness as upstream's mocked raw text."""

    supports_relevance = True

    def __init__(self, complete=None, *, reasons=False, correctness=None):
        self.prompts: list[str] = []
        self._complete = complete
        self._reasons = reasons
        self._correctness = correctness or "2\t2\t2\tanswer correctness reason"
        self.calls = 0

    def _judgement(self, words):
        self.calls += 1
        if self._reasons:
            return {"value": 0.9, "reason": f"{words} reason", "cost": 0.0007}
        return {"value": 0.9}

    async def answer_relevance(self, question, answer):
        return self._judgement("answer relevance")

    async def answer_correctness(self, question, reference, answer):
        self.calls += 1
        return self._correctness

    async def context_recall(self, question, reference, contexts):
        return self._judgement("retrieval answer recall")

    async def context_precision(self, question, reference, contexts):
        return self._judgement("retrieval answer precision")

    async def complete(self, prompt):
        self.calls += 1
        self.prompts.append(prompt)
        if self._complete is not None:
            return self._complete(prompt)
        for output, answer in CUSTOM_ANSWERS.items():
            if f"\n- {output}:" in prompt:
                return answer
        raise AssertionError("unexpected custom evaluation prompt")


def evaluate(reference, responses, config=None, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_evaluation(reference, responses, config, **kwargs)


def reference():
    return load_yaml(LLM / "reference_1.yaml")


# -- F6–F8 ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3])
def test_f6_f8_v6(n):
    results = evaluate(
        reference(),
        read_responses(LLM / f"actual_responses_{n}.jsonl"),
        CONFIG,
        compat="graphrag-eval-6",
        judge=StubJudge(),
    )
    assert_same(results, load_yaml(LLM / f"evaluation_{n}.yaml"))
    assert_same(
        compute_aggregates(results, CONFIG, compat="graphrag-eval-6"),
        load_yaml(LLM / f"evaluation_summary_{n}.yaml"),
    )


def _with_id_metrics(summary):
    summary = copy.deepcopy(summary)
    ones = {"sum": 1.0, "mean": 1.0, "median": 1.0, "min": 1.0, "max": 1.0}
    for name in ("retrieval_ids_recall_at_k", "retrieval_ids_average_precision"):
        for block in summary["per_template"].values():
            block["steps"][name] = dict(ones)
        summary["micro"][name] = dict(ones)
        summary["macro"][name] = {"mean": 1.0}
    return summary


def test_f6_default_mode_adds_id_metrics():
    results = evaluate(
        reference(), read_responses(LLM / "actual_responses_1.jsonl"), CONFIG, judge=StubJudge()
    )
    call_3 = next(s for s in results[0]["actual_steps"] if s["id"] == "call_3")
    assert call_3["retrieval_ids_recall_at_k"] == 1.0
    assert call_3["retrieval_ids_average_precision"] == 1.0
    assert_same(strip_keys(results), load_yaml(LLM / "evaluation_1.yaml"))
    assert_same(
        compute_aggregates(results, CONFIG),
        _with_id_metrics(load_yaml(LLM / "evaluation_summary_1.yaml")),
    )


@pytest.mark.parametrize("n", [2, 3])
def test_f7_f8_default_mode(n):
    results = evaluate(
        reference(), read_responses(LLM / f"actual_responses_{n}.jsonl"), CONFIG, judge=StubJudge()
    )
    assert_same(strip_keys(results), load_yaml(LLM / f"evaluation_{n}.yaml"))
    assert_same(
        compute_aggregates(results, CONFIG), load_yaml(LLM / f"evaluation_summary_{n}.yaml")
    )


def test_judged_keys_follow_enabled_switches(tmp_path):
    responses = read_responses(LLM / "actual_responses_3.jsonl")
    base = load_yaml(CONFIG)
    for correctness, relevance in [(False, True), (True, False), (False, False)]:
        config = dict(base)
        config["answer_correctness"] = {"enabled": correctness}
        config["answer_relevance"] = {"enabled": relevance}
        path = tmp_path / f"c{correctness}{relevance}.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        results = evaluate(reference(), responses, path, judge=StubJudge())
        for r in results:
            assert ("answer_f1" in r) is correctness
            assert ("answer_relevance" in r) is relevance


def test_relevance_needs_an_embedder():
    judge = StubJudge()
    judge.supports_relevance = False
    results = evaluate(
        reference(), read_responses(LLM / "actual_responses_3.jsonl"), CONFIG, judge=judge
    )
    assert "answer_relevance" not in results[0]
    assert results[0]["answer_f1"] == 1.0


# -- F9–F11: custom evaluations ------------------------------------------------------------------


@pytest.mark.parametrize("compat", [None, "graphrag-eval-6"])
def test_f9_custom_evaluations(compat):
    judge = StubJudge()
    results = evaluate(
        reference(),
        read_responses(LLM / "actual_responses_1.jsonl"),
        CUSTOM_CONFIG,
        compat=compat,
        judge=judge,
    )
    assert len(judge.prompts) == 3
    for i, prompt in enumerate(judge.prompts, start=1):
        expected = (LLM / f"custom_eval_prompt_{i}.txt").read_text(encoding="utf-8")
        assert prompt.strip() == expected.strip()
    expected_summary = load_yaml(LLM / "evaluation_summary_4.yaml")
    if compat is None:
        expected_summary = _with_id_metrics(expected_summary)
        results_cmp = strip_keys(results)
    else:
        results_cmp = results
    assert_same(results_cmp, load_yaml(LLM / "evaluation_4.yaml"))
    assert_same(compute_aggregates(results, CUSTOM_CONFIG, compat=compat), expected_summary)


def test_f10_custom_output_error():
    results = evaluate(
        reference(),
        read_responses(LLM / "actual_responses_1.jsonl"),
        CUSTOM_CONFIG,
        compat="graphrag-eval-6",
        judge=StubJudge(lambda prompt: "hello"),
    )
    assert_same(results, load_yaml(LLM / "evaluation_5.yaml"))
    assert_same(
        compute_aggregates(results, CUSTOM_CONFIG, compat="graphrag-eval-6"),
        load_yaml(LLM / "evaluation_summary_1.yaml"),
    )


@pytest.mark.parametrize("compat", [None, "graphrag-eval-6"])
def test_f11_missing_inputs(compat):
    ref = reference()
    del ref[0]["questions"][0]["reference_steps"]
    responses = read_responses(LLM / "actual_responses_1.jsonl")
    del responses[QID]["actual_steps"]
    del responses[QID]["actual_answer"]
    judge = StubJudge()
    results = evaluate(ref, responses, CUSTOM_CONFIG, compat=compat, judge=judge)
    assert judge.prompts == []
    assert_same(results, load_yaml(LLM / "evaluation_6.yaml"))
    assert_same(
        compute_aggregates(results, CUSTOM_CONFIG, compat=compat),
        load_yaml(LLM / "evaluation_summary_6.yaml"),
    )


def test_failed_complete_becomes_error_key():
    def fail(prompt):
        raise JudgeCallError("timeout: HTTP 429 after 6 attempts")

    judge = StubJudge()

    async def complete(prompt):
        fail(prompt)

    judge.complete = complete
    results = evaluate(
        reference(), read_responses(LLM / "actual_responses_1.jsonl"), CUSTOM_CONFIG, judge=judge
    )
    assert results[0]["sparql_error"] == "timeout: HTTP 429 after 6 attempts"
    assert results[0]["sparql_recall"] is None


# -- F12: config errors --------------------------------------------------------------------------


def _config_variants():
    good = load_yaml(CUSTOM_CONFIG)
    variants = []
    c = copy.deepcopy(good)
    del c["llm"]
    variants.append(("no llm", c))
    for value in ([], {}, [[]]):
        c = copy.deepcopy(good)
        c["custom_evaluations"] = value
        variants.append((f"custom_evaluations={value!r}", c))
    for key in ("name", "inputs", "instructions", "outputs"):
        c = copy.deepcopy(good)
        del c["custom_evaluations"][0][key]
        variants.append((f"no {key}", c))
    c = copy.deepcopy(good)
    c["custom_evaluations"][0]["extra"] = "invalid"
    variants.append(("extra key", c))
    for k1 in ("steps_name", "steps_keys"):
        for k2 in ("reference_steps", "actual_steps"):
            c = copy.deepcopy(good)
            ev = c["custom_evaluations"][1]
            del ev[k1]
            ev["inputs"].remove(k2)
            variants.append((f"no {k1}, no {k2}", c))
    c = copy.deepcopy(good)
    c["custom_evaluations"][1]["steps_keys"].append("invalid")
    variants.append(("invalid steps key", c))
    reserved = set()
    for i in (1, 2):
        for record in load_yaml(LLM / f"evaluation_{i}.yaml"):
            reserved |= record.keys()
    for key in sorted(reserved):
        c = copy.deepcopy(good)
        c["custom_evaluations"][0]["outputs"][key] = "invalid"
        variants.append((f"reserved output {key}", c))
    return variants


@pytest.mark.parametrize(("label", "config"), _config_variants(), ids=lambda v: str(v)[:40])
def test_f12_config_errors(tmp_path, label, config):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    judge = StubJudge()
    with pytest.raises(InputError) as exc:
        evaluate(reference(), read_responses(LLM / "actual_responses_1.jsonl"), path, judge=judge)
    assert judge.calls == 0
    assert str(exc.value).startswith(str(path))
    assert "\n" not in str(exc.value)


def test_f12_stale_custom_eval_config_is_an_error():
    with pytest.raises(InputError, match="not a config"):
        load_config(LLM / "custom_eval_config.yaml")


def test_correctness_prompt_placeholders(tmp_path):
    config = load_yaml(CONFIG)
    config["answer_correctness"] = {"prompt": "Q {question} R {reference_answer} C {candidate}"}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    with pytest.raises(InputError) as exc:
        load_config(path)
    assert "unknown placeholder {candidate}" in str(exc.value)
    assert "{question}, {reference_answer} and {actual_answer}" in str(exc.value)


# -- F13 -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [LLM / "config-azure.yaml", CONFIG, GE / "system-tests" / "config" / "legal-config.yaml"],
)
def test_f13_configs_parse(path):
    config = load_config(path)
    assert config.generation is not None


def test_f13_legal_config():
    question = "Ist ein Ledergürtel ein gefährliches Werkzeug?"
    ref = [
        {
            "template_id": "legal",
            "questions": [{"id": "q1", "question_text": question, "reference_answer": "Ja"}],
        }
    ]
    responses = {"q1": {"question_id": "q1", "actual_answer": "Nein"}}
    judge = StubJudge(lambda prompt: "1\t1\t0\tDie Antworten widersprechen sich")
    results = evaluate(
        ref, responses, GE / "system-tests" / "config" / "legal-config.yaml", judge=judge
    )
    record = results[0]
    assert record["legal_recall"] == 1
    assert record["legal_precision"] == 1
    assert record["legal_f1"] == 0
    assert record["legal_reason"] == "Die Antworten widersprechen sich"
    assert f"# Query\n{question}\n" in judge.prompts[0]
    assert "{question}" not in judge.prompts[0]


def test_config_without_judge_is_a_usage_error():
    with pytest.raises(UsageError, match="LLM judge"):
        evaluate(reference(), read_responses(LLM / "actual_responses_1.jsonl"), CONFIG)


def test_no_config_no_judge_no_llm_keys():
    results = evaluate(reference(), read_responses(LLM / "actual_responses_1.jsonl"))
    assert "answer_f1" not in results[0]
    assert all("retrieval_answer_recall" not in s for s in results[0]["actual_steps"])


# -- V5 ------------------------------------------------------------------------------------------


async def _v5_context_stub(reference_texts, retrieved_texts):
    return (
        {"value": 0.9, "reason": "retrieval context recall reason", "cost": 0.0007},
        {"value": 0.9, "reason": "retrieval context precision reason", "cost": 0.0007},
    )


@pytest.mark.parametrize("n", [1, 2, 3])
def test_v5_llm_fixtures(n):
    results = evaluate(
        load_yaml(V5_LLM / "reference_1.yaml"),
        read_responses(V5_LLM / f"actual_responses_{n}.jsonl"),
        compat="graphrag-eval-5",
        judge=StubJudge(reasons=True),
        v5_context_scorer=_v5_context_stub,
    )
    assert_same(results, load_yaml(V5_LLM / f"evaluation_{n}.yaml"))
    assert_same(
        compute_aggregates(results, compat="graphrag-eval-5"),
        load_yaml(V5_LLM / f"evaluation_summary_{n}.yaml"),
    )


def test_v5_context_scores_need_no_judge():
    results = evaluate(
        load_yaml(V5_LLM / "reference_1.yaml"),
        read_responses(V5_LLM / "actual_responses_1.jsonl"),
        compat="graphrag-eval-5",
    )
    step = next(s for s in results[0]["actual_steps"] if s["name"] == "retrieval")
    # the agent retrieved exactly the reference documents
    assert step["retrieval_context_recall"] == 1.0
    assert step["retrieval_context_precision"] == pytest.approx(1.0)
    assert "retrieval_answer_recall" not in step
