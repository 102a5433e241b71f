"""Readers for the baselines' inputs: corpus, queries, knowledge-base labels and mentions.

Everything is checked up front and every problem is one ``FILE:LINE`` error
(:class:`~ragmeter.InputError`), so no baseline starts on input it would later choke on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.errors import InputError
from ragmeter.io.files import PathLike, display_name, open_text
from ragmeter.io.jsonl import iter_jsonl
from ragmeter.io.jsonutil import json_type

__all__ = [
    "Corpus",
    "Entity",
    "read_corpus",
    "read_labels",
    "read_mentions",
    "read_queries",
]

ID_FIELDS = ("id", "_id", "docid")
TEXT_FIELDS = ("text", "contents")
QID_FIELDS = ("id", "_id", "qid")
QUERY_FIELDS = ("text", "query", "question")
_SPACE = re.compile(r"\s")


@dataclass
class Corpus:
    """Documents in file order: ``ids[i]`` has the analysed text ``texts[i]`` (title + text)."""

    ids: list[str]
    texts: list[str]
    path: str | None = None
    empty: int = 0  # documents whose text is empty: they can never be retrieved

    def __len__(self) -> int:
        return len(self.ids)


@dataclass
class Entity:
    """One knowledge-base entity of a label file: its names in file order."""

    kb_id: str
    names: list[str] = field(default_factory=list)
    prior: float = 0.0
    order: int = 0  # position of the entity's first row in the file


def _pick(obj: Mapping[str, Any], names: Sequence[str]) -> str | None:
    return next((n for n in names if n in obj), None)


def _check_id(value: Any, key: str, what: str, name: str, line: int) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value:
        raise InputError(
            f"{key} is {json_type(value)} (expected a non-empty string {what} id)",
            path=name,
            line=line,
        )
    if _SPACE.search(value):
        raise InputError(
            f"id {value!r} contains whitespace (TREC run files separate fields by whitespace)",
            path=name,
            line=line,
        )
    return value


def _unique(seen: dict[str, int], value: str, what: str, name: str, line: int) -> None:
    if value in seen:
        raise InputError(
            f"{what} id {value!r} appears twice (first at line {seen[value]})",
            path=name,
            line=line,
        )
    seen[value] = line


def read_corpus(
    path: PathLike,
    *,
    id_field: str | None = None,
    text_field: str | None = None,
    title_field: str | None = "title",
) -> Corpus:
    """Read a JSONL corpus (BEIR ``corpus.jsonl``, Pyserini JsonCollection).

    The id is ``id``, ``_id`` or ``docid`` (or ``id_field``), the text ``text`` or ``contents``
    (or ``text_field``); a title (``title_field``, ``None`` to ignore titles) is joined to the
    text with a newline.
    """
    name = display_name(path)
    ids: list[str] = []
    texts: list[str] = []
    seen: dict[str, int] = {}
    empty = 0
    for line, obj in iter_jsonl(path, allow_empty=True):
        key = id_field if id_field else _pick(obj, ID_FIELDS)
        if key is None or key not in obj:
            raise InputError(
                f"no document id (expected a key {key or 'id, _id or docid'})", path=name, line=line
            )
        doc = _check_id(obj[key], key, "document", name, line)
        _unique(seen, doc, "document", name, line)
        tkey = text_field if text_field else _pick(obj, TEXT_FIELDS)
        if tkey is None or tkey not in obj:
            raise InputError(
                f"document {doc!r} has no text (expected a key {tkey or 'text or contents'})",
                path=name,
                line=line,
            )
        text = obj[tkey]
        if not isinstance(text, str):
            raise InputError(
                f"{tkey} is {json_type(text)} (expected a string)", path=name, line=line
            )
        title = obj.get(title_field) if title_field else None
        if title is not None and not isinstance(title, str):
            raise InputError(
                f"{title_field} is {json_type(title)} (expected a string)", path=name, line=line
            )
        full = f"{title}\n{text}" if title else text
        empty += not full.strip()
        ids.append(doc)
        texts.append(full)
    if not ids:
        raise InputError("the corpus is empty (expected one JSON document per line)", path=name)
    return Corpus(ids, texts, path=name, empty=empty)


def corpus_from_records(records: Iterable[Mapping[str, Any]], *, name: str = "corpus") -> Corpus:
    """A :class:`Corpus` from Python records ``{id, text, title?}`` (same checks as a file)."""
    ids: list[str] = []
    texts: list[str] = []
    seen: dict[str, int] = {}
    empty = 0
    for i, rec in enumerate(records, start=1):
        key = _pick(rec, ID_FIELDS)
        doc = _check_id(rec.get(key) if key else None, key or "id", "document", name, i)
        _unique(seen, doc, "document", name, i)
        tkey = _pick(rec, TEXT_FIELDS)
        text = rec.get(tkey) if tkey else None
        if not isinstance(text, str):
            raise InputError(f"text is {json_type(text)} (expected a string)", path=name, line=i)
        title = rec.get("title")
        full = f"{title}\n{text}" if isinstance(title, str) and title else text
        empty += not full.strip()
        ids.append(doc)
        texts.append(full)
    if not ids:
        raise InputError("the corpus is empty (expected at least one document)", path=name)
    return Corpus(ids, texts, path=name, empty=empty)


def _sniff_format(path: PathLike) -> str:
    with open_text(path) as fh:
        for raw in fh:
            line = raw.strip()
            if not line:
                continue
            if line.startswith("{"):
                return "ragmeter" if '"qa_pairs"' in line else "jsonl"
            return "tsv"
    return "jsonl"


def read_queries(path: PathLike, *, fmt: str = "auto") -> list[tuple[str, str]]:
    """Queries as ``(qid, text)`` in file order from JSONL, TSV or a ragmeter gold file."""
    name = display_name(path)
    if fmt == "auto":
        fmt = _sniff_format(path)
    out: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    if fmt == "tsv":
        with open_text(path) as fh:
            for line, raw in enumerate(fh, start=1):
                if not raw.strip():
                    continue
                parts = raw.rstrip("\r\n").split("\t", 1)
                if len(parts) != 2:
                    raise InputError("no tab (expected qid<TAB>query text)", path=name, line=line)
                qid = _check_id(parts[0], "qid", "query", name, line)
                _unique(seen, qid, "query", name, line)
                out.append((qid, parts[1]))
    elif fmt == "ragmeter":
        for line, obj in iter_jsonl(path, allow_empty=True):
            pairs = obj.get("qa_pairs") or []
            if not isinstance(pairs, list):
                raise InputError(
                    "qa_pairs is not a list (expected a list of objects)", path=name, line=line
                )
            for qa in pairs:
                if not isinstance(qa, Mapping) or "qid" not in qa:
                    raise InputError(
                        "a qa_pairs entry has no qid (expected {qid, question})",
                        path=name,
                        line=line,
                    )
                qid = _check_id(qa["qid"], "qid", "query", name, line)
                _unique(seen, qid, "query", name, line)
                text = qa.get("question")
                if not isinstance(text, str):
                    raise InputError(
                        f"question of {qid!r} is {json_type(text)} (expected a string)",
                        path=name,
                        line=line,
                    )
                out.append((qid, text))
    elif fmt == "jsonl":
        for line, obj in iter_jsonl(path, allow_empty=True):
            key = _pick(obj, QID_FIELDS)
            if key is None:
                raise InputError(
                    "no query id (expected a key id, _id or qid)", path=name, line=line
                )
            qid = _check_id(obj[key], key, "query", name, line)
            _unique(seen, qid, "query", name, line)
            tkey = _pick(obj, QUERY_FIELDS)
            text = obj.get(tkey) if tkey else None
            if not isinstance(text, str):
                raise InputError(
                    f"query {qid!r} has no text (expected a string under text, query or question)",
                    path=name,
                    line=line,
                )
            out.append((qid, text))
    else:
        raise InputError(
            f"unknown queries format {fmt!r} (expected auto, jsonl, tsv or ragmeter)", path=name
        )
    if not out:
        raise InputError("no queries (expected at least one query)", path=name)
    return out


def _canonical(value: Any, name: str, line: int) -> str:
    from ragmeter.extraction.kbids import canonical_kb_id

    if not isinstance(value, str) or not value.strip():
        raise InputError(
            f"kb_id is {json_type(value)} (expected a non-empty string)", path=name, line=line
        )
    kb = canonical_kb_id(value)
    if kb is None:
        raise InputError(
            f"kb_id {value!r} is a NIL id (expected an entity id)", path=name, line=line
        )
    return kb


def _prior(value: Any, name: str, line: int) -> float:
    if value is None or value == "":
        return 0.0
    try:
        prior = float(value)
    except (TypeError, ValueError):
        raise InputError(
            f"prior {value!r} is not a number (expected a number)", path=name, line=line
        ) from None
    if prior != prior or prior in (float("inf"), float("-inf")):
        raise InputError(f"prior {value!r} is not finite (expected a number)", path=name, line=line)
    return prior


def _add_entity(out: dict[str, Entity], kb: str, names: list[str], prior: float) -> None:
    ent = out.get(kb)
    if ent is None:
        out[kb] = Entity(kb, [], prior, len(out))
        ent = out[kb]
    else:
        ent.prior = max(ent.prior, prior)  # merged rows: the entity keeps its strongest prior
    for n in names:
        if n not in ent.names:
            ent.names.append(n)


def read_labels(path: PathLike) -> list[Entity]:
    """Knowledge-base names: TSV ``kb_id<TAB>label[<TAB>aliases][<TAB>prior]`` with a header,
    or JSONL ``{kb_id, label, aliases?, prior?}``. Rows with the same (canonical) id merge."""
    name = display_name(path)
    out: dict[str, Entity] = {}
    if _sniff_format(path) == "tsv":
        with open_text(path) as fh:
            rows = [(i, r.rstrip("\r\n")) for i, r in enumerate(fh, start=1) if r.strip()]
        if not rows:
            raise InputError(
                "the label file is empty (expected a header kb_id<TAB>label)", path=name
            )
        hline, header = rows[0]
        cols = header.split("\t")
        if "kb_id" not in cols or "label" not in cols:
            raise InputError(
                f"header {header!r} lacks kb_id or label (expected kb_id<TAB>label"
                "[<TAB>aliases][<TAB>prior])",
                path=name,
                line=hline,
            )
        where = {c: i for i, c in enumerate(cols)}
        for line, raw in rows[1:]:
            cells = raw.split("\t")
            if len(cells) != len(cols):
                raise InputError(
                    f"{len(cells)} columns (expected {len(cols)}, as in the header)",
                    path=name,
                    line=line,
                )
            kb = _canonical(cells[where["kb_id"]], name, line)
            label = cells[where["label"]].strip()
            if not label:
                raise InputError("empty label (expected the entity's name)", path=name, line=line)
            aliases = (
                [a.strip() for a in cells[where["aliases"]].split("|")]
                if "aliases" in where
                else []
            )
            prior = _prior(cells[where["prior"]], name, line) if "prior" in where else 0.0
            _add_entity(out, kb, [label, *(a for a in aliases if a)], prior)
    else:
        for line, obj in iter_jsonl(path, allow_empty=True):
            kb = _canonical(obj.get("kb_id"), name, line)
            label = obj.get("label")
            if not isinstance(label, str) or not label.strip():
                raise InputError(
                    f"label is {json_type(label)} (expected a non-empty string)",
                    path=name,
                    line=line,
                )
            aliases = obj.get("aliases") or []
            if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
                raise InputError(
                    "aliases is not a list of strings (expected [str, ...])", path=name, line=line
                )
            prior = obj.get("prior")
            if isinstance(prior, bool):
                prior = "true" if prior else "false"
            _add_entity(
                out,
                kb,
                [label.strip(), *(a.strip() for a in aliases if a.strip())],
                _prior(prior, name, line),
            )
    if not out:
        raise InputError("the label file has no entities (expected one row per entity)", path=name)
    return list(out.values())


def read_mentions(path: PathLike) -> list[tuple[str, str, str, str | None]]:
    """Mentions as ``(mention_id, mention, context, sample_id)``.

    From a gold file the mentions are read with the loader ``ragmeter link`` uses, so the ids
    are the ones it evaluates (``sample:mention``); plain JSONL ``{mention_id, mention}`` is
    read as it is (no context, no sample). Only the surface strings are used for linking.
    """
    name = display_name(path)
    if _sniff_format(path) == "ragmeter" or _is_gold(path):
        from ragmeter.io.heritage import load_heritage

        corpus, _ = load_heritage(path)
        out: list[tuple[str, str, str, str | None]] = []
        for doc_id in corpus.doc_ids:
            doc = corpus.documents[doc_id]
            for link in doc.meta.get("entity_linking") or []:
                out.append((link["mention_id"], link["mention"], doc.text, doc_id))
        if not out:
            raise InputError(
                "no entity_linking mentions (expected gold samples with entity_linking)",
                path=name,
            )
        return out
    out = []
    seen: dict[str, int] = {}
    for line, obj in iter_jsonl(path):
        mid = obj.get("mention_id")
        if not isinstance(mid, str) or not mid:
            raise InputError(
                f"mention_id is {json_type(mid)} (expected a non-empty string)",
                path=name,
                line=line,
            )
        _unique(seen, mid, "mention", name, line)
        text = obj.get("mention")
        if not isinstance(text, str):
            raise InputError(
                f"mention is {json_type(text)} (expected a string)", path=name, line=line
            )
        out.append((mid, text, "", None))
    if not out:
        raise InputError("no mentions (expected one {mention_id, mention} per line)", path=name)
    return out


def _is_gold(path: PathLike) -> bool:
    with open_text(path) as fh:
        for raw in fh:
            if raw.strip():
                return '"entity_linking"' in raw
    return False
