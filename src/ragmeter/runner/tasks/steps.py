"""Runner task ``steps``: the agent's tool-call steps against reference steps (steps.md)."""

from __future__ import annotations

from typing import Literal

from ragmeter.runner.tasks.base import TaskAdapter, TaskOptions

__all__ = ["ADAPTER", "StepsOptions"]


class StepsOptions(TaskOptions):
    compat: Literal["graphrag-eval-6", "graphrag-eval-5"] | None = None
    on_missing: Literal["error", "error-sample"] = "error-sample"
    check_names: bool = True


class StepsAdapter(TaskAdapter):
    name = "steps"
    options = StepsOptions
    outputs = ("traces",)
    engine_module = "ragmeter.steps"

    def unit_of(self, row_id: str) -> str:
        # per-step rows are "<question id>/<step id>" (steps.md §2)
        return row_id.split("/", 1)[0]


ADAPTER = StepsAdapter()
