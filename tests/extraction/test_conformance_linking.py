"""Conformance: TV-EL-01 … 05 (entity_linking.json)."""

from __future__ import annotations

import pytest

from ragmeter.extraction.crosskb import check_consistency, load_mapping
from ragmeter.extraction.errors import DuplicateMentionError
from ragmeter.extraction.linking import evaluate_linking, evaluate_linking_e2e
from ragmeter.extraction.ner import evaluate_ner
from tests.extraction.vectors import assert_prf, close, vectors

V = vectors("entity_linking.json")
EL1 = V["TV-EL-01"]
GOLD = {d["id"]: d["gold"] for d in EL1["input"]["docs"]}
PRED = {d["id"]: d["pred"] for d in EL1["input"]["docs"]}
CASES = {
    "strong": ("strong", "all"),
    "weak": ("weak", "all"),
    "strong_inkb": ("strong", "inkb"),
    "weak_inkb": ("weak", "inkb"),
}


@pytest.mark.parametrize("matching", ["optimal", "gerbil"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_tv_el_01_end_to_end(case, matching):
    exp = EL1["expected"][case]
    match, subset = CASES[case]
    r = evaluate_linking_e2e(GOLD, PRED, match=match, subset=subset, matching=matching)
    assert r.counts.tolist() == exp["per_doc_tp_fp_fn"]
    assert list(r.counts.sum(axis=0)) == exp["counts_tp_fp_fn"]
    assert_prf(r.micro, exp["micro"], where="micro")
    assert_prf(r.macro, exp["macro"], where="macro")


def test_tv_el_01_skip_empty_documents_and_nil_on_aligned_spans():
    exp = EL1["expected"]
    r = evaluate_linking_e2e(GOLD, PRED, empty_documents="skip")
    assert_prf(r.macro, exp["strong_empty_documents=skip"])
    nil = r.nil_on_aligned
    want = exp["nil_detection_on_exactly_matched_spans"]
    assert (nil["n_aligned_mentions"], nil["tp"], nil["fp"], nil["fn"]) == (
        want["n_aligned_mentions"],
        want["tp"],
        want["fp"],
        want["fn"],
    )


def test_tv_el_01_micro_equals_ner_schemas_with_kb_as_label():
    """Strong micro = NER strict and weak micro = NER type with the KB id as the label."""
    gold = {d: [(a["start"], a["end"], a["kb"]) for a in anns] for d, anns in GOLD.items()}
    pred = {d: [(a["start"], a["end"], a["kb"]) for a in anns] for d, anns in PRED.items()}
    ner = evaluate_ner(gold, pred)
    strong = evaluate_linking_e2e(GOLD, PRED)
    weak = evaluate_linking_e2e(GOLD, PRED, match="weak")
    assert close(ner.overall["strict"]["f1"], strong.micro["f1"])
    assert close(ner.overall["type"]["f1"], weak.micro["f1"])


def test_tv_el_02_hits_and_mrr_keyed_by_mention_id():
    v = V["TV-EL-02"]
    exp = v["expected"]
    r = evaluate_linking(v["input"]["gold"], v["input"]["candidates"], k=(1, 5))
    assert close(r.ranking["hits@1"], exp["hits@1"])
    assert close(r.ranking["hits@5"], exp["hits@5"])
    assert close(r.ranking["mrr"], exp["mrr"])
    assert r.ranking["n_inkb_mentions"] == exp["n_inkb_mentions"]
    # the same values when the mention with no candidates has no record at all
    absent = {k: c for k, c in v["input"]["candidates"].items() if c}
    r2 = evaluate_linking(v["input"]["gold"], absent, k=(1, 5))
    assert (r2.ranking["hits@5"], r2.ranking["mrr"]) == (r.ranking["hits@5"], r.ranking["mrr"])
    assert r2.ranking["n_missing_predictions"] == 1


def _heritage_records(block):
    gold = [{"mention_id": g["mention"], "kb_id": g["gold_kb_id"]} for g in block["gold"]]
    pred = [{"mention_id": p["mention"], "candidates": p["candidates"]} for p in block["pred"]]
    return gold, pred


def test_tv_el_03_heritage_linking_defects():
    v = V["TV-EL-03"]
    exp, obs = v["expected"], v["library_observed"]
    gold, pred = _heritage_records(v["input"]["nil_in_denominator"])
    r = evaluate_linking(gold, pred, k=1)
    assert (r.ranking["hits@1"], r.ranking["mrr"]) == (
        exp["nil_in_denominator"]["hits@1"],
        exp["nil_in_denominator"]["mrr"],
    )
    assert r.ranking["n_inkb_mentions"] == exp["nil_in_denominator"]["n_inkb_mentions"]
    assert r.ranking["hits@1"] != obs["heritage_nil_in_denominator"]["hits@1"]

    gold, pred = _heritage_records(v["input"]["duplicate_prediction"])
    with pytest.raises(DuplicateMentionError, match="second prediction for mention 'Rijksmuseum'"):
        evaluate_linking(gold, pred)
    assert exp["duplicate_prediction"].startswith("DuplicateMentionError")

    gold, pred = _heritage_records(v["input"]["missing_prediction"])
    r = evaluate_linking(gold, pred, k=1)
    assert r.ranking["hits@1"] == exp["missing_prediction"]["hits@1"]
    assert r.ranking["mrr"] == exp["missing_prediction"]["mrr"]
    assert r.ranking["n_missing_predictions"] == exp["missing_prediction"]["n_missing_predictions"]
    assert r.ranking["mrr"] != obs["heritage_missing_prediction"]["mrr"]


def test_tv_el_04_nil_detection_joined_by_mention_id():
    v = V["TV-EL-04"]
    gold = [
        {"mention_id": g["mention"], "kb_ids": None if g["is_nil_gold"] else ["Q1"]}
        for g in v["input"]["gold"]
    ]
    pred = [
        {"mention_id": p["mention"], "nil": p["is_nil_pred"], "candidates": []}
        for p in v["input"]["pred"]
    ]
    r = evaluate_linking(gold, pred)
    exp = v["expected"]
    assert (r.nil["precision"], r.nil["recall"], r.nil["f1"]) == (
        exp["nil_precision"],
        exp["nil_recall"],
        exp["nil_f1"],
    )
    assert r.nil["f1"] != v["library_observed"]["heritage_zip_by_position"]["nil_f1"]
    # the NIL decision without a flag: the first candidate is the nil_id
    pred2 = [
        {"mention_id": "A", "candidates": ["NIL", "Q1"]},
        {"mention_id": "B", "candidates": ["Q1"]},
    ]
    assert evaluate_linking(gold, pred2).nil["f1"] == 1.0


def test_tv_el_05_cross_kb_consistency(tmp_path):
    v = V["TV-EL-05"]
    exp = v["expected"]
    path = tmp_path / "mapping.tsv"
    path.write_text(
        "# source: test fixture\n" + "\n".join(v["input"]["mapping_tsv"]) + "\n", encoding="utf-8"
    )
    mapping = load_mapping(path)
    r = check_consistency(v["input"]["entities"], mapping)
    assert r.status == exp["status"]
    assert r.counts == exp["counts"]
    assert r.consistency_rate == exp["consistency_rate"]
    assert close(r.coverage_rate, exp["coverage_rate"])
    assert close(r.checked_rate, exp["checked_rate"])
    assert r.per_scheme == exp["per_scheme"]
    assert r.settings["mapping_meta"] == ["source: test fixture"]
    assert len(r.settings["mapping"]["sha256"]) == 64
    nothing = check_consistency([{"entity_id": "x", "wikidata_id": "Q1"}], mapping)
    assert nothing.consistency_rate is None and "consistency_rate" in nothing.undefined
