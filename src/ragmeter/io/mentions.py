"""Entity-linking record files (``ragmeter link``, docs/extraction.md#entity-linking).

Gold, any of:

* mention records ``{mention_id, kb_ids | kb_id | wikidata_id, nil?}`` (``doc_id`` + ``start`` +
  ``end`` may replace ``mention_id``: the id is then ``doc_id:start-end``);
* heritage entity-linking records ``{mention, context, gold_wikidata, ...}`` (id ``m<row>``);
* heritage / ragmeter gold records ``{id, text, entity_linking}``.

Predictions: records ``{mention_id, candidates: [{kb_id, score?}] | [ids], nil?}``; a ``doc_id``
field qualifies a short ``mention_id`` (``eval_001`` + ``m1`` → ``eval_001:m1``), and
``doc_id`` + ``start`` + ``end`` give ``doc_id:start-end``. A second record for one mention id
raises :class:`DuplicateMentionError` at its line.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ragmeter.errors import InputError
from ragmeter.io.records import read_records
from ragmeter.records.errors import DuplicateMentionError

__all__ = ["MentionFile", "read_link_gold", "read_link_predictions"]


@dataclass
class MentionFile:
    path: str
    format: str
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)


def _mention_id(rec: dict[str, Any], path: str, line: int) -> str:
    mid = rec.get("mention_id")
    doc = rec.get("doc_id")
    if mid is not None:
        if not isinstance(mid, str) or not mid:
            raise InputError(
                f"mention_id is {mid!r} (expected a non-empty string)", path=path, line=line
            )
        if isinstance(doc, str) and doc and not mid.startswith(f"{doc}:"):
            return f"{doc}:{mid}"
        return mid
    s, e = rec.get("start"), rec.get("end")
    if isinstance(doc, str) and isinstance(s, int) and isinstance(e, int):
        return f"{doc}:{s}-{e}"
    raise InputError(
        "record has no mention_id (expected 'mention_id', or 'doc_id' with 'start' and 'end')",
        path=path,
        line=line,
    )


def _add(out: MentionFile, mid: str, rec: dict[str, Any], line: int, what: str) -> None:
    if mid in out.records:
        raise DuplicateMentionError(
            f"second {what} for mention '{mid}' (first on line {out.lines[mid]}; expected one "
            "record per mention id)",
            path=out.path,
            line=line,
        )
    out.records[mid] = rec
    out.lines[mid] = line


def read_link_gold(path: str | os.PathLike[str]) -> MentionFile:
    """Gold mentions ``mention_id -> {kb_ids: [...], nil}`` from any gold form above."""
    from ragmeter.records.kbids import canonical_kb_id, is_nil_id

    name = os.fspath(path)
    recs = read_records(name)
    first = recs[0][1]
    if "text" in first:  # heritage / ragmeter gold records
        from ragmeter.io.heritage import load_heritage

        corpus, report = load_heritage(name)
        out = MentionFile(name, "heritage")
        for doc_id in corpus.doc_ids:
            for link in corpus.documents[doc_id].meta.get("entity_linking") or []:
                _add(
                    out,
                    link["mention_id"],
                    {"kb_ids": link["kb_ids"], "nil": link["nil"]},
                    0,
                    "gold mention",
                )
        out.notes = report.notes
        return out
    if "gold_wikidata" in first or ("mention" in first and "mention_id" not in first):
        from ragmeter.io.heritage_files import load_linking_json

        rows, report = load_linking_json(name)
        out = MentionFile(name, "heritage-linking", notes=report.notes)
        for r in rows:
            _add(
                out,
                r["mention_id"],
                {"kb_ids": r["kb_ids"], "nil": r["nil"]},
                r["line"],
                "gold mention",
            )
        return out
    out = MentionFile(name, "records")
    n_nil = 0
    for line, rec in recs:
        mid = _mention_id(rec, name, line)
        value = None
        for key in ("kb_ids", "kb_id", "wikidata_id", "gold_wikidata"):
            if key in rec:
                value = rec[key]
                break
        if isinstance(value, str) or value is None:
            value = [] if value is None or is_nil_id(value) else [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise InputError(
                f"KB ids {value!r} (expected a string or a list of strings)", path=name, line=line
            )
        ids = sorted({c for c in (canonical_kb_id(v) for v in value) if c is not None})
        nil = rec.get("nil")
        if nil is not None and not isinstance(nil, bool):
            raise InputError(f"nil is {nil!r} (expected true or false)", path=name, line=line)
        if nil and ids:
            raise InputError(
                f"mention '{mid}' is NIL and has KB ids (expected one or the other)",
                path=name,
                line=line,
            )
        n_nil += not ids
        _add(out, mid, {"kb_ids": ids, "nil": not ids}, line, "gold mention")
    out.notes = {"nil_ratio": n_nil / len(out.records) if out.records else None}
    return out


def read_link_predictions(path: str | os.PathLike[str]) -> MentionFile:
    """Prediction records ``mention_id -> {candidates, nil?}`` (one per mention id)."""
    name = os.fspath(path)
    out = MentionFile(name, "records")
    for line, rec in read_records(name):
        mid = _mention_id(rec, name, line)
        if "candidates" not in rec and "nil" not in rec:
            raise InputError(
                "record has neither 'candidates' nor 'nil' (expected {mention_id, "
                "candidates, nil?})",
                path=name,
                line=line,
            )
        _add(
            out,
            mid,
            {**rec, "candidates": rec.get("candidates", []), "nil": rec.get("nil")},
            line,
            "prediction",
        )
    return out
