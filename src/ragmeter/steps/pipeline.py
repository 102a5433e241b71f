"""Per-question evaluation: output records and LLM-judged keys (docs/steps.md)."""

from __future__ import annotations

import asyncio
import copy
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ragmeter.errors import InputError
from ragmeter.io.graphrag import Located, ResponseEntry
from ragmeter.steps.config import StepsConfig, load_config
from ragmeter.steps.judged_keys import (
    _answer_keys,
    _JudgeSettings,
    _resolve_judge,
)
from ragmeter.steps.model import NUMERIC_FIELDS, REFERENCE_NAME, RESPONSES_NAME, Item, validate
from ragmeter.steps.modes import V5, check_compat
from ragmeter.steps.protocol import StepsJudge
from ragmeter.steps.step_keys import (
    V5ContextScorer,
    _copy_groups,
    _evaluate_steps,
)

__all__ = ["Evaluation", "arun_evaluation", "evaluate", "run_evaluation"]

MAX_CONCURRENT_QUESTIONS = 8


@dataclass
class Evaluation:
    """Records in reference order, and the warnings raised on the way (one line each)."""

    records: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)


async def _evaluate_item(
    item: Item,
    settings: _JudgeSettings,
    mode: str,
    v5_scorer: V5ContextScorer | None,
    warnings: list[str],
    where: str,
) -> dict[str, Any]:
    question, response = item.question, item.response

    def warn(message: str) -> None:
        warnings.append(f"{where}: question {question['id']}: {message}")

    record: dict[str, Any] = {
        "template_id": item.template_id,
        "question_id": response["question_id"],
        "question_text": question["question_text"],
    }
    is_error = "error" in response
    if mode == V5:
        if "reference_answer" in question:
            record["reference_answer"] = question["reference_answer"]
        if "reference_steps" in question:
            record["reference_steps"] = _copy_groups(question["reference_steps"])
        if is_error:
            record["status"] = "error"
            record["error"] = copy.deepcopy(response["error"])
            return record
        record["status"] = "success"
        if "actual_answer" in response:
            record["actual_answer"] = response["actual_answer"]
        record.update(await _answer_keys(settings, question, response, mode))
        if "actual_steps" in response:
            steps = copy.deepcopy(list(response["actual_steps"]))
            record["actual_steps"] = steps
            await _evaluate_steps(item, record, steps, settings, mode, warn, v5_scorer)
        for key in NUMERIC_FIELDS:
            if key in response:
                record[key] = response[key]
        return record

    for key in NUMERIC_FIELDS:
        if key in response:
            record[key] = response[key]
    if "actual_answer" in response:
        record["actual_answer"] = response["actual_answer"]
    if "reference_answer" in question:
        record["reference_answer"] = question["reference_answer"]
    if "reference_steps" in question:
        record["reference_steps"] = _copy_groups(question["reference_steps"])
    record["status"] = "error" if is_error else "success"
    if is_error:
        record["error"] = copy.deepcopy(response["error"])
    steps = copy.deepcopy(list(response.get("actual_steps") or []))
    record["actual_steps"] = steps
    await _evaluate_steps(item, record, steps, settings, mode, warn, v5_scorer)
    record.update(await _answer_keys(settings, question, response, mode))
    return record


async def evaluate(
    reference: Located,
    responses: Sequence[ResponseEntry],
    responses_name: str,
    *,
    compat: str | None = None,
    config: StepsConfig | None = None,
    judge: Any = None,
    on_missing: str = "error",
    check_names: bool = True,
    strict: bool = False,
    v5_context_scorer: V5ContextScorer | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Evaluation:
    """Validate, then evaluate every reference question (the engine behind the API and CLI)."""
    mode = check_compat(compat)
    dataset = validate(
        reference,
        responses,
        responses_name,
        mode=mode,
        on_missing=on_missing,
        check_names=check_names,
        strict=strict,
    )
    settings = _resolve_judge(config, judge, mode)
    warnings = list(dataset.warnings)
    per_item: list[list[str]] = [[] for _ in dataset.items]
    semaphore = asyncio.Semaphore(MAX_CONCURRENT_QUESTIONS)
    done = 0

    async def one(n: int, item: Item) -> dict[str, Any]:
        nonlocal done
        async with semaphore:
            record = await _evaluate_item(
                item, settings, mode, v5_context_scorer, per_item[n], reference.name
            )
        done += 1
        if progress is not None:
            progress(done, len(dataset.items))
        return record

    if settings.judge is None:  # nothing to wait for: keep it a plain loop
        records = [await one(n, item) for n, item in enumerate(dataset.items)]
    else:
        records = list(await asyncio.gather(*(one(n, it) for n, it in enumerate(dataset.items))))
    for lines in per_item:
        warnings.extend(lines)
    return Evaluation(records, warnings)


def _in_memory(reference_qas: Any, chat_responses: Any) -> tuple[Located, list[ResponseEntry]]:
    if isinstance(chat_responses, Mapping):
        entries = [ResponseEntry(k, v) for k, v in chat_responses.items()]
    elif isinstance(chat_responses, (list, tuple)):
        entries = [ResponseEntry(None, v) for v in chat_responses]
    else:
        raise InputError(
            f"a {type(chat_responses).__name__} (expected a mapping question id → response)",
            path=RESPONSES_NAME,
        )
    return Located(reference_qas, REFERENCE_NAME), entries


async def _arun(
    reference_qas: Any,
    chat_responses: Any,
    config_file_path: str | os.PathLike[str] | None,
    **options: Any,
) -> Evaluation:
    mode = check_compat(options.pop("compat", None))
    config = load_config(config_file_path) if config_file_path is not None else None
    reference, entries = _in_memory(reference_qas, chat_responses)
    return await evaluate(reference, entries, RESPONSES_NAME, compat=mode, config=config, **options)


def _emit(warnings: list[str]) -> None:
    from ragmeter.warnings import warn

    for line in warnings:
        warn(line, stacklevel=3)


async def arun_evaluation(
    reference_qas: Sequence[Mapping[str, Any]],
    chat_responses: Mapping[Any, Mapping[str, Any]],
    config_file_path: str | os.PathLike[str] | None = None,
    *,
    compat: str | None = None,
    judge: StepsJudge | None = None,
    on_missing: str = "error",
    check_names: bool = True,
    strict: bool = False,
    v5_context_scorer: V5ContextScorer | None = None,
) -> list[dict[str, Any]]:
    """Async :func:`run_evaluation` (same parameters and result)."""
    result = await _arun(
        reference_qas,
        chat_responses,
        config_file_path,
        compat=compat,
        judge=judge,
        on_missing=on_missing,
        check_names=check_names,
        strict=strict,
        v5_context_scorer=v5_context_scorer,
    )
    _emit(result.warnings)
    return result.records


def run_evaluation(
    reference_qas: Sequence[Mapping[str, Any]],
    chat_responses: Mapping[Any, Mapping[str, Any]],
    config_file_path: str | os.PathLike[str] | None = None,
    *,
    compat: str | None = None,
    judge: StepsJudge | None = None,
    on_missing: str = "error",
    check_names: bool = True,
    strict: bool = False,
    v5_context_scorer: V5ContextScorer | None = None,
) -> list[dict[str, Any]]:
    """Evaluate an agent's steps (and, with a judge, its answers) for every reference question.

    Parameters
    ----------
    reference_qas
        Templates ``[{template_id, questions: [{id, question_text, reference_answer?,
        reference_steps?}]}]`` as loaded from graphrag-eval YAML (docs/steps.md).
    chat_responses
        Question id → response ``{question_id, actual_answer?, actual_steps?, error?,
        input_tokens?, ...}``. Ids compare as strings.
    config_file_path
        A graphrag-eval v6 config enabling LLM-judged keys; ``None`` and no ``judge``
        means no LLM keys and no network.
    compat
        ``None`` (correct scoring), ``"graphrag-eval-6"`` or ``"graphrag-eval-5"``.
    judge
        An object implementing :class:`ragmeter.steps.StepsJudge`; overrides the config's.
    on_missing
        ``"error"``: a question without a response is an input error; ``"error-sample"``: it
        is scored as ``{"error": "no response"}``.
    check_names
        Reject near-miss spellings of special step names (``iri-discovery``).
    strict
        Turn dataset warnings into input errors.
    v5_context_scorer
        ``graphrag-eval-5`` only: replaces the string-similarity scorer of
        ``retrieval_context_*`` (called with reference and retrieved texts; returns two
        judgements).

    Returns
    -------
    list of dict
        One flat record per reference question, in reference order: ids, texts, copies of
        the reference and actual steps (matched reference steps gain ``matches``), ``status``,
        ``steps_score`` and the judged keys. Inputs are never modified.

    Raises
    ------
    ragmeter.steps.InputError
        For any problem in the inputs, before anything is evaluated (one line, docs/conventions.md).

    Examples
    --------
    >>> ref = [{"template_id": "t", "questions": [{"id": "q1", "question_text": "2+3?",
    ...         "reference_steps": [[{"name": "calc", "output": "5"}]]}]}]
    >>> resp = {"q1": {"question_id": "q1", "actual_steps": [
    ...         {"id": "c1", "name": "calc", "status": "success", "output": "5"}]}}
    >>> [r["steps_score"] for r in run_evaluation(ref, resp)]
    [1.0]
    """

    def make() -> Awaitable[Evaluation]:
        return _arun(
            reference_qas,
            chat_responses,
            config_file_path,
            compat=compat,
            judge=judge,
            on_missing=on_missing,
            check_names=check_names,
            strict=strict,
            v5_context_scorer=v5_context_scorer,
        )

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        result = asyncio.run(make())  # type: ignore[arg-type]
    else:
        with ThreadPoolExecutor(max_workers=1) as pool:  # inside a running loop (notebooks)
            result = pool.submit(lambda: asyncio.run(make())).result()  # type: ignore[arg-type]
    _emit(result.warnings)
    return result.records
