"""Type distribution analysis (docs/extraction.md#type-classification).

For each label of gold ∪ predictions: gold and predicted counts, ``over_prediction`` =
predicted − gold and ``ratio`` = predicted / gold (``null`` when gold = 0; the heritage framework
returned ``inf``, which is not JSON). The total variation distance between the two label
distributions is ½ Σ_t |g_t/Σg − p_t/Σp|, ``null`` when either side is empty.

>>> d = type_distribution(["MUS", "MUS", "LOC", "TMP"], ["MUS", "LOC", "LOC", "LOC", "ORG"])
>>> d["per_label"]["ORG"], round(d["total_variation_distance"], 10)
({'gold': 0, 'predicted': 1, 'over_prediction': 1, 'ratio': None}, 0.55)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from ragmeter.errors import InputError
from ragmeter.extraction.columns import span_fields
from ragmeter.records.model import Corpus

__all__ = ["type_distribution"]


def _by_document(data: Any, side: str) -> dict[str, list[str]] | None:
    """``doc_id -> labels`` for span inputs, ``None`` for a flat list of labels."""
    if isinstance(data, Corpus):
        return {d: [s.label for s in data.spans.get(d, [])] for d in data.doc_ids}
    if isinstance(data, Mapping):
        out: dict[str, list[str]] = {}
        for key, value in data.items():
            if isinstance(value, str):  # item_id -> label (classification)
                out.setdefault("", []).append(value)
            else:
                out[str(key)] = [
                    span_fields(s, str(key), f"{side} document '{key}'")[2] for s in value
                ]
        return out
    return None


def _analyse(gold: Iterable[str], pred: Iterable[str]) -> dict[str, Any]:
    g = Counter(gold)
    p = Counter(pred)
    for side, counter in (("gold", g), ("predicted", p)):
        bad = [k for k in counter if not isinstance(k, str)]
        if bad:
            raise InputError(f"{side} label {bad[0]!r} is not a string")
    tg, tp = sum(g.values()), sum(p.values())
    per_label = {}
    tvd = Fraction(0)
    for lab in sorted(set(g) | set(p)):
        gc, pc = g.get(lab, 0), p.get(lab, 0)
        per_label[lab] = {
            "gold": gc,
            "predicted": pc,
            "over_prediction": pc - gc,
            "ratio": (pc / gc) if gc else None,
        }
        if tg and tp:
            tvd += abs(Fraction(gc, tg) - Fraction(pc, tp))
    return {
        "per_label": per_label,
        "total_gold": tg,
        "total_predicted": tp,
        "total_variation_distance": float(tvd / 2) if (tg and tp) else None,
    }


def type_distribution(
    gold: Iterable[str] | Mapping[str, Any] | Corpus,
    pred: Iterable[str] | Mapping[str, Any] | Corpus,
    *,
    per_document: bool = False,
) -> dict[str, Any]:
    """Compare the label distributions of gold and predictions.

    ``gold`` and ``pred`` are label sequences, ``item_id -> label`` mappings, corpora or
    ``doc_id -> spans`` mappings. With ``per_document=True`` (span inputs), the result also has
    ``per_document[doc_id]`` with the same analysis. The total variation distance is computed
    exactly (rational arithmetic) and rounded once.
    """
    g_docs, p_docs = _by_document(gold, "gold"), _by_document(pred, "pred")
    g_all = [lab for labs in g_docs.values() for lab in labs] if g_docs is not None else list(gold)
    p_all = [lab for labs in p_docs.values() for lab in labs] if p_docs is not None else list(pred)
    out = _analyse(g_all, p_all)
    undefined = {}
    if out["total_variation_distance"] is None:
        undefined["total_variation_distance"] = "gold or predictions are empty"
    zero_gold = [lab for lab, row in out["per_label"].items() if row["ratio"] is None]
    for lab in zero_gold:
        undefined[f"per_label.{lab}.ratio"] = "no gold occurrences"
    out["undefined"] = undefined
    if per_document:
        if g_docs is None or p_docs is None or "" in g_docs:
            raise InputError("per_document=True needs span inputs (documents on both sides)")
        out["per_document"] = {
            d: _analyse(g_docs.get(d, []), p_docs.get(d, []))
            for d in sorted(set(g_docs) | set(p_docs))
        }
    return out
