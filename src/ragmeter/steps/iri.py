"""IRI discovery steps (docs/steps.md)."""

from __future__ import annotations

import re
from typing import Any

from ragmeter.steps.modes import DEFAULT
from ragmeter.steps.sparql import SparqlResult, load_result

__all__ = ["iri_in_text", "score_iri_discovery"]

_IRI_CHAR = r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]"


def iri_in_text(iri: str, text: str) -> bool:
    """True if ``iri`` occurs in ``text`` and is not the prefix of a longer IRI there.

    >>> iri_in_text("urn:uuid:ab", "<urn:uuid:ab> a ex:Thing .")
    True
    >>> iri_in_text("urn:uuid:ab", "<urn:uuid:abc> a ex:Thing .")
    False
    """
    return re.search(re.escape(iri) + f"(?!{_IRI_CHAR})", text) is not None


def score_iri_discovery(
    reference_iri: str,
    actual_name: str,
    actual_output: Any,
    mode: str,
    parsed: SparqlResult | None = None,
) -> float:
    """1.0 if the actual step discovered ``reference_iri``, else 0.0.

    ``autocomplete_search`` must bind the IRI as a ``uri`` cell. ``sparql_query`` must bind it
    as a ``uri`` cell, or (non-JSON output such as Turtle) mention it as a whole IRI; in
    ``graphrag-eval-6`` mode a substring of the raw output is enough. Other tools score 0.

    >>> out = '{"head": {"vars": ["iri"]}, "results": {"bindings": ' \\
    ...       '[{"iri": {"type": "uri", "value": "urn:x:1"}}]}}'
    >>> score_iri_discovery("urn:x:1", "autocomplete_search", out, "default")
    1.0
    """
    if actual_name == "autocomplete_search":
        result = parsed if parsed is not None else load_result(actual_output)
        return float(result is not None and reference_iri in result.iris())
    if actual_name == "sparql_query":
        if not isinstance(actual_output, str):
            result = parsed if parsed is not None else load_result(actual_output)
            return float(mode == DEFAULT and result is not None and reference_iri in result.iris())
        if mode != DEFAULT:
            return float(reference_iri in actual_output)
        result = parsed if parsed is not None else load_result(actual_output)
        if result is not None:
            return float(reference_iri in result.iris())
        return float(iri_in_text(reference_iri, actual_output))
    return 0.0
