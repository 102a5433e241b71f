"""Runner task ``classification``: type classification with a label hierarchy (extraction.md §4)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ragmeter.runner.tasks.base import TaskAdapter, TaskOptions

__all__ = ["ADAPTER", "ClassificationOptions"]


class ClassificationOptions(TaskOptions):
    profile: str | None = Field(
        "heritage", description="Label set and hierarchy: heritage, a profile file, or none."
    )
    labels: Literal["present"] | list[str] = Field(
        "present", description="Labels averaged in macro scores."
    )
    zero_division: float = Field(0.0, description="Value of a 0/0 ratio.")
    multilabel: bool = Field(False, description="Score primary + secondary types as label sets.")


class ClassificationAdapter(TaskAdapter):
    name = "classification"
    options = ClassificationOptions
    outputs = ("entities",)
    engine_module = "ragmeter.extraction"


ADAPTER = ClassificationAdapter()
