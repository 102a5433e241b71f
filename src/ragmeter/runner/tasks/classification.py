"""Runner task ``classification``: type classification with a label hierarchy (docs/extraction.md).

Gold is each sample's ``type_classification.primary_type`` (with ``secondary_types`` under
``multilabel: true``), predictions the system's ``entities[].type_classification``. A sample
the system gave no type counts as a wrong (invalid) prediction, so skipping hard items cannot
raise accuracy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import Field

from ragmeter.result import Result
from ragmeter.runner.outputs import OutputFile
from ragmeter.runner.tasks._extraction import (
    check_gold_labels,
    details,
    in_file,
    label_aggregate,
    label_stats,
)
from ragmeter.runner.tasks.base import TaskAdapter, TaskContext, TaskOptions
from ragmeter.store.records import SampleRecord

__all__ = ["ADAPTER", "ClassificationOptions"]


class ClassificationOptions(TaskOptions):
    profile: str | None = Field(
        "heritage", description="Label set and hierarchy: heritage, a profile file, or none."
    )
    labels: Literal["present"] | list[str] = Field(
        "present", description="Labels averaged in macro scores."
    )
    zero_division: float = Field(0.0, description="Value of a 0/0 ratio.")
    multilabel: bool = Field(False, description="Score primary + secondary types as label sets.")


class ClassificationAdapter(TaskAdapter):
    name = "classification"
    options = ClassificationOptions
    outputs = ("entities",)
    engine_module = "ragmeter.extraction"

    def default_metrics(self, options=None):  # type: ignore[no-untyped-def]
        if options is not None and options.multilabel:
            return ["multilabel.micro.f1", "multilabel.macro.f1", "multilabel.subset_accuracy"]
        return super().default_metrics(options)

    def sufficient_stats(self, metric, run, baseline):  # type: ignore[no-untyped-def]
        """``micro|macro|weighted.<p|r|f1>`` from each item's gold and predicted label."""
        parts = metric.split(".")
        if len(parts) != 2 or parts[0] not in ("micro", "macro", "weighted"):
            return None
        if parts[1] not in ("precision", "recall", "f1"):
            return None
        pairs_a = {i: (d["gold"], d["pred"]) for i, d in details(run, "accuracy").items()}
        pairs_b = {i: (d["gold"], d["pred"]) for i, d in details(baseline, "accuracy").items()}
        settings = run.metadata.get("settings") or {}
        fixed = isinstance(settings.get("labels"), list)
        labels = sorted(
            {*run.metadata.get("labels_used", ()), *baseline.metadata.get("labels_used", ())}
        )
        return (
            label_stats(pairs_a, labels),
            label_stats(pairs_b, labels),
            label_aggregate(parts[0], parts[1], len(labels), fixed),
        )

    def evaluate(self, ctx: TaskContext, outputs: Mapping[str, OutputFile]) -> Result:
        from ragmeter.extraction import classification as types_engine

        opts: ClassificationOptions = ctx.options  # type: ignore[assignment]
        entities = outputs["entities"]
        profile = opts.profile
        if profile is not None and profile != "heritage":
            import os

            profile = profile if os.path.isabs(profile) else os.path.join(ctx.base_dir, profile)
        if profile is not None:
            from ragmeter.extraction.profiles import get_profile

            hierarchy = get_profile(profile)
            check_gold_labels(
                ctx,
                lambda u: [
                    ("type_classification.primary_type", u.sample.type_classification.primary_type),
                    *(
                        (f"type_classification.secondary_types[{i}]", t)
                        for i, t in enumerate(u.sample.type_classification.secondary_types)
                        if opts.multilabel
                    ),
                ],
                list(hierarchy.vocabulary),
                hierarchy.name,
            )
        preds = {
            u.id: entities.records[u.id].types
            for u in ctx.units
            if u.id in entities.records and entities.records[u.id].types is not None
        }
        with in_file(entities):
            if opts.multilabel:
                gold = {
                    u.id: {
                        u.sample.type_classification.primary_type,
                        *u.sample.type_classification.secondary_types,
                    }
                    for u in ctx.units
                }
                pred = {i: {p, *s} for i, (p, s) in preds.items()}
                report = types_engine.evaluate_multilabel(
                    gold,
                    pred,
                    profile=profile,
                    labels=opts.labels,
                    zero_division=opts.zero_division,
                    missing="as_invalid",
                    extra="ignore",
                )
            else:
                gold = {u.id: u.sample.type_classification.primary_type for u in ctx.units}
                report = types_engine.evaluate(
                    gold,
                    {i: p for i, (p, _) in preds.items()},
                    profile=profile,
                    labels=opts.labels,
                    zero_division=opts.zero_division,
                    missing="as_invalid",
                    extra="ignore",
                )
        ctx.progress(len(ctx.units))
        return report.to_result()

    def records(self, ctx: TaskContext, outputs: Mapping[str, OutputFile]) -> list[SampleRecord]:
        entities = outputs["entities"].records
        out = []
        for u in ctx.units:
            tc = u.sample.type_classification
            pred = entities.get(u.id)
            out.append(
                SampleRecord(
                    u.id,
                    u.sample.id,
                    dict(u.sample.strata),
                    {
                        "input": {"text": u.sample.text},
                        "gold": {
                            "primary_type": tc.primary_type,
                            "secondary_types": list(tc.secondary_types),
                        },
                        "output": None
                        if pred is None or pred.types is None
                        else {
                            "primary_type": pred.types[0],
                            "secondary_types": list(pred.types[1]),
                        },
                    },
                )
            )
        return out


ADAPTER = ClassificationAdapter()
