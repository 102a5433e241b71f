"""Runner task ``judge``: LLM-as-judge metrics (judge.md §10, §12)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ragmeter.runner.tasks.base import TaskAdapter, TaskOptions

__all__ = ["ADAPTER", "JudgeOptions"]


class JudgeOptions(TaskOptions):
    max_cost_usd: float | None = Field(
        None, ge=0, description="Budget; calls beyond it are budget_exceeded."
    )
    repeats: int | None = Field(None, ge=1, description="Judge each sample n times.")
    no_claims_as: Literal[0, 1] | None = Field(
        None, description="Fold no_claims into means as 0 or 1 (default: left out)."
    )


class JudgeAdapter(TaskAdapter):
    name = "judge"
    options = JudgeOptions
    outputs = ("answers",)
    engine_module = "ragmeter.judge"
    extra = "llm"

    def uses_llm(self, options, metrics):  # type: ignore[no-untyped-def]
        return True


ADAPTER = JudgeAdapter()
