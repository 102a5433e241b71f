"""Runner task ``retrieval``: the system's run against the gold ``relevant_docs``."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, Field

from ragmeter.runner.tasks.base import TaskAdapter, TaskOptions

__all__ = ["ADAPTER", "RetrievalOptions"]


class RetrievalOptions(TaskOptions):
    metrics: list[str] | None = Field(
        None, validation_alias=AliasChoices("measures", "metrics"), serialization_alias="measures"
    )
    relevance_level: int = 1
    complete: bool = True  # a gold query the system did not answer scores 0 (trec_eval -c)
    judged_only: bool = False
    gain: Literal["linear", "exp"] = "linear"
    dedupe: Literal["first", "max"] | None = None


class RetrievalAdapter(TaskAdapter):
    name = "retrieval"
    options = RetrievalOptions
    outputs = ("run",)
    engine_module = "ragmeter.retrieval"


ADAPTER = RetrievalAdapter()
