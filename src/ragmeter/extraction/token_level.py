"""Token-level NER diagnostics (docs/extraction.md#token-level-diagnostics).

Token scores give partial credit for boundary errors and ignore chunk structure, so they are a
diagnostic, never the headline NER score. Each token gets the label of the span overlapping it
(or ``O``); P/R/F1 are computed per label over token positions, with micro, macro (over labels in
gold ∪ predictions) and weighted averages reported separately (heritage defect 4), and token
accuracy counts every token including ``O``.

>>> text = "Het Rijksmuseum Amsterdam opende in 1885."
>>> r = token_level_metrics({"d": [(4, 25, "MUS"), (36, 40, "TMP")]},
...                         {"d": [(4, 15, "MUS"), (16, 25, "LOC"), (36, 40, "TMP")]},
...                         {"d": text})
>>> round(r.micro["f1"], 4), round(r.macro["f1"], 4), round(r.token_accuracy, 4)
(0.6667, 0.5556, 0.8571)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragmeter.extraction.columns import span_fields
from ragmeter.extraction.ner_scoring import _averages
from ragmeter.extraction.prf import check_zero_division, prf
from ragmeter.records.errors import Problem, UnknownDocumentError
from ragmeter.records.model import Corpus
from ragmeter.records.tokenize import get_tokenizer, spans_to_tags

__all__ = ["TokenReport", "token_level_metrics"]


@dataclass
class TokenReport:
    """Per-label and averaged token-level P/R/F1, token accuracy and conversion reports."""

    per_label: dict[str, dict[str, float]]
    micro: dict[str, float]
    macro: dict[str, float]
    weighted: dict[str, float]
    token_accuracy: float | None
    n_tokens: int
    reports: dict[str, Any]
    settings: dict[str, Any]
    undefined: dict[str, str] = field(default_factory=dict)
    tags: dict[str, dict[str, list[str]]] | None = None
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "per_label": self.per_label,
            "micro": self.micro,
            "macro": self.macro,
            "weighted": self.weighted,
            "token_accuracy": self.token_accuracy,
            "n_tokens": self.n_tokens,
            "undefined": self.undefined,
            "reports": self.reports,
            "settings": self.settings,
            "warnings": self.warnings,
        }
        if self.tags is not None:
            out["tags"] = self.tags
        return out


def _spans(data: Any, doc_id: str, side: str) -> list[tuple[int, int, str]]:
    spans = data.spans.get(doc_id, []) if isinstance(data, Corpus) else data.get(doc_id, [])
    return [span_fields(s, doc_id, f"{side} document '{doc_id}'") for s in spans]


def token_level_metrics(
    gold: Corpus | Mapping[str, Sequence[Any]],
    pred: Corpus | Mapping[str, Sequence[Any]],
    texts: Mapping[str, str] | None = None,
    *,
    tokenizer: Any = "simple",
    misaligned: str | Mapping[str, str] | None = None,
    on_overlap: str = "error",
    zero_division: float | str = 0.0,
    return_tags: bool = False,
) -> TokenReport:
    """Token-level P/R/F1 of character spans (a diagnostic; see the module docstring).

    Parameters
    ----------
    gold, pred:
        Corpora or mappings ``doc_id -> spans``.
    texts:
        ``doc_id -> text``; taken from ``gold`` when it is a :class:`Corpus`.
    tokenizer:
        ``"simple"`` (default), ``"whitespace"``, ``"spacy:<lang>"`` or a callable.
    misaligned:
        Policy for spans not on token boundaries: one of ``"expand"``, ``"error"``, ``"drop"``
        for both sides, or ``{"gold": ..., "pred": ...}``. Default: gold ``"error"``,
        predictions ``"expand"``.
    on_overlap:
        ``"error"`` (default) or ``"keep_longest"``.
    """
    zd = check_zero_division(zero_division)
    tok, tok_name = get_tokenizer(tokenizer)
    if misaligned is None:
        policy = {"gold": "error", "pred": "expand"}
    elif isinstance(misaligned, str):
        policy = {"gold": misaligned, "pred": misaligned}
    else:
        policy = {"gold": "error", "pred": "expand", **dict(misaligned)}
    if texts is None:
        if not isinstance(gold, Corpus):
            raise ValueError("token_level_metrics needs texts (or a gold Corpus with texts)")
        texts = {d: doc.text for d, doc in gold.documents.items()}
    gold_docs = gold.doc_ids if isinstance(gold, Corpus) else list(gold)
    pred_docs = pred.doc_ids if isinstance(pred, Corpus) else list(pred)
    missing = [d for d in sorted(set(gold_docs) | set(pred_docs)) if d not in texts]
    if missing:
        raise UnknownDocumentError(
            [
                Problem(
                    "no text for this document (expected a text per document)",
                    location=f"document '{d}'",
                )
                for d in missing[:50]
            ]
        )
    unknown = sorted(set(pred_docs) - set(gold_docs))
    if unknown:
        raise UnknownDocumentError(
            [
                Problem(
                    "predictions for a document that is not in the gold set",
                    location=f"document '{d}'",
                )
                for d in unknown[:50]
            ]
        )
    reports: dict[str, Any] = {
        side: {"misaligned": [], "dropped": [], "overlaps": [], "no_tokens": []}
        for side in ("gold", "pred")
    }
    g_all: list[str] = []
    p_all: list[str] = []
    tags_out: dict[str, dict[str, list[str]]] = {}
    for doc_id in sorted(gold_docs):
        text = texts[doc_id]
        tokens = tok(text)
        labels = {}
        for side, data in (("gold", gold), ("pred", pred)):
            conv = spans_to_tags(
                tokens,
                _spans(data, doc_id, side),
                scheme="IOB2",
                misaligned=policy[side],
                on_overlap=on_overlap,
                where=f"{side} document '{doc_id}'",
            )
            for key in ("misaligned", "dropped", "overlaps", "no_tokens"):
                reports[side][key].extend({"doc_id": doc_id, **row} for row in getattr(conv, key))
            labels[side] = [t if t == "O" else t[2:] for t in conv.tags]
        g_all.extend(labels["gold"])
        p_all.extend(labels["pred"])
        if return_tags:
            tags_out[doc_id] = {
                "tokens": [text[a:b] for a, b in tokens],
                "gold": labels["gold"],
                "pred": labels["pred"],
            }

    n = len(g_all)
    g = np.array(g_all, dtype=object)
    p = np.array(p_all, dtype=object)
    names = sorted((set(g_all) | set(p_all)) - {"O"})
    per_label: dict[str, dict[str, float]] = {}
    rows = []
    undefined: dict[str, str] = {}
    tp_sum = act_sum = pos_sum = 0
    for lab in names:
        gm, pm = g == lab, p == lab
        tp = int((gm & pm).sum())
        act, pos = int(pm.sum()), int(gm.sum())
        pr, rc, f1 = prf(tp, act, pos, zd)
        per_label[lab] = {"precision": pr, "recall": rc, "f1": f1, "support": pos}
        rows.append((pr, rc, f1, pos, act))
        tp_sum, act_sum, pos_sum = tp_sum + tp, act_sum + act, pos_sum + pos
        if act == 0:
            undefined[f"per_label.{lab}.precision"] = "no predicted tokens"
        if pos == 0:
            undefined[f"per_label.{lab}.recall"] = "no gold tokens"
    mp, mr, mf = prf(tp_sum, act_sum, pos_sum, zd)
    macro, weighted, notes = _averages(rows, zd)
    for note in notes:
        undefined["macro" if "labels" in note else "weighted"] = note
    acc = float((g == p).sum()) / n if n else None
    if not n:
        undefined["token_accuracy"] = "no tokens"
    return TokenReport(
        per_label=per_label,
        micro={"precision": mp, "recall": mr, "f1": mf},
        macro=macro,
        weighted=weighted,
        token_accuracy=acc,
        n_tokens=n,
        reports=reports,
        settings={
            "tokenizer": tok_name,
            "misaligned": policy,
            "on_overlap": on_overlap,
            "zero_division": zd,
        },
        undefined=undefined,
        tags=tags_out if return_tags else None,
        warnings=[
            "token-level scores are a diagnostic; the NER score is entity-level "
            "(docs/extraction.md#token-level-diagnostics)"
        ],
    )
