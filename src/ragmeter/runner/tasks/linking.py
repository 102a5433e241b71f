"""Runner task ``linking``: entity linking ranking and NIL detection (extraction.md §6)."""

from __future__ import annotations

from pydantic import Field

from ragmeter.runner.tasks.base import TaskAdapter, TaskOptions

__all__ = ["ADAPTER", "LinkingOptions"]


class LinkingOptions(TaskOptions):
    k: list[int] = Field(default_factory=lambda: [1, 5, 10], description="Cut-offs of Hits@K.")
    zero_division: float = Field(0.0, description="Value of a 0/0 ratio (NIL detection).")


class LinkingAdapter(TaskAdapter):
    name = "linking"
    options = LinkingOptions
    outputs = ("entities",)
    engine_module = "ragmeter.extraction"


ADAPTER = LinkingAdapter()
