"""The judge pipelines and their outputs are ``PIPELINE_OUTPUTS``; the old name ``FAMILIES``
(which also names the retrieval measure families) still works but warns."""

from __future__ import annotations

from ragmeter.judge import registry
from tests.helpers import warns


def test_the_old_name_warns_and_gives_the_same_mapping():
    assert registry.PIPELINE_OUTPUTS["faithfulness"] == (
        "faithfulness",
        "faithfulness_contradiction_rate",
    )
    assert registry.HEADLINE["answer_recall"] == "answer_correctness"
    with warns(DeprecationWarning, r"FAMILIES is deprecated: use PIPELINE_OUTPUTS"):
        assert registry.FAMILIES is registry.PIPELINE_OUTPUTS
    assert "FAMILIES" not in registry.__all__
