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
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from ragmeter.errors import InputError
from ragmeter.io.files import display_name, sha256_file
from ragmeter.io.jsonl import iter_jsonl
from ragmeter.io.jsonutil import json_type
from ragmeter.registry import suggest

__all__ = [
    "GoldSample",
    "GoldSet",
    "Link",
    "Mention",
    "QAPair",
    "TypeGold",
    "load_gold",
    "parse_sample",
]

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


# -- parsing ------------------------------------------------------------------------------------


class _Ctx:
    """Where a value sits, for messages: file, line, sample id and key path."""

    def __init__(
        self,
        path: str | None,
        line: int | None,
        sample: str | None,
        problems: list[str] | None = None,
    ) -> None:
        self.path, self.line, self.sample = path, line, sample
        # every bad span of the sample, reported together: (key, message)
        self.offset_errors: list[tuple[str, str]] = []
        # collecting mode (``ragmeter dataset validate``): problems are appended, parsing goes on
        self.problems = problems
        self.broken_mentions = False

    @contextmanager
    def check(self) -> Iterator[None]:
        """One independent check: fail fast, or (collecting) note its error and go on."""
        if self.problems is None:
            yield
            return
        try:
            yield
        except InputError as exc:
            self.problems.append(str(exc))

    def error(self, key: str, message: str) -> InputError:
        loc = f"sample '{self.sample}'" if self.sample is not None else None
        if key:
            loc = f"{loc}: {key}" if loc else key
        return InputError(message, path=self.path, line=self.line, location=loc)


def _check_keys(obj: Mapping[str, Any], allowed: Sequence[str], ctx: _Ctx, where: str) -> None:
    for key in obj:
        if key not in allowed:
            hint = suggest(key, allowed, n=1)
            did = f"; did you mean '{hint[0]}'?" if hint else ""
            path = f"{where}.{key}" if where else key
            with ctx.check():
                raise ctx.error(
                    path,
                    f"unknown key (expected one of {', '.join(allowed)}; put free-form data "
                    f"under meta){did}",
                )


def _str(value: Any, ctx: _Ctx, key: str, *, allow_int: bool = False) -> str:
    if isinstance(value, str):
        return value
    if allow_int and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise ctx.error(key, f"is {json_type(value)} (expected a string)")


def _opt_str(value: Any, ctx: _Ctx, key: str) -> str | None:
    return None if value is None else _str(value, ctx, key)


def _int(value: Any, ctx: _Ctx, key: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise ctx.error(key, f"is {json_type(value)} (expected an integer offset)")


def _str_list(value: Any, ctx: _Ctx, key: str, *, wrap: bool = False) -> tuple[str, ...]:
    if wrap and isinstance(value, str):
        return (value,)
    if not isinstance(value, list):
        raise ctx.error(key, f"is {json_type(value)} (expected a list of strings)")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise ctx.error(f"{key}[{i}]", f"is {json_type(item)} (expected a string)")
    return tuple(value)


def _offset_message(text: str, start: int, end: int, mention: str) -> str:
    found = text[start:end]
    where = ""
    first = text.find(mention) if mention else -1
    if first >= 0 and text.find(mention, first + 1) < 0:
        where = f"; it occurs once, at {first}-{first + len(mention)}"
    elif first >= 0:
        where = f"; it occurs {text.count(mention)} times"
    else:
        where = "; it does not occur in the text"
    return (
        f"text[{start}:{end}] is {found!r}, not {mention!r} (expected the mention's offsets{where})"
    )


def _check_span(
    text: str | None,
    start: int,
    end: int,
    mention: str | None,
    ctx: _Ctx,
    key: str,
    policy: OffsetPolicy,
    fixes: list[str],
) -> tuple[int, int] | None:
    """Validate one span; return its (possibly relocated) offsets, or None to drop it."""
    if text is None:
        raise ctx.error(key, "has offsets but the sample has no text (expected a 'text' field)")
    if not 0 <= start < end <= len(text):
        raise ctx.error(
            key,
            f"offsets {start}-{end} are outside the text of {len(text)} characters "
            "(expected 0 <= start < end <= len(text), half-open)",
        )
    if mention is None or text[start:end] == mention:
        return start, end
    if policy == "relocate":
        first = text.find(mention)
        if first >= 0 and text.find(mention, first + 1) < 0:
            fixes.append(
                f"{ctx.path}:{ctx.line}: sample '{ctx.sample}': {key}: moved "
                f"{start}-{end} to {first}-{first + len(mention)}"
            )
            return first, first + len(mention)
    elif policy == "skip":
        fixes.append(
            f"{ctx.path}:{ctx.line}: sample '{ctx.sample}': {key}: dropped "
            f"({_offset_message(text, start, end, mention)})"
        )
        return None
    ctx.offset_errors.append((key, _offset_message(text, start, end, mention)))
    return start, end


def _kb_id(value: Any, ctx: _Ctx, key: str) -> str | None:
    if value is None:
        return None
    text = _str(value, ctx, key).strip()
    if text in NIL_IDS:
        return None
    # canonical Wikidata form (docs/extraction.md): wd:Q1, Wikidata:Q1 and entity URLs become Q1
    for prefix in ("http://www.wikidata.org/entity/", "https://www.wikidata.org/entity/"):
        if text.startswith(prefix):
            return text[len(prefix) :]
    lowered = text.lower()
    for prefix in ("wd:", "wikidata:"):
        if lowered.startswith(prefix):
            return text[len(prefix) :]
    return text


def _parse_link(
    obj: Any,
    text: str | None,
    sample_id: str,
    ctx: _Ctx,
    key: str,
    policy: OffsetPolicy,
    fixes: list[str],
) -> Link | None:
    if not isinstance(obj, dict):
        raise ctx.error(key, f"is {json_type(obj)} (expected an object)")
    _check_keys(obj, LINK_KEYS, ctx, key)
    start = obj.get("start")
    end = obj.get("end")
    mention = _opt_str(obj.get("mention"), ctx, f"{key}.mention")
    if (start is None) != (end is None):
        raise ctx.error(key, "has only one of start and end (expected both, or neither)")
    if start is not None:
        start, end = _int(start, ctx, f"{key}.start"), _int(end, ctx, f"{key}.end")
        span = _check_span(text, start, end, mention, ctx, key, policy, fixes)
        if span is None:
            return None
        start, end = span
    mention_id = obj.get("mention_id")
    if mention_id is None:
        if start is None:
            raise ctx.error(key, "has no mention_id and no offsets (expected one of them)")
        mention_id = f"{sample_id}:{start}-{end}"
    mention_id = _str(mention_id, ctx, f"{key}.mention_id", allow_int=True)
    kb: list[str] = []
    wikidata = _kb_id(obj.get("wikidata_id"), ctx, f"{key}.wikidata_id")
    if wikidata:
        kb.append(wikidata)
    if obj.get("kb_ids") is not None:
        for i, k in enumerate(_str_list(obj["kb_ids"], ctx, f"{key}.kb_ids")):
            canon = _kb_id(k, ctx, f"{key}.kb_ids[{i}]")
            if canon and canon not in kb:
                kb.append(canon)
    nil = obj.get("nil")
    if nil is not None and not isinstance(nil, bool):
        raise ctx.error(f"{key}.nil", f"is {json_type(nil)} (expected true or false)")
    if nil and kb:
        raise ctx.error(key, "is nil but has KB ids (expected one or the other)")
    identifiers = {
        name: _str(obj[field_], ctx, f"{key}.{field_}")
        for name, field_ in (("viaf", "viaf_id"), ("isil", "isil_code"), ("ghcid", "ghcid"))
        if obj.get(field_) is not None
    }
    return Link(mention_id, start, end, mention, tuple(kb), identifiers)


def _parse_links(
    value: Any,
    text: str | None,
    mentions: tuple[Mention, ...] | None,
    sample_id: str,
    ctx: _Ctx,
    policy: OffsetPolicy,
    fixes: list[str],
) -> tuple[Link, ...]:
    key = "entity_linking"
    links: list[Link] = []
    if isinstance(value, list):
        for i, obj in enumerate(value):
            with ctx.check():
                link = _parse_link(obj, text, sample_id, ctx, f"{key}[{i}]", policy, fixes)
                if link is not None:
                    links.append(link)
    elif isinstance(value, dict):
        # the heritage form keys links by surface string: attach to the one annotation with it
        for surface, obj in value.items():
            where = f"{key}.{surface}"
            same = [m for m in mentions or () if m.text == surface]
            if len(same) != 1 and ctx.broken_mentions:
                continue  # its annotation may be one of the broken ones, reported already
            with ctx.check():
                if len(same) != 1:
                    n = "no" if not same else str(len(same))
                    raise ctx.error(
                        where,
                        f"{n} NER annotations have this text (expected exactly one; use the list "
                        "form with start and end to link an ambiguous surface)",
                    )
                if not isinstance(obj, dict):
                    raise ctx.error(where, f"is {json_type(obj)} (expected an object)")
                full = {"start": same[0].start, "end": same[0].end, "mention": surface, **obj}
                link = _parse_link(full, text, sample_id, ctx, where, policy, fixes)
                if link is not None:
                    links.append(link)
    else:
        raise ctx.error(key, f"is {json_type(value)} (expected a list of links or an object)")
    seen: set[str] = set()
    for link in links:
        if link.mention_id in seen:
            with ctx.check():
                raise ctx.error(key, f"mention id {link.mention_id!r} appears twice")
        seen.add(link.mention_id)
    return tuple(links)


def _parse_qa(obj: Any, sample_id: str, index: int, ctx: _Ctx) -> QAPair:
    key = f"qa_pairs[{index}]"
    if not isinstance(obj, dict):
        raise ctx.error(key, f"is {json_type(obj)} (expected an object)")
    _check_keys(obj, QA_KEYS, ctx, key)
    qid = obj.get("qid")
    qid = (
        f"{sample_id}-q{index + 1}" if qid is None else _str(qid, ctx, f"{key}.qid", allow_int=True)
    )
    answerable = obj.get("answerable")
    if answerable is not None and not isinstance(answerable, bool):
        raise ctx.error(
            f"{key}.answerable", f"is {json_type(answerable)} (expected a JSON boolean)"
        )
    for name in ("gold_claim_substr", "gold_citations", "supporting_facts"):
        if obj.get(name) is not None and not isinstance(obj[name], list):
            raise ctx.error(f"{key}.{name}", f"is {json_type(obj[name])} (expected a list)")
    golden = obj.get("golden_answers")
    steps = obj.get("reference_steps")
    if steps is not None and not isinstance(steps, list):
        raise ctx.error(
            f"{key}.reference_steps", f"is {json_type(steps)} (expected a list of step groups)"
        )
    meta = obj.get("meta")
    meta = {} if meta is None else meta
    if not isinstance(meta, dict):
        raise ctx.error(f"{key}.meta", f"is {json_type(meta)} (expected an object)")
    template = obj.get("template_id")
    return QAPair(
        qid=qid,
        question=_opt_str(obj.get("question"), ctx, f"{key}.question"),
        answer=_opt_str(obj.get("answer"), ctx, f"{key}.answer"),
        answer_type=_opt_str(obj.get("answer_type"), ctx, f"{key}.answer_type"),
        golden_answers=None
        if golden is None
        else _str_list(golden, ctx, f"{key}.golden_answers", wrap=True),
        supporting_facts=_str_list(
            obj.get("supporting_facts") or [], ctx, f"{key}.supporting_facts"
        ),
        gold_claim_substr=_str_list(
            obj.get("gold_claim_substr") or [], ctx, f"{key}.gold_claim_substr"
        ),
        gold_citations=_str_list(obj.get("gold_citations") or [], ctx, f"{key}.gold_citations"),
        answerable=answerable,
        template_id=None
        if template is None
        else _str(template, ctx, f"{key}.template_id", allow_int=True),
        reference_steps=steps,
        reference_contexts=None
        if obj.get("reference_contexts") is None
        else _str_list(obj["reference_contexts"], ctx, f"{key}.reference_contexts"),
        meta=meta,
    )


def _parse_relevant(value: Any, ctx: _Ctx) -> dict[str, dict[str, int]]:
    if not isinstance(value, dict):
        raise ctx.error(
            "relevant_docs", f"is {json_type(value)} (expected an object qid -> {{doc: grade}})"
        )
    out: dict[str, dict[str, int]] = {}
    for qid, docs in value.items():
        with ctx.check():
            out[qid] = _parse_grades(qid, docs, ctx)
    return out


def _parse_grades(qid: str, docs: Any, ctx: _Ctx) -> dict[str, int]:
    """One qid's judgements: ``{doc: grade}``, or a list of relevant docs (grade 1)."""
    key = f"relevant_docs.{qid}"
    grades: dict[str, int] = {}
    if isinstance(docs, list):
        for i, d in enumerate(docs):
            grades[_str(d, ctx, f"{key}[{i}]", allow_int=True)] = 1
    elif isinstance(docs, dict):
        for doc, grade in docs.items():
            if isinstance(grade, bool) or not isinstance(grade, int):
                raise ctx.error(
                    f"{key}.{doc}", f"grade is {json_type(grade)} (expected an integer)"
                )
            grades[doc] = grade
    else:
        raise ctx.error(
            key, f"is {json_type(docs)} (expected an object doc -> grade, or a list of docs)"
        )
    return grades


def parse_sample(
    obj: Mapping[str, Any],
    *,
    path: str | None = None,
    line: int | None = None,
    on_offset_mismatch: OffsetPolicy = "error",
    fixes: list[str] | None = None,
    problems: list[str] | None = None,
) -> GoldSample:
    """Validate one gold record and build a :class:`GoldSample`.

    The first problem raises :class:`InputError`, unless ``problems`` is a list: then every
    problem is appended to it as one line (each bad key, item, span and QA pair; what
    ``ragmeter dataset validate`` prints) and the sample is built from what is valid. A record
    whose id is unusable then raises, as nothing can be said of it without an id.

    >>> s = parse_sample({"id": "s1", "text": "Het Rijksmuseum",
    ...                   "ner_annotations": [{"text": "Rijksmuseum", "type": "MUS",
    ...                                        "start": 4, "end": 15}]})
    >>> s.ner_annotations[0].end
    15
    >>> try:
    ...     parse_sample({"id": "s1", "text": "in 1800 opgericht", "ner_annotations": [
    ...         {"text": "1800", "type": "TMP", "start": 2, "end": 6}]}, path="gold.jsonl", line=1)
    ... except InputError as exc:
    ...     print(exc)
    gold.jsonl:1: sample 's1': ner_annotations[0]: text[2:6] is ' 180', not '1800' (expected the
    mention's offsets; it occurs once, at 3-7)
    >>> found: list[str] = []
    >>> _ = parse_sample({"id": "s2", "txt": "x", "strata": [], "language": 1}, problems=found)
    >>> print("\\n".join(found))
    sample 's2': txt: unknown key (expected one of ...); did you mean 'text'?
    sample 's2': strata: is a list (expected an object factor -> value)
    sample 's2': language: is a number (expected a string)
    """
    fixes = fixes if fixes is not None else []
    ctx = _Ctx(path, line, None, problems)
    raw_id = obj.get("id")
    if raw_id is None:
        raise ctx.error("id", "missing (expected a unique sample id)")
    sample_id = _str(raw_id, ctx, "id", allow_int=True)
    if not sample_id:
        raise ctx.error("id", "is empty (expected a unique sample id)")
    ctx.sample = sample_id
    _check_keys(obj, SAMPLE_KEYS, ctx, "")
    text: str | None = None
    with ctx.check():
        text = _opt_str(obj.get("text"), ctx, "text")
    strata: dict[str, Any] = {}
    with ctx.check():
        value = obj.get("strata")
        if value is not None and not isinstance(value, dict):
            raise ctx.error("strata", f"is {json_type(value)} (expected an object factor -> value)")
        for factor, level in (value or {}).items():
            with ctx.check():
                if isinstance(level, (dict, list)):
                    raise ctx.error(
                        f"strata.{factor}",
                        f"is {json_type(level)} (expected a string, number or null)",
                    )
                strata[factor] = level
    mentions: tuple[Mention, ...] | None = None
    if obj.get("ner_annotations") is not None:
        with ctx.check():
            mentions = _parse_mentions(obj["ner_annotations"], text, ctx, on_offset_mismatch, fixes)
    types = None
    if obj.get("type_classification") is not None:
        with ctx.check():
            types = _parse_types(obj["type_classification"], ctx)
    links = None
    if obj.get("entity_linking") is not None:
        with ctx.check():
            links = _parse_links(
                obj["entity_linking"], text, mentions, sample_id, ctx, on_offset_mismatch, fixes
            )
    qa_value = obj.get("qa_pairs")
    qas: list[QAPair] = []
    with ctx.check():
        if qa_value is not None and not isinstance(qa_value, list):
            raise ctx.error("qa_pairs", f"is {json_type(qa_value)} (expected a list)")
        for i, q in enumerate(qa_value or []):
            with ctx.check():
                qas.append(_parse_qa(q, sample_id, i, ctx))
    relevant = None
    if obj.get("relevant_docs") is not None:
        with ctx.check():
            relevant = _parse_relevant(obj["relevant_docs"], ctx)
            known = {q.qid for q in qas} | {sample_id}
            for qid in relevant:
                if qid not in known:
                    with ctx.check():
                        raise ctx.error(
                            f"relevant_docs.{qid}",
                            "names no qid of this sample (expected a qid of its qa_pairs, or the "
                            "sample id)",
                        )
    if ctx.offset_errors:
        if ctx.problems is None:
            raise ctx.error("", "; ".join(f"{k}: {m}" for k, m in ctx.offset_errors))
        ctx.problems.extend(str(ctx.error(k, m)) for k, m in ctx.offset_errors)
    language = None
    with ctx.check():
        language = _opt_str(obj.get("language"), ctx, "language")
    if language is None and isinstance(strata.get("language"), str):
        language = strata["language"]
    meta: dict[str, Any] = {}
    with ctx.check():
        value = obj.get("meta")
        if value is not None and not isinstance(value, dict):
            raise ctx.error("meta", f"is {json_type(value)} (expected an object)")
        meta = value or {}
    return GoldSample(
        id=sample_id,
        line=line,
        text=text,
        language=language,
        strata=strata,
        ner_annotations=mentions,
        type_classification=types,
        entity_linking=links,
        qa_pairs=tuple(qas),
        relevant_docs=relevant,
        meta=meta,
    )


def _parse_mentions(
    value: Any, text: str | None, ctx: _Ctx, policy: OffsetPolicy, fixes: list[str]
) -> tuple[Mention, ...]:
    if not isinstance(value, list):
        raise ctx.error("ner_annotations", f"is {json_type(value)} (expected a list)")
    out: list[Mention] = []
    index: list[int] = []  # each kept mention's position in the file's list, for messages
    for i, m in enumerate(value):
        key = f"ner_annotations[{i}]"
        ok = False
        with ctx.check():
            if not isinstance(m, dict):
                raise ctx.error(key, f"is {json_type(m)} (expected an object)")
            _check_keys(m, MENTION_KEYS, ctx, key)
            for need in ("type", "start", "end"):
                if need not in m:
                    raise ctx.error(f"{key}.{need}", "missing (expected type, start and end)")
            label = _str(m["type"], ctx, f"{key}.type")
            start, end = _int(m["start"], ctx, f"{key}.start"), _int(m["end"], ctx, f"{key}.end")
            surface = _opt_str(m.get("text"), ctx, f"{key}.text")
            span = _check_span(text, start, end, surface, ctx, key, policy, fixes)
            ok = True
            if span is not None:
                start, end = span
                out.append(
                    Mention(label, start, end, surface if surface is not None else text[start:end])
                )
                index.append(i)
        if not ok:
            ctx.broken_mentions = True
    seen: dict[tuple[int, int, str], int] = {}
    for i, m in zip(index, out, strict=True):
        k = (m.start, m.end, m.type)
        if k in seen:
            with ctx.check():
                raise ctx.error(
                    f"ner_annotations[{i}]",
                    f"duplicates ner_annotations[{seen[k]}] ({m.type} {m.start}-{m.end})",
                )
        seen.setdefault(k, i)
    return tuple(out)


def _parse_types(tc: Any, ctx: _Ctx) -> TypeGold:
    if not isinstance(tc, dict):
        raise ctx.error("type_classification", f"is {json_type(tc)} (expected an object)")
    _check_keys(tc, TYPE_KEYS, ctx, "type_classification")
    if "primary_type" not in tc:
        raise ctx.error("type_classification.primary_type", "missing (expected a type label)")
    return TypeGold(
        _str(tc["primary_type"], ctx, "type_classification.primary_type"),
        _str_list(tc.get("secondary_types") or [], ctx, "type_classification.secondary_types"),
        _opt_str(tc.get("rationale"), ctx, "type_classification.rationale"),
    )


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
