"""Judged keys with stub judges: claims parsing, f1, error keys (docs/steps.md)."""

from __future__ import annotations

import json

import pytest

from ragmeter.steps import JudgeCallError, StepsJudge, run_evaluation
from ragmeter.steps.protocol import BLANK_INPUT_ERROR, f1, parse_claims

DOCS = json.dumps([{"id": "d1", "text": "Doc one."}, {"id": "d2", "text": "Doc two."}])


class Judge:
    supports_relevance = True

    def __init__(self, recall=0.9, precision=0.6, correctness="2\t2\t2\treason"):
        self.recall, self.precision, self.correctness = recall, precision, correctness
        self.calls: list[tuple] = []

    async def _value(self, value, name, args):
        self.calls.append((name, *args))
        if isinstance(value, Exception):
            raise value
        return {"value": value}

    async def answer_relevance(self, question, answer):
        return await self._value(0.5, "relevance", (question, answer))

    async def answer_correctness(self, question, reference, answer):
        self.calls.append(("correctness", question, reference, answer))
        return self.correctness

    async def context_recall(self, question, reference, contexts):
        return await self._value(self.recall, "recall", (question, reference, tuple(contexts)))

    async def context_precision(self, question, reference, contexts):
        return await self._value(
            self.precision, "precision", (question, reference, tuple(contexts))
        )

    async def complete(self, prompt):
        raise AssertionError("no custom evaluations here")


def evaluate(
    judge,
    *,
    question_text="Which docs?",
    reference_answer="Doc one.",
    actual_answer="Doc one.",
    compat=None,
):
    question = {
        "id": "q1",
        "question_text": question_text,
        "reference_steps": [[{"name": "retrieval", "output": DOCS, "args": {"k": 2}}]],
    }
    if reference_answer is not None:
        question["reference_answer"] = reference_answer
    response = {
        "question_id": "q1",
        "actual_steps": [
            {"id": "r1", "name": "retrieval", "status": "success", "output": DOCS, "args": {"k": 2}}
        ],
    }
    if actual_answer is not None:
        response["actual_answer"] = actual_answer
    reference = [{"template_id": "t", "questions": [question]}]
    return run_evaluation(reference, {"q1": response}, judge=judge, compat=compat)[0]


def test_stub_satisfies_the_protocol():
    assert isinstance(Judge(), StepsJudge)


def test_f1():
    assert f1(0.9, 0.6) == 0.7200000000000001
    assert f1(0.9, 0.9) == 0.9
    assert f1(0.0, 0.0) == 0.0
    assert f1(None, 0.3) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "2\t2\t2\treason\textra",
            ({"reference": 2, "actual": 2, "matching": 2, "reason": "reason"}, None),
        ),
        (
            "2\t3\t1\treason",
            ({"reference": 2, "actual": 3, "matching": 1, "reason": "reason"}, None),
        ),
        ("2\t2\treason", ({}, "Expected 4 tab-separated values: 2\t2\treason")),
        ("a\t2\t2\tr", ({"reason": "r"}, "Claims counts should be ints: ['a', '2', '2', 'r']")),
    ],
)
def test_parse_claims_text(text, expected):
    assert parse_claims(text) == expected


@pytest.mark.parametrize(
    "counts", [(0, 1, 1), (1, 0, 1), (15, 0, 0), (1, 2, -1), (1, 3, 2), (3, 1, 2)]
)
def test_invalid_claim_counts(counts):
    r, a, m = counts
    _claims, error = parse_claims(f"{r}\t{a}\t{m}\treason")
    assert error == f"Invalid claims counts combination: {r}\t{a}\t{m}"
    _claims, error = parse_claims({"reference": r, "actual": a, "matching": m, "reason": "x"})
    assert error == f"Invalid claims counts combination: {r}\t{a}\t{m}"


def test_claims_mapping_and_error():
    assert parse_claims({"reference": 4, "actual": 2, "matching": 1, "reason": "r"})[1] is None
    assert parse_claims({"error": "timeout: slow"}) == ({}, "timeout: slow")


def test_answer_keys():
    judge = Judge(correctness={"reference": 4, "actual": 2, "matching": 1, "reason": "r"})
    record = evaluate(judge)
    assert record["answer_reference_claims_count"] == 4
    assert record["answer_recall"] == 0.25
    assert record["answer_precision"] == 0.5
    assert record["answer_f1"] == f1(0.25, 0.5)
    assert record["answer_correctness_reason"] == "r"
    assert record["answer_relevance"] == 0.5


@pytest.mark.parametrize("field", ["question_text", "reference_answer", "actual_answer"])
@pytest.mark.parametrize("blank", ["", "   \n"])
def test_blank_inputs_are_not_sent(field, blank):
    judge = Judge()
    record = evaluate(judge, **{field: blank})
    assert record["answer_correctness_error"] == BLANK_INPUT_ERROR
    assert not [c for c in judge.calls if c[0] == "correctness"]
    assert "answer_f1" not in record


def test_invalid_counts_in_v5_use_answer_eval_error():
    record = evaluate(Judge(correctness="1\t3\t2\tr"), compat="graphrag-eval-5")
    assert record["answer_eval_error"] == "Invalid claims counts combination: 1\t3\t2"
    assert "answer_correctness_error" not in record


def _retrieval_step(record):
    return record["actual_steps"][0]


@pytest.mark.parametrize("prefix", ["retrieval_answer", "retrieval_context"])
def test_retrieval_keys_both_ok(prefix):
    step = _retrieval_step(evaluate(Judge()))
    assert step[f"{prefix}_recall"] == 0.9
    assert step[f"{prefix}_precision"] == 0.6
    assert step[f"{prefix}_f1"] == 0.7200000000000001


@pytest.mark.parametrize("prefix", ["retrieval_answer", "retrieval_context"])
def test_retrieval_keys_recall_error(prefix):
    step = _retrieval_step(evaluate(Judge(recall=JudgeCallError("timeout: HTTP 504"))))
    assert step[f"{prefix}_recall_error"] == "timeout: HTTP 504"
    assert step[f"{prefix}_precision"] == 0.6
    assert f"{prefix}_f1" not in step and f"{prefix}_recall" not in step


@pytest.mark.parametrize("prefix", ["retrieval_answer", "retrieval_context"])
def test_retrieval_keys_precision_error(prefix):
    step = _retrieval_step(evaluate(Judge(precision=ValueError("parse_error: bad JSON"))))
    assert step[f"{prefix}_precision_error"] == "parse_error: bad JSON"
    assert step[f"{prefix}_recall"] == 0.9
    assert f"{prefix}_f1" not in step


@pytest.mark.parametrize("prefix", ["retrieval_answer", "retrieval_context"])
def test_retrieval_keys_both_errors(prefix):
    judge = Judge(recall=RuntimeError("r failed"), precision=RuntimeError("p failed"))
    step = _retrieval_step(evaluate(judge))
    keys = {k for k in step if k.startswith(prefix)}
    assert keys == {f"{prefix}_recall_error", f"{prefix}_precision_error"}


def test_retrieval_judge_inputs():
    judge = Judge()
    evaluate(judge)
    recall_calls = [c for c in judge.calls if c[0] == "recall"]
    # answer-based: the reference answer; context-based: the reference documents' texts
    assert recall_calls[0][1:] == ("Which docs?", "Doc one.", ("Doc one.", "Doc two."))
    assert recall_calls[1][1:] == ("Which docs?", "Doc one.\nDoc two.", ("Doc one.", "Doc two."))


def test_no_reference_answer_no_answer_based_retrieval_keys():
    step = _retrieval_step(evaluate(Judge(), reference_answer=None))
    assert "retrieval_answer_recall" not in step
    assert step["retrieval_context_recall"] == 0.9


def test_judge_returning_garbage_is_an_error_key():
    judge = Judge()

    async def relevance(question, answer):
        return {"value": None}

    judge.answer_relevance = relevance
    record = evaluate(judge)
    assert record["answer_relevance_error"] == "the judge returned no value"
