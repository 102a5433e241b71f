"""Evaluation of the information-extraction stages of a (Graph)RAG pipeline (docs/extraction.md).

One module per task, each with an ``evaluate`` entry point as every engine has: NER
(:func:`ner.evaluate`, :func:`ner.evaluate_tags`, :func:`token_level_metrics`), type
classification (:func:`classification.evaluate`, :func:`classification.evaluate_multilabel`,
:func:`type_distribution`), entity linking (:func:`linking.evaluate`,
:func:`linking.evaluate_e2e`, :func:`check_consistency`) and inter-annotator agreement
(:func:`agreement`, :func:`span_agreement`). The names below load on first use, so importing this
package is cheap; ``evaluate_ner``, ``evaluate_types``, ``evaluate_linking`` and their variants
are deprecated aliases. The records scored here live in :mod:`ragmeter.records`; the heritage
label set in :mod:`ragmeter.extraction.profiles`.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY: dict[str, str] = {
    "Corpus": "model",
    "Document": "model",
    "Span": "model",
    "SpanTable": "columns",
    "validate": "validation",
    "ValidationReport": "validation",
    "canonical_kb_id": "kbids",
    "evaluate_ner": "ner",
    "evaluate_ner_tags": "ner",
    "NerReport": "ner",
    "token_level_metrics": "token_level",
    "TokenReport": "token_level",
    "evaluate_types": "classification",
    "evaluate_types_multilabel": "classification",
    "TypeReport": "classification",
    "MultiLabelReport": "classification",
    "type_distribution": "distribution",
    "HierarchyProfile": "profiles",
    "HERITAGE": "profiles",
    "load_profile": "profiles",
    "evaluate_linking": "linking",
    "evaluate_linking_e2e": "linking",
    "LinkingReport": "linking",
    "E2EReport": "linking",
    "check_consistency": "crosskb",
    "load_mapping": "crosskb",
    "KBMapping": "crosskb",
    "agreement": "iaa",
    "span_agreement": "iaa",
    "span_agreement_tags": "iaa",
    "cohen_kappa": "iaa",
    "fleiss_kappa": "iaa",
    "krippendorff_alpha": "iaa",
    "gwet_ac1": "iaa",
    "simple_tokenize": "tokenize",
    "spans_to_tags": "tokenize",
    "tags_to_spans": "tokenize",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    try:
        module = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'ragmeter.extraction' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f"ragmeter.extraction.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
