"""LLM-judged keys of one question: judge settings, judge calls and the keys they write."""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from typing import Any

from ragmeter.errors import UsageError
from ragmeter.steps.config import StepsConfig
from ragmeter.steps.modes import V5
from ragmeter.steps.protocol import BLANK_INPUT_ERROR, StepsJudge, f1, parse_claims


@dataclass
class _JudgeSettings:
    judge: StepsJudge | None = None
    correctness: bool = False
    relevance: bool = False
    custom: tuple = ()


def _resolve_judge(config: StepsConfig | None, judge: Any, mode: str) -> _JudgeSettings:
    if judge is None and config is not None and config.needs_judge:
        judge = _build_judge(config)
    if judge is None:
        return _JudgeSettings()
    correctness = config.answer_correctness if config is not None else True
    relevance = config.answer_relevance if config is not None else True
    relevance = relevance and bool(getattr(judge, "supports_relevance", False))
    custom = tuple(config.custom_evaluations) if config is not None and mode != V5 else ()
    return _JudgeSettings(judge, correctness, relevance, custom)


def _build_judge(config: StepsConfig) -> Any:
    try:
        from ragmeter.judge.adapters import steps_judge  # type: ignore[import-not-found]
    except ImportError:
        wanted = [
            name
            for name, on in (
                ("answer correctness", config.answer_correctness),
                ("answer relevance", config.answer_relevance),
                ("custom evaluations", bool(config.custom_evaluations)),
            )
            if on
        ]
        raise UsageError(
            f"the config asks for LLM-judged keys ({', '.join(wanted)}) but the LLM judge "
            "(ragmeter.judge) is not available in this build; drop --config, or pass judge= "
            "to run_evaluation",
            command="steps",
        ) from None
    return steps_judge(config.raw)


# -- judge calls ---------------------------------------------------------------------------------


async def _call(coro: Awaitable[Any]) -> tuple[Any, str | None]:
    """Await a judge call; failures become ``(None, message)`` as upstream records them."""
    try:
        return await coro, None
    except Exception as exc:  # a judge failure is a key in the record, never a crash
        return None, str(exc)


def _judged(result: Any, error: str | None) -> dict[str, Any]:
    """A judgement as {value, error, reason, cost}, whatever shape the judge returned."""
    if error is not None:
        return {"value": None, "error": error}
    if isinstance(result, Mapping):
        out = dict(result)
    else:
        out = {"value": getattr(result, "value", result)}
    if out.get("error") is None and out.get("value") is None:
        out["error"] = "the judge returned no value"
    return out


async def _judge_pair(
    judge: StepsJudge, question: str, reference: str, contexts: list[str]
) -> tuple[dict, dict]:
    recall = _judged(*await _call(judge.context_recall(question, reference, contexts)))
    precision = _judged(*await _call(judge.context_precision(question, reference, contexts)))
    return recall, precision


def _write_pair(
    target: dict[str, Any], prefix: str, recall: Mapping, precision: Mapping, v5: bool
) -> None:
    for name, j in (("recall", recall), ("precision", precision)):
        key = f"{prefix}_{name}"
        if j.get("error") is not None:
            target[f"{key}_error"] = j["error"]
            continue
        target[key] = j["value"]
        if v5:
            if j.get("reason"):
                target[f"{key}_reason"] = j["reason"]
            if j.get("cost") is not None:
                target[f"{key}_cost"] = j["cost"]
    r, p = target.get(f"{prefix}_recall"), target.get(f"{prefix}_precision")
    if f"{prefix}_recall" in target and f"{prefix}_precision" in target:
        target[f"{prefix}_f1"] = f1(r, p)
        if v5:
            rc, pc = target.get(f"{prefix}_recall_cost"), target.get(f"{prefix}_precision_cost")
            if rc is not None and pc is not None:
                target[f"{prefix}_f1_cost"] = rc + pc


async def _answer_keys(
    settings: _JudgeSettings, question: Mapping, response: Mapping, mode: str
) -> dict[str, Any]:
    judge = settings.judge
    out: dict[str, Any] = {}
    if judge is None:
        return out
    v5 = mode == V5
    if settings.relevance and "actual_answer" in response:
        j = _judged(
            *await _call(
                judge.answer_relevance(question["question_text"], response["actual_answer"])
            )
        )
        if j.get("error") is not None:
            out["answer_relevance_error"] = j["error"]
        else:
            out["answer_relevance"] = j["value"]
            if v5:
                if j.get("cost") is not None:
                    out["answer_relevance_cost"] = j["cost"]
                if j.get("reason"):
                    out["answer_relevance_reason"] = j["reason"]
    if settings.correctness and "actual_answer" in response and "reference_answer" in question:
        error_key = "answer_eval_error" if v5 else "answer_correctness_error"
        texts = (question["question_text"], question["reference_answer"], response["actual_answer"])
        if any(not t.strip() for t in texts):
            out[error_key] = BLANK_INPUT_ERROR
        else:
            raw, error = await _call(judge.answer_correctness(*texts))
            claims, error = (None, error) if error is not None else parse_claims(raw)
            if error is not None:
                out[error_key] = error
            else:
                assert claims is not None
                ref, act, match = claims["reference"], claims["actual"], claims["matching"]
                recall, precision = match / ref, match / act
                out.update(
                    {
                        "answer_reference_claims_count": ref,
                        "answer_actual_claims_count": act,
                        "answer_matching_claims_count": match,
                        "answer_correctness_reason": claims.get("reason"),
                        "answer_recall": recall,
                        "answer_precision": precision,
                        "answer_f1": f1(recall, precision),
                    }
                )
    for evaluation in settings.custom:
        values = evaluation.inputs_for(question, response)
        if isinstance(values, str):
            out.update(evaluation.error(values))
            continue
        text, error = await _call(judge.complete(evaluation.prompt(values)))
        if error is not None:
            out.update(evaluation.error(error))
        elif not isinstance(text, str):
            out.update(evaluation.error(f"the judge returned {type(text).__name__}, not text"))
        else:
            out.update(evaluation.parse(text))
    return out
