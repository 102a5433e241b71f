"""Every result type: `summary` as a property, `to_csv()`, and `to_pandas()` without pandas."""

from __future__ import annotations

import csv
import io
import sys
import warnings

import pytest

from ragmeter.errors import MissingDependencyError
from ragmeter.extraction import agreement, evaluate_ner, evaluate_types, span_agreement
from ragmeter.result import Result


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def judge_like() -> Result:
    return Result.from_columns(
        "judge",
        ["b", "a"],
        {"faithfulness": [0.5, None]},
        statuses={"faithfulness": ["ok", "parse_error"]},
        details={"faithfulness": [None, "unterminated JSON"]},
    )


def test_result_to_csv_is_the_long_table():
    rows = _rows(judge_like().to_csv())
    assert rows == [
        {"id": "a", "metric": "faithfulness", "value": "", "status": "parse_error",
         "detail": "unterminated JSON"},
        {"id": "b", "metric": "faithfulness", "value": "0.5", "status": "ok", "detail": ""},
    ]  # fmt: skip


def test_to_pandas_without_pandas_is_one_line(monkeypatch):
    from ragmeter import retrieval

    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` now raises ImportError
    res = retrieval.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 0.5, "d2": 0.1}}, ["RR"])
    for call in (judge_like().to_pandas, res.to_pandas, lambda: res.to_pandas(long=True)):
        with pytest.raises(MissingDependencyError) as exc:
            call()
        assert str(exc.value) == "to_pandas() needs pandas (pip install 'ragmeter[pandas]')"
        assert isinstance(exc.value, ImportError)


def test_comparison_report_csv_summary_and_dataframe_hint(monkeypatch):
    from ragmeter.stats.compare import compare

    report = compare(
        {
            "a": {"m": {"q1": 0.1, "q2": 0.4, "q3": 0.2}},
            "b": {"m": {"q1": 0.3, "q2": 0.5, "q3": 0.6}},
        }
    )
    assert report.summary == {
        "a": {"m": pytest.approx(0.7 / 3)},
        "b": {"m": pytest.approx(1.4 / 3)},
    }
    rows = _rows(report.to_csv())
    assert [(r["metric"], r["system_a"], r["system_b"]) for r in rows] == [("m", "a", "b")]
    assert float(rows[0]["mean_diff"]) == pytest.approx(-0.7 / 3)
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(MissingDependencyError, match=r"to_dataframe\(\) needs pandas"):
        report.to_dataframe()


def test_report_objects_read_like_results():
    gold = {"d": [(0, 5, "PER"), (10, 15, "LOC")]}
    ner = evaluate_ner(gold, {"d": [(0, 5, "PER")]})
    assert ner.summary["overall.strict.f1"] == pytest.approx(2 / 3)
    assert "overall.strict.f1" in {r["metric"] for r in _rows(ner.to_csv())}

    types = evaluate_types({"x": "A", "y": "B"}, {"x": "A", "y": "A"})
    assert types.summary["accuracy"] == 0.5
    per_item = {(r["id"], r["metric"]): r["value"] for r in _rows(types.to_csv())}
    assert per_item[("x", "accuracy")] == "1.0" and per_item[("y", "accuracy")] == "0.0"

    kappa = agreement([["a", "a"], ["b", "b"], ["a", "b"]])
    assert kappa.summary == kappa.to_result().summary
    assert kappa.to_csv() == kappa.to_result().to_csv()
    spans = span_agreement({"a": {"d": [(0, 3, "X")]}, "b": {"d": [(0, 3, "X")]}})
    assert spans.summary["span_f1.strict"] == 1.0


def test_grounded_report_reads_like_a_result():
    from ragmeter.answers import grounded

    gold = [{"qid": "q1", "answerable": True, "gold_claim_substr": ["the answer is"],
             "gold_citations": ["d1"]}]  # fmt: skip
    trace = [{"qid": "q1", "retrieved_ids": ["d1"],
              "answer_json": {"claim": "The answer is 42.", "citations": ["d1"]}}]  # fmt: skip
    rep = grounded.score(gold, trace, k=1)
    assert rep.summary == rep.to_result().summary
    assert rep.summary["precision"] == 1.0
    assert rep.to_csv().splitlines()[0] == "id,metric,value,status,detail"


def test_evaluation_summary_is_a_property_and_the_old_call_warns(tmp_path, monkeypatch):
    from ragmeter.runner.config import load_config
    from ragmeter.runner.pipeline import run_pipeline
    from tests.runner import toy

    toy.install()
    try:
        monkeypatch.chdir(tmp_path)
        toy.write_project(tmp_path)
        res = run_pipeline(load_config(tmp_path / "ragmeter.yaml"), cache_dir=None)
        _check_evaluation(res)
    finally:
        toy.uninstall()


def _check_evaluation(res) -> None:  # type: ignore[no-untyped-def]
    assert isinstance(res.summary, dict) and res.summary["project"] == "toy-project"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = res.summary()
    assert old == res.summary
    assert [w.category for w in caught] == [DeprecationWarning]
    rows = _rows(res.to_csv())
    assert len(rows) == 2 * 12 * 2  # two systems, twelve units, two per-sample toy metrics
    assert {r["system"] for r in rows} == {"base", "good"}
    assert {r["metric"] for r in rows} == {"match", "length"}  # pooled is corpus-level
