"""Runner task ``ner``: entity-level NER, scored per document (extraction.md §3, §9).

Each gold sample with ``ner_annotations`` (and its ``text``) is a document; the predictions are
the system's ``entities[].ner_annotations`` for that sample id, and a sample the system returned
nothing for has no predictions (every gold entity missed). Matching never crosses documents.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

from pydantic import Field

from ragmeter.result import Result
from ragmeter.runner.outputs import OutputFile
from ragmeter.runner.tasks._extraction import details, in_file, prf
from ragmeter.runner.tasks.base import TaskAdapter, TaskContext, TaskOptions
from ragmeter.store.records import SampleRecord

__all__ = ["ADAPTER", "NerOptions"]

SCHEMAS = ("strict", "exact", "partial", "type")


class NerOptions(TaskOptions):
    schemas: list[Literal["strict", "exact", "partial", "type"]] = Field(
        default_factory=lambda: list(SCHEMAS),
        description="SemEval-2013 schemas to report.",
    )
    vocabulary: str | list[str] | None = Field(
        None,
        description="Allowed labels: a list, or a profile name (heritage) for its NER labels; "
        "gold labels outside it are errors, predicted ones count as wrong.",
    )
    min_overlap: float = Field(0.0, ge=0.0, le=1.0, description="Overlap needed by partial/type.")
    duplicates: Literal["dedupe", "keep"] = Field(
        "dedupe", description="Duplicate predicted spans."
    )
    zero_division: float = Field(0.0, description="Value of a 0/0 ratio (scikit-learn's rule).")


class NerAdapter(TaskAdapter):
    name = "ner"
    options = NerOptions
    outputs = ("entities",)
    engine_module = "ragmeter.extraction"

    def default_metrics(self, options=None):  # type: ignore[no-untyped-def]
        schemas = set(options.schemas if options is not None else SCHEMAS)
        return [m for m in super().default_metrics(options) if m.split(".")[1] in schemas]

    def sufficient_stats(self, metric, run, baseline):  # type: ignore[no-untyped-def]
        """``overall.<schema>.<p|r|f1>`` from each document's counts: (COR [+ ½PAR], POS, ACT)."""
        m = re.fullmatch(r"overall\.(strict|exact|partial|type)\.(precision|recall|f1)", metric)
        if m is None:
            return None
        schema, key = m.groups()
        half = 0.5 if schema in ("partial", "type") else 0.0

        def per_doc(result: Result) -> dict[str, tuple[float, float, float]]:
            return {
                doc: (d["COR"] + half * d["PAR"], d["POS"], d["ACT"])
                for doc, d in details(result, f"overall.{schema}.f1").items()
            }

        return per_doc(run), per_doc(baseline), prf(key)

    def evaluate(self, ctx: TaskContext, outputs: Mapping[str, OutputFile]) -> Result:
        from ragmeter import extraction as ex

        opts: NerOptions = ctx.options  # type: ignore[assignment]
        entities = outputs["entities"]
        docs = {u.id: ex.Document(u.id, u.sample.text or "") for u in ctx.units}
        gold = ex.Corpus(
            docs,
            {
                u.id: [
                    ex.Span(u.id, m.start, m.end, m.type, text=m.text)
                    for m in u.sample.ner_annotations or ()
                ]
                for u in ctx.units
            },
        )
        pred_spans = {}
        for u in ctx.units:
            out = entities.records.get(u.id)
            pred_spans[u.id] = [
                ex.Span(u.id, int(p["start"]), int(p["end"]), str(p["type"]))
                for p in ((out.ner or ()) if out is not None else ())
            ]
        vocabulary = opts.vocabulary
        if isinstance(vocabulary, str):
            vocabulary = list(ex.load_profile(vocabulary).ner_vocabulary)
        with in_file(entities):
            report = ex.evaluate_ner(
                gold,
                ex.Corpus(docs, pred_spans),
                schemas=opts.schemas,
                vocabulary=vocabulary,
                min_overlap=opts.min_overlap,
                duplicates=opts.duplicates,
                zero_division=opts.zero_division,
            )
        ctx.progress(len(ctx.units))
        return report.to_result()

    def records(self, ctx: TaskContext, outputs: Mapping[str, OutputFile]) -> list[SampleRecord]:
        entities = outputs["entities"].records
        out = []
        for u in ctx.units:
            pred = entities.get(u.id)
            out.append(
                SampleRecord(
                    u.id,
                    u.sample.id,
                    dict(u.sample.strata),
                    {
                        "input": {"text": u.sample.text},
                        "gold": {
                            "entities": [
                                {"start": m.start, "end": m.end, "type": m.type, "text": m.text}
                                for m in u.sample.ner_annotations or ()
                            ]
                        },
                        "output": {"entities": list(pred.ner or ())} if pred else None,
                    },
                )
            )
        return out


ADAPTER = NerAdapter()
