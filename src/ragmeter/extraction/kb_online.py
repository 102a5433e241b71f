"""Optional online resolver for the cross-KB mapping file (docs/extraction.md#entity-linking).

Needs the ``ragmeter[online]`` extra (httpx).

:func:`build_mapping` queries a Wikidata SPARQL endpoint for the VIAF (P214), ISIL (P791) or
other configured properties of a list of QIDs, in batches, and writes a mapping file in the
docs/extraction.md#entity-linking format with provenance comments (endpoint, UTC timestamp,
properties). It runs only when
called explicitly; nothing else in ragmeter imports this module, and evaluation always reads a
mapping file, so results are reproducible from the file alone.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Iterable, Mapping
from typing import Any

from ragmeter.errors import InputError
from ragmeter.extraction.crosskb import KBMapping, load_mapping
from ragmeter.records.kbids import canonical_kb_id

__all__ = ["DEFAULT_PROPERTIES", "build_mapping", "sparql_query"]

DEFAULT_ENDPOINT = "https://query.wikidata.org/sparql"
DEFAULT_PROPERTIES: Mapping[str, str] = {"viaf": "P214", "isil": "P791", "ghcid": "P9882"}


def sparql_query(qids: list[str], properties: Mapping[str, str]) -> str:
    """The SPARQL query for one batch: every (item, scheme, value) of the given properties."""
    items = " ".join(f"wd:{q}" for q in qids)
    props = " ".join(f'("{scheme}" wdt:{pid})' for scheme, pid in properties.items())
    return (
        "SELECT ?item ?scheme ?value WHERE {\n"
        f"  VALUES ?item {{ {items} }}\n"
        f"  VALUES (?scheme ?p) {{ {props} }}\n"
        "  ?item ?p ?value .\n"
        "}"
    )


def build_mapping(
    qids: Iterable[str],
    schemes: Iterable[str] = ("viaf", "isil"),
    *,
    endpoint: str = DEFAULT_ENDPOINT,
    batch_size: int = 200,
    user_agent: str | None = None,
    out: str | os.PathLike[str],
    properties: Mapping[str, str] | None = None,
    timeout: float = 60.0,
    client: Any = None,
) -> KBMapping:
    """Query ``endpoint`` for the identifiers of ``qids`` and write a mapping file to ``out``.

    ``schemes`` names the identifier schemes to fetch; their Wikidata properties come from
    ``properties`` (default: viaf P214, isil P791, ghcid P9882). Returns the written mapping as
    :func:`~ragmeter.extraction.crosskb.load_mapping` reads it.
    """
    import httpx

    from ragmeter._version import __version__
    from ragmeter.io.files import atomic_write

    props_all = {**DEFAULT_PROPERTIES, **(properties or {})}
    wanted = list(dict.fromkeys(schemes))
    unknown = [s for s in wanted if s not in props_all]
    if unknown:
        raise InputError(
            f"no Wikidata property known for scheme '{unknown[0]}' (pass properties={{...}})"
        )
    props = {s: props_all[s] for s in wanted}
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    canon = sorted({c for c in (canonical_kb_id(q) for q in qids) if c is not None})
    bad = [q for q in canon if not q.startswith("Q") or not q[1:].isdigit()]
    if bad:
        raise InputError(f"'{bad[0]}' is not a Wikidata QID (expected Q followed by digits)")
    agent = user_agent or f"ragmeter/{__version__} (cross-KB mapping; offline evaluation)"
    own = client is None
    http = client or httpx.Client(timeout=timeout, headers={"User-Agent": agent})
    rows: set[tuple[str, str, str]] = set()
    try:
        for i in range(0, len(canon), batch_size):
            batch = canon[i : i + batch_size]
            resp = http.post(
                endpoint,
                data={"query": sparql_query(batch, props)},
                headers={"Accept": "application/sparql-results+json", "User-Agent": agent},
            )
            if resp.status_code != 200:
                raise InputError(
                    f"HTTP {resp.status_code} for a batch of {len(batch)} QIDs (expected 200)",
                    location=endpoint,
                )
            try:
                bindings = resp.json()["results"]["bindings"]
            except (ValueError, KeyError, TypeError):
                raise InputError(
                    "the response is not SPARQL JSON results", location=endpoint
                ) from None
            for b in bindings:
                try:
                    item = b["item"]["value"].rsplit("/", 1)[-1]
                    rows.add((item, b["scheme"]["value"], b["value"]["value"].strip()))
                except (KeyError, AttributeError):
                    raise InputError(
                        "a result row lacks item, scheme or value", location=endpoint
                    ) from None
    finally:
        if own:
            http.close()
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    lines = [
        "# source: Wikidata SPARQL",
        f"# endpoint: {endpoint}",
        f"# retrieved: {stamp}",
        "# properties: " + ", ".join(f"{s}={p}" for s, p in props.items()),
        f"# qids: {len(canon)}",
        "wikidata_id\tscheme\tvalue",
        *(f"{q}\t{s}\t{v}" for q, s, v in sorted(rows)),
    ]
    with atomic_write(out) as fh:
        fh.write("\n".join(lines) + "\n")
    return load_mapping(out)
