"""Runner task ``linking``: entity-linking ranking and NIL detection (docs/extraction.md).

Gold mentions are the samples' ``entity_linking`` entries (mention id, acceptable KB ids, NIL
when none); predictions are the system's ``entities[].entity_linking`` records, each naming its
mention by ``mention_id`` or by ``start``/``end`` (the gold default id ``<sample>:<start>-<end>``)
with ``candidates`` (``[{kb_id, score?}]`` or ids) or a single ``wikidata_id``, and ``nil``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from ragmeter.errors import InputError
from ragmeter.result import Result
from ragmeter.runner.outputs import OutputFile
from ragmeter.runner.tasks._extraction import details, in_file, prf
from ragmeter.runner.tasks.base import TaskAdapter, TaskContext, TaskOptions
from ragmeter.store.records import SampleRecord

__all__ = ["ADAPTER", "LinkingOptions"]


class LinkingOptions(TaskOptions):
    k: list[int] = Field(default_factory=lambda: [1, 5, 10], description="Cut-offs of Hits@K.")
    zero_division: float = Field(0.0, description="Value of a 0/0 ratio (NIL detection).")


def _prediction(
    sample_id: str, rec: Mapping[str, Any], where: str, path: str, line: Any
) -> dict[str, Any]:
    mid = rec.get("mention_id")
    if mid is None and rec.get("start") is not None and rec.get("end") is not None:
        mid = f"{sample_id}:{rec['start']}-{rec['end']}"
    if mid is None:
        raise InputError(
            f"{where}: no mention_id and no start/end (expected one of them)", path=path, line=line
        )
    candidates = rec.get("candidates")
    if candidates is None and rec.get("wikidata_id") is not None:
        candidates = [rec["wikidata_id"]]
    out: dict[str, Any] = {"mention_id": str(mid), "candidates": candidates or []}
    if rec.get("nil") is not None:
        out["nil"] = rec["nil"]
    return out


class LinkingAdapter(TaskAdapter):
    name = "linking"
    options = LinkingOptions
    outputs = ("entities",)
    engine_module = "ragmeter.extraction"

    def cutoffs(self, options):  # type: ignore[no-untyped-def]
        return list(options.k) if options is not None else [1, 5, 10]

    def sufficient_stats(self, metric, run, baseline):  # type: ignore[no-untyped-def]
        """``nil.<p|r|f1>`` from each gold mention's NIL counts (tp, tp + fn, tp + fp)."""
        if metric not in ("nil.precision", "nil.recall", "nil.f1"):
            return None

        def per_mention(result: Result) -> dict[str, tuple[float, float, float]]:
            return {
                m: (d["tp"], d["tp"] + d["fn"], d["tp"] + d["fp"])
                for m, d in details(result, "d2kb_accuracy").items()
            }

        return per_mention(run), per_mention(baseline), prf(metric.split(".")[1])

    def evaluate(self, ctx: TaskContext, outputs: Mapping[str, OutputFile]) -> Result:
        from ragmeter.extraction import linking as linking_engine

        opts: LinkingOptions = ctx.options  # type: ignore[assignment]
        entities = outputs["entities"]
        gold = {u.id: list(u.item.kb_ids) or None for u in ctx.units}
        preds: list[dict[str, Any]] = []
        for sid in dict.fromkeys(u.sample.id for u in ctx.units):
            out = entities.records.get(sid)
            for i, rec in enumerate((out.links or ()) if out is not None else ()):
                preds.append(
                    _prediction(
                        sid, rec, f"entity_linking[{i}]", entities.path, entities.lines.get(sid)
                    )
                )
        ks = sorted({*opts.k, *(m.params["k"] for m in ctx.metrics if "k" in m.params)})
        with in_file(entities):
            report = linking_engine.evaluate(gold, preds, k=ks, zero_division=opts.zero_division)
        ctx.progress(len(ctx.units))
        return report.to_result()

    def records(self, ctx: TaskContext, outputs: Mapping[str, OutputFile]) -> list[SampleRecord]:
        entities = outputs["entities"].records
        out = []
        for u in ctx.units:
            link = u.item
            pred = entities.get(u.sample.id)
            mine = None
            for rec in (pred.links or ()) if pred is not None else ():
                mid = rec.get("mention_id") or (
                    f"{u.sample.id}:{rec.get('start')}-{rec.get('end')}"
                    if rec.get("start") is not None
                    else None
                )
                if mid == u.id:
                    mine = dict(rec)
            out.append(
                SampleRecord(
                    u.id,
                    u.sample.id,
                    dict(u.sample.strata),
                    {
                        "input": {"mention": link.mention, "start": link.start, "end": link.end},
                        "gold": {
                            "kb_ids": list(link.kb_ids),
                            "nil": link.nil,
                            **dict(link.identifiers),
                        },
                        "output": mine,
                    },
                )
            )
        return out


ADAPTER = LinkingAdapter()
