from __future__ import annotations

import json

import pytest

from ragmeter.result import Aggregate, Result


def make() -> Result:
    return Result.from_columns(
        "judge",
        ["b", "a", "c"],
        {"faithfulness": [0.5, 1.0, None], "answer_relevance": [0.25, 0.75, 0.5]},
        statuses={
            "faithfulness": ["ok", "ok", "parse_error"],
            "answer_relevance": ["ok", "ok", "ok"],
        },
        details={"faithfulness": [None, None, "unterminated JSON"]},
        metadata={"model": "m"},
        warnings=["w"],
    )


def test_long_table_sorted_by_id_and_nulls_for_unscored():
    r = make()
    rows = r.samples.to_pylist()
    assert [(x["id"], x["metric"]) for x in rows[:3]] == [
        ("a", "faithfulness"),
        ("b", "faithfulness"),
        ("c", "faithfulness"),
    ]
    assert rows[2] == {
        "id": "c",
        "metric": "faithfulness",
        "value": None,
        "status": "parse_error",
        "detail": "unterminated JSON",
    }


def test_aggregates_are_means_over_scored_with_status_counts():
    r = make()
    agg = r.aggregates["faithfulness"]
    assert agg.value == 0.75
    assert agg.n == 2
    assert dict(agg.status_counts) == {"ok": 2, "parse_error": 1}
    assert r.summary == {"faithfulness": 0.75, "answer_relevance": 0.5}
    assert r.values("faithfulness") == {"a": 1.0, "b": 0.5}
    assert r.statuses("faithfulness")["c"] == "parse_error"


def test_no_scored_sample_gives_null_with_reason():
    r = Result.from_columns("answers", ["x"], {"em": [None]}, statuses=["no_gold"])
    assert r.aggregates["em"] == Aggregate(None, 0, {"no_gold": 1}, reason="no scored samples")


def test_value_of_unscored_row_is_dropped_even_if_given():
    r = Result.from_columns("answers", ["x", "y"], {"em": [1.0, 0.0]}, statuses=["no_gold", "ok"])
    assert r.samples.column("value").to_pylist() == [None, 0.0]


def test_round_trip_through_json():
    r = make()
    again = Result.from_json(r.to_json())
    assert again == r
    assert json.loads(r.to_json())["metadata"]["model"] == "m"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"ids": ["a", "a"], "values": {"em": [1, 0]}}, "sample id 'a' appears twice"),
        ({"ids": ["a"], "values": {"em": [1, 0]}}, "em: 2 values for 1 ids"),
        ({"ids": ["a"], "values": {"em": [float("nan")]}}, "scored but has no finite value"),
        ({"ids": ["a"], "values": {"em": [1]}, "statuses": ["weird"]}, "unknown status 'weird'"),
    ],
)
def test_construction_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Result.from_columns("answers", **kwargs)


def test_aggregate_refuses_nan():
    with pytest.raises(ValueError):
        Aggregate(float("nan"))


def test_unknown_metric_values():
    with pytest.raises(KeyError, match="no per-sample values for metric 'x'"):
        make().values("x")


def _reference_table(ids, values, statuses, details):
    """The long table as a loop over every value builds it (the construction before columns
    were converted whole): the oracle of the vectorised :meth:`Result.from_columns`."""
    import math

    import pyarrow as pa

    from ragmeter import status as st
    from ragmeter.result import SAMPLES_SCHEMA

    ids = [str(i) for i in ids]
    order = sorted(range(len(ids)), key=ids.__getitem__)
    columns = {k: [] for k in SAMPLES_SCHEMA.names}
    for metric, vals in values.items():
        stat = statuses[metric]
        detail = details.get(metric) or [None] * len(ids)
        for i in order:
            scored = stat[i] in st.SCORED and vals[i] is not None
            value = float(vals[i]) if scored else None
            columns["id"].append(ids[i])
            columns["metric"].append(metric)
            columns["value"].append(None if value is None or math.isnan(value) else value)
            columns["status"].append(stat[i])
            columns["detail"].append(detail[i])
    return pa.Table.from_pydict(columns, schema=SAMPLES_SCHEMA)


@pytest.mark.parametrize("seed", range(4))
def test_from_columns_matches_a_row_by_row_construction(seed):
    """Random ids (unicode, numbers), statuses, values (ints, -0.0, None where unscored) and
    details: the same table, chunk for chunk, and means over scored samples in sorted-id order."""
    import random

    import numpy as np

    from ragmeter.result import ordered_mean

    rng = random.Random(seed)
    n = rng.randint(1, 400)
    ids = rng.sample([*range(1000), *(f"q{i}é" for i in range(300)), "", "Z", "a\u4e2d"], n)
    values, statuses, details = {}, {}, {}
    for metric in ("em", "f1", "rouge-l")[: rng.randint(1, 3)]:
        stat = [rng.choice(["ok", "ok", "missing_zeroed", "no_gold", "timeout"]) for _ in ids]
        pick = (0, 1, -0.0, 0.1, 1 / 3, 2.5e-300)
        values[metric] = [rng.choice(pick) if s != "no_gold" else None for s in stat]
        statuses[metric] = stat
        if rng.random() < 0.5:
            details[metric] = [rng.choice([None, "", '{"flags": ["x"]}']) for _ in ids]
    got = Result.from_columns("answers", ids, values, statuses=statuses, details=details)
    want = _reference_table(ids, values, statuses, details)
    assert got.samples.equals(want)
    assert got.samples.num_rows == want.num_rows and got.samples.column("id").num_chunks == 1
    for metric, vals in values.items():
        key = sorted(range(n), key=lambda i: str(ids[i]))
        kept = [float(vals[i]) for i in key if statuses[metric][i] in ("ok", "missing_zeroed")]
        agg = got.aggregates[metric]
        assert agg.n == len(kept)
        assert agg.value == (ordered_mean(np.array(kept)) if kept else None)
