"""Retrieval, IRI discovery, time-series and data-point steps (docs/steps.md)."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta, timezone

import pytest

from ragmeter.steps import average_precision, recall_at_k, score_step
from ragmeter.steps.retrieval_steps import compat_recall_at_k
from ragmeter.steps.timeseries import (
    normalize_granularity,
    relative_offset,
    score_data_points,
    score_time_series,
    times_equal,
)
from tests.helpers import warns

V6, V5 = "graphrag-eval-6", "graphrag-eval-5"


def docs(*ids):
    return json.dumps([{"id": i, "text": "t"} for i in ids])


def retrieval_pair(rel, ret, ref_k, agent_k):
    ref = {"name": "retrieval", "output": docs(*rel)}
    if ref_k is not None:
        ref["args"] = {"k": ref_k}
    act = {"name": "retrieval", "status": "success", "output": docs(*ret)}
    if agent_k is not None:
        act["args"] = {"k": agent_k}
    return ref, act


# -- retrieval step table ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("rel", "ret", "ref_k", "agent_k", "default", "compat"),
    [
        ([1, 3, 5, 7, 9], list(range(1, 11)), 5, 5, 0.6, 0.6),
        ([1, 3, 5, 6], [1, 4, 3, 5, 7], 5, 5, 0.75, 0.75),
        (["a", "b", "c"], ["c", "x", "a"], None, 2, 2 / 3, 0.0),
        (["a", "a"], ["a"], None, 2, 1.0, 0.5),
        (["a", "b", "c"], ["a"], 3, 1, 1 / 3, 1.0),
    ],
)
def test_recall_table(rel, ret, ref_k, agent_k, default, compat):
    ref, act = retrieval_pair(rel, ret, ref_k, agent_k)
    assert score_step(ref, act) == pytest.approx(default, abs=0)
    assert score_step(ref, act, compat=V6) == compat
    assert score_step(ref, act, compat=V5) == compat


def test_compat_recall_without_agent_k():
    ref, act = retrieval_pair(["a", "b"], ["b", "a", "c"], 1, None)
    assert score_step(ref, act, compat=V6) == 0.0  # k = 1 from the reference: [a] vs [b]
    ref, act = retrieval_pair(["a", "b"], ["b", "a"], None, None)
    assert score_step(ref, act, compat=V6) == 1.0  # k = length of the actual list


def test_recall_function():
    assert recall_at_k([1, 3, 5, 7, 9], range(1, 11), 5) == 0.6
    assert recall_at_k([], [1], 3) == 0.0
    assert recall_at_k(["a", "a", "b"], ["b", "b", "a"], 2) == 0.5
    with pytest.raises(ValueError, match="positive integer"):
        recall_at_k([1], [1], 0)
    assert compat_recall_at_k(["a", "b", "c"], ["c", "x", "a"], 2) == 0.0


def test_actual_output_that_is_not_documents_scores_zero():
    ref = {"name": "retrieval", "output": docs("a")}
    for out in ("not json", '{"id": "a"}', '[{"text": "no id"}]', "[1, 2]"):
        assert score_step(ref, {"name": "retrieval", "status": "success", "output": out}) == 0.0


# -- retrieval aggregates ----------------------------------------------------------------


def test_average_precision():
    assert average_precision({1, 2, 5, 8}, [1, 3, 2, 4, 5, 6, 7, 8]) == pytest.approx(
        (1 + 2 / 3 + 3 / 5 + 4 / 8) / 4, abs=1e-15
    )
    assert average_precision({1, 3, 5, 6}, [1, 4, 3, 5, 7]) == (1 + 2 / 3 + 3 / 4) / 4
    assert round(average_precision({1, 3, 5, 6}, [1, 4, 3, 5, 7]), 4) == 0.6042
    assert average_precision(["a"], ["a", "a"]) == 1.0  # upstream: 2.0
    assert average_precision([], ["a"]) == 0.0
    assert average_precision(iter(["a", "b"]), iter(["b"])) == 0.5


# -- IRI discovery -----------------------------------------------------------------------

IRI = "urn:uuid:ab"


def sparql_with(iri, kind="uri"):
    return json.dumps(
        {"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"type": kind, "value": iri}}]}}
    )


@pytest.mark.parametrize(
    ("name", "output", "default", "v6"),
    [
        ("autocomplete_search", sparql_with(IRI), 1.0, 1.0),
        ("autocomplete_search", sparql_with(IRI, "literal"), 0.0, 0.0),
        ("autocomplete_search", "not json", 0.0, 0.0),
        ("sparql_query", sparql_with(IRI), 1.0, 1.0),
        ("sparql_query", sparql_with(IRI, "literal"), 0.0, 1.0),  # STR()'d IRI: substring
        ("sparql_query", sparql_with(IRI + "c"), 0.0, 1.0),  # prefix of a longer IRI
        ("sparql_query", f"<{IRI}> a <urn:x:Thing> .", 1.0, 1.0),  # Turtle
        ("sparql_query", f"<{IRI}c> a <urn:x:Thing> .", 0.0, 1.0),
        ("lookup", sparql_with(IRI), 0.0, 0.0),
    ],
)
def test_iri_discovery(name, output, default, v6):
    ref = {"name": "iri_discovery", "output": IRI, "output_media_type": "text/uri"}
    act = {"name": name, "status": "success", "output": output}
    assert score_step(ref, act) == default
    assert score_step(ref, act, compat=V6) == v6


def test_iri_discovery_in_v5_is_an_ordinary_step():
    ref = {"name": "iri_discovery", "output": IRI}
    act = {"name": "autocomplete_search", "status": "success", "output": sparql_with(IRI)}
    assert score_step(ref, act, compat=V5) == 0.0
    same = {"name": "iri_discovery", "status": "success", "output": IRI}
    assert score_step(ref, same, compat=V5) == 1.0


# -- time series -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ref_args", "act_args", "expected"),
    [
        ({}, {}, 1.0),
        ({"mrid": "m"}, {}, 0.0),
        ({}, {"mrid": "m"}, 0.0),
        ({"mrid": "m"}, {"mrid": "m"}, 1.0),
        ({"mrid": "m"}, {"mrid": "m", "limit": 5}, 1.0),
        ({"mrid": "m"}, {"mrid": ["m"]}, 1.0),
        ({"mrid": ["a", "b"]}, {"mrid": ["b", "a"], "limit": 10}, 1.0),
        ({"mrid": ["x"]}, {"mrid": ["y", "x"]}, 0.0),
        ({"mrid": "m", "limit": 5}, {"mrid": "m"}, 0.0),
        ({"mrid": "m", "limit": 5}, {"mrid": "m", "limit": 5}, 1.0),
    ],
)
@pytest.mark.parametrize("compat", [None, V6])
def test_time_series(ref_args, act_args, expected, compat):
    ref = {"name": "retrieve_time_series", "args": ref_args}
    act = {"name": "retrieve_time_series", "status": "success", "args": act_args}
    assert score_time_series(ref, act) == expected
    assert score_step(ref, act, compat=compat) == expected


# -- data points -------------------------------------------------------------------------


def test_granularity_and_relative_times():
    assert normalize_granularity("1s") == normalize_granularity("1second") == "1seconds"
    assert normalize_granularity("5SECONDS") == "5seconds"
    assert normalize_granularity("1w") == normalize_granularity("1week")
    assert normalize_granularity("1mo") == "1months"
    assert normalize_granularity("month1") == "month1"
    assert normalize_granularity("1decade") == "1decade"
    assert relative_offset("100m-ago") == relative_offset("6000s-ago") == -6000
    assert relative_offset("1w-ahead") == 604800
    for not_relative in ("1mo-ago", "1second-ago", "-5d-ago", "yesterday", "NOW", "1M-ago"):
        assert relative_offset(not_relative) is None


T = "2025-06-01T12:00:00Z"
T_DT = datetime(2025, 6, 1, 12, tzinfo=timezone.utc)


def _ago(seconds):
    return (T_DT - timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize(
    ("ref", "act", "expected"),
    [
        ("2025-01-01T00:00:00Z", "2025-01-01T00:00:00Z", True),
        ("2025-01-01T00:00:00Z", "2025-01-01T00:00:30Z", False),
        ("2025-01-01T00:00:00Z", "2025-01-01T00:00:00", True),
        ("2025-01-01T00:00:00Z", "2025-01-01T02:00:00+02:00", True),
        ("2025-13-01", "2025-13-01", True),
        ("2026-01-01T00:00:00Z", "2025-12-31T23:59:59Z", False),
        ("now", "now", True),
        ("1w-ago", "7d-ago", True),
        ("1d-ago", "24h-ago", True),
        ("1h-ahead", "60m-ahead", True),
        ("1m-ago", "60s-ago", True),
        ("1m-ago", "30s-ago", False),
        (None, None, True),
        ("now", None, False),
        ("now", T, True),
        (T, "now", False),
        ("now", _ago(30), True),
        ("60s-ago", _ago(61), True),
        ("2m-ago", _ago(210), False),
        ("2h-ago", _ago(7200), True),
        (T_DT, T, True),
        (date(2025, 6, 1), "2025-06-01T00:00:00Z", True),
        ("2025-01-01T01", "2025-01-01T01:00:00Z", True),
    ],
)
def test_times_equal(ref, act, expected):
    assert times_equal(ref, act, T) is expected


def data_points(**args):
    return {"name": "retrieve_data_points", "args": {"external_id": "x", **args}}


def act_points(ts=T, **args):
    step = {"name": "retrieve_data_points", "status": "success", "id": "c1", **data_points(**args)}
    if ts is not None:
        step["execution_timestamp"] = ts
    return step


@pytest.mark.parametrize("compat", [None, V6])
def test_data_points(compat):
    start = "2025-01-01T00:00:00Z"
    ref = data_points(aggregates="average", granularity="1w", start=start)
    assert (
        score_step(
            ref, act_points(aggregates=["average"], granularity="1week", start=start), compat=compat
        )
        == 1.0
    )
    ref3 = data_points(aggregates=["average", "min", "max"])
    assert score_step(ref3, act_points(aggregates=["max", "average", "min"]), compat=compat) == 1.0
    end_ref = data_points(end="2026-01-01T00:00:00Z")
    assert score_step(end_ref, act_points(end="2025-12-31T23:59:59Z"), compat=compat) == 0.0
    assert score_step(data_points(limit=10), act_points(), compat=compat) == 0.0
    no_id = {"name": "retrieve_data_points", "status": "success", "args": {}}
    assert score_step(data_points(), no_id, compat=compat) == 0.0


def test_relative_reference_time_without_anchor_warns_and_scores_zero():
    from ragmeter.warnings import RagmeterWarning

    ref = data_points(start="1d-ago")
    act = act_points(ts=None, start="2025-05-31T12:00:00Z")
    warnings_seen = []
    assert score_data_points(ref, act, warnings_seen.append) == 0.0
    assert "execution_timestamp" in warnings_seen[0] and "'c1'" in warnings_seen[0]
    with warns(RagmeterWarning, "execution_timestamp"):
        assert score_step(ref, act) == 0.0
    assert score_step(ref, act_points(start="2025-05-31T12:00:00Z")) == 1.0
