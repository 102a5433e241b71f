"""Bad input: one-line errors naming file, line, question and field (docs/steps.md)."""

from __future__ import annotations

import copy
import json
import warnings

import pytest

from ragmeter.steps import InputError, run_evaluation
from ragmeter.warnings import RagmeterWarning
from tests.helpers import warns

SPARQL = "application/sparql-results+json"
GOOD_SPARQL = json.dumps(
    {"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"type": "uri", "value": "u"}}]}}
)


def ref_with(step=None, **question):
    q = {"id": "q1", "question_text": "?", **question}
    if step is not None:
        q["reference_steps"] = [[step]]
    return [{"template_id": "t", "questions": [q]}]


def ok_response(**extra):
    return {"q1": {"question_id": "q1", "actual_steps": [], **extra}}


def error_of(reference, responses=None, **kwargs):
    with pytest.raises(InputError) as exc, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_evaluation(reference, responses if responses is not None else ok_response(), **kwargs)
    message = str(exc.value)
    assert "\n" not in message
    assert isinstance(exc.value, ValueError)
    return message


@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        ({"template_id": "t"}, "<reference_qas>: a mapping, not a list of templates"),
        ([{"questions": []}], "<reference_qas>: templates[0]: template_id: missing"),
        ([{"template_id": True, "questions": []}], "templates[0]: template_id: a boolean"),
        ([{"template_id": "t"}], "<reference_qas>: template t: questions: missing"),
        ([{"template_id": "t", "questions": {}}], "template t: questions: a mapping"),
        (
            [{"template_id": "t", "questions": [{"question_text": "?"}]}],
            "template t: questions[0].id: missing (expected a string or integer)",
        ),
        (
            [{"template_id": "t", "questions": [{"id": "q1"}]}],
            "question q1: question_text: missing (expected a string)",
        ),
        (
            ref_with(reference_answer=3),
            "question q1: reference_answer: a number (expected a string)",
        ),
        (ref_with(reference_steps=[]), "question q1: reference_steps: empty"),
        (ref_with(reference_steps=[[]]), "question q1: reference_steps[0]: an empty group"),
        (ref_with(reference_steps="x"), "question q1: reference_steps: a string"),
        (ref_with(reference_steps=[["x"]]), "reference_steps[0][0]: a string, not a step"),
        (ref_with({"output": "x"}), "reference_steps[0][0].name: missing (expected a tool name)"),
        (ref_with({"name": ""}), "reference_steps[0][0].name: a string (expected a non-empty"),
        (
            ref_with({"name": "iri-discovery", "output": "u"}),
            'reference_steps[0][0].name: unknown step name "iri-discovery" '
            '(expected "iri_discovery")',
        ),
        (
            ref_with({"name": "SPARQL_query", "output": "u"}),
            'unknown step name "SPARQL_query" (expected "sparql_query")',
        ),
        (ref_with({"name": "Retrieval"}), '(expected "retrieval")'),
        (
            ref_with({"name": "a", "args": []}),
            "reference_steps[0][0].args: a list (expected a mapping)",
        ),
        (
            ref_with({"name": "a", "output": "x", "ordered": "yes"}),
            "reference_steps[0][0].ordered: a string (expected true or false)",
        ),
        (
            ref_with({"name": "a", "output": "x", "required_columns": "x"}),
            "required_columns: a string (expected a list of variable names)",
        ),
        (
            ref_with({"name": "sparql_query", "output_media_type": SPARQL}),
            "reference_steps[0][0].output: missing (expected SPARQL 1.1 JSON results)",
        ),
        (
            ref_with({"name": "sparql_query", "output_media_type": SPARQL, "output": "SELECT"}),
            "output: not JSON: Expecting value at column 1 (expected SPARQL 1.1 JSON results)",
        ),
        (
            ref_with({"name": "sparql_query", "output_media_type": SPARQL, "output": "{}"}),
            'output: not a SPARQL result: no "boolean" and no "results.bindings" '
            "(expected SPARQL 1.1 JSON results)",
        ),
        (
            ref_with(
                {
                    "name": "sparql_query",
                    "output_media_type": SPARQL,
                    "output": '{"results": {"bindings": [{"x": "raw"}]}}',
                }
            ),
            "results.bindings[0].x is not an RDF term object",
        ),
        (
            ref_with(
                {
                    "name": "sparql_query",
                    "output_media_type": SPARQL,
                    "output": GOOD_SPARQL,
                    "required_columns": ["y"],
                }
            ),
            "required_columns: column 'y' is not in the reference result's head.vars "
            "(expected one of x)",
        ),
        (
            ref_with(
                {
                    "name": "sparql_query",
                    "output_media_type": SPARQL,
                    "output": '{"head": {}, "results": {"bindings": []}}',
                }
            ),
            "a SELECT result without head.vars and the step has no required_columns",
        ),
        (
            ref_with({"name": "x", "output_media_type": "application/json", "output": "{"}),
            "reference_steps[0][0].output: not JSON",
        ),
        (
            ref_with({"name": "retrieval", "output": '[{"text": "no id"}]'}),
            "reference_steps[0][0].output: not a list of documents with an id",
        ),
        (
            ref_with({"name": "retrieval", "output": '[{"id": 1}]', "args": {"k": 0}}),
            "reference_steps[0][0].args.k: 0 (expected a positive integer)",
        ),
        (ref_with({"name": "iri_discovery"}), "reference_steps[0][0].output: missing"),
        (
            ref_with({"name": "retrieve_data_points", "args": {}}),
            "reference_steps[0][0].args.external_id: missing",
        ),
    ],
)
def test_reference_errors(reference, expected):
    assert expected in error_of(reference)


def test_duplicate_question_ids():
    reference = [
        {"template_id": "t", "questions": [{"id": "q1", "question_text": "a"}]},
        {"template_id": "u", "questions": [{"id": "q1", "question_text": "b"}]},
    ]
    assert "question q1: id: duplicate question id" in error_of(reference)
    with warns(RagmeterWarning, "duplicate question id"):
        results = run_evaluation(reference, ok_response(), compat="graphrag-eval-6")
    assert [r["template_id"] for r in results] == ["t", "u"]
    assert "duplicate question id" in error_of(reference, compat="graphrag-eval-6", strict=True)


def test_name_check_can_be_disabled():
    reference = ref_with({"name": "iri-discovery", "output": "u"})
    responses = ok_response(
        actual_steps=[{"id": "1", "name": "iri-discovery", "status": "success", "output": "u"}]
    )
    results = run_evaluation(reference, responses, check_names=False)
    assert results[0]["steps_score"] == 1.0  # an ordinary tool, compared by output


@pytest.mark.parametrize(
    ("responses", "expected"),
    [
        ({"q1": {"actual_steps": []}}, "<chat_responses>: response q1: question_id: missing"),
        ({"q1": {"question_id": 1.5}}, "question_id: a number (expected a string or integer)"),
        ({"q1": {"question_id": "q2"}}, "question q2: question_id: 'q2' differs from its key 'q1'"),
        ({"q1": "x"}, "response q1: a string, not a response record"),
        ({"q1": {"question_id": "q1", "actual_steps": {}}}, "question q1: actual_steps: a mapping"),
        (
            {"q1": {"question_id": "q1", "actual_steps": ["x"]}},
            "question q1: actual_steps[0]: a string (expected a mapping)",
        ),
        (
            {"q1": {"question_id": "q1", "actual_steps": [{"name": "a", "status": "success"}]}},
            "actual_steps[0].id: missing",
        ),
        (
            {"q1": {"question_id": "q1", "actual_steps": [{"id": "1", "status": "success"}]}},
            "actual_steps[0].name: missing",
        ),
        (
            {"q1": {"question_id": "q1", "actual_steps": [{"id": "1", "name": "a"}]}},
            'question q1: actual_steps[0].status: missing (expected a string such as "success" '
            'or "error")',
        ),
        (
            {"q1": {"question_id": "q1", "actual_steps": [{"id": "1", "name": "a", "status": 1}]}},
            "actual_steps[0].status: a number",
        ),
        (
            {
                "q1": {
                    "question_id": "q1",
                    "actual_steps": [{"id": "1", "name": "a", "status": "success", "args": 3}],
                }
            },
            "actual_steps[0].args: a number (expected a mapping)",
        ),
        ({"q1": {"question_id": "q1", "input_tokens": True}}, "input_tokens: a boolean (expected"),
        ({"q1": {"question_id": "q1", "elapsed_sec": "3"}}, "elapsed_sec: a string (expected a"),
        ({"q1": {"question_id": "q1", "actual_answer": 3}}, "actual_answer: a number"),
        ({}, "<chat_responses>: question q1: no response"),
    ],
)
def test_response_errors(responses, expected):
    assert expected in error_of(ref_with(), responses)


def test_duplicate_responses_in_a_list():
    responses = [{"question_id": "q1"}, {"question_id": "q1"}]
    assert "question q1: question_id: duplicate response" in error_of(ref_with(), responses)


def test_ids_compare_as_strings():
    reference = [{"template_id": 1, "questions": [{"id": 123, "question_text": "?"}]}]
    results = run_evaluation(reference, {"123": {"question_id": "123"}})
    assert results[0]["question_id"] == "123"
    assert results[0]["template_id"] == 1


def test_warnings():
    reference = ref_with({"name": "calc"})
    responses = {
        "q1": {
            "question_id": "q1",
            "status": "error",
            "actual_steps": [
                {"id": "1", "name": "x", "status": "success"},
                {"id": "1", "name": "x", "status": "success"},
            ],
        },
        "zz": {"question_id": "zz"},
    }
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        run_evaluation(reference, responses)
    messages = [str(w.message) for w in seen]
    assert any('step "calc" has no output, so it can never match' in m for m in messages)
    assert any('status: "error" but the record has no "error" key' in m for m in messages)
    assert any("duplicate step id '1'" in m for m in messages)
    assert any("1 response(s) have a question id that is in no template" in m for m in messages)
    assert any('no actual step of <chat_responses> is named "calc"' in m for m in messages)
    with pytest.raises(InputError, match="can never match"):
        run_evaluation(reference, responses, strict=True)


def test_actual_outputs_are_never_input_errors():
    reference = ref_with(
        {"name": "sparql_query", "output_media_type": SPARQL, "output": GOOD_SPARQL}
    )
    for output in ("@prefix ex: <x> .", '"a json string"', "[1, 2]", '{"head": 5}', None, 7):
        step = {"id": "1", "name": "sparql_query", "status": "success"}
        if output is not None:
            step["output"] = output
        results = run_evaluation(reference, ok_response(actual_steps=[step]))
        assert results[0]["steps_score"] == 0.0


def test_nothing_is_evaluated_before_everything_is_valid():
    calls = []

    class Judge:
        supports_relevance = True

        async def answer_relevance(self, q, a):
            calls.append("relevance")
            return {"value": 1.0}

    reference = [
        {
            "template_id": "t",
            "questions": [
                {"id": "q1", "question_text": "?"},
                {"id": "q2", "question_text": "?", "reference_steps": [[{"name": "Retrieval"}]]},
            ],
        }
    ]
    responses = {"q1": {"question_id": "q1", "actual_answer": "a"}, "q2": {"question_id": "q2"}}
    with pytest.raises(InputError):
        run_evaluation(reference, responses, judge=Judge())
    assert calls == []


def test_unknown_compat_and_on_missing():
    from ragmeter.errors import UsageError

    with pytest.raises(UsageError, match="unknown compat mode"):
        run_evaluation(ref_with(), ok_response(), compat="graphrag-eval-4")
    with pytest.raises(UsageError, match="on_missing"):
        run_evaluation(ref_with(), ok_response(), on_missing="skip")


def test_reference_is_not_mutated_on_error():
    reference = ref_with({"name": "Retrieval"})
    before = copy.deepcopy(reference)
    error_of(reference)
    assert reference == before
