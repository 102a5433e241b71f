"""Per-question evaluation: output records and LLM-judged keys (steps.md §4, §12)."""

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
    _call,
    _judge_pair,
    _judged,
    _JudgeSettings,
    _resolve_judge,
    _write_pair,
)
from ragmeter.steps.levenshtein import v5_context_scores
from ragmeter.steps.matching import Match, walk_groups
from ragmeter.steps.model import NUMERIC_FIELDS, REFERENCE_NAME, RESPONSES_NAME, Item, validate
from ragmeter.steps.modes import DEFAULT, V5, check_compat
from ragmeter.steps.protocol import StepsJudge
from ragmeter.steps.retrieval_steps import average_precision, document_texts
from ragmeter.steps.scoring import (
    SPARQL_MEDIA_TYPE,
    ActualStep,
    ReferenceStep,
    default_recall,
    score_pair,
)
from ragmeter.steps.sparql import row_overlap

__all__ = ["Evaluation", "arun_evaluation", "evaluate", "run_evaluation"]

V5ContextScorer = Callable[[list[str], list[str]], Any]  # -> (recall, precision), maybe awaitable
MAX_CONCURRENT_QUESTIONS = 8


@dataclass
class Evaluation:
    """Records in reference order, and the warnings raised on the way (one line each)."""

    records: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)


# -- steps ---------------------------------------------------------------------------------------


def _copy_groups(groups: Sequence[Sequence[Mapping]]) -> list[list[dict]]:
    out = []
    for group in groups:
        copied = []
        for step in group:
            s = copy.deepcopy(dict(step))
            s.pop("matches", None)
            copied.append(s)
        out.append(copied)
    return out


async def _evaluate_steps(
    item: Item,
    record: dict[str, Any],
    actual_steps: list[dict],
    settings: _JudgeSettings,
    mode: str,
    warn: Callable[[str], None],
    v5_scorer: V5ContextScorer | None,
) -> None:
    question, response = item.question, item.response
    judge = settings.judge
    v5 = mode == V5
    ref_answer = question.get("reference_answer")

    if judge is not None:  # retrieval_answer_* on every actual retrieval step
        for step in actual_steps:
            if step.get("name") != "retrieval":
                continue
            texts = document_texts(step.get("output")) if "output" in step else None
            if texts is None:
                continue
            if not v5:
                if ref_answer is None:
                    continue
                recall, precision = await _judge_pair(
                    judge, question["question_text"], ref_answer, texts
                )
            else:
                actual_answer = response.get("actual_answer")
                if not ref_answer and not actual_answer:
                    continue
                if ref_answer:
                    recall = _judged(
                        *await _call(
                            judge.context_recall(question["question_text"], ref_answer, texts)
                        )
                    )
                else:
                    recall = {"value": None, "error": "no reference answer to recall"}
                precision = _judged(
                    *await _call(
                        judge.context_precision(
                            question["question_text"], ref_answer or actual_answer, texts
                        )
                    )
                )
            _write_pair(step, "retrieval_answer", recall, precision, v5)

    groups = record.get("reference_steps")
    if groups is None:
        return
    refs = [[ReferenceStep(s) for s in g] for g in groups]
    actual = [ActualStep(s, j) for j, s in enumerate(actual_steps)]
    cache: dict[tuple[int, int, int], float] = {}

    def score(g: int, r: int, j: int) -> float:
        key = (g, r, j)
        if key not in cache:
            cache[key] = score_pair(refs[g][r], actual[j], mode, warn)
        return cache[key]

    matches = walk_groups([len(g) for g in refs], actual, score, mode)
    for g, r, j, _s in matches:
        groups[g][r]["matches"] = actual_steps[j].get("id")
    record["steps_score"] = _steps_score(groups, matches, mode)

    for g, r, j, _s in matches:  # retrieval_context_* on matched retrieval steps
        ref_step, act_step = groups[g][r], actual_steps[j]
        if ref_step.get("name") != "retrieval" or "output" not in act_step:
            continue
        ref_texts = document_texts(ref_step.get("output"))
        act_texts = document_texts(act_step.get("output"))
        if ref_texts is None or act_texts is None:
            continue
        if v5:
            scorer = v5_scorer or v5_context_scores
            pair = scorer(ref_texts, act_texts)
            if asyncio.iscoroutine(pair):
                pair = await pair
            recall, precision = pair  # type: ignore[misc]
        elif judge is not None:
            recall, precision = await _judge_pair(
                judge, question["question_text"], "\n".join(ref_texts), act_texts
            )
        else:
            continue
        _write_pair(act_step, "retrieval_context", recall, precision, v5)

    if mode == DEFAULT:
        _retrieval_id_keys(refs, actual, matches)
        _sparql_diagnostics(refs, actual, matches)


def _steps_score(groups: list[list[dict]], matches: list[Match], mode: str) -> float:
    from ragmeter.steps.matching import steps_score

    return steps_score(groups, matches, compat=None if mode == DEFAULT else mode)


def _retrieval_id_keys(
    refs: list[list[ReferenceStep]], actual: list[ActualStep], matches: list[Match]
) -> None:
    """§9.3: recall@k and AP of document ids on every successful actual retrieval step."""
    candidates = [
        ref for group in refs for ref in group if ref.name == "retrieval" and ref.ids() is not None
    ]
    if not candidates:
        return
    matched = {j: refs[g][r] for g, r, j, _s in matches}
    for act in actual:
        if act.name != "retrieval" or not act.success or act.ids() is None:
            continue
        target = matched.get(act.index)
        if target is None or target.name != "retrieval" or target.ids() is None:
            target = max(candidates, key=lambda ref: default_recall(ref, act))
        act.step["retrieval_ids_recall_at_k"] = default_recall(target, act)
        act.step["retrieval_ids_average_precision"] = average_precision(target.ids(), act.ids())


def _sparql_diagnostics(
    refs: list[list[ReferenceStep]], actual: list[ActualStep], matches: list[Match]
) -> None:
    """§16.4: row precision and recall of the matched or best candidate SPARQL output."""
    matched = {(g, r): j for g, r, j, _s in matches}
    for g, group in enumerate(refs):
        for r, ref in enumerate(group):
            if ref.media != SPARQL_MEDIA_TYPE:
                continue
            reference = ref.sparql()
            if reference is None or reference.is_ask:
                continue
            if (g, r) in matched:
                ref.step["sparql_row_precision"] = 1.0
                ref.step["sparql_row_recall"] = 1.0
                continue
            best: tuple[float, float] | None = None
            for act in actual:
                if not act.success or act.name != ref.name:
                    continue
                result = act.sparql()
                if result is None or result.is_ask:
                    continue
                overlap = row_overlap(
                    reference, result, ref.required_columns, ref.ordered, ref.ignore_duplicates
                )
                if overlap is not None and (
                    best is None or (sum(overlap), overlap[1]) > (sum(best), best[1])
                ):
                    best = overlap
            if best is not None:
                ref.step["sparql_row_precision"], ref.step["sparql_row_recall"] = best


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
        reference_steps?}]}]`` as loaded from graphrag-eval YAML (steps.md §3.1).
    chat_responses
        Question id → response ``{question_id, actual_answer?, actual_steps?, error?,
        input_tokens?, ...}`` (§3.2). Ids compare as strings.
    config_file_path
        A graphrag-eval v6 config (§12.3) enabling LLM-judged keys; ``None`` and no ``judge``
        means no LLM keys and no network.
    compat
        ``None`` (correct scoring), ``"graphrag-eval-6"`` or ``"graphrag-eval-5"`` (§1).
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
        One flat record per reference question, in reference order (§4): ids, texts, copies of
        the reference and actual steps (matched reference steps gain ``matches``), ``status``,
        ``steps_score`` and the judged keys. Inputs are never modified.

    Raises
    ------
    ragmeter.steps.InputError
        For any problem in the inputs, before anything is evaluated (one line, §3.4).

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
