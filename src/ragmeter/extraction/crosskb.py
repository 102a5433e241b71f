"""Cross-KB identifier consistency from an offline mapping (docs/extraction.md#entity-linking).

Identifiers claimed for an entity (VIAF, ISIL, GHCID, ...) are checked against a user-supplied
mapping ``wikidata_id → scheme → {values}`` (membership, so multi-valued properties work). The
core never makes a network call; the mapping file's SHA-256 and provenance comments are
recorded. Per entity:

* ``unlinked``: no identifier at all;
* ``partial``: no Wikidata id, or a Wikidata id and nothing else, so nothing to cross-check;
* ``inconsistent``: at least one claimed value the mapping contradicts;
* ``consistent``: at least one confirmed value and no contradiction;
* ``unverifiable``: the mapping has no values for any claimed (qid, scheme).

``consistency_rate`` = consistent / (consistent + inconsistent), ``null`` when nothing could be
checked (the heritage function reported 1.0 then).

>>> m = KBMapping.from_rows([("Q190804", "viaf", "148691498"), ("Q924335", "viaf", "123456")])
>>> r = check_consistency([{"entity_id": "e1", "wikidata_id": "Q190804", "viaf_id": "148691498"},
...                        {"entity_id": "e2", "wikidata_id": "Q924335", "viaf_id": "999"}], m)
>>> r.status, r.consistency_rate
({'e1': 'consistent', 'e2': 'inconsistent'}, 0.5)
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ragmeter.errors import InputError
from ragmeter.records.kbids import canonical_kb_id

__all__ = ["ConsistencyReport", "KBMapping", "check_consistency", "load_mapping"]

SCHEME_ALIASES = {"p214": "viaf", "p791": "isil", "viaf_id": "viaf", "isil_code": "isil"}
_VIAF = re.compile(r"^(?:viaf:|https?://(?:www\.)?viaf\.org/viaf/)?(\d+)/?$", re.IGNORECASE)
_RECORD_KEYS = {
    "viaf_id": "viaf",
    "isil_code": "isil",
    "ghcid": "ghcid",
    "viaf": "viaf",
    "isil": "isil",
}


def _scheme(name: str) -> str:
    key = name.strip().lower()
    return SCHEME_ALIASES.get(key, key)


def _value(scheme: str, value: str) -> str:
    v = value.strip()
    if scheme == "viaf":
        m = _VIAF.match(v)
        if m:
            return m.group(1)
    return v


@dataclass
class KBMapping:
    """``wikidata_id -> scheme -> set of values``, with provenance."""

    values: dict[str, dict[str, set[str]]] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[str, str, str]], **meta: Any) -> KBMapping:
        m = cls(meta=dict(meta))
        for qid, scheme, value in rows:
            m.add(qid, scheme, value)
        return m

    def add(self, qid: str, scheme: str, value: str) -> None:
        q = canonical_kb_id(qid)
        if q is None:
            raise InputError(f"mapping row with an empty or NIL Wikidata id ({qid!r})")
        s = _scheme(scheme)
        self.values.setdefault(q, {}).setdefault(s, set()).add(_value(s, value))

    def lookup(self, qid: str, scheme: str) -> set[str] | None:
        return self.values.get(qid, {}).get(scheme)


def load_mapping(path: str | os.PathLike[str]) -> KBMapping:
    """Read a mapping file: TSV with header ``wikidata_id<TAB>scheme<TAB>value`` (``#`` lines are
    provenance comments, returned in ``meta["comments"]``), or JSONL
    ``{"wikidata_id": ..., "viaf": [...], "isil": [...]}``."""
    from ragmeter.io.files import open_text, sha256_file
    from ragmeter.io.jsonl import iter_jsonl

    name = os.fspath(path)
    meta: dict[str, Any] = {"path": name, "sha256": sha256_file(name), "comments": []}
    mapping = KBMapping(meta=meta)
    if name.endswith((".jsonl", ".jsonl.gz", ".json")):
        for line, rec in iter_jsonl(name):
            qid = rec.get("wikidata_id")
            if not isinstance(qid, str):
                raise InputError("record has no 'wikidata_id' string", path=name, line=line)
            for key, vals in rec.items():
                if key == "wikidata_id":
                    continue
                vals = [vals] if isinstance(vals, str) else vals
                if not isinstance(vals, list) or not all(isinstance(v, str) for v in vals):
                    raise InputError(
                        f"'{key}' must be a string or a list of strings", path=name, line=line
                    )
                for v in vals:
                    mapping.add(qid, key, v)
        return mapping
    with open_text(name) as fh:
        header_seen = False
        for line_no, raw in enumerate(fh, start=1):
            line = raw.rstrip("\r\n")
            if line.startswith("#"):
                meta["comments"].append(line[1:].strip())
                continue
            if not line.strip():
                continue
            cols = line.split("\t")
            if not header_seen:
                if [c.strip().lower() for c in cols] != ["wikidata_id", "scheme", "value"]:
                    raise InputError(
                        f"header is {line!r} (expected wikidata_id<TAB>scheme<TAB>value)",
                        path=name,
                        line=line_no,
                    )
                header_seen = True
                continue
            if len(cols) != 3 or not all(c.strip() for c in cols):
                raise InputError(
                    f"{len(cols)} column(s) (expected 3 non-empty: wikidata_id, scheme, value)",
                    path=name,
                    line=line_no,
                )
            try:
                mapping.add(*cols)
            except InputError as exc:
                raise InputError(exc.message, path=name, line=line_no) from None
        if not header_seen:
            raise InputError("empty mapping file (expected a header and rows)", path=name)
    return mapping


@dataclass
class ConsistencyReport:
    """Per-entity consistency classes, rates and per-scheme check counts."""

    status: dict[str, str]
    checks: dict[str, list[dict[str, str]]]
    counts: dict[str, int]
    consistency_rate: float | None
    coverage_rate: float | None
    checked_rate: float | None
    per_scheme: dict[str, dict[str, int]]
    undefined: dict[str, str]
    settings: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "consistency_rate": self.consistency_rate,
            "coverage_rate": self.coverage_rate,
            "checked_rate": self.checked_rate,
            "counts": self.counts,
            "per_scheme": self.per_scheme,
            "per_entity": {
                e: {"consistency": s, "checks": self.checks.get(e, [])}
                for e, s in self.status.items()
            },
            "undefined": self.undefined,
            "settings": self.settings,
        }


def _entity_claims(ent: Any, where: str) -> tuple[str, str | None, list[tuple[str, str]]]:
    from ragmeter.records.model import Span

    if isinstance(ent, Span):
        qids = sorted(ent.kb_ids)
        qid = next((q for q in qids if re.match(r"^Q\d+$", q)), None)
        claims = [(_scheme(k), str(v)) for k, v in ent.identifiers.items() if v]
        return ent.mention_id, qid, claims
    if not isinstance(ent, Mapping):
        raise InputError(f"{ent!r} is not an entity record or a Span", location=where)
    eid = ent.get("entity_id", ent.get("id", ent.get("mention_id")))
    if not isinstance(eid, str) or not eid:
        raise InputError("entity has no 'entity_id' (expected a string)", location=where)
    raw_q = ent.get("wikidata_id")
    qid = canonical_kb_id(raw_q) if isinstance(raw_q, str) else None
    claims: list[tuple[str, str]] = []
    for key, value in ent.items():
        if key in ("entity_id", "id", "mention_id", "wikidata_id", "mention", "text"):
            continue
        scheme = _RECORD_KEYS.get(key)
        if key == "identifiers" and isinstance(value, Mapping):
            claims.extend((_scheme(k), str(v)) for k, v in value.items() if v)
            continue
        if scheme is None or value in (None, ""):
            continue
        values = value if isinstance(value, list) else [value]
        claims.extend((scheme, str(v)) for v in values)
    return eid, qid, claims


def check_consistency(
    entities: Iterable[Any],
    mapping: KBMapping,
    *,
    normalizers: Mapping[str, Callable[[str], str]] | None = None,
) -> ConsistencyReport:
    """Check every (scheme, value) claimed by each entity against ``mapping`` (see the module
    docstring). ``entities`` are records ``{entity_id, wikidata_id?, viaf_id?, isil_code?,
    ghcid?, identifiers?}`` or :class:`Span` objects (``kb_ids`` and ``identifiers``).
    ``normalizers`` maps a scheme to a callable applied to both sides before comparing (e.g.
    ``{"isil": str.upper}``); it is recorded in ``settings``."""
    norm = {(_scheme(k)): f for k, f in (normalizers or {}).items()}
    status: dict[str, str] = {}
    checks: dict[str, list[dict[str, str]]] = {}
    per_scheme: dict[str, dict[str, int]] = {}
    for i, ent in enumerate(entities):
        eid, qid, claims = _entity_claims(ent, f"entity {i + 1}")
        if eid in status:
            raise InputError(f"entity id '{eid}' appears twice (expected unique ids)")
        if qid is None and not claims:
            status[eid] = "unlinked"
            continue
        if qid is None or not claims:
            status[eid] = "partial"
            continue
        results = []
        for scheme, value in claims:
            f = norm.get(scheme)
            v = _value(scheme, value)
            known = mapping.lookup(qid, scheme)
            if not known:
                outcome = "unknown"
            else:
                pool = {f(x) for x in known} if f else known
                outcome = "ok" if (f(v) if f else v) in pool else "mismatch"
            per_scheme.setdefault(scheme, {"ok": 0, "mismatch": 0, "unknown": 0})[outcome] += 1
            results.append({"scheme": scheme, "value": value, "result": outcome})
        checks[eid] = results
        outcomes = {r["result"] for r in results}
        if "mismatch" in outcomes:
            status[eid] = "inconsistent"
        elif "ok" in outcomes:
            status[eid] = "consistent"
        else:
            status[eid] = "unverifiable"
    names = ("consistent", "inconsistent", "unverifiable", "partial", "unlinked")
    counts = {k: sum(1 for s in status.values() if s == k) for k in names}
    total = len(status)
    counts["total"] = total
    checked = counts["consistent"] + counts["inconsistent"]
    undefined = {}
    if not checked:
        undefined["consistency_rate"] = "no entity could be cross-checked"
    if not total:
        undefined["coverage_rate"] = undefined["checked_rate"] = "no entities"
    return ConsistencyReport(
        status=status,
        checks=checks,
        counts=counts,
        consistency_rate=counts["consistent"] / checked if checked else None,
        coverage_rate=(total - counts["unlinked"]) / total if total else None,
        checked_rate=checked / total if total else None,
        per_scheme=dict(sorted(per_scheme.items())),
        undefined=undefined,
        settings={
            "mapping": {k: v for k, v in mapping.meta.items() if k != "comments"},
            "mapping_meta": mapping.meta.get("comments", []),
            "normalizers": {k: getattr(f, "__qualname__", repr(f)) for k, f in norm.items()},
        },
    )
