"""Runner task ``grounded``: the grounded-QA scorer (docs/answers.md).

Gold items are the QA pairs with ``answerable`` (plus their ``gold_claim_substr`` and
``gold_citations``); the trace of each is the system's answer as the claim, its ``citations``
and its ``retrieved_ids``. A question the system did not answer counts as a refusal by default
(``missing_trace: refused``); the reference scorer's own default, an empty shipped claim, is
``missing_trace: answered``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import Field

from ragmeter.result import Result
from ragmeter.runner.outputs import OutputFile
from ragmeter.runner.tasks.answers import answer_records
from ragmeter.runner.tasks.base import TaskAdapter, TaskContext, TaskOptions
from ragmeter.store.records import SampleRecord

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

    def evaluate(self, ctx: TaskContext, outputs: Mapping[str, OutputFile]) -> Result:
        from ragmeter.answers import grounded

        opts: GroundedOptions = ctx.options  # type: ignore[assignment]
        answers = outputs["answers"].records
        gold_rows, traces = [], []
        for u in ctx.units:
            qa = u.qa
            row = {
                "qid": u.id,
                "answerable": qa.answerable,
                "gold_claim_substr": list(qa.gold_claim_substr),
                "gold_citations": list(qa.gold_citations),
            }
            if qa.question is not None:
                row["question"] = qa.question
            gold_rows.append((u.sample.line, row))
            a = answers.get(u.id)
            if a is None:
                continue
            traces.append(
                (
                    outputs["answers"].lines.get(u.id),
                    {
                        "qid": u.id,
                        "retrieved_ids": list(a.retrieved_ids or ()),
                        "answer_json": {
                            "claim": a.answer if a.answer is not None else "",
                            "citations": list(a.citations or ()),
                        },
                    },
                )
            )
        report = grounded.score(
            gold_rows,
            traces,
            k=opts.k,
            gates=None,
            refusal_token=opts.refusal_token,
            missing_trace=opts.missing_trace,
            gold_path=ctx.gold.path,
            trace_path=outputs["answers"].path,
        )
        ctx.progress(len(ctx.units))
        result = report.to_result()
        wanted = set(ctx.metric_names)
        if wanted != set(result.aggregates):
            import pyarrow as pa
            import pyarrow.compute as pc

            keep = pc.is_in(result.samples.column("metric"), value_set=pa.array(sorted(wanted)))
            result = Result(
                "grounded",
                result.samples.filter(keep),
                {k: v for k, v in result.aggregates.items() if k in wanted},
                metadata=result.metadata,
                warnings=result.warnings,
            )
        return result

    def records(self, ctx: TaskContext, outputs: Mapping[str, OutputFile]) -> list[SampleRecord]:
        return answer_records(ctx, outputs)


ADAPTER = GroundedAdapter()
