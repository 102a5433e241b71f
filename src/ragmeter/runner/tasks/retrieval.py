"""Runner task ``retrieval``: the system's run against the gold ``relevant_docs``."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, Field

from ragmeter.runner.tasks.base import TaskAdapter, TaskOptions

__all__ = ["ADAPTER", "RetrievalOptions"]


class RetrievalOptions(TaskOptions):
    metrics: list[str] | None = Field(
        None,
        validation_alias=AliasChoices("measures", "metrics"),
        serialization_alias="measures",
        description="Measures, in either naming style (nDCG@10 or ndcg_cut.10); also 'metrics'.",
    )
    relevance_level: int = Field(1, description="Minimum grade that counts as relevant (-l).")
    complete: bool = Field(
        True, description="A gold query missing from the run scores 0 (trec_eval -c)."
    )
    judged_only: bool = Field(False, description="Drop unjudged documents first (-J).")
    gain: Literal["linear", "exp"] = Field("linear", description="nDCG gain of a grade.")
    dedupe: Literal["first", "max"] | None = Field(
        None, description="Keep one line of a duplicated document instead of failing."
    )


class RetrievalAdapter(TaskAdapter):
    name = "retrieval"
    options = RetrievalOptions
    outputs = ("run",)
    engine_module = "ragmeter.retrieval"


ADAPTER = RetrievalAdapter()
