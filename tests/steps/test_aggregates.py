"""Aggregates (docs/steps.md) and the Result conversion."""

from __future__ import annotations

import json

import pytest

from ragmeter.steps import compute_aggregates, stats_for_series, to_result

V6, V5 = "graphrag-eval-6", "graphrag-eval-5"
ZEROS = {"sum": 0, "mean": 0, "median": 0, "min": 0, "max": 0}


def test_stats_for_series():
    assert stats_for_series([]) == ZEROS
    assert stats_for_series([1]) == {"sum": 1, "mean": 1, "median": 1, "min": 1, "max": 1}
    assert stats_for_series([1, 2]) == {"sum": 3, "mean": 1.5, "median": 1.5, "min": 1, "max": 2}
    nine = stats_for_series(range(9, -1, -1))
    assert (nine["sum"], nine["mean"], nine["median"]) == (45, 4.5, 4.5)
    assert stats_for_series([0.8, 0.0, 0.9, 0.0])["mean"] == 0.42500000000000004
    assert isinstance(stats_for_series([]).get("sum"), int)


def _sparql(rows):
    return json.dumps(
        {
            "head": {"vars": ["x"]},
            "results": {"bindings": [{"x": {"type": "literal", "value": "v"}}] * rows},
        }
    )


SAMPLES = [
    {
        "template_id": "T1",
        "question_id": "q1",
        "steps_score": 1.0,
        "answer_recall": 1.0,
        "input_tokens": 100,
        "output_tokens": 10,
        "total_tokens": 110,
        "elapsed_sec": 2.0,
        "actual_steps": [
            {"id": "1", "name": "sparql_query", "status": "error", "error": "syntax"},
            {"id": "2", "name": "sparql_query", "status": "success", "output": _sparql(1)},
            {
                "id": "3",
                "name": "retrieval",
                "status": "success",
                "output": "[]",
                "retrieval_answer_recall": 0.5,
            },
        ],
    },
    {
        "template_id": "T1",
        "question_id": "q2",
        "steps_score": 0.0,
        "input_tokens": 300,
        "output_tokens": 30,
        "total_tokens": 330,
        "elapsed_sec": 4.0,
        "actual_steps": [
            {"id": "1", "name": "sparql_query", "status": "success", "output": _sparql(0)}
        ],
    },
    {
        "template_id": "T2",
        "question_id": "q3",
        "status": "error",
        "error": "boom",
        "steps_score": 0.0,
        "actual_steps": [],
    },
]


@pytest.mark.parametrize("compat", [None, V6, V5])
def test_worked_example(compat):
    agg = compute_aggregates(SAMPLES, compat=compat)
    t1, t2 = agg["per_template"]["T1"], agg["per_template"]["T2"]
    assert t1["steps_score"] == {"sum": 1.0, "mean": 0.5, "median": 0.5, "min": 0.0, "max": 1.0}
    assert t1["steps"] == {
        "total": {"sparql_query": 3, "retrieval": 1},
        "once_per_sample": {"sparql_query": 2, "retrieval": 1},
        "errors": {"sparql_query": 1},
        "empty_results": {"sparql_query": 1},
        "retrieval_answer_recall": stats_for_series([0.5]),
    }
    assert t1["input_tokens"] == {"sum": 400, "mean": 200, "median": 200.0, "min": 100, "max": 300}
    assert (t2["number_of_error_samples"], t2["number_of_success_samples"]) == (1, 0)
    assert t2["input_tokens"] == ZEROS
    micro, macro = agg["micro"], agg["macro"]
    if compat == V5:
        assert "steps_score" not in t2
        assert micro["steps_score"] == {
            "sum": 1.0,
            "mean": 0.5,
            "median": 0.5,
            "min": 0.0,
            "max": 1.0,
        }
        assert macro["steps_score"] == {"mean": 0.5}
        assert "steps" not in micro
    else:
        assert t2["steps_score"] == stats_for_series([0.0])
        assert micro["steps_score"]["sum"] == 1.0
        assert micro["steps_score"]["mean"] == 1 / 3
        assert micro["steps_score"]["median"] == 0.0
        assert macro["steps_score"] == {"mean": 0.25}
        assert micro["steps"] == {
            k: v for k, v in t1["steps"].items() if k != "retrieval_answer_recall"
        }
    assert macro["input_tokens"] == {"mean": 100}
    assert micro["retrieval_answer_recall"] == stats_for_series([0.5])
    assert macro["retrieval_answer_recall"] == {"mean": 0.5}


def test_empty_results_counter_only_for_sparql_json():
    steps = [
        {"id": "1", "name": "a", "status": "success", "output": '{"results": "text"}'},
        {"id": "2", "name": "b", "status": "success", "output": '"results bindings"'},
        {"id": "3", "name": "c", "status": "success", "output": "[]"},
        {"id": "4", "name": "d", "status": "success"},
        {"id": "5", "name": "e", "status": "success", "output": {"results": {"bindings": []}}},
        {"id": "6", "name": "f", "status": "success", "output": '{"results": {"bindings": null}}'},
    ]
    agg = compute_aggregates([{"template_id": "t", "question_id": "q", "actual_steps": steps}])
    assert agg["micro"]["steps"]["empty_results"] == {"f": 1}


def test_a_tool_named_mean_does_not_corrupt_macro():
    steps = [{"id": "1", "name": "mean", "status": "success", "output": "x"}]
    agg = compute_aggregates([{"template_id": "t", "question_id": "q", "actual_steps": steps}])
    assert "mean" not in agg["macro"]


def test_non_numeric_values_are_not_collected():
    agg = compute_aggregates(
        [{"template_id": "t", "question_id": "q", "steps_score": "n/a", "answer_f1": None}]
    )
    assert "steps_score" not in agg["micro"]
    assert "answer_f1" not in agg["micro"]


def test_records_without_template_are_an_input_error():
    from ragmeter.steps import InputError

    with pytest.raises(InputError, match="template_id: missing"):
        compute_aggregates([{"question_id": "q"}])


# -- to_result ------------------------------------------------------------------------------


def test_to_result_default():
    result = to_result(SAMPLES)
    assert result.task == "steps"
    assert result.summary["steps_score"] == 1 / 3
    assert result.aggregates["macro.steps_score"].value == 0.25
    assert result.aggregates["steps_score"].n == 3
    assert result.values("steps_score") == {"q1": 1.0, "q2": 0.0, "q3": 0.0}
    assert result.values("retrieval_answer_recall") == {"q1/3": 0.5}
    rows = {(r["id"], r["metric"]): r for r in result.samples.to_pylist()}
    assert rows[("q3", "steps_score")]["detail"] == "boom"
    assert rows[("q3", "steps_score")]["status"] == "ok"
    assert result.strata["template_id"]["T1"]["steps_score"].value == 0.5
    assert result.metadata["compat"] == "default"
    assert result.metadata["judged_metrics"] == ["answer_recall", "retrieval_answer_recall"]
    assert result.metadata["step_counters"]["errors"] == {"sparql_query": 1}


def test_to_result_v5_response_errors():
    result = to_result(SAMPLES, compat=V5)
    statuses = result.statuses("steps_score")
    assert statuses == {"q1": "ok", "q2": "ok", "q3": "response_error"}
    assert result.summary["steps_score"] == 0.5
    assert result.aggregates["steps_score"].status_counts == {"ok": 2, "response_error": 1}


def test_to_result_judge_failures():
    records = [
        {
            "template_id": "t",
            "question_id": "q1",
            "answer_correctness_error": "timeout: HTTP 429 after 6 attempts",
            "answer_relevance": 0.8,
        },
        {
            "template_id": "t",
            "question_id": "q2",
            "answer_correctness_error": "The question of the reference or the actual answer "
            "is a blank string!",
            "answer_relevance_error": "Expected a number",
        },
    ]
    result = to_result(records)
    assert result.statuses("answer_f1") == {"q1": "timeout", "q2": "no_claims"}
    assert result.statuses("answer_relevance") == {"q1": "ok", "q2": "parse_error"}
    assert result.summary["answer_relevance"] == 0.8


def test_registry_names_resolve():
    from ragmeter import registry

    assert registry.resolve("steps.steps_score").canonical == "steps_score"
    hit = registry.resolve("steps.macro.steps_score")
    assert hit.canonical == "macro.steps_score"
    assert "llm" in registry.resolve("steps.answer_f1").definition.needs
    with pytest.raises(registry.UnknownMetricError, match="did you mean 'steps_score'"):
        registry.resolve("steps.step_score")
