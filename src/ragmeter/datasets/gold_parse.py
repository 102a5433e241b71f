"""One gold sample from its JSON object: the strict, up-front checks of every field.

Below both :mod:`ragmeter.datasets.gold` (which reads ragmeter JSONL) and
:mod:`ragmeter.datasets.formats` (which converts other formats sample by sample), so the two
never import each other; ``ragmeter.datasets.gold.parse_sample`` is this same function.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragmeter.datasets.gold_fields import (
    _check_keys,
    _check_span,
    _Ctx,
    _int,
    _opt_str,
    _parse_links,
    _parse_qa,
    _parse_relevant,
    _str,
    _str_list,
)
from ragmeter.datasets.gold_model import (
    MENTION_KEYS,
    SAMPLE_KEYS,
    TYPE_KEYS,
    GoldSample,
    Mention,
    OffsetPolicy,
    QAPair,
    TypeGold,
)
from ragmeter.io.jsonutil import json_type

__all__ = ["parse_sample"]


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
    >>> from ragmeter.errors import InputError
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
