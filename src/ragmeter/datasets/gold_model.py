"""The gold standard's types: a sample, its mentions, links, QA pairs and the whole set.

Only data and lookups live here; reading and validating a gold file is
:mod:`ragmeter.datasets.gold`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

OffsetPolicy = Literal["error", "relocate", "skip"]

SAMPLE_KEYS = (
    "id",
    "text",
    "language",
    "strata",
    "ner_annotations",
    "type_classification",
    "entity_linking",
    "qa_pairs",
    "relevant_docs",
    "meta",
)
QA_KEYS = (
    "qid",
    "question",
    "answer",
    "answer_type",
    "golden_answers",
    "supporting_facts",
    "gold_claim_substr",
    "gold_citations",
    "answerable",
    "template_id",
    "reference_steps",
    "reference_contexts",
    "meta",
)
MENTION_KEYS = ("text", "type", "start", "end", "meta")
TYPE_KEYS = ("primary_type", "secondary_types", "rationale")
LINK_KEYS = (
    "mention_id",
    "mention",
    "start",
    "end",
    "wikidata_id",
    "viaf_id",
    "isil_code",
    "ghcid",
    "kb_ids",
    "nil",
)
NIL_IDS = frozenset({"", "NIL", "nil"})


@dataclass(frozen=True)
class Mention:
    """A gold NER span: half-open code-point offsets into the sample's ``text``."""

    type: str
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class TypeGold:
    primary_type: str
    secondary_types: tuple[str, ...] = ()
    rationale: str | None = None


@dataclass(frozen=True)
class Link:
    """A gold entity link. ``kb_ids`` empty means NIL (not in the knowledge base)."""

    mention_id: str
    start: int | None
    end: int | None
    mention: str | None
    kb_ids: tuple[str, ...]
    identifiers: Mapping[str, str] = field(default_factory=dict)

    @property
    def nil(self) -> bool:
        return not self.kb_ids


@dataclass(frozen=True)
class QAPair:
    qid: str
    question: str | None = None
    answer: str | None = None
    answer_type: str | None = None
    golden_answers: tuple[str, ...] | None = None
    supporting_facts: tuple[str, ...] = ()
    gold_claim_substr: tuple[str, ...] = ()
    gold_citations: tuple[str, ...] = ()
    answerable: bool | None = None
    template_id: str | None = None
    reference_steps: Any = None  # graphrag-eval reference groups, validated by the steps engine
    reference_contexts: tuple[str, ...] | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def golds(self) -> list[str]:
        """The gold answers: ``golden_answers``, else ``[answer]``, else none."""
        if self.golden_answers is not None:
            return list(self.golden_answers)
        return [self.answer] if self.answer is not None else []


@dataclass(frozen=True)
class GoldSample:
    id: str
    line: int | None = None
    text: str | None = None
    language: str | None = None
    strata: Mapping[str, Any] = field(default_factory=dict)
    ner_annotations: tuple[Mention, ...] | None = None
    type_classification: TypeGold | None = None
    entity_linking: tuple[Link, ...] | None = None
    qa_pairs: tuple[QAPair, ...] = ()
    relevant_docs: Mapping[str, Mapping[str, int]] | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)


class GoldSet:
    """A validated gold standard: samples in file order, with lookups by sample id and qid."""

    def __init__(
        self,
        samples: Sequence[GoldSample],
        *,
        path: str | None = None,
        sha256: str | None = None,
        fmt: str = "ragmeter",
        warnings: Sequence[str] = (),
    ) -> None:
        self.samples = list(samples)
        self.path = path
        self.sha256 = sha256
        self.format = fmt
        self.warnings = list(warnings)
        self.by_id = {s.id: s for s in self.samples}
        self.qa: dict[str, tuple[GoldSample, QAPair]] = {}
        for s in self.samples:
            for qa in s.qa_pairs:
                self.qa[qa.qid] = (s, qa)
        self.query_owner: dict[str, GoldSample] = {}
        for s in self.samples:
            for qid in s.relevant_docs or {}:
                self.query_owner[qid] = s

    def __len__(self) -> int:
        return len(self.samples)

    def __iter__(self) -> Iterator[GoldSample]:
        return iter(self.samples)

    def subset(self, ids: Sequence[str] | set[str]) -> GoldSet:
        """The samples whose id is in ``ids``, in file order (a split of the gold set)."""
        keep = set(ids)
        return GoldSet(
            [s for s in self.samples if s.id in keep],
            path=self.path,
            sha256=self.sha256,
            fmt=self.format,
            warnings=self.warnings,
        )

    def owner(self, unit_id: str) -> GoldSample | None:
        """The sample a unit id (sample id, qid, query id or mention id) belongs to."""
        if unit_id in self.by_id:
            return self.by_id[unit_id]
        if unit_id in self.qa:
            return self.qa[unit_id][0]
        return self.query_owner.get(unit_id)
