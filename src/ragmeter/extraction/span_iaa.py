"""Agreement between annotators on spans: pairwise span F1 (strict and lenient schemas, per label)
and Cohen's kappa on the token tags, as Hripcsak and Rothschild (2005) recommend for NER.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ragmeter.errors import InputError
from ragmeter.extraction.coefficients import cohen_kappa
from ragmeter.extraction.report import ExtractionReport
from ragmeter.warnings import warn

__all__ = ["SpanAgreementReport", "span_agreement", "span_agreement_tags"]


@dataclass
class SpanAgreementReport(ExtractionReport):
    """Pairwise span F1 between annotators (symmetric matrix, mean over pairs, per label)."""

    annotators: list[str]
    schemas: tuple[str, ...]
    pairwise: dict[str, list[list[float]]]  # schema -> matrix
    mean_f1: dict[str, float | None]
    per_label: dict[str, dict[str, float | None]]  # schema -> label -> mean F1 over pairs
    pair_counts: dict[str, dict[str, dict[str, int]]]  # "a|b" -> schema -> counts
    token_kappa: float | None
    reports: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

    _kind = "span agreement"
    _trailer = ("reports", "warnings")

    @property
    def metrics(self) -> dict[str, Any]:
        return {
            "annotators": self.annotators,
            "schemas": list(self.schemas),
            "pairwise_f1": self.pairwise,
            "mean_f1": self.mean_f1,
            "per_label": self.per_label,
            "pair_counts": self.pair_counts,
            "token_kappa": self.token_kappa,
        }

    def to_result(self):
        """A Result (task ``agreement``): one row per annotator pair with its F1 per schema."""
        from ragmeter.extraction.results import Column, aggregate, build_result

        pairs = sorted(self.pair_counts)
        columns = []
        aggs = {}
        for s in self.schemas:
            vals = []
            for key in pairs:
                a, b = key.split("|", 1)
                i, j = self.annotators.index(a), self.annotators.index(b)
                vals.append(self.pairwise[s][i][j])
            columns.append(Column(f"span_f1.{s}", np.array(vals, dtype=np.float64)))
            aggs[f"span_f1.{s}"] = aggregate(self.mean_f1[s], n=len(pairs))
        if self.token_kappa is not None:
            aggs["token_kappa"] = aggregate(self.token_kappa, n=len(pairs))
        return build_result("agreement", pairs, columns, aggs, warnings=self.warnings)


def _span_agreement(
    tables: Mapping[str, Any], schemas: Sequence[str], reports: dict[str, Any]
) -> tuple[list[str], dict, dict, dict, dict]:
    from ragmeter.extraction.ner import _schemas
    from ragmeter.extraction.ner import evaluate as evaluate_ner

    names = list(tables)
    if len(names) < 2:
        raise InputError("one annotator (expected at least 2 to compare)")
    schema_list = _schemas(schemas)
    k = len(names)
    matrix = {s: [[1.0] * k for _ in range(k)] for s in schema_list}
    per_label_vals: dict[str, dict[str, list[float]]] = {s: {} for s in schema_list}
    pair_counts: dict[str, dict[str, dict[str, int]]] = {}
    for i, j in itertools.combinations(range(k), 2):
        rep = evaluate_ner(
            tables[names[i]],
            tables[names[j]],
            schemas=schema_list,
            unknown_documents="as_empty_gold",
        )
        key = f"{names[i]}|{names[j]}"
        pair_counts[key] = {}
        for s in schema_list:
            o = rep.overall[s]
            # 2·credit/(|A|+|B|): symmetric, 1 when both annotators marked nothing
            denom = o["POS"] + o["ACT"]
            f1 = (2 * (o["COR"] + 0.5 * o["PAR"]) / denom) if denom else 1.0
            matrix[s][i][j] = matrix[s][j][i] = f1
            pair_counts[key][s] = {
                c: o[c] for c in ("COR", "INC", "PAR", "MIS", "SPU", "POS", "ACT")
            }
            for lab, block in rep.per_label.items():
                if lab.startswith("__"):
                    continue
                b = block[s]
                d = b["POS"] + b["ACT"]
                per_label_vals[s].setdefault(lab, []).append(
                    (2 * (b["COR"] + 0.5 * b["PAR"]) / d) if d else 1.0
                )
    mean_f1 = {
        s: float(np.mean([matrix[s][i][j] for i, j in itertools.combinations(range(k), 2)]))
        for s in schema_list
    }
    per_label = {
        s: {lab: sum(v) / len(v) for lab, v in sorted(d.items())} for s, d in per_label_vals.items()
    }
    return names, matrix, mean_f1, per_label, pair_counts


def span_agreement(
    annotations: Mapping[str, Any],
    *,
    schemas: Sequence[str] = ("strict", "type"),
) -> SpanAgreementReport:
    """Pairwise span F1 between annotators, each a :class:`Corpus`, a mapping
    ``doc_id -> spans`` or a :class:`SpanTable`.

    For a pair (A, B): F1 = 2·|A∩B|/(|A| + |B|) under ``strict`` (symmetric; with B as
    predictions it is the strict F1 with A as reference, and vice versa), and the overlap-
    tolerant value under ``type``, using the optimal matching of docs/extraction.md#ner. A document
    one annotator
    did not annotate counts as empty for that annotator.
    """
    from ragmeter.extraction.columns import to_span_table

    tables = {str(a): to_span_table(c, side=f"annotator '{a}'") for a, c in annotations.items()}
    all_docs = sorted({d for t in tables.values() for d in t.doc_ids})
    reports: dict[str, Any] = {}
    for a, t in tables.items():
        missing = sorted(set(all_docs) - set(t.doc_ids))
        if missing:
            reports.setdefault("documents_not_annotated", {})[a] = missing
    names, matrix, mean_f1, per_label, counts = _span_agreement(tables, schemas, reports)
    return SpanAgreementReport(
        annotators=names,
        schemas=tuple(matrix),
        pairwise=matrix,
        mean_f1=mean_f1,
        per_label=per_label,
        pair_counts=counts,
        token_kappa=None,
        reports=reports,
    )


def span_agreement_tags(
    annotations: Mapping[str, Sequence[Sequence[str]]],
    *,
    scheme: str = "IOB2",
    mode: Literal["lenient", "strict"] = "lenient",
    schemas: Sequence[str] = ("strict", "type"),
    token_kappa: bool = True,
) -> SpanAgreementReport:
    """:func:`span_agreement` on tag sequences (one list per sentence, same tokens for every
    annotator), plus token-level Cohen's κ on the flattened tags including ``O`` as a
    diagnostic (two annotators only; it is inflated by the many ``O`` tokens and carries a
    warning).

    >>> a1 = [["B-MUS", "I-MUS", "O", "B-LOC", "O", "B-TMP", "O"]]
    >>> a2 = [["B-MUS", "I-MUS", "O", "B-LOC", "I-LOC", "B-TMP", "O"]]
    >>> import warnings
    >>> with warnings.catch_warnings():  # token κ comes with a RagmeterWarning
    ...     warnings.simplefilter("ignore")
    ...     r = span_agreement_tags({"a1": a1, "a2": a2})
    >>> round(r.mean_f1["strict"], 4), r.mean_f1["type"], round(r.token_kappa, 4)
    (0.6667, 1.0, 0.8205)
    """
    from ragmeter.extraction.columns import SpanTable
    from ragmeter.extraction.ner import tag_spans
    from ragmeter.records.errors import TokenMismatchError

    names = [str(a) for a in annotations]
    seqs = [annotations[a] for a in annotations]
    ref = seqs[0]
    for name, s in zip(names[1:], seqs[1:], strict=True):
        if len(s) != len(ref) or any(len(x) != len(y) for x, y in zip(s, ref, strict=True)):
            raise TokenMismatchError(
                f"annotator '{name}' has a different number of sentences or tokens than "
                f"'{names[0]}' (expected the same tokens for every annotator)"
            )
    width = len(str(max(len(ref) - 1, 0)))
    doc_of = [str(i).zfill(width) for i in range(len(ref))]
    tables = {}
    for name, s in zip(names, seqs, strict=True):
        d, a, b, lab = tag_spans(s, doc_of, scheme=scheme, mode=mode, side=f"annotator '{name}'")
        tables[name] = SpanTable.from_arrays(
            d, np.array(a, np.int64), np.array(b, np.int64), lab, documents=doc_of
        )
    reports: dict[str, Any] = {}
    names, matrix, mean_f1, per_label, counts = _span_agreement(tables, schemas, reports)
    kappa = None
    warnings = []
    if token_kappa and len(names) == 2:
        flat1 = [t for sent in seqs[0] for t in sent]
        flat2 = [t for sent in seqs[1] for t in sent]
        if flat1:
            kappa = cohen_kappa(flat1, flat2)
            warnings.append(
                "token κ is a diagnostic: it counts O tokens as agreement and is inflated; "
                "use span F1 for NER agreement (docs/extraction.md#inter-annotator-agreement)"
            )
            warn(warnings[-1])
    return SpanAgreementReport(
        annotators=names,
        schemas=tuple(matrix),
        pairwise=matrix,
        mean_f1=mean_f1,
        per_label=per_label,
        pair_counts=counts,
        token_kappa=kappa,
        reports=reports,
        warnings=warnings,
    )
