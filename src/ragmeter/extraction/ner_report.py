"""The NER report: metrics by schema, per-document counts, key paths and the Result view."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragmeter.extraction.ner_prepare import _ALIASES, COUNT_KEYS
from ragmeter.extraction.report import ExtractionReport


@dataclass
class NerReport(ExtractionReport):
    """Result of :func:`evaluate`.

    ``metrics`` holds ``overall``, ``per_label``, ``macro_over_labels``,
    ``weighted_over_labels``, ``macro_over_documents``, ``entity`` and ``confusions``; the
    per-document counts are in ``per_document`` (built on first access from arrays). ``get``
    reads a report key path such as ``"overall.strict.f1"``.
    """

    schemas: tuple[str, ...]
    doc_ids: list[str]
    labels: list[str]
    doc_counts: dict[str, np.ndarray]  # schema -> (n_docs, 5) COR INC PAR MIS SPU
    doc_pos: np.ndarray
    doc_act: np.ndarray
    metrics: dict[str, Any]
    undefined: dict[str, str]
    reports: dict[str, Any]
    settings: dict[str, Any]
    doc_values: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = field(
        default_factory=dict
    )  # schema -> (P, R, F1, included) per document
    warnings: list[str] = field(default_factory=list)
    _per_document: dict[str, Any] | None = field(default=None, repr=False)

    _kind = "NER"
    _aliases = _ALIASES

    # -- views -------------------------------------------------------------------------------
    @property
    def overall(self) -> dict[str, dict[str, Any]]:
        return self.metrics["overall"]

    @property
    def per_label(self) -> dict[str, dict[str, dict[str, Any]]]:
        return self.metrics["per_label"]

    @property
    def entity(self) -> dict[str, Any]:
        return self.metrics["entity"]

    @property
    def confusions(self) -> list[list[Any]]:
        return self.metrics["confusions"]

    @property
    def per_document(self) -> dict[str, dict[str, dict[str, int]]]:
        """``doc_id -> schema -> {COR, INC, PAR, MIS, SPU, POS, ACT}``."""
        if self._per_document is None:
            out: dict[str, dict[str, dict[str, int]]] = {d: {} for d in self.doc_ids}
            pos = self.doc_pos.tolist()
            act = self.doc_act.tolist()
            for schema in self.schemas:
                rows = self.doc_counts[schema].tolist()
                for i, d in enumerate(self.doc_ids):
                    c = rows[i]
                    out[d][schema] = {
                        "COR": c[0],
                        "INC": c[1],
                        "PAR": c[2],
                        "MIS": c[3],
                        "SPU": c[4],
                        "POS": pos[i],
                        "ACT": act[i],
                    }
            self._per_document = out
        return self._per_document

    def document_counts(self, schema: str = "strict") -> dict[str, tuple[float, float, float]]:
        """Additive per-document statistics ``(tp, fp, fn)`` of a schema, for resampling
        documents (docs/stats.md#corpus-level-metrics-corpus_test): tp = COR + ½·PAR, fp = ACT − tp,
        fn = POS − tp, so that
        micro P, R and F1 follow from their sums."""
        schema = _ALIASES.get(schema, schema)
        c = self.doc_counts[schema]
        tp = c[:, 0] + 0.5 * c[:, 2]
        fp = self.doc_act - tp
        fn = self.doc_pos - tp
        return {
            d: (float(a), float(b), float(f))
            for d, a, b, f in zip(self.doc_ids, tp.tolist(), fp.tolist(), fn.tolist(), strict=True)
        }

    def resampling_counts(self, metric: str) -> dict[str, tuple[float, float, float]]:
        """Per-document ``(tp, fp, fn)`` behind a micro metric (``overall.<schema>.*``,
        ``entity.micro.*``, with or without the ``ner.`` prefix), for
        docs/stats.md#corpus-level-metrics-corpus_test."""
        name = metric.removeprefix("ner.")
        parts = name.split(".")
        if parts[0] == "overall" and len(parts) == 3:
            return self.document_counts(parts[1])
        if name.startswith("entity.micro."):
            return self.document_counts("strict")
        raise KeyError(f"'{metric}' is not a micro NER metric with per-document counts")

    @property
    def summary(self) -> dict[str, float | None]:
        """Registry metric name → value (the aggregates of :meth:`to_result`)."""
        return {k: a.value for k, a in self.to_result(samples=False).aggregates.items()}

    def _body(self) -> dict[str, Any]:
        # nested under "metrics": the NER report keeps nervaluate's per-schema layout
        return {"task": "ner", "metrics": self.metrics, "per_document": self.per_document}

    def cli_summary(self) -> dict[str, Any]:
        """The ``ragmeter ner --json`` shape: one block per schema with ``micro``, ``macro``
        and ``weighted`` P/R/F1, ``per_label`` and ``counts``."""
        out: dict[str, Any] = {}
        for s in self.schemas:
            o = self.overall[s]
            out[s] = {
                "micro": {k: o[k] for k in ("precision", "recall", "f1")},
                "macro": dict(self.metrics["macro_over_labels"][s]),
                "weighted": dict(self.metrics["weighted_over_labels"][s]),
                "per_label": {lab: self.per_label[lab][s] for lab in self.per_label},
                "counts": {k: o[k] for k in (*COUNT_KEYS, "POS", "ACT")},
                "macro_over_documents": dict(self.metrics["macro_over_documents"][s]),
            }
        out["entity"] = self.entity
        out["confusions"] = self.confusions
        if "token_accuracy" in self.metrics:
            out["token_accuracy"] = self.metrics["token_accuracy"]
        out["undefined"] = self.undefined
        out["reports"] = self.reports
        out["settings"] = self.settings
        return out

    def to_result(self, *, samples: bool = True):
        """A :class:`ragmeter.Result` for the ``ner`` task: one row per document with its
        P/R/F1 per schema (``overall.<schema>.*``, with the counts as detail on the ``f1`` row,
        and ``macro_over_documents.<schema>.*``); aggregates under the registry's names."""
        from ragmeter import status as st
        from ragmeter.extraction.results import Column, aggregate, build_result

        n = len(self.doc_ids)
        columns: list[Column] = []
        aggs: dict[str, Any] = {}
        for s in self.schemas:
            p, r, f, included = self.doc_values[s]
            statuses = np.where(included, st.OK, st.NO_GOLD)
            counts = self.doc_counts[s].tolist()
            pos, act = self.doc_pos.tolist(), self.doc_act.tolist()
            # counts are integers, so this is the JSON json.dumps would write, built faster
            details = (
                [
                    f'{{"COR": {c[0]}, "INC": {c[1]}, "PAR": {c[2]}, "MIS": {c[3]}, '
                    f'"SPU": {c[4]}, "POS": {pos[i]}, "ACT": {act[i]}}}'
                    for i, c in enumerate(counts)
                ]
                if samples
                else None
            )
            for key, vals in (("precision", p), ("recall", r), ("f1", f)):
                if samples:
                    columns.append(
                        Column(
                            f"overall.{s}.{key}",
                            vals,
                            st.OK,
                            details if key == "f1" else None,
                        )
                    )
                    columns.append(Column(f"macro_over_documents.{s}.{key}", vals, statuses))
                aggs[f"overall.{s}.{key}"] = aggregate(self.overall[s][key], n=n)
                mod = self.metrics["macro_over_documents"][s]
                n_in = int(mod["n_documents"])
                aggs[f"macro_over_documents.{s}.{key}"] = aggregate(
                    mod[key],
                    n=n_in,
                    status_counts={st.OK: n_in, **({st.NO_GOLD: n - n_in} if n > n_in else {})},
                    reason="no documents to average" if mod[key] is None else None,
                )
                aggs[f"macro_over_labels.{s}.{key}"] = aggregate(
                    self.metrics["macro_over_labels"][s][key], n=n
                )
                aggs[f"weighted_over_labels.{s}.{key}"] = aggregate(
                    self.metrics["weighted_over_labels"][s][key], n=n
                )
        for avg in ("micro", "macro", "weighted"):
            for key in ("precision", "recall", "f1"):
                aggs[f"entity.{avg}.{key}"] = aggregate(self.entity[avg][key], n=n)
        if "token_accuracy" in self.metrics:
            aggs["token_accuracy"] = aggregate(self.metrics["token_accuracy"], n=n)
        metadata = {
            "settings": self.settings,
            "reports": self.reports,
            "undefined": self.undefined,
        }
        return build_result(
            "ner", self.doc_ids, columns, aggs, metadata=metadata, warnings=self.warnings
        )
