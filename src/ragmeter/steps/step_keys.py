"""The step keys of one question: matched steps, their scores and the SPARQL diagnostics."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ragmeter.steps.judged_keys import (
    _call,
    _judge_pair,
    _judged,
    _JudgeSettings,
    _write_pair,
)
from ragmeter.steps.levenshtein import v5_context_scores
from ragmeter.steps.matching import Match, walk_groups
from ragmeter.steps.model import Item
from ragmeter.steps.modes import DEFAULT, V5
from ragmeter.steps.retrieval_steps import average_precision, document_texts
from ragmeter.steps.scoring import (
    SPARQL_MEDIA_TYPE,
    ActualStep,
    ReferenceStep,
    default_recall,
    score_pair,
)
from ragmeter.steps.sparql import row_overlap

V5ContextScorer = Callable[[list[str], list[str]], Any]  # -> (recall, precision), maybe awaitable


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
    """Recall@k and AP of document ids on every successful actual retrieval step."""
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
    """Row precision and recall of the matched or best candidate SPARQL output."""
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
