"""Release criteria of the heritage RAG example, written as tests.

Run them with ``pytest examples/heritage`` (or ``pytest`` in this folder); a failure lists every
missed expectation with its value, threshold, n and sample statuses.
"""

from __future__ import annotations

from typing import Any

from ragmeter.testing import assert_metrics, assert_no_regression


def test_candidate_meets_its_floors(heritage: Any) -> None:
    assert_metrics(
        heritage["hybrid-v1"],
        {
            "retrieval.nDCG@10": ">=0.85",
            "retrieval.RR": ">=0.85",
            "answers.f1": ">=0.85",
            "grounded.under_refusal": "<=0.05",
            "ner.overall.strict.f1": ">=0.90",
            "classification.accuracy": ">=0.80",
            "linking.ranking.mrr": ">=0.75",
            "steps.steps_score": ">=0.90",
        },
    )


def test_every_system_retrieves_most_relevant_documents(
    ragmeter_system: str, heritage: Any
) -> None:
    # parametrized over the systems of ragmeter.yaml: test_...[bm25-v3], test_...[hybrid-v1]
    assert_metrics(heritage[ragmeter_system], {"retrieval.R@10": ">=0.80"})


def test_museums_are_classified_well(heritage: Any) -> None:
    assert_metrics(
        heritage["hybrid-v1"],
        {"classification.accuracy": ">=0.90"},
        stratum={"custodian_type": "M"},
    )


def test_no_regression_against_the_baseline(heritage: Any) -> None:
    assert_no_regression(
        heritage["hybrid-v1"],
        "bm25-v3",
        ["retrieval.nDCG@10", "answers.f1", "steps.steps_score"],
    )


def test_the_baseline_stays_the_baseline(
    heritage: Any, ragmeter_runs: Any, heritage_config: Any
) -> None:
    # the factory caches: the same arguments return the evaluation the fixture holds
    assert ragmeter_runs(heritage_config, tasks=list(heritage["bm25-v3"].results)) is heritage
    assert_metrics(heritage["bm25-v3"], {"retrieval.nDCG@10": "0.60..0.75", "answers.em": "<0.80"})
