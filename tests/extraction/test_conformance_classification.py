"""Conformance: TV-CLS-01 … 10 (type_classification.json)."""

from __future__ import annotations

import pytest

from ragmeter.extraction.classification import evaluate_types, evaluate_types_multilabel
from ragmeter.extraction.distribution import type_distribution
from ragmeter.extraction.errors import InvalidLabelError
from ragmeter.extraction.profiles import HERITAGE_TYPE_CODES
from tests.extraction.vectors import assert_prf, close, vectors

V = vectors("type_classification.json")


def ids(labels):
    return {f"i{n:02d}": lab for n, lab in enumerate(labels)}


def test_tv_cls_01_multiclass():
    v = V["TV-CLS-01"]
    exp = v["expected"]
    r = evaluate_types(ids(v["input"]["y_true"]), ids(v["input"]["y_pred"]))
    assert r.accuracy == exp["accuracy"]
    assert close(r.balanced_accuracy, exp["balanced_accuracy"])
    for avg in ("micro", "macro", "weighted"):
        assert_prf(getattr(r, avg), exp[avg], where=avg)
    assert r.labels_used == exp["labels"]
    for k, label in enumerate(exp["labels"]):
        for key in ("precision", "recall", "f1", "support"):
            assert close(r.per_class[label][key], exp["per_class"][key][k]), (label, key)
    assert r.confusion_labels == exp["labels"]
    assert r.confusion_matrix == exp["confusion_matrix_rows_gold"]


@pytest.mark.parametrize("zd", [0, 1, "nan"])
def test_tv_cls_02_label_set_policy(zd):
    v = V["TV-CLS-02"]
    inp, exp = v["input"], v["expected"]
    fixed = evaluate_types(
        ids(inp["y_true"]), ids(inp["y_pred"]), labels=inp["fixed_labels"], zero_division=zd
    )
    present = evaluate_types(ids(inp["y_true"]), ids(inp["y_pred"]), zero_division=zd)
    assert close(fixed.macro["f1"], exp[f"macro_f1_zero_division_{zd}"])
    assert close(present.macro["f1"], exp[f"macro_f1_present_only_zero_division_{zd}"])
    assert close(fixed.weighted["f1"], exp[f"weighted_f1_zero_division_{zd}"])
    assert close(fixed.micro["f1"], exp[f"micro_f1_zero_division_{zd}"])
    assert fixed.labels_used == inp["fixed_labels"]
    assert fixed.settings["labels"] == "fixed" and present.settings["labels"] == "present"


def test_tv_cls_03_micro_equals_accuracy():
    v = V["TV-CLS-01"]
    r = evaluate_types(ids(v["input"]["y_true"]), ids(v["input"]["y_pred"]))
    exp = V["TV-CLS-03"]["expected"]
    assert r.micro["f1"] == exp["micro_f1"] == r.accuracy == exp["accuracy"]


def test_tv_cls_04_micro_over_a_subset():
    v = V["TV-CLS-04"]
    r = evaluate_types(
        ids(v["input"]["y_true"]), ids(v["input"]["y_pred"]), labels=v["input"]["labels"]
    )
    assert r.micro["f1"] == v["expected"]["micro_f1"]
    assert r.accuracy == v["expected"]["accuracy"]


def test_tv_cls_05_multilabel():
    v = V["TV-CLS-05"]
    exp = v["expected"]
    g = {n: set(x) for n, x in enumerate(v["input"]["y_true"])}
    p = {n: set(x) for n, x in enumerate(v["input"]["y_pred"])}
    r = evaluate_types_multilabel(g, p)
    assert r.labels_used == exp["classes"]
    for avg in ("micro", "macro", "weighted", "samples"):
        assert_prf(getattr(r, avg), exp[avg], where=avg)
    assert r.subset_accuracy == exp["subset_accuracy"]


def test_tv_cls_06_heritage_macro_and_lower_case_labels():
    v = V["TV-CLS-06"]
    inp, exp = v["input"], v["expected"]
    g, p = ids(inp["y_true"]), ids(inp["y_pred"])
    assert close(
        evaluate_types(g, p, profile="heritage").macro["f1"], exp["macro_f1_present_labels"]
    )
    fixed_nan = evaluate_types(
        g, p, profile="heritage", labels=list(HERITAGE_TYPE_CODES), zero_division="nan"
    )
    assert close(fixed_nan.macro["f1"], exp["macro_f1_fixed_19_zero_division_nan"])
    fixed0 = evaluate_types(g, p, profile="heritage", labels=list(HERITAGE_TYPE_CODES))
    assert close(fixed0.macro["f1"], exp["macro_f1_fixed_19_zero_division_0"])
    assert close(fixed0.macro["f1"], v["library_observed"]["heritage_macro_f1"])  # same convention
    lower = {k: x.lower() for k, x in g.items()}
    with pytest.raises(InvalidLabelError) as exc:
        evaluate_types(lower, lower, profile="heritage")
    assert "gold label 'm'" in str(exc.value) and "never case-folded" in str(exc.value)
    assert exc.value.labels == ["a", "l", "m"]


def test_tv_cls_07_invalid_predictions_never_match_a_category():
    v = V["TV-CLS-07"]
    exp = v["expected"]
    r = evaluate_types(ids(v["input"]["y_true"]), ids(v["input"]["y_pred"]), profile="heritage")
    assert r.hierarchy["exact_accuracy"] == exp["exact_accuracy"]
    assert r.hierarchy["category_accuracy"] == exp["category_accuracy"]
    assert r.invalid_labels["pred"] == exp["invalid_labels"]["pred"]
    heritage = v["library_observed"]["heritage"]
    assert r.hierarchy["category_accuracy"] != heritage["category_accuracy"]
    assert r.hierarchy["hierarchy_gap"] != heritage["hierarchy_gap"]


def test_tv_cls_08_invalid_prediction_is_an_error_not_a_class():
    v = V["TV-CLS-08"]
    exp = v["expected"]
    r = evaluate_types(ids(v["input"]["y_true"]), ids(v["input"]["y_pred"]), profile="heritage")
    assert r.accuracy == exp["accuracy"]
    assert close(r.micro["f1"], exp["micro_f1"])
    assert close(r.macro["f1"], exp["macro_f1"])
    for label, block in exp["per_class"].items():
        assert_prf(r.per_class[label], block, where=label)
    assert r.confusion_labels == exp["confusion_matrix_labels"]
    assert r.confusion_matrix == exp["confusion_matrix_rows_gold"]
    assert r.invalid_labels == exp["invalid_labels"]
    assert "__INVALID__" not in r.labels_used


def test_tv_cls_09_hierarchy():
    v = V["TV-CLS-09"]
    exp = v["expected"]
    r = evaluate_types(ids(v["input"]["y_true"]), ids(v["input"]["y_pred"]), profile="heritage")
    h = r.hierarchy
    assert h["exact_accuracy"] == exp["exact_accuracy"]
    assert h["category_accuracy"] == exp["category_accuracy"]
    assert close(h["hierarchy_gap"], exp["hierarchy_gap"])
    hh, eh = h["hierarchical"], exp["hierarchical"]
    assert (hh["intersection"], hh["sum_pred"], hh["sum_gold"]) == (
        eh["intersection"],
        eh["sum_pred"],
        eh["sum_gold"],
    )
    for key in ("hP", "hR", "hF"):
        assert close(hh[key], eh[key]), key
    assert r.invalid_labels["pred"] == exp["invalid_labels"]["pred"]


def test_tv_cls_10_type_distribution():
    v = V["TV-CLS-10"]
    exp = v["expected"]
    d = type_distribution(v["input"]["gold_labels"], v["input"]["pred_labels"])
    assert d["per_label"] == exp["per_label"]
    assert d["total_gold"] == exp["total_gold"]
    assert d["total_predicted"] == exp["total_predicted"]
    assert close(d["total_variation_distance"], exp["total_variation_distance"])
    assert d["undefined"] == {"per_label.ORG.ratio": "no gold occurrences"}
