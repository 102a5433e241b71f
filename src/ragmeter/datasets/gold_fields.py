"""Checking the fields of one gold sample: keys, types, offsets, links, QA pairs and grades.

Every check raises (or, when collecting for ``ragmeter dataset validate``, records) a one-line
``FILE:LINE: sample 'ID': KEY.PATH: what is wrong (what was expected)`` error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from ragmeter.datasets.gold_model import (
    LINK_KEYS,
    NIL_IDS,
    QA_KEYS,
    Link,
    Mention,
    OffsetPolicy,
    QAPair,
)
from ragmeter.errors import InputError
from ragmeter.io.jsonutil import json_type
from ragmeter.registry import suggest

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
