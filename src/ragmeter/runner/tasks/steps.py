"""Runner task ``steps``: the agent's tool-call steps against reference steps (steps.md).

The reference data is built from the gold QA pairs with ``reference_steps``, grouped by
``template_id`` (graphrag-eval's reference format, docs/steps.md); the responses are the system's
``outputs.traces``. A gold question without a response is scored as an error response by
default (``on_missing: error-sample``), so a system cannot improve its score by not answering.
LLM-judged keys (``answer_f1``, ``answer_relevance``, ...) use the run's judge when one is
configured, and are ``needs_llm`` otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from ragmeter.errors import InputError
from ragmeter.result import Result
from ragmeter.runner.outputs import OutputFile
from ragmeter.runner.tasks.base import TaskAdapter, TaskContext, TaskOptions
from ragmeter.store.records import SampleRecord

__all__ = ["ADAPTER", "StepsOptions"]

DEFAULT_TEMPLATE = "default"


class StepsOptions(TaskOptions):
    compat: Literal["graphrag-eval-6", "graphrag-eval-5"] | None = Field(
        None, description="Reproduce a graphrag-eval version's numbers (docs/steps.md)."
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
        # per-step rows are "<question id>/<step id>" (docs/steps.md)
        return row_id.split("/", 1)[0]

    def _reference(self, ctx: TaskContext) -> list[dict[str, Any]]:
        templates: dict[str, list[dict[str, Any]]] = {}
        for u in ctx.units:
            qa = u.qa
            question: dict[str, Any] = {
                "id": u.id,
                "question_text": qa.question or "",
                "reference_steps": qa.reference_steps,
            }
            if qa.answer is not None:
                question["reference_answer"] = qa.answer
            templates.setdefault(qa.template_id or DEFAULT_TEMPLATE, []).append(question)
        return [{"template_id": t, "questions": qs} for t, qs in templates.items()]

    def _gold_error(self, ctx: TaskContext, exc: InputError) -> InputError:
        """Point an error in the reference data at the gold file and the sample's line."""
        if exc.path not in (None, "<reference_qas>"):
            return exc
        message = str(exc).split(": ", 1)[1] if exc.path else str(exc)
        for u in ctx.units:
            marker = f"question {u.id}: "
            if message.startswith(marker):
                index = u.sample.qa_pairs.index(u.qa)
                rest = message[len(marker) :]
                return InputError(
                    rest,
                    path=ctx.gold.path,
                    line=u.sample.line,
                    location=f"sample '{u.sample.id}': qa_pairs[{index}]",
                )
        return InputError(message, path=ctx.gold.path)

    def evaluate(self, ctx: TaskContext, outputs: Mapping[str, OutputFile]) -> Result:
        from ragmeter.steps import compute_aggregates, run_evaluation, to_result

        opts: StepsOptions = ctx.options  # type: ignore[assignment]
        wanted = {u.id for u in ctx.units}
        traces = outputs["traces"]
        responses = {qid: dict(t.record) for qid, t in traces.records.items() if qid in wanted}
        judge = None
        if self.uses_llm(opts, ctx.metrics) and ctx.judge is not None and ctx.judge.configured:
            import ragmeter.judge as rj

            judge = rj.steps_judge(ctx.judge.config)
        try:
            results = run_evaluation(
                self._reference(ctx),
                responses,
                compat=opts.compat,
                judge=judge,
                on_missing=opts.on_missing,
                check_names=opts.check_names,
            )
        except InputError as exc:
            if exc.path == "<chat_responses>":
                raise InputError(str(exc).split(": ", 1)[1], path=traces.path) from None
            raise self._gold_error(ctx, exc) from None
        ctx.progress(len(ctx.units))
        return to_result(
            results, compute_aggregates(results, compat=opts.compat), compat=opts.compat
        )

    def records(self, ctx: TaskContext, outputs: Mapping[str, OutputFile]) -> list[SampleRecord]:
        traces = outputs["traces"].records
        out = []
        for u in ctx.units:
            t = traces.get(u.id)
            out.append(
                SampleRecord(
                    u.id,
                    u.sample.id,
                    dict(u.sample.strata),
                    {
                        "input": {"question": u.qa.question, "template_id": u.qa.template_id},
                        "gold": {"answer": u.qa.answer, "reference_steps": u.qa.reference_steps},
                        "output": None
                        if t is None
                        else {
                            "answer": t.record.get("actual_answer"),
                            "steps": t.record.get("actual_steps"),
                            "error": t.record.get("error"),
                        },
                    },
                )
            )
        return out


ADAPTER = StepsAdapter()
