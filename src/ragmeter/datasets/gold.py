"""The ragmeter gold-standard format: JSONL, one sample per line.

User guide: docs/runner.md, "The gold-standard format".

A sample generalises the heritage sample entry::

    {"id": "eval_001", "text": "...", "language": "nl",
     "strata": {"custodian_type": "M", "country": "NL"},
     "ner_annotations": [{"text": "Rijksmuseum Amsterdam", "type": "GRP.HER.MUS",
                          "start": 4, "end": 25}],
     "type_classification": {"primary_type": "M", "secondary_types": []},
     "entity_linking": [{"mention_id": "m1", "start": 4, "end": 25, "wikidata_id": "Q190804"}],
     "qa_pairs": [{"qid": "eval_001-q1", "question": "...", "answer": "...",
                   "golden_answers": ["1800"], "answerable": true, ...}],
     "relevant_docs": {"eval_001-q1": {"doc-17": 3, "doc-4": 1}},
     "meta": {...}}

Every task reads only the fields it needs (:mod:`ragmeter.datasets.views`); a sample without them
is not part of that task. A field that is absent and a field that is empty differ:
``"ner_annotations": []`` puts the sample in the NER task with no gold entities (so every
prediction is spurious).

Validation is strict and up front: unknown keys (anything free-form goes under ``meta``), wrong
types, duplicate ids and offsets whose ``text[start:end]`` is not the mention are one-line errors
``FILE:LINE: sample 'ID': KEY.PATH: what is wrong (what was expected)``. For an offset error the
message gives the correct offsets when the mention occurs exactly once in the text.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ragmeter.datasets.gold_model import (
    LINK_KEYS,
    MENTION_KEYS,
    NIL_IDS,
    QA_KEYS,
    SAMPLE_KEYS,
    TYPE_KEYS,
    GoldSample,
    GoldSet,
    Link,
    Mention,
    OffsetPolicy,
    QAPair,
    TypeGold,
)
from ragmeter.datasets.gold_parse import parse_sample
from ragmeter.errors import InputError
from ragmeter.io.files import display_name, sha256_file
from ragmeter.io.jsonl import iter_jsonl

# The types, the field checks and the sample parser live in sibling modules; their names stay
# importable from here.
__all__ = [
    "LINK_KEYS",
    "MENTION_KEYS",
    "NIL_IDS",
    "QA_KEYS",
    "SAMPLE_KEYS",
    "TYPE_KEYS",
    "GoldSample",
    "GoldSet",
    "Link",
    "Mention",
    "OffsetPolicy",
    "QAPair",
    "TypeGold",
    "check_unique",
    "duplicate_errors",
    "label_errors",
    "load_gold",
    "parse_sample",
]


def check_unique(samples: Sequence[GoldSample], path: str | None) -> None:
    """Sample ids and qids must be unique across the file (raises the first duplicate)."""
    for error in duplicate_errors(samples, path):
        raise error


def duplicate_errors(samples: Sequence[GoldSample], path: str | None) -> list[InputError]:
    """Every repeated sample id and qid, in file order."""
    errors: list[InputError] = []
    first_line: dict[str, int | None] = {}
    qids: dict[str, tuple[str, int | None]] = {}
    for s in samples:
        if s.id in first_line:
            errors.append(
                InputError(
                    f"appears twice (first at line {first_line[s.id]}; expected a unique "
                    "sample id)",
                    path=path,
                    line=s.line,
                    location=f"sample '{s.id}': id",
                )
            )
        first_line.setdefault(s.id, s.line)
        for i, qa in enumerate(s.qa_pairs):
            if qa.qid in qids:
                owner, line = qids[qa.qid]
                errors.append(
                    InputError(
                        f"qid {qa.qid!r} appears twice (first in sample {owner!r} at line "
                        f"{line}; expected a unique qid)",
                        path=path,
                        line=s.line,
                        location=f"sample '{s.id}': qa_pairs[{i}].qid",
                    )
                )
            qids.setdefault(qa.qid, (s.id, s.line))
    return errors


def label_errors(samples: Sequence[GoldSample], profile: Any, path: str | None) -> list[InputError]:
    """Every gold type label (primary and secondary) outside the label set of ``profile`` (a
    :class:`~ragmeter.extraction.profiles.HierarchyProfile`; docs/runner.md: type labels come from
    a label set)."""
    allowed = set(profile.vocabulary)
    shown = " ".join(profile.vocabulary)
    errors: list[InputError] = []
    for s in samples:
        tc = s.type_classification
        if tc is None:
            continue
        labels = [("type_classification.primary_type", tc.primary_type)]
        labels += [
            (f"type_classification.secondary_types[{i}]", t)
            for i, t in enumerate(tc.secondary_types)
        ]
        for key, label in labels:
            if label not in allowed:
                errors.append(
                    InputError(
                        f"{label!r} is not a {profile.name} type label (expected one of {shown}; "
                        "labels are compared exactly)",
                        path=path,
                        line=s.line,
                        location=f"sample '{s.id}': {key}",
                    )
                )
    return errors


def load_gold(
    path: str | os.PathLike[str],
    *,
    fmt: str = "ragmeter",
    on_offset_mismatch: OffsetPolicy = "error",
) -> GoldSet:
    """Read and validate a gold standard (``fmt`` as in the config's ``dataset.format``).

    Formats other than ``ragmeter`` are converted to gold samples by
    :mod:`ragmeter.datasets.formats`.
    """
    name = display_name(path)
    if fmt != "ragmeter":
        from ragmeter.datasets.formats import load_foreign

        samples = load_foreign(path, fmt)
        check_unique(samples, name)
        return GoldSet(samples, path=name, sha256=sha256_file(path), fmt=fmt)
    fixes: list[str] = []
    samples = [
        parse_sample(obj, path=name, line=line, on_offset_mismatch=on_offset_mismatch, fixes=fixes)
        for line, obj in iter_jsonl(path)
    ]
    check_unique(samples, name)
    return GoldSet(samples, path=name, sha256=sha256_file(path), warnings=fixes)
