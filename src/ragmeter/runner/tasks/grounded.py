"""Runner task ``grounded``: the grounded-QA scorer (answers.md §9)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ragmeter.runner.tasks.base import TaskAdapter, TaskOptions

__all__ = ["ADAPTER", "GroundedOptions"]


class GroundedOptions(TaskOptions):
    k: int = Field(5, ge=1, description="Cut-off of recall@k.")
    refusal_token: str = Field("not in context", description="An answer equal to it is a refusal.")
    missing_trace: Literal["answered", "refused", "error"] = Field(
        "refused", description="A gold question the system did not answer counts as this."
    )


class GroundedAdapter(TaskAdapter):
    name = "grounded"
    options = GroundedOptions
    outputs = ("answers",)
    engine_module = "ragmeter.answers.grounded"


ADAPTER = GroundedAdapter()
