"""Runner task ``ner``: entity-level NER, scored per document (docs/extraction.md).

Each gold sample with ``ner_annotations`` (and its ``text``) is a document; the predictions are
the system's ``entities[].ner_annotations`` for that sample id, and a sample the system returned
nothing for has no predictions (every gold entity missed). Matching never crosses documents.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
from pydantic import Field

from ragmeter.errors import InputError
from ragmeter.result import Result
from ragmeter.runner.outputs import OutputFile
from ragmeter.runner.tasks._extraction import check_gold_labels, details, in_file, prf
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
        from ragmeter.extraction import ner as ner_engine

        opts: NerOptions = ctx.options  # type: ignore[assignment]
        entities = outputs["entities"]
        documents = [u.id for u in ctx.units]
        gold_cols: tuple[list[str], list[int], list[int], list[str]] = ([], [], [], [])
        pred_cols: tuple[list[str], list[int], list[int], list[str]] = ([], [], [], [])
        for u in ctx.units:
            for m in u.sample.ner_annotations or ():
                for col, v in zip(gold_cols, (u.id, m.start, m.end, m.type), strict=True):
                    col.append(v)
            out = entities.records.get(u.id)
            size = len(u.sample.text or "")
            for i, p in enumerate((out.ner or ()) if out is not None else ()):
                start, end, label = p["start"], p["end"], p["type"]
                bad = (
                    isinstance(start, bool)
                    or isinstance(end, bool)
                    or not isinstance(start, int)
                    or not isinstance(end, int)
                    or not isinstance(label, str)
                    or not label
                )
                if bad or not 0 <= start < end <= size:
                    raise InputError(
                        f"ner_annotations[{i}]: span {start!r}-{end!r} {label!r} is not inside "
                        f"the text of sample '{u.id}' (expected integer offsets with "
                        f"0 <= start < end <= {size}, and a label)",
                        path=entities.path,
                        line=entities.lines.get(u.id),
                    )
                for col, v in zip(pred_cols, (u.id, start, end, label), strict=True):
                    col.append(v)
        vocabulary = opts.vocabulary
        if isinstance(vocabulary, str):
            from ragmeter.extraction.profiles import get_profile

            path = vocabulary
            if path != "heritage" and not os.path.isabs(path):
                path = os.path.join(ctx.base_dir, path)
            profile = get_profile(path)
            vocabulary = list(profile.ner_vocabulary) if profile is not None else None
            what = profile.name if profile is not None else "known"
        else:
            what = "known"
        if vocabulary:
            check_gold_labels(
                ctx,
                lambda u: [
                    (f"ner_annotations[{i}].type", m.type)
                    for i, m in enumerate(u.sample.ner_annotations or ())
                ],
                vocabulary,
                f"{what} NER",
            )

        def table(cols: Any) -> Any:
            return ex.SpanTable.from_arrays(
                cols[0],
                np.asarray(cols[1], dtype=np.int64),
                np.asarray(cols[2], dtype=np.int64),
                cols[3],
                documents=documents,
            )

        with in_file(entities):
            report = ner_engine.evaluate(
                table(gold_cols),
                table(pred_cols),
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
