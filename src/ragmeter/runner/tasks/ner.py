"""Runner task ``ner``: entity-level NER, per document (extraction.md §3, §9)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ragmeter.runner.tasks.base import TaskAdapter, TaskOptions

__all__ = ["ADAPTER", "NerOptions"]


class NerOptions(TaskOptions):
    schemas: list[Literal["strict", "exact", "partial", "type"]] = Field(
        default_factory=lambda: ["strict", "exact", "partial", "type"],
        description="SemEval-2013 schemas to report.",
    )
    min_overlap: float = Field(0.0, ge=0.0, le=1.0, description="Overlap needed by partial/type.")
    duplicates: Literal["dedupe", "keep"] = Field(
        "dedupe", description="Duplicate predicted spans."
    )
    zero_division: float = Field(0.0, description="Value of a 0/0 ratio (scikit-learn's rule).")


class NerAdapter(TaskAdapter):
    name = "ner"
    options = NerOptions
    outputs = ("entities",)
    engine_module = "ragmeter.extraction"


ADAPTER = NerAdapter()
