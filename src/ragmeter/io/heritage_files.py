"""The heritage benchmark's side files: the type-classification TSV
(``text<TAB>gold_type<TAB>secondary_types``, optional ``id``; secondary types separated by
``|``) and the entity-linking JSON (``{mention, context, gold_wikidata, gold_viaf, gold_isil}``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ragmeter.errors import InputError
from ragmeter.io.annotations import LoadReport
from ragmeter.io.files import open_text
from ragmeter.io.records import read_records
from ragmeter.records.kbids import NIL_ID, canonical_kb_id, is_nil_id

__all__ = ["TypeRow", "load_linking_json", "load_type_tsv"]


@dataclass
class TypeRow:
    """One row of the heritage type-classification TSV."""

    id: str
    text: str
    primary: str
    secondary: list[str] = field(default_factory=list)
    line: int = 0


def load_type_tsv(path: str | os.PathLike[str], *, secondary_sep: str = "|") -> list[TypeRow]:
    """Read the heritage type-classification TSV (header ``text<TAB>gold_type<TAB>
    secondary_types``, optional ``id`` column; without it the id is the 1-based row number)."""
    name = os.fspath(path)
    rows: list[TypeRow] = []
    with open_text(name) as fh:
        lines = fh.read().split("\n")
    header: list[str] | None = None
    seen: dict[str, int] = {}
    n = 0
    for line_no, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        cols = line.split("\t")
        if header is None:
            header = [c.strip() for c in cols]
            need = {"text", "gold_type"}
            if not need <= set(header):
                raise InputError(
                    f"header {line!r} (expected text<TAB>gold_type<TAB>secondary_types, "
                    "optional id)",
                    path=name,
                    line=line_no,
                )
            continue
        if len(cols) != len(header):
            raise InputError(
                f"{len(cols)} column(s) (expected {len(header)}: {', '.join(header)})",
                path=name,
                line=line_no,
            )
        row = dict(zip(header, cols, strict=True))
        n += 1
        rid = row["id"].strip() if "id" in row else str(n)
        if not rid:
            raise InputError("empty id", path=name, line=line_no)
        if rid in seen:
            raise InputError(
                f"id '{rid}' appears twice (first on line {seen[rid]})", path=name, line=line_no
            )
        seen[rid] = line_no
        primary = row["gold_type"].strip()
        if not primary:
            raise InputError("empty gold_type (expected a label)", path=name, line=line_no)
        sec_raw = row.get("secondary_types", "").strip()
        secondary = (
            [s.strip() for s in sec_raw.split(secondary_sep) if s.strip()] if sec_raw else []
        )
        rows.append(TypeRow(rid, row["text"], primary, secondary, line_no))
    if header is None:
        raise InputError("empty file (expected a header and rows)", path=name)
    if not rows:
        raise InputError("no rows after the header", path=name)
    return rows


def load_linking_json(
    path: str | os.PathLike[str], *, nil_id: str = NIL_ID
) -> tuple[list[dict[str, Any]], LoadReport]:
    """Read heritage entity-linking records ``{mention, context, gold_wikidata, gold_viaf,
    gold_isil}`` (optional ``id``): one gold mention each, ``mention_id`` = ``id`` or
    ``m<row>``; NIL when ``gold_wikidata`` is empty, null or ``NIL``. The report gives the NIL
    ratio (the heritage schema targets 0.15)."""
    name = os.fspath(path)
    out = []
    seen: dict[str, int] = {}
    for row, (line, rec) in enumerate(read_records(name), start=1):
        mention = rec.get("mention")
        if not isinstance(mention, str):
            raise InputError("'mention' is missing or not a string", path=name, line=line)
        rid = rec.get("id")
        mid = str(rid) if rid is not None else f"m{row}"
        if mid in seen:
            raise InputError(
                f"mention id '{mid}' appears twice (first on line {seen[mid]})",
                path=name,
                line=line,
            )
        seen[mid] = line
        wd = rec.get("gold_wikidata")
        if wd is not None and not isinstance(wd, str):
            raise InputError(
                f"gold_wikidata is {wd!r} (expected a string or null)", path=name, line=line
            )
        nil = is_nil_id(wd, nil_id=nil_id)
        ids = {}
        for key, scheme in (("gold_viaf", "viaf"), ("gold_isil", "isil")):
            v = rec.get(key)
            if isinstance(v, str) and v:
                ids[scheme] = v
        out.append(
            {
                "mention_id": mid,
                "mention": mention,
                "context": rec.get("context"),
                "kb_ids": [] if nil else [canonical_kb_id(wd, nil_id=nil_id)],
                "nil": nil,
                "identifiers": ids,
                "line": line,
            }
        )
    report = LoadReport(path=name, format="heritage-linking")
    n_nil = sum(1 for r in out if r["nil"])
    report.n_spans = len(out)
    report.notes = {
        "nil_ratio": n_nil / len(out) if out else None,
        "n_nil": n_nil,
        "target_nil_ratio": 0.15,
    }
    return out, report
