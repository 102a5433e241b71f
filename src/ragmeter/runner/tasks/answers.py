"""Runner task ``answers``: lexical and ROUGE metrics of the answers (answers.md §3, §11)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ragmeter.runner.tasks.base import TaskAdapter, TaskOptions

__all__ = ["ADAPTER", "AnswersOptions"]


class AnswersOptions(TaskOptions):
    profile: Literal["squad", "ultrarag", "flashrag"] = Field(
        "squad", description="Normalisation profile (answers.md §1)."
    )
    tokenizer: Literal["default", "unicode"] | None = Field(
        None, description="ROUGE tokenizer (default: the profile's)."
    )
    stem: bool | None = Field(
        None, description="Porter stemming for ROUGE (default: the profile's)."
    )
    agg: dict[str, Literal["max", "mean", "any"]] | None = Field(
        None, description="Aggregation over gold answers, per metric."
    )
    empty_gold: Literal["drop", "keep", "abstain", "error"] | None = Field(
        None, description="What an empty gold answer does (answers.md §5)."
    )


class AnswersAdapter(TaskAdapter):
    name = "answers"
    options = AnswersOptions
    outputs = ("answers",)
    engine_module = "ragmeter.answers"


ADAPTER = AnswersAdapter()
