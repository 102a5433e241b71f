"""Runner task ``retrieval``: the system's run against the gold ``relevant_docs``.

The qrels are the ``relevant_docs`` of the gold units (``{qid: {doc: grade}}``) and the run is the
system's ``outputs.run``, scored by :func:`ragmeter.retrieval.evaluate` (docs/retrieval.md). By
default a gold query missing from the run scores 0 (``complete: true``, trec_eval ``-c``): a
system that returns nothing for a question has not answered it, and comparisons need a value for
every query.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import AliasChoices, Field

from ragmeter.result import Result
from ragmeter.runner.outputs import OutputFile
from ragmeter.runner.tasks.base import TaskAdapter, TaskContext, TaskOptions
from ragmeter.store.records import SampleRecord

__all__ = ["ADAPTER", "RetrievalOptions"]

SHOWN = 10  # retrieved documents kept per query for the sample page
# trec_eval's 11 recall levels of iprec_at_recall: always computed, so that every report can draw
# the precision-recall curve (docs/dashboard.md), and kept in the task metadata, not as metrics
CURVE_POINTS = tuple(f"IPrec@{r / 10:.1f}" for r in range(11))


class RetrievalOptions(TaskOptions):
    metrics: list[str] | None = Field(
        None,
        validation_alias=AliasChoices("measures", "metrics"),
        serialization_alias="measures",
        description="Measures, in either naming style (nDCG@10 or ndcg_cut.10); also 'metrics'.",
    )
    relevance_level: int = Field(1, description="Minimum grade that counts as relevant (-l).")
    complete: bool = Field(
        True, description="A gold query missing from the run scores 0 (trec_eval -c)."
    )
    judged_only: bool = Field(False, description="Drop unjudged documents first (-J).")
    gain: Literal["linear", "exp"] = Field("linear", description="nDCG gain of a grade.")
    dedupe: Literal["first", "max"] | None = Field(
        None, description="Keep one line of a duplicated document instead of failing."
    )


def _plain(result: Result, extra: tuple[str, ...] = ()) -> Result:
    """The engine's result as a plain Result; the ``extra`` curve points it computed for the
    report move from the metrics into ``metadata["pr_curve"]``."""
    samples, aggregates, metadata = result.samples, result.aggregates, dict(result.metadata)
    curve = {
        "source": "trec_eval iprec_at_recall, mean over the evaluated queries",
        "recall": [float(m.split("@", 1)[1]) for m in CURVE_POINTS],
        "precision": [aggregates[m].value if m in aggregates else None for m in CURVE_POINTS],
    }
    metadata["pr_curve"] = curve
    if extra:
        import pyarrow as pa
        import pyarrow.compute as pc

        drop = pa.array(list(extra))
        samples = samples.filter(pc.invert(pc.is_in(samples.column("metric"), value_set=drop)))
        aggregates = {k: v for k, v in aggregates.items() if k not in extra}
        info = metadata.get("retrieval")
        if isinstance(info, dict) and isinstance(info.get("measures"), list):
            metadata["retrieval"] = {
                **info,
                "measures": [m for m in info["measures"] if m.get("canonical") not in extra],
            }
    return Result(
        "retrieval",
        samples,
        aggregates,
        strata=result.strata,
        metadata=metadata,
        warnings=result.warnings,
    )


class RetrievalAdapter(TaskAdapter):
    name = "retrieval"
    options = RetrievalOptions
    outputs = ("run",)
    engine_module = "ragmeter.retrieval"
    version = "2"  # 2: metadata["pr_curve"]

    def for_system(self, options: TaskOptions, system: Any) -> TaskOptions:
        """A system's ``complete`` key overrides the task's: a baseline that leaves queries
        without results asks for trec_eval ``-c`` itself (docs/baselines.md)."""
        complete = getattr(system, "complete", None)
        if complete is None:
            return options
        return options.model_copy(update={"complete": complete})

    def _run_for(self, ctx: TaskContext, run: Any) -> Any:
        """The run restricted to the evaluated queries (other splits' queries left out)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        wanted = {u.id for u in ctx.units}
        table = run.to_table()
        qids = pc.unique(table.column("qid")).to_pylist()
        if all(q in wanted for q in qids):
            return run
        return table.filter(pc.is_in(table.column("qid"), value_set=pa.array(sorted(wanted))))

    def evaluate(self, ctx: TaskContext, outputs: Mapping[str, OutputFile]) -> Result:
        from ragmeter import retrieval

        opts: RetrievalOptions = ctx.options  # type: ignore[assignment]
        qrels = {u.id: dict(u.item) for u in ctx.units}
        run = self._run_for(ctx, outputs["run"].records["run"])
        extra = tuple(m for m in CURVE_POINTS if m not in ctx.metric_names)
        result = retrieval.evaluate(
            qrels,
            run,
            [*ctx.metric_names, *extra],
            relevance_level=opts.relevance_level,
            complete=opts.complete,
            judged_only=opts.judged_only,
            gain=opts.gain,
            dedupe=opts.dedupe,
        )
        ctx.progress(len(ctx.units))
        return _plain(result, extra)

    def records(self, ctx: TaskContext, outputs: Mapping[str, OutputFile]) -> list[SampleRecord]:
        import numpy as np
        import pyarrow.compute as pc

        table = outputs["run"].records["run"].to_table()
        order = pc.sort_indices(
            table,
            sort_keys=[("qid", "ascending"), ("score", "descending"), ("docno", "descending")],
        )
        table = table.take(order)
        # the first SHOWN rows of each query: rank within the query's run of rows
        qcodes = pc.dictionary_encode(table.column("qid")).combine_chunks().indices.to_numpy()
        starts = np.flatnonzero(np.r_[True, qcodes[1:] != qcodes[:-1]])
        lengths = np.diff(np.r_[starts, len(qcodes)])
        rank = np.arange(len(qcodes)) - np.repeat(starts, lengths)
        keep = np.flatnonzero(rank < SHOWN)
        top_table = table.take(keep)
        top: dict[str, list[dict[str, Any]]] = {}
        for q, d, sc in zip(
            top_table.column("qid").to_pylist(),
            top_table.column("docno").to_pylist(),
            top_table.column("score").to_pylist(),
            strict=True,
        ):
            top.setdefault(q, []).append({"id": d, "score": sc})
        out = []
        for u in ctx.units:
            grades = dict(u.item)
            ranked = [{**r, "grade": grades.get(r["id"])} for r in top.get(u.id, [])]
            out.append(
                SampleRecord(
                    u.id,
                    u.sample.id,
                    dict(u.sample.strata),
                    {
                        "input": {"query": u.qa.question if u.qa else None},
                        "gold": {"relevant_docs": grades},
                        "output": {"ranking": ranked},
                    },
                )
            )
        return out


ADAPTER = RetrievalAdapter()
