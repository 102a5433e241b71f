"""Conformance with graphrag-eval's own end-to-end fixtures (docs/steps.md)."""

from __future__ import annotations

import copy
import json
import warnings

import pytest

from ragmeter.steps import (
    InputError,
    compute_aggregates,
    match_groups,
    run_evaluation,
    steps_score,
)
from ragmeter.steps.compat import graphrag_eval5, graphrag_eval6
from tests.steps.common import (
    DOCS,
    MAIN,
    V5,
    assert_same,
    drop_step_timestamps,
    load_yaml,
    read_responses,
    strip_keys,
)

MODES = [None, "graphrag-eval-6", "graphrag-eval-5"]


def evaluate(reference, responses, compat):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_evaluation(reference, responses, compat=compat)


# -- F1, F2 -------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize("compat", [None, "graphrag-eval-6"])
def test_f1_f2_v6_expectations(n, compat):
    reference = load_yaml(MAIN / "reference_1.yaml")
    responses = read_responses(MAIN / f"actual_responses_{n}.jsonl")
    results = evaluate(reference, responses, compat)
    expected = load_yaml(MAIN / f"evaluation_{n}.yaml")
    assert_same(results if compat else strip_keys(results), expected)
    assert_same(
        compute_aggregates(results, compat=compat),
        load_yaml(MAIN / f"evaluation_summary_{n}.yaml"),
    )


def test_f1_aggregates_exact_values():
    reference = load_yaml(MAIN / "reference_1.yaml")
    results = evaluate(reference, read_responses(MAIN / "actual_responses_1.jsonl"), None)
    agg = compute_aggregates(results)
    assert agg["micro"]["steps_score"]["sum"] == 17
    assert agg["micro"]["steps_score"]["mean"] == 0.425
    assert agg["macro"]["steps_score"]["mean"] == 0.42500000000000004
    assert agg["micro"]["number_of_error_samples"] == 1


@pytest.mark.parametrize("n", [1, 2])
def test_f1_f2_v5_expectations(n):
    reference = load_yaml(MAIN / "reference_1.yaml")
    responses = read_responses(MAIN / f"actual_responses_{n}.jsonl")
    results = evaluate(reference, responses, "graphrag-eval-5")
    assert_same(drop_step_timestamps(results), load_yaml(V5 / f"evaluation_{n}.yaml"))
    assert_same(
        compute_aggregates(results, compat="graphrag-eval-5"),
        load_yaml(V5 / f"evaluation_summary_{n}.yaml"),
    )


def test_f1_v5_exact_values():
    results = evaluate(
        load_yaml(MAIN / "reference_1.yaml"),
        read_responses(MAIN / "actual_responses_1.jsonl"),
        "graphrag-eval-5",
    )
    agg = compute_aggregates(results, compat="graphrag-eval-5")
    assert agg["micro"]["steps_score"]["mean"] == 17 / 39 == 0.4358974358974359
    assert agg["macro"]["steps_score"]["mean"] == 0.45
    assert "steps" not in agg["micro"]


# -- V1, V2 (tag 5.1.2 inputs) and their v6 expectations ---------------------------------------


@pytest.mark.filterwarnings("ignore::ragmeter.warnings.RagmeterWarning")  # all-error run
@pytest.mark.parametrize("n", [1, 2])
def test_v1_v2(n):
    reference = load_yaml(V5 / "reference_1.yaml")
    responses = read_responses(V5 / f"actual_responses_{n}.jsonl")
    results = graphrag_eval5.run_evaluation(reference, responses)
    assert_same(results, load_yaml(V5 / f"evaluation_{n}.yaml"))
    assert_same(
        graphrag_eval5.compute_aggregates(results), load_yaml(V5 / f"evaluation_summary_{n}.yaml")
    )


@pytest.mark.parametrize("compat", [None, "graphrag-eval-6"])
def test_v5_inputs_give_v6_expectations(compat):
    results = evaluate(
        load_yaml(V5 / "reference_1.yaml"),
        read_responses(V5 / "actual_responses_1.jsonl"),
        compat,
    )
    expected = drop_step_timestamps(load_yaml(MAIN / "evaluation_1.yaml"))
    assert_same(strip_keys(results), expected)
    assert_same(
        compute_aggregates(results, compat=compat), load_yaml(MAIN / "evaluation_summary_1.yaml")
    )


# -- F3: Turtle output of a SPARQL step ---------------------------------------------------------


@pytest.mark.parametrize("compat", MODES)
def test_f3_turtle_output_scores_zero(compat):
    results = evaluate(
        load_yaml(MAIN / "reference_5.yaml"),
        read_responses(MAIN / "actual_responses_4.jsonl"),
        compat,
    )
    assert len(results) == 1
    assert results[0]["steps_score"] == 0.0
    assert isinstance(results[0]["steps_score"], float)


# -- F4: a step output that is a JSON string mentioning "results" --------------------------------


@pytest.mark.parametrize("compat", MODES)
def test_f4_json_string_output_in_aggregation(compat):
    records = load_yaml(MAIN / "evaluation_3.yaml")
    agg = compute_aggregates(records, compat=compat)
    micro = agg["micro"]
    assert micro["number_of_error_samples"] == 0
    assert micro["number_of_success_samples"] == 1
    assert micro["steps_score"] == {"sum": 0.0, "mean": 0.0, "median": 0.0, "min": 0.0, "max": 0.0}
    if compat == "graphrag-eval-5":
        assert "steps" not in micro
        assert agg["per_template"][records[0]["template_id"]]["steps"] == {
            "total": {"fts_search": 1},
            "once_per_sample": {"fts_search": 1},
        }
    else:
        assert micro["steps"] == {"total": {"fts_search": 1}, "once_per_sample": {"fts_search": 1}}


# -- F5: groups, IRI discovery, time series, data points ----------------------------------------


@pytest.mark.parametrize(
    ("reference", "expected", "score"),
    [
        ("reference_2.yaml", "evaluation_4.yaml", 0.625),
        ("reference_3.yaml", "evaluation_5.yaml", 1.0),
        ("reference_4.yaml", "evaluation_6.yaml", 0.75),
    ],
)
@pytest.mark.parametrize("compat", [None, "graphrag-eval-6"])
def test_f5_time_series(reference, expected, score, compat):
    results = evaluate(
        load_yaml(MAIN / reference), read_responses(MAIN / "actual_responses_3.jsonl"), compat
    )
    assert results[0]["steps_score"] == score
    assert_same(strip_keys(results), load_yaml(MAIN / expected))


@pytest.mark.parametrize("reference", ["reference_2.yaml", "reference_3.yaml", "reference_4.yaml"])
def test_f5_v5_scores_last_group_only(reference):
    results = evaluate(
        load_yaml(MAIN / reference),
        read_responses(MAIN / "actual_responses_3.jsonl"),
        "graphrag-eval-5",
    )
    assert results[0]["steps_score"] == 0.0


def test_f5_reference_datetimes_survive():
    reference = load_yaml(MAIN / "reference_2.yaml")
    results = evaluate(reference, read_responses(MAIN / "actual_responses_3.jsonl"), None)
    args = results[0]["reference_steps"][3][0]["args"]
    assert args["start"] == reference[0]["questions"][0]["reference_steps"][3][0]["args"]["start"]
    assert results[0]["reference_steps"][3][0]["matches"] == results[0]["actual_steps"][4]["id"]
    # the single SPARQL query is matched to the second reference query (upstream's choice)
    group = results[0]["reference_steps"][1]
    assert "matches" not in group[0]
    assert group[1]["matches"] == results[0]["actual_steps"][2]["id"]


# -- P5–P7 (and V4): step matching fixtures -----------------------------------------------------


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (1, {None: 0.0, "graphrag-eval-6": 0.0, "graphrag-eval-5": 0.0}),
        (2, {None: 0.0, "graphrag-eval-6": 0.0, "graphrag-eval-5": 0.0}),
        (3, {None: 0.0, "graphrag-eval-6": 0.0, "graphrag-eval-5": 0.0}),
        (4, {None: 0.5, "graphrag-eval-6": 0.5, "graphrag-eval-5": 1.0}),
    ],
)
@pytest.mark.parametrize("compat", MODES)
def test_p5_p7_v4_matching(n, expected, compat):
    folder = V5 if compat == "graphrag-eval-5" else MAIN
    groups = load_yaml(folder / f"expected_steps_{n}.yaml")
    actual = load_yaml(folder / f"actual_steps_{n}.yaml")
    before = copy.deepcopy(groups)
    matches = match_groups(groups, actual, compat=compat)
    assert steps_score(groups, matches, compat=compat) == expected[compat]
    assert groups == before  # inputs are never mutated
    last = len(groups) - 1
    ids = {actual[j]["id"] for g, _r, j, _s in matches if g == last}
    if n == 4:
        assert ids == {"call_3qJK186HZj1twnr6x976slHN"}
    else:
        assert ids == set()


# -- docs examples ----------------------------------------------------------------------


def test_docs_target_missing_responses_is_an_input_error(tmp_path):
    reference = load_yaml(DOCS / "reference.yaml")
    responses = json.loads((DOCS / "target.json").read_text(encoding="utf-8"))
    with pytest.raises(InputError) as exc:
        run_evaluation(reference, responses)
    assert str(exc.value) == (
        "<chat_responses>: question 8bbea9a10876a04ad77a82fd2aedee40: no response (expected one "
        "record per reference question; --on-missing error-sample scores it as an error)"
    )


@pytest.mark.parametrize("compat", MODES)
def test_docs_error_samples(compat):
    reference = load_yaml(DOCS / "reference.yaml")
    responses = json.loads((DOCS / "target.json").read_text(encoding="utf-8"))
    results = evaluate_missing(reference, responses, compat)
    assert len(results) == 4
    assert sum(1 for r in results if r["status"] == "error") == 3
    assert all(r["error"] == "no response" for r in results if r["status"] == "error")


def evaluate_missing(reference, responses, compat):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_evaluation(reference, responses, compat=compat, on_missing="error-sample")


@pytest.mark.parametrize("compat", MODES)
def test_docs_first_question_scores_half(compat):
    reference = load_yaml(DOCS / "reference.yaml")
    responses = json.loads((DOCS / "target.json").read_text(encoding="utf-8"))
    first = reference[0]["questions"][0]
    only = [{"template_id": reference[0]["template_id"], "questions": [first]}]
    results = evaluate(only, responses, compat)
    assert results[0]["steps_score"] == 0.5
    steps = results[0]["reference_steps"][0]
    assert [s.get("matches") for s in steps if s["name"] == "retrieval"] == ["call_3"]


def test_docs_illustrative_outputs_load():
    assert isinstance(load_yaml(DOCS / "output.yaml"), list)
    assert set(load_yaml(DOCS / "aggregates.yaml")) == {"per_template", "micro", "macro"}


# -- the drop-in shims ---------------------------------------------------------------------------


def test_v6_shim_is_async_and_matches_fixture():
    import asyncio

    reference = load_yaml(MAIN / "reference_1.yaml")
    responses = read_responses(MAIN / "actual_responses_1.jsonl")
    coro = graphrag_eval6.run_evaluation(reference, responses)
    assert asyncio.iscoroutine(coro)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = asyncio.run(coro)
    assert_same(results, load_yaml(MAIN / "evaluation_1.yaml"))
    assert_same(
        graphrag_eval6.compute_aggregates(results), load_yaml(MAIN / "evaluation_summary_1.yaml")
    )


def test_inputs_are_not_mutated():
    reference = load_yaml(MAIN / "reference_2.yaml")
    responses = read_responses(MAIN / "actual_responses_3.jsonl")
    ref_before, resp_before = copy.deepcopy(reference), copy.deepcopy(responses)
    results = evaluate(reference, responses, None)
    assert reference == ref_before and responses == resp_before
    # stale "matches" in the input is dropped from the copy
    stale = copy.deepcopy(reference)
    stale[0]["questions"][0]["reference_steps"][0][0]["matches"] = "stale"
    again = evaluate(stale, responses, None)
    assert again == results


def test_run_evaluation_inside_a_running_loop_and_async_form():
    import asyncio

    from ragmeter.steps import arun_evaluation

    reference = load_yaml(MAIN / "reference_2.yaml")
    responses = read_responses(MAIN / "actual_responses_3.jsonl")

    async def notebook_cell():
        inner = run_evaluation(reference, responses)  # runs its own loop in a worker thread
        outer = await arun_evaluation(reference, responses)
        return inner, outer

    inner, outer = asyncio.run(notebook_cell())
    assert inner == outer
    assert inner[0]["steps_score"] == 0.625


def test_metrics_registry_lists_steps():
    from tests.helpers import invoke

    res = invoke("metrics", "steps", "--json")
    assert res.code == 0, res.stderr
    names = {m["name"] for m in json.loads(res.stdout)}
    assert {"steps_score", "answer_f1", "retrieval_ids_recall_at_k"} <= names
    llm = {m["name"] for m in json.loads(res.stdout) if "llm" in m["needs"]}
    assert "answer_f1" in llm and "steps_score" not in llm
