"""The heritage JSON gold format and its related files (docs/extraction.md#formats).

A gold file is a JSON array or JSONL of records ``{id, text, ner_annotations, type_classification,
entity_linking, qa_pairs, ...}`` (the ragmeter gold format of
docs/runner.md#the-gold-standard-format is the same shape).
``ner_annotations`` become validated spans; ``entity_linking`` is attached to spans either by
surface string (the heritage form, accepted only when exactly one annotation has that text,
else :class:`AmbiguousLinkError`) or by offsets (the list form, with optional ``mention_id`` and
``mention``). Other keys are kept in ``Document.meta``.

Related files: the type-classification TSV (``text<TAB>gold_type<TAB>secondary_types``,
optional ``id``; secondary types separated by ``|``) and the entity-linking JSON
(``{mention, context, gold_wikidata, gold_viaf, gold_isil}`` records).

>>> import json, pathlib, tempfile
>>> rec = {"id": "eval_001", "text": "Het Rijksmuseum Amsterdam opende.",
...        "ner_annotations": [{"text": "Rijksmuseum Amsterdam", "type": "GRP.HER.MUS",
...                             "start": 4, "end": 25}],
...        "entity_linking": {"Rijksmuseum Amsterdam": {"wikidata_id": "Q190804"}}}
>>> p = pathlib.Path(tempfile.mkdtemp()) / "gold.jsonl"
>>> _ = p.write_text(json.dumps(rec) + "\\n", encoding="utf-8")
>>> corpus, report = load_heritage(p)
>>> s = corpus.spans["eval_001"][0]
>>> s.mention_id, sorted(s.kb_ids)
('eval_001:4-25', ['Q190804'])
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal

from ragmeter.errors import InputError
from ragmeter.io.annotations import LoadReport, OffsetConverter
from ragmeter.io.heritage_files import TypeRow, load_linking_json, load_type_tsv

# the writer owns the KB-id keys; the loader reads the same ones
from ragmeter.io.heritage_write import _ID_KEYS, _KEYS_META, write_heritage
from ragmeter.io.records import read_records
from ragmeter.records.errors import AmbiguousLinkError, OffsetMismatchError, Problem
from ragmeter.records.kbids import NIL_ID, canonical_kb_id, is_nil_id
from ragmeter.records.model import Corpus, Document, Span
from ragmeter.records.validation import validate

__all__ = [
    "TypeRow",
    "linking_gold",
    "load_heritage",
    "load_linking_json",
    "load_type_tsv",
    "type_labels",
    "write_heritage",
]


def _int(value: Any, what: str, path: str, line: int, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(
            f"{what} is {value!r} (expected an integer offset)",
            path=path,
            line=line,
            location=where,
        )
    return value


def _link_info(
    info: Any, *, nil_id: str, path: str, line: int, where: str
) -> tuple[frozenset[str], bool, dict[str, str]]:
    if not isinstance(info, Mapping):
        raise InputError(
            f"link is {info!r} (expected an object with wikidata_id, viaf_id, isil_code, ghcid)",
            path=path,
            line=line,
            location=where,
        )
    wd = info.get("wikidata_id")
    if wd is not None and not isinstance(wd, str):
        raise InputError(
            f"wikidata_id is {wd!r} (expected a string or null)",
            path=path,
            line=line,
            location=where,
        )
    nil = is_nil_id(wd, nil_id=nil_id)
    kb = frozenset() if nil else frozenset({canonical_kb_id(wd, nil_id=nil_id)})
    ids: dict[str, str] = {}
    for key, scheme in _ID_KEYS:
        v = info.get(key)
        if v is None or v == "":
            continue
        if not isinstance(v, str):
            raise InputError(
                f"{key} is {v!r} (expected a string or null)", path=path, line=line, location=where
            )
        ids[scheme] = v
    return kb, nil, ids


def _convert(offset: int, text: str, unit: str, path: str, line: int, where: str) -> int:
    if unit == "codepoint":
        return offset
    try:
        return OffsetConverter(text, unit)(offset)  # type: ignore[arg-type]
    except InputError as exc:
        raise InputError(exc.message, path=path, line=line, location=where) from None


def _qualify(doc_id: str, mention_id: str) -> str:
    return mention_id if mention_id.startswith(f"{doc_id}:") else f"{doc_id}:{mention_id}"


def load_heritage(
    path: str | os.PathLike[str],
    *,
    on_offset_mismatch: Literal["error", "skip", "relocate"] = "error",
    vocabulary: Any = None,
    role: Literal["gold", "pred"] = "gold",
    nil_id: str = NIL_ID,
    offset_unit: Literal["codepoint", "utf16", "utf8"] = "codepoint",
) -> tuple[Corpus, LoadReport]:
    """Load heritage / ragmeter gold records (see the module docstring).

    ``offset_unit="utf16"`` or ``"utf8"`` converts offsets counted by other tools to code points
    (docs/extraction.md#data-model-and-validation).

    Offsets are validated against ``text`` (the heritage sample entry has two wrong ones):
    ``"error"`` lists every bad span with the text found at its offsets and, when the mention
    occurs once, its correct offsets; ``"relocate"`` moves such spans and lists the moves.
    A ``mention_id`` given in the list form is qualified with the record id
    (``eval_001:m1``) unless it already starts with it, so ids are unique across records.
    """
    name = os.fspath(path)
    records = read_records(name)
    report = LoadReport(path=name, format="heritage")
    documents: dict[str, Document] = {}
    spans: dict[str, list[Span]] = {}
    where: dict[tuple[str, int], tuple[str, int]] = {}
    pending_links: dict[str, tuple[int, Any]] = {}
    for line, rec in records:
        rid = rec.get("id")
        if isinstance(rid, bool) or not isinstance(rid, (str, int)) or rid == "":
            raise InputError(
                "record has no 'id' (expected a string or integer)", path=name, line=line
            )
        doc_id = str(rid)
        loc = f"record '{doc_id}'"
        if doc_id in documents:
            raise InputError(
                f"record id '{doc_id}' appears twice (expected unique ids)", path=name, line=line
            )
        text = rec.get("text")
        if not isinstance(text, str):
            raise InputError(
                "'text' is missing or not a string", path=name, line=line, location=loc
            )
        meta = {
            k: v
            for k, v in rec.items()
            if k not in ("id", "text", "ner_annotations", "entity_linking")
        }
        tc = meta.get("type_classification")
        if tc is not None and (
            not isinstance(tc, Mapping) or not isinstance(tc.get("primary_type"), str)
        ):
            raise InputError(
                "type_classification has no 'primary_type' string (expected {primary_type, "
                "secondary_types, rationale})",
                path=name,
                line=line,
                location=loc,
            )
        meta[_KEYS_META] = list(rec)
        anns = rec.get("ner_annotations")
        anns = [] if anns is None else anns
        if not isinstance(anns, list):
            raise InputError("ner_annotations is not a list", path=name, line=line, location=loc)
        doc_spans = []
        for j, a in enumerate(anns):
            w = f"{loc}: ner_annotations[{j}]"
            if not isinstance(a, Mapping):
                raise InputError(
                    f"{a!r} is not an object {{text, type, start, end}}",
                    path=name,
                    line=line,
                    location=w,
                )
            label = a.get("type", a.get("label"))
            if not isinstance(label, str) or not label:
                raise InputError(
                    f"type is {label!r} (expected a non-empty string)",
                    path=name,
                    line=line,
                    location=w,
                )
            surface = a.get("text")
            if surface is not None and not isinstance(surface, str):
                raise InputError(
                    f"text is {surface!r} (expected a string)", path=name, line=line, location=w
                )
            s = _convert(
                _int(a.get("start"), "start", name, line, w), text, offset_unit, name, line, w
            )
            e = _convert(_int(a.get("end"), "end", name, line, w), text, offset_unit, name, line, w)
            where[(doc_id, len(doc_spans))] = (name, line)
            doc_spans.append(Span(doc_id, s, e, label, text=surface))
        documents[doc_id] = Document(doc_id, text, meta)
        spans[doc_id] = doc_spans
        if rec.get("entity_linking") is not None:
            pending_links[doc_id] = (line, rec["entity_linking"])
    if not documents:
        raise InputError("no records (expected at least one)", path=name)
    val = validate(
        Corpus(documents, spans),
        vocabulary=vocabulary,
        on_offset_mismatch=on_offset_mismatch,
        role=role,
        duplicates="keep" if role == "pred" else None,
        locate=lambda d, i: where.get((d, i), (None, None)),
    )
    corpus = val.corpus
    report.validation = val.to_dict()
    report.warnings.extend(val.warnings)
    n_links = n_nil = 0
    for doc_id, (line, links) in pending_links.items():
        doc = corpus.documents[doc_id]
        text = doc.text
        doc_spans = corpus.spans[doc_id]
        loc = f"record '{doc_id}'"
        normalized: list[dict[str, Any]] = []
        if isinstance(links, Mapping):
            form = "surface"
            for surface, info in links.items():
                hits = [
                    i
                    for i, s in enumerate(doc_spans)
                    if (s.text or text[s.start : s.end]) == surface
                ]
                if len(hits) != 1:
                    raise AmbiguousLinkError(
                        f"entity_linking key {surface!r} matches {len(hits)} annotations "
                        "(expected exactly one; use the list form with start/end)",
                        path=name,
                        line=line,
                        location=loc,
                    )
                kb, nil, ids = _link_info(info, nil_id=nil_id, path=name, line=line, where=loc)
                s = doc_spans[hits[0]]
                normalized.append(
                    {
                        "mention_id": s.mention_id,
                        "start": s.start,
                        "end": s.end,
                        "mention": surface,
                        "kb_ids": sorted(kb),
                        "nil": nil,
                        "identifiers": ids,
                    }
                )
                doc_spans[hits[0]] = s.replace(kb_ids=kb, nil=nil, identifiers=ids)
        elif isinstance(links, list):
            form = "list"
            for j, info in enumerate(links):
                w = f"{loc}: entity_linking[{j}]"
                if not isinstance(info, Mapping):
                    raise InputError(f"{info!r} is not an object", path=name, line=line, location=w)
                s0 = _int(info.get("start"), "start", name, line, w)
                e0 = _int(info.get("end"), "end", name, line, w)
                s0 = _convert(s0, text, offset_unit, name, line, w)
                e0 = _convert(e0, text, offset_unit, name, line, w)
                mention = info.get("mention")
                if mention is not None and not isinstance(mention, str):
                    raise InputError(
                        f"mention is {mention!r} (expected a string)",
                        path=name,
                        line=line,
                        location=w,
                    )
                if not 0 <= s0 < e0 <= len(text):
                    raise InputError(
                        f"link {s0}-{e0} is outside the text (expected 0 <= start < end "
                        f"<= {len(text)})",
                        path=name,
                        line=line,
                        location=w,
                    )
                if mention is not None and text[s0:e0] != mention:
                    occ = [i for i in range(len(text)) if text.startswith(mention, i)][:2]
                    if on_offset_mismatch == "relocate" and len(occ) == 1:
                        report.conversions.append(
                            {
                                "kind": "relocated_link",
                                "doc_id": doc_id,
                                "mention": mention,
                                "from": [s0, e0],
                                "to": [occ[0], occ[0] + len(mention)],
                            }
                        )
                        s0, e0 = occ[0], occ[0] + len(mention)
                    elif on_offset_mismatch == "skip":
                        report.conversions.append(
                            {
                                "kind": "skipped_link",
                                "doc_id": doc_id,
                                "mention": mention,
                                "at": [s0, e0],
                            }
                        )
                        continue
                    else:
                        hint = (
                            f"it occurs once, at {occ[0]}-{occ[0] + len(mention)}"
                            if len(occ) == 1
                            else "it does not occur"
                            if not occ
                            else "it occurs more than once"
                        )
                        raise OffsetMismatchError(
                            [
                                Problem(
                                    f"link {s0}-{e0} reads {text[s0:e0]!r}, not {mention!r} "
                                    f"(expected text[start:end] == mention; {hint})",
                                    name,
                                    line,
                                    w,
                                )
                            ]
                        )
                kb, nil, ids = _link_info(info, nil_id=nil_id, path=name, line=line, where=w)
                given = info.get("mention_id")
                if given is not None and (not isinstance(given, str) or not given):
                    raise InputError(
                        f"mention_id is {given!r} (expected a string)",
                        path=name,
                        line=line,
                        location=w,
                    )
                mid = _qualify(doc_id, given) if given else f"{doc_id}:{s0}-{e0}"
                normalized.append(
                    {
                        "mention_id": mid,
                        "start": s0,
                        "end": e0,
                        "mention": text[s0:e0],
                        "kb_ids": sorted(kb),
                        "nil": nil,
                        "identifiers": ids,
                    }
                )
                for i, s in enumerate(doc_spans):
                    if s.start == s0 and s.end == e0:
                        doc_spans[i] = s.replace(
                            kb_ids=kb, nil=nil, identifiers=ids, mention_id=mid
                        )
        else:
            raise InputError(
                "entity_linking is neither an object keyed by surface nor a list",
                path=name,
                line=line,
                location=loc,
            )
        seen = set()
        for n in normalized:
            if n["mention_id"] in seen:
                raise AmbiguousLinkError(
                    f"two links for mention '{n['mention_id']}' (expected one per mention)",
                    path=name,
                    line=line,
                    location=loc,
                )
            seen.add(n["mention_id"])
        n_links += len(normalized)
        n_nil += sum(1 for n in normalized if n["nil"])
        doc.meta["entity_linking"] = normalized
        doc.meta["entity_linking_form"] = form
    report.n_documents = len(corpus)
    report.n_spans = corpus.n_spans
    report.notes = {
        "n_links": n_links,
        "n_nil_links": n_nil,
        "nil_ratio": n_nil / n_links if n_links else None,
    }
    return corpus, report


def type_labels(corpus: Corpus, *, secondary: bool = False) -> dict[str, Any]:
    """``doc_id -> primary_type`` (or, with ``secondary=True``, ``-> {primary} ∪ secondary``)
    of the records that have a ``type_classification``: the gold of the classification task."""
    out: dict[str, Any] = {}
    for doc_id in corpus.doc_ids:
        doc = corpus.documents.get(doc_id)
        tc = doc.meta.get("type_classification") if doc is not None else None
        if not tc:
            continue
        primary = tc["primary_type"]
        if secondary:
            out[doc_id] = {primary, *(tc.get("secondary_types") or [])}
        else:
            out[doc_id] = primary
    return out


def linking_gold(corpus: Corpus) -> dict[str, frozenset[str]]:
    """``mention_id -> acceptable KB ids`` (empty = NIL) from a loaded heritage corpus."""
    out: dict[str, frozenset[str]] = {}
    for doc_id in corpus.doc_ids:
        doc = corpus.documents.get(doc_id)
        links = doc.meta.get("entity_linking") if doc is not None else None
        if links is None:
            continue
        for link in links:
            out[link["mention_id"]] = frozenset(link["kb_ids"])
    return out
