"""UltraRAG's ``evaluate_trec`` families are ``TREC_FAMILIES`` (beside ``PVALUE_FAMILIES``); the
old name ``FAMILIES`` (which also names ragmeter's retrieval measure families) warns."""

from __future__ import annotations

from ragmeter.mcp import compat
from tests.helpers import warns


def test_the_old_name_warns_and_gives_the_same_tuple():
    assert compat.TREC_FAMILIES == ("mrr", "map", "recall", "ndcg", "precision")
    assert set(compat.PVALUE_FAMILIES) == set(compat.TREC_FAMILIES)
    with warns(DeprecationWarning, r"FAMILIES is deprecated: use TREC_FAMILIES"):
        assert compat.FAMILIES is compat.TREC_FAMILIES
    assert "FAMILIES" not in compat.__all__
