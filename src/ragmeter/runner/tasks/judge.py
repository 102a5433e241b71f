"""Runner task ``judge``: LLM-as-judge metrics (docs/judge.md).

Each gold QA pair with a question is a sample: the question, the system's answer and contexts,
the gold ``answer`` as the reference and ``reference_contexts``. The endpoint comes from the
config's ``judge:`` block and the environment (docs/judge.md); without one every sample is
``needs_llm`` and the task is reported as skipped. The judge's request cache makes a re-run free
and an interrupted run resume where it stopped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from ragmeter.result import Result
from ragmeter.runner.outputs import OutputFile
from ragmeter.runner.tasks.answers import answer_records
from ragmeter.runner.tasks.base import TaskAdapter, TaskContext, TaskOptions
from ragmeter.store.records import SampleRecord

__all__ = ["ADAPTER", "JudgeOptions"]


class JudgeOptions(TaskOptions):
    max_cost_usd: float | None = Field(
        None, ge=0, description="Budget; calls beyond it are budget_exceeded."
    )
    repeats: int | None = Field(None, ge=1, description="Judge each sample n times.")
    no_claims_as: Literal[0, 1] | None = Field(
        None, description="Fold no_claims into means as 0 or 1 (default: left out)."
    )


def _plain(result: Any, task: str) -> Result:
    return Result(
        task,
        result.samples,
        result.aggregates,
        strata=result.strata,
        metadata=result.metadata,
        warnings=result.warnings,
    )


class JudgeAdapter(TaskAdapter):
    name = "judge"
    options = JudgeOptions
    outputs = ("answers",)
    engine_module = "ragmeter.judge"

    def uses_llm(self, options: Any, metrics: Any) -> bool:
        return True

    def cacheable(self, result: Result) -> bool:
        """Calls that timed out or went over budget are retried by the next run."""
        statuses = set(result.samples.column("status").to_pylist())
        return not statuses & {"timeout", "budget_exceeded"}

    def evaluate(self, ctx: TaskContext, outputs: Mapping[str, OutputFile]) -> Result:
        import ragmeter.judge as rj

        opts: JudgeOptions = ctx.options  # type: ignore[assignment]
        answers = outputs["answers"].records
        samples = []
        for u in ctx.units:
            qa = u.qa
            a = answers.get(u.id)
            contexts = [c["text"] for c in (a.contexts or ())] if a is not None else []
            ids = [c.get("id") for c in (a.contexts or ())] if a is not None else []
            samples.append(
                rj.Sample(
                    u.id,
                    question=qa.question,
                    answer=a.answer if a is not None else None,
                    reference=qa.answer if qa.answer is not None else next(iter(qa.golds), None),
                    contexts=tuple(contexts) if a is not None and a.contexts is not None else None,
                    context_ids=tuple(ids) if a is not None and a.contexts is not None else None,
                    reference_contexts=qa.reference_contexts,
                    template_id=qa.template_id,
                )
            )
        config = ctx.judge.config
        changes = {"max_cost_usd": opts.max_cost_usd, "repeats": opts.repeats}
        config = config.with_overrides(**changes)
        done = [0]

        def on_progress(state: Mapping[str, Any]) -> None:
            # "done" counts sample x pipeline x repeat; the bar counts samples
            n = int(state.get("done", 0)) * len(samples) // max(int(state.get("total", 1)), 1)
            if n > done[0]:
                ctx.progress(n - done[0])
                done[0] = n

        result = rj.evaluate(
            samples,
            ctx.metric_names,
            config=config,
            no_claims_as=opts.no_claims_as,
            on_progress=on_progress,
        )
        if done[0] < len(samples):
            ctx.progress(len(samples) - done[0])
        return _plain(result, self.name)

    def records(self, ctx: TaskContext, outputs: Mapping[str, OutputFile]) -> list[SampleRecord]:
        return answer_records(ctx, outputs)


ADAPTER = JudgeAdapter()
