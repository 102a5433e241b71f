"""Runner task ``answers``: lexical and ROUGE metrics of the answers (answers.md §3, §11)."""

from __future__ import annotations

from typing import Literal

from ragmeter.runner.tasks.base import TaskAdapter, TaskOptions

__all__ = ["ADAPTER", "AnswersOptions"]


class AnswersOptions(TaskOptions):
    profile: Literal["squad", "ultrarag", "flashrag"] = "squad"
    tokenizer: Literal["default", "unicode"] | None = None
    stem: bool | None = None
    agg: dict[str, Literal["max", "mean", "any"]] | None = None
    empty_gold: Literal["drop", "keep", "abstain", "error"] | None = None


class AnswersAdapter(TaskAdapter):
    name = "answers"
    options = AnswersOptions
    outputs = ("answers",)
    engine_module = "ragmeter.answers"


ADAPTER = AnswersAdapter()
