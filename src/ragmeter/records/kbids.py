"""Canonical knowledge-base identifiers (docs/extraction.md#data-model-and-validation).

KB ids are compared as strings after this canonicalization:

* Wikidata: ``Q190804``, ``wd:Q190804``, ``Wikidata:Q190804`` and
  ``http(s)://www.wikidata.org/entity/Q190804`` (also ``/wiki/``) all become ``Q190804``.
* Other databases: ``<db>:<id>`` keeps its id as given, with the ``<db>`` prefix lower-cased.
* The literal ``NIL`` (configurable), an empty string or ``None`` mean NIL: the result is ``None``.

>>> canonical_kb_id("wd:Q190804"), canonical_kb_id("https://www.wikidata.org/entity/Q190804")
('Q190804', 'Q190804')
>>> canonical_kb_id("VIAF:148691498"), canonical_kb_id("NIL"), canonical_kb_id("  ")
('viaf:148691498', None, None)
"""

from __future__ import annotations

import re

__all__ = ["NIL_ID", "canonical_kb_id", "is_nil_id"]

NIL_ID = "NIL"

_WIKIDATA_URL = re.compile(r"^https?://(?:www\.|m\.)?wikidata\.org/(?:entity|wiki)/([QPL]\d+)$")
_WIKIDATA_PREFIXED = re.compile(r"^(?:wd|wikidata|wdt)\s*:\s*([QPL]\d+)$", re.IGNORECASE)
_BARE_QID = re.compile(r"^[QPL]\d+$")
_PREFIXED = re.compile(r"^([A-Za-z][A-Za-z0-9_.+-]*):(.+)$")


def is_nil_id(kb_id: object, *, nil_id: str = NIL_ID) -> bool:
    """True for ``None``, an empty or blank string, or ``nil_id``."""
    return kb_id is None or (isinstance(kb_id, str) and kb_id.strip() in ("", nil_id))


def canonical_kb_id(kb_id: object, *, nil_id: str = NIL_ID) -> str | None:
    """The canonical form of ``kb_id``, or ``None`` when it means NIL."""
    if is_nil_id(kb_id, nil_id=nil_id):
        return None
    if not isinstance(kb_id, str):
        raise TypeError(f"a KB id is a string, not {type(kb_id).__name__}")
    text = kb_id.strip()
    if _BARE_QID.match(text):
        return text
    m = _WIKIDATA_URL.match(text) or _WIKIDATA_PREFIXED.match(text)
    if m:
        return m.group(1)
    m = _PREFIXED.match(text)
    if m and not text.lower().startswith(("http:", "https:")):
        return f"{m.group(1).lower()}:{m.group(2)}"
    return text
