"""The ``answers`` tool: ``ragmeter answers INPUT.jsonl --json`` on a file under the roots.

It reads the UltraRAG-style JSONL file with the command's own reader (same keys, same checks,
same one-line messages) and returns the command's JSON. Per-sample lists are off by default,
as in every own tool; ``per_sample=True`` adds them. No SDK module is imported here.
"""

from __future__ import annotations

import warnings
from typing import Any, Literal

from ragmeter.errors import UsageError
from ragmeter.mcp import progress
from ragmeter.mcp.paths import shown_as
from ragmeter.mcp.settings import Settings

__all__ = ["AnswersTool"]


class AnswersTool:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def answers(
        self,
        input_path: str,
        metrics: list[str] | None = None,
        profile: Literal["squad", "ultrarag", "flashrag"] = "squad",
        gold_key: str = "golden_answers",
        pred_key: str = "pred_answer",
        id_key: str = "id",
        question_key: str = "question",
        gold_groups_key: str | None = None,
        empty_gold: Literal["drop", "keep", "abstain", "error"] | None = None,
        per_sample: bool = False,
    ) -> dict[str, Any]:
        """Answer metrics (EM, F1, ROUGE, ...) of an UltraRAG-style JSONL file of predictions
        and gold answers (ragmeter answers --json).

        input_path: JSONL, one row per question with a prediction and its gold answers.
        metrics: em acc stringem coverem f1 precision recall rouge-1 rouge-2 rouge-l ...
            (default: the profile's list).
        profile: normalisation profile: squad, ultrarag or flashrag.
        gold_key: the key of the gold answers.
        pred_key: the key of the prediction.
        id_key: the key of the row id.
        question_key: the key of the question (qa-similarity).
        gold_groups_key: the key of grouped gold answers, if any.
        empty_gold: rows without a usable gold: drop, keep, abstain or error (profile default).
        per_sample: add every metric's per-row list.
        """
        from ragmeter.answers.options import resolve_options
        from ragmeter.answers.scoring import evaluate
        from ragmeter.cli.answers import _read_answers
        from ragmeter.warnings import RagmeterWarning

        try:
            o = resolve_options(
                [m.strip() for spec in (metrics or []) for m in spec.split(",") if m.strip()],
                profile=profile,
                tokenizer="default",  # the command's default: the profile's tokenizer
                empty_gold=empty_gold,
            )
        except UsageError as exc:
            raise UsageError(exc.message, command="answers") from None
        path = self.settings.roots.resolve(input_path)
        keys = {
            "id": id_key,
            "pred": pred_key,
            "gold": gold_key,
            "question": question_key,
            "groups": gold_groups_key,
        }
        with shown_as({path: input_path}):
            ids, preds, golds, questions, notes = _read_answers(
                str(path), o, keys, "qa-similarity" in o.metrics
            )
            progress.check()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RagmeterWarning)  # they go into "warnings"
                res = evaluate(
                    preds,
                    [(g.groups if gold_groups_key else g.flat) if g.given else None for g in golds],
                    metrics=list(o.metrics),
                    profile=o.profile,
                    ids=ids,
                    questions=questions,
                    tokenizer=o.tokenizer,
                    stem=o.stem,
                    agg=dict(o.agg),
                    empty_gold=o.empty_gold,
                    gold_regex=o.gold_regex,
                    lsum_split=o.lsum_split,
                    progress=lambda done: progress.report(done, len(ids), "answers"),
                )
            if o.gold_metrics and not res.meta["n_scored"]:
                from ragmeter.errors import InputError

                raise InputError(
                    f"no row has a usable gold answer (every '{gold_groups_key or gold_key}' is "
                    "missing, empty or normalises to ''; expected at least one gold answer to "
                    "score)",
                    path=input_path,
                )
        out = res.to_ultrarag_dict(summary_only=not per_sample)
        out["warnings"] = list(dict.fromkeys([*notes, *res.warnings]))
        return out
