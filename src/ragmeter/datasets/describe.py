"""Dataset statistics (``ragmeter dataset stats``): what a gold set holds, per task and stratum."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ragmeter.datasets.gold import GoldSet
from ragmeter.datasets.views import TASK_UNITS

__all__ = ["MISSING", "describe"]

MISSING = "__missing__"
"""The value shown for a sample without a stratum factor or a language (as docs/stats.md)."""


def _counts(values: Any) -> dict[str, int]:
    counter = Counter(values)
    return dict(sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])))


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def describe(gold: GoldSet) -> dict[str, Any]:
    """Counts per task, per stratum, NIL ratio, answerable ratio, languages and label counts.

    >>> from ragmeter.datasets.gold import GoldSet, parse_sample
    >>> g = GoldSet([parse_sample({"id": "a", "strata": {"country": "NL"},
    ...     "qa_pairs": [{"qid": "a1", "question": "?", "answer": "x", "answerable": True}]})])
    >>> d = describe(g)
    >>> d["tasks"]["answers"], d["answerable_ratio"], d["strata"]
    ({'units': 1, 'samples': 1}, 1.0, {'country': {'NL': 1}})
    """
    tasks: dict[str, dict[str, Any]] = {}
    for task, gen in TASK_UNITS.items():
        units = list(gen(gold))
        if units:
            tasks[task] = {"units": len(units), "samples": len({u.sample.id for u in units})}
    links = [link for s in gold for link in s.entity_linking or ()]
    nil = sum(1 for link in links if link.nil)
    grounded = [qa for s in gold for qa in s.qa_pairs if qa.answerable is not None]
    answerable = sum(1 for qa in grounded if qa.answerable)
    if "linking" in tasks:
        tasks["linking"].update(nil=nil, in_kb=len(links) - nil)
    if "grounded" in tasks:
        tasks["grounded"].update(answerable=answerable, unanswerable=len(grounded) - answerable)
    if "ner" in tasks:
        tasks["ner"]["mentions"] = sum(len(s.ner_annotations or ()) for s in gold)
    factors = sorted({f for s in gold for f in s.strata})
    strata = {
        f: _counts(MISSING if s.strata.get(f) is None else str(s.strata[f]) for s in gold)
        for f in factors
    }
    return {
        "path": gold.path,
        "sha256": gold.sha256,
        "format": gold.format,
        "samples": len(gold),
        "qa_pairs": sum(len(s.qa_pairs) for s in gold),
        "tasks": tasks,
        "nil_ratio": _ratio(nil, len(links)),
        "answerable_ratio": _ratio(answerable, len(grounded)),
        "languages": _counts(s.language or MISSING for s in gold),
        "strata": strata,
        "labels": {
            "ner": _counts(m.type for s in gold for m in s.ner_annotations or ()),
            "classification": _counts(
                s.type_classification.primary_type for s in gold if s.type_classification
            ),
            "answer_type": _counts(
                qa.answer_type for s in gold for qa in s.qa_pairs if qa.answer_type
            ),
        },
    }
