"""``ragmeter gate`` on bad rules: exit 2 with one line (bad input), never 1 (a failed gate)."""

from __future__ import annotations

import json

import pytest

from ragmeter.errors import RagmeterError
from ragmeter.store import open_store
from tests.helpers import invoke
from tests.runner.test_store import make_run


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("gate") / "store.db"
    with open_store(path) as handle:
        handle.write([make_run("e1-a"), make_run("e1-b", system="dense")])
    return str(path)


@pytest.mark.parametrize("threshold", ["nan", "NaN", "inf", "-inf", "1e309", "-1e309"])
@pytest.mark.parametrize("op", [">=", "<="])
def test_a_threshold_that_is_not_finite_is_bad_input(store, threshold, op):
    rule = f"answers.em{op}{threshold}"
    res = invoke("gate", "e1-a", "--rule", rule, "--store", store)
    assert (res.code, res.stdout) == (2, "")
    assert res.stderr == (
        f"ragmeter gate: threshold {threshold!r} of rule {rule!r} is not a finite number "
        "(expected e.g. 0.6)\n"
    )


def test_a_metric_the_run_never_computed_is_bad_input(store):
    res = invoke("gate", "e1-a", "--rule", "answers.rouge-l>=0.1", "--store", store)
    assert (res.code, res.stdout) == (2, "")
    assert res.stderr == (
        "ragmeter gate: run e1-a did not compute answers.rouge-l (its answers task has "
        "answers.em, answers.f1)\n"
    )
    # a rule on a task the run skipped is SKIP, as the run's own gates say (not an error)
    skipped = invoke("gate", "e1-a", "--rule", "judge.faithfulness>=0.1", "--store", store)
    assert skipped.code == 0, skipped.stderr
    strict = invoke(
        "gate", "e1-a", "--rule", "judge.faithfulness>=0.1", "--strict-gates", "--store", store
    )
    assert strict.code == 1


def test_a_no_regression_rule_without_a_baseline_is_bad_input(store):
    res = invoke("gate", "e1-a", "--rule", "no_regression:answers.em", "--store", store)
    assert (res.code, res.stdout) == (2, "")
    assert res.stderr == (
        "ragmeter gate: gates.rules[0].no_regression: has no baseline "
        "(expected no_regression.baseline or compare.baseline)\n"
    )


def test_good_rules_still_pass_and_fail(store):
    ok = invoke("gate", "e1-a", "--rule", "answers.em>=0.1", "--json", "--store", store)
    assert ok.code == 0, ok.stderr
    assert json.loads(ok.stdout)["rules"][0]["value"] == pytest.approx(1 / 6)
    assert invoke("gate", "e1-a", "--rule", "answers.em>=0.2", "--store", store).code == 1


def test_gate_writes_its_outcomes_with_o_whatever_the_verdict(store, tmp_path):
    for threshold, code in (("0.1", 0), ("0.2", 1)):
        out = tmp_path / f"gate-{threshold}.json"
        rule = f"answers.em>={threshold}"
        res = invoke("gate", "e1-a", "--rule", rule, "--store", store, "-o", str(out))
        assert res.code == code, res.stderr
        printed = invoke("gate", "e1-a", "--rule", rule, "--store", store, "--json")
        assert json.loads(out.read_text()) == json.loads(printed.stdout)
        assert json.loads(out.read_text())["rules"][0]["value"] == pytest.approx(1 / 6)
    # bad input writes nothing
    bad = tmp_path / "bad.json"
    res = invoke("gate", "e1-a", "--rule", "answers.em>=nan", "--store", store, "-o", str(bad))
    assert res.code == 2 and not bad.exists()


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf", "1.0e+309"])
def test_a_config_threshold_that_is_not_finite(tmp_path, value):
    from ragmeter.runner.config import load_config

    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"id": "s1", "qa_pairs": [{"qid": "q1", "question": "?", "answer": "a"}]}\n')
    (tmp_path / "a.jsonl").write_text('{"id": "q1", "answer": "a"}\n')
    config = tmp_path / "ragmeter.yaml"
    config.write_text(
        "project: p\n"
        "dataset: {path: gold.jsonl}\n"
        "systems: [{name: a, outputs: {answers: a.jsonl}}]\n"
        "tasks: {answers: {metrics: [em]}}\n"
        "gates:\n"
        "  rules:\n"
        f"    - {{metric: answers.em, min: {value}}}\n"
    )
    with pytest.raises(RagmeterError) as exc:
        load_config(config)
    message = str(exc.value)
    assert message.startswith(f"{config}:7: ") and "\n" not in message
    assert "finite" in message
