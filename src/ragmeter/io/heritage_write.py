"""Writing a corpus back as heritage JSON gold, with a report of what the format cannot hold."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from ragmeter.errors import InputError
from ragmeter.io.annotations import ConversionReport
from ragmeter.io.files import atomic_write
from ragmeter.records.model import Corpus

_ID_KEYS = (("viaf_id", "viaf"), ("isil_code", "isil"), ("ghcid", "ghcid"))
_KEYS_META = "heritage_keys"

__all__ = ["write_heritage"]


def _link_object(
    kb_ids: Any, nil: bool, identifiers: Mapping[str, str]
) -> tuple[dict[str, Any], bool]:
    kb = sorted(kb_ids)
    out = {"wikidata_id": None if nil or not kb else kb[0]}
    for key, scheme in _ID_KEYS:
        out[key] = identifiers.get(scheme)
    return out, len(kb) > 1


def write_heritage(
    corpus: Corpus, path: str | os.PathLike[str], *, jsonl: bool | None = None
) -> ConversionReport:
    """Write heritage records (JSONL for ``.jsonl``, else a JSON array with two-space indent).

    ``entity_linking`` is written keyed by surface when every linked surface is unique among
    the record's annotations, and as the list form otherwise (recorded in the report).
    """
    name = os.fspath(path)
    as_jsonl = name.endswith(".jsonl") if jsonl is None else jsonl
    report = ConversionReport(path=name, format="heritage")
    records = []
    for doc_id in corpus.doc_ids:
        doc = corpus.documents.get(doc_id)
        if doc is None:
            raise InputError("spans for a document without text", location=f"document '{doc_id}'")
        spans = sorted(corpus.spans.get(doc_id, []), key=lambda s: (s.start, s.end, s.label))
        anns = []
        for s in spans:
            if s.fragments:
                report.lost.append(
                    {
                        "doc_id": doc_id,
                        "span": [s.start, s.end],
                        "reason": "discontinuous (written as one span)",
                    }
                )
            anns.append(
                {
                    "text": s.surface(doc.text) if not s.fragments else doc.text[s.start : s.end],
                    "type": s.label,
                    "start": s.start,
                    "end": s.end,
                }
            )
        links: list[dict[str, Any]] = []
        meta_links = doc.meta.get("entity_linking")
        if meta_links is not None:
            for link in meta_links:
                links.append(dict(link))
        else:
            for s in spans:
                if s.kb_ids or s.nil or s.identifiers:
                    links.append(
                        {
                            "mention_id": s.mention_id,
                            "start": s.start,
                            "end": s.end,
                            "mention": doc.text[s.start : s.end],
                            "kb_ids": sorted(s.kb_ids),
                            "nil": s.nil,
                            "identifiers": dict(s.identifiers),
                        }
                    )
        surfaces = [a["text"] for a in anns]
        by_span = {(a["start"], a["end"]) for a in anns}
        unique = all(
            surfaces.count(link["mention"]) == 1
            and (link["start"], link["end"]) in by_span
            and link["mention_id"] == f"{doc_id}:{link['start']}-{link['end']}"
            for link in links
        )
        el: Any = None
        if links:
            if unique:
                el = {}
                for link in links:
                    obj, multi = _link_object(link["kb_ids"], link["nil"], link["identifiers"])
                    if multi:
                        report.lost.append(
                            {
                                "doc_id": doc_id,
                                "mention_id": link["mention_id"],
                                "reason": "several KB ids (the format holds one)",
                            }
                        )
                    el[link["mention"]] = obj
            else:
                el = []
                report.notes.setdefault("list_form", []).append(doc_id)
                for link in links:
                    obj, multi = _link_object(link["kb_ids"], link["nil"], link["identifiers"])
                    if multi:
                        report.lost.append(
                            {
                                "doc_id": doc_id,
                                "mention_id": link["mention_id"],
                                "reason": "several KB ids (the format holds one)",
                            }
                        )
                    mid = link["mention_id"]
                    short = mid[len(doc_id) + 1 :] if mid.startswith(f"{doc_id}:") else mid
                    el.append(
                        {
                            "mention_id": short,
                            "mention": link["mention"],
                            "start": link["start"],
                            "end": link["end"],
                            **obj,
                        }
                    )
        order = doc.meta.get(_KEYS_META) or ["id", "text", "ner_annotations", "entity_linking"]
        rec: dict[str, Any] = {}
        extra = {
            k: v
            for k, v in doc.meta.items()
            if k not in (_KEYS_META, "entity_linking", "entity_linking_form")
        }
        values = {"id": doc_id, "text": doc.text, "ner_annotations": anns, **extra}
        if el is not None:
            values["entity_linking"] = el
        for key in [*order, "ner_annotations", *values]:
            if key in values and key not in rec:
                rec[key] = values[key]
        records.append(rec)
        report.n_documents += 1
        report.n_spans += len(spans)
    with atomic_write(name, "wb") as fh:
        if as_jsonl:
            fh.write(
                "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")
            )
        else:
            fh.write((json.dumps(records, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
    return report
