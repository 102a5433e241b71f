"""Runner task ``classification``: type classification with a label hierarchy (extraction.md §4)."""

from __future__ import annotations

from typing import Literal

from ragmeter.runner.tasks.base import TaskAdapter, TaskOptions

__all__ = ["ADAPTER", "ClassificationOptions"]


class ClassificationOptions(TaskOptions):
    profile: str | None = "heritage"
    labels: Literal["present"] | list[str] = "present"
    zero_division: float = 0.0
    multilabel: bool = False


class ClassificationAdapter(TaskAdapter):
    name = "classification"
    options = ClassificationOptions
    outputs = ("entities",)
    engine_module = "ragmeter.extraction"


ADAPTER = ClassificationAdapter()
