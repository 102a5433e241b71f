"""Runner task ``steps``: the agent's tool-call steps against reference steps (steps.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ragmeter.runner.tasks.base import TaskAdapter, TaskOptions

__all__ = ["ADAPTER", "StepsOptions"]


class StepsOptions(TaskOptions):
    compat: Literal["graphrag-eval-6", "graphrag-eval-5"] | None = Field(
        None, description="Reproduce a graphrag-eval version's numbers (steps.md §1)."
    )
    on_missing: Literal["error", "error-sample"] = Field(
        "error-sample",
        description="A gold question without a trace: scored as an error response, or an error.",
    )
    check_names: bool = Field(True, description="Reject near-miss special step names.")


class StepsAdapter(TaskAdapter):
    name = "steps"
    options = StepsOptions
    outputs = ("traces",)
    engine_module = "ragmeter.steps"

    def unit_of(self, row_id: str) -> str:
        # per-step rows are "<question id>/<step id>" (steps.md §2)
        return row_id.split("/", 1)[0]


ADAPTER = StepsAdapter()
