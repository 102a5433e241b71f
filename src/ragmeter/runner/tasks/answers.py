"""Runner task ``answers``: lexical and ROUGE metrics of the answers (docs/answers.md).

Each gold QA pair with gold answers (``golden_answers``, else ``[answer]``) is a unit; the
prediction is the system's ``answer`` for that qid, and a QA pair the system did not answer is
scored as an empty answer (it counts, as a wrong answer does).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from ragmeter.result import Result
from ragmeter.runner.outputs import OutputFile
from ragmeter.runner.tasks.base import TaskAdapter, TaskContext, TaskOptions
from ragmeter.store.records import SampleRecord

__all__ = ["ADAPTER", "AnswersAdapter", "AnswersOptions", "answer_records"]


class AnswersOptions(TaskOptions):
    profile: Literal["squad", "ultrarag", "flashrag"] = Field(
        "squad", description="Normalisation profile (docs/answers.md)."
    )
    tokenizer: Literal["default", "unicode"] | None = Field(
        None, description="ROUGE tokenizer (default: the profile's)."
    )
    stem: bool | None = Field(
        None, description="Porter stemming for ROUGE (default: the profile's)."
    )
    agg: dict[str, Literal["max", "mean", "any"]] | None = Field(
        None, description="Aggregation over gold answers, per metric."
    )
    empty_gold: Literal["drop", "keep", "abstain", "error"] | None = Field(
        None, description="What an empty gold answer does (docs/answers.md)."
    )


def answer_records(ctx: TaskContext, outputs: Mapping[str, OutputFile]) -> list[SampleRecord]:
    """Question, gold answers and the system's answer (with its citations) of each unit."""
    answers = outputs["answers"].records
    out = []
    for u in ctx.units:
        a = answers.get(u.id)
        qa = u.qa
        out.append(
            SampleRecord(
                u.id,
                u.sample.id,
                dict(u.sample.strata),
                {
                    "input": {"question": qa.question if qa else None},
                    "gold": {
                        "answers": qa.golds if qa else [],
                        "answerable": qa.answerable if qa else None,
                        "citations": list(qa.gold_citations) if qa else [],
                    },
                    "output": None
                    if a is None
                    else {
                        "answer": a.answer,
                        "citations": list(a.citations or ()),
                        "retrieved_ids": list(a.retrieved_ids or ())[:10],
                    },
                },
            )
        )
    return out


class AnswersAdapter(TaskAdapter):
    name = "answers"
    options = AnswersOptions
    outputs = ("answers",)
    engine_module = "ragmeter.answers"

    def _engine_kwargs(self, ctx: TaskContext) -> dict[str, Any]:
        opts = ctx.options
        return {
            "profile": opts.profile,
            "tokenizer": opts.tokenizer,
            "stem": opts.stem,
            "agg": opts.agg,
            "empty_gold": opts.empty_gold,
        }

    def evaluate(self, ctx: TaskContext, outputs: Mapping[str, OutputFile]) -> Result:
        from ragmeter import answers as ra

        records = outputs["answers"].records
        ids = [u.id for u in ctx.units]
        predictions = [records[i].answer if i in records else None for i in ids]
        golds = [u.qa.golds for u in ctx.units]
        questions = [u.qa.question or "" for u in ctx.units]
        done = [0]

        def progress(n: int) -> None:
            ctx.progress(n - done[0])
            done[0] = n

        result = ra.evaluate(
            predictions,
            golds,
            metrics=ctx.metric_names,
            ids=ids,
            questions=questions,
            progress=progress,
            **self._engine_kwargs(ctx),
        )
        progress(len(ids))
        return result.for_task(self.name)

    def records(self, ctx: TaskContext, outputs: Mapping[str, OutputFile]) -> list[SampleRecord]:
        return answer_records(ctx, outputs)


ADAPTER = AnswersAdapter()
