"""Conformance: NER vectors TV-NER-01 … 17 (ner_seqeval.json, ner_semeval.json, ner_spans.json)."""

from __future__ import annotations

import pytest

from ragmeter.extraction.errors import OffsetMismatchError
from ragmeter.extraction.model import Corpus, Document, Span
from ragmeter.extraction.ner import evaluate_ner, evaluate_ner_tags
from ragmeter.extraction.tags import decode
from ragmeter.extraction.token_level import token_level_metrics
from ragmeter.extraction.tokenize import simple_tokenize, spans_to_tags
from ragmeter.extraction.validation import validate
from ragmeter.warnings import RagmeterWarning
from tests.extraction.vectors import assert_prf, close, vectors
from tests.helpers import warns

SEQ = vectors("ner_seqeval.json")
SEM = vectors("ner_semeval.json")
SPANS = vectors("ner_spans.json")
COUNTS = ("COR", "INC", "PAR", "MIS", "SPU", "POS", "ACT")


def _incl(chunks):
    return [[t, s, e - 1] for t, s, e in chunks]


def _spans(items, key_start="start", key_end="end"):
    return [(x[key_start], x[key_end], x["label"]) for x in items]


# -- seqeval (TV-NER-01 … 07) -------------------------------------------------------------------
def test_tv_ner_01_entity_scores_equal_seqeval():
    v = SEQ["TV-NER-01"]
    inp, exp = v["input"], v["expected"]
    assert _incl(decode(inp["y_true"][0])) == exp["entities_true_inclusive"]
    assert _incl(decode(inp["y_pred"][0])) == exp["entities_pred_inclusive"]
    assert [list(c) for c in decode(inp["y_true"][0])] == exp["entities_true_half_open"]
    assert [list(c) for c in decode(inp["y_pred"][0])] == exp["entities_pred_half_open"]
    r = evaluate_ner_tags(inp["y_true"], inp["y_pred"], scheme=inp["scheme"], mode=inp["mode"])
    for avg in ("micro", "macro", "weighted"):
        assert_prf(r.entity[avg], exp[avg], where=avg)
    for label, block in exp["per_type"].items():
        assert_prf(r.entity["per_label"][label], block, where=label)
    assert close(r.get("token_accuracy"), exp["token_accuracy"])
    # docs/extraction.md#ner: the strict schema gives the same micro numbers
    assert_prf(r.overall["strict"], exp["micro"])


@pytest.mark.parametrize("vid", ["TV-NER-02", "TV-NER-03"])
def test_tv_ner_02_03_lenient_and_strict_decoding(vid):
    v = SEQ[vid]
    inp, exp = v["input"], v["expected"]
    lenient = evaluate_ner_tags(inp["y_true"], inp["y_pred"])
    strict = evaluate_ner_tags(inp["y_true"], inp["y_pred"], mode="strict")
    assert_prf(lenient.entity["micro"], exp["lenient"], where="lenient")
    assert_prf(strict.entity["micro"], exp["strict_IOB2"], where="strict")
    assert _incl(decode(inp["y_pred"][0])) == exp["entities_pred_lenient_inclusive"]
    strict_chunks = [[0, t, s, e] for t, s, e in decode(inp["y_pred"][0], mode="strict")]
    assert strict_chunks == exp["entities_pred_strict_IOB2"]


def test_tv_ner_04_iobes_strict():
    v = SEQ["TV-NER-04"]
    inp, exp = v["input"], v["expected"]
    lenient = evaluate_ner_tags(inp["y_true"], inp["y_pred"], scheme="IOBES")
    strict = evaluate_ner_tags(inp["y_true"], inp["y_pred"], scheme="IOBES", mode="strict")
    assert_prf(lenient.entity["micro"], exp["lenient"])
    assert_prf(strict.entity["micro"], exp["strict_IOBES"])
    chunks = [[0, t, s, e] for t, s, e in decode(inp["y_pred"][0], scheme="IOBES", mode="strict")]
    assert chunks == exp["entities_pred_strict_IOBES"]


def test_tv_ner_05_types_with_dots_and_dashes():
    v = SEQ["TV-NER-05"]
    inp, exp = v["input"], v["expected"]
    assert _incl(decode(inp["y_true"][0])) == exp["entities_lenient_inclusive"]
    strict = [[0, t, s, e] for t, s, e in decode(inp["y_true"][0], mode="strict")]
    assert strict == exp["entities_strict_IOB2"]
    r = evaluate_ner_tags(inp["y_true"], inp["y_pred"])
    assert r.entity["micro"]["f1"] == exp["f1"]
    assert sorted(r.per_label) == ["GRP.HER.MUS", "NL-ISIL"]


def test_tv_ner_06_no_matching_across_sentences():
    v = SEQ["TV-NER-06"]
    r = evaluate_ner_tags(v["input"]["y_true"], v["input"]["y_pred"])
    assert_prf(r.entity["micro"], v["expected"]["micro"])
    assert r.overall["strict"]["MIS"] == 1 and r.overall["strict"]["SPU"] == 1


@pytest.mark.parametrize("zd", ["zero_division=0", "zero_division=1", "zero_division=warn"])
@pytest.mark.parametrize("case", ["no_pred", "nothing_anywhere"])
def test_tv_ner_07_zero_division(zd, case):
    v = SEQ["TV-NER-07"]
    inp = v["input"][case]
    value = zd.split("=")[1]
    arg = value if value == "warn" else int(value)
    if value == "warn":
        with warns(RagmeterWarning, "acts as 0"):
            r = evaluate_ner_tags(inp["y_true"], inp["y_pred"], zero_division=arg)
    else:
        r = evaluate_ner_tags(inp["y_true"], inp["y_pred"], zero_division=arg)
    assert_prf(r.entity["micro"], v["expected"][zd][case])
    # both situations are listed as undefined
    assert any(k.startswith("entity.micro") for k in r.undefined)


# -- SemEval schemas (TV-NER-08 … 12, 16) -------------------------------------------------------
def test_tv_ner_08_four_schemas_and_per_type():
    v = SEM["TV-NER-08"]
    inp, exp = v["input"], v["expected"]
    r = evaluate_ner({"d": _spans(inp["gold_half_open"])}, {"d": _spans(inp["pred_half_open"])})
    for schema, block in exp["overall"].items():
        assert_prf(r.overall[schema], block, where=schema)
    for label, schemas in exp["per_type"].items():
        for schema, block in schemas.items():
            assert_prf(r.per_label[label][schema], block, abs_=1e-6, where=f"{label}/{schema}")
    assert close(r.entity["micro"]["f1"], exp["seqeval_micro_f1_same_data"])


def test_tv_ner_08_inclusive_input_converted_gives_the_same():
    v = SEM["TV-NER-08"]
    inp = v["input"]
    gold = [(x["start"], x["end"] + 1, x["label"]) for x in inp["gold_inclusive"]]
    pred = [(x["start"], x["end"] + 1, x["label"]) for x in inp["pred_inclusive"]]
    r = evaluate_ner({"d": gold}, {"d": pred})
    for schema, block in v["expected"]["overall"].items():
        assert_prf(r.overall[schema], block, where=schema)


def test_tv_ner_09_tag_lists_equal_the_span_result():
    v = SEM["TV-NER-09"]
    r = evaluate_ner_tags(v["input"]["y_true"], v["input"]["y_pred"])
    for schema, block in v["expected"]["overall"].items():
        assert_prf(r.overall[schema], block, where=schema)


def test_tv_ner_10_adjacent_spans_do_not_overlap():
    v = SEM["TV-NER-10"]
    inp, exp = v["input"], v["expected"]
    r = evaluate_ner({"d": _spans(inp["gold_half_open"])}, {"d": _spans(inp["pred_half_open"])})
    assert_prf(r.overall["type"], exp["type"])
    observed = v["library_observed"]["nervaluate_given_half_open_ends_unconverted"]
    assert r.overall["type"]["COR"] != observed["COR"]


def test_tv_ner_11_invalid_predicted_label_is_scored_not_dropped():
    v = SEM["TV-NER-11"]
    inp, exp = v["input"], v["expected"]
    gold = [(x["start"], x["end"] + 1, x["label"]) for x in inp["gold_inclusive"]]
    pred = [(x["start"], x["end"] + 1, x["label"]) for x in inp["pred_inclusive"]]
    r = evaluate_ner({"d": gold}, {"d": pred}, vocabulary=inp["vocabulary"])
    assert_prf(r.overall["strict"], exp["strict"])
    assert r.reports["invalid_labels"] == exp["invalid_labels"]
    assert r.overall["exact"]["COR"] == 1  # "exact COR" (docs/extraction.md#ner)
    observed = v["library_observed"]["nervaluate_tags=[MUS]"]
    assert r.overall["strict"]["ACT"] != observed["ACT"]
    # the sentinel is a label of its own, listed, and left out of the macro mean
    assert r.per_label["__INVALID__"]["invalid"] is True
    assert r.metrics["macro_over_labels"]["strict"]["n_labels"] == 1


@pytest.mark.parametrize("order", ["pred_order_A", "pred_order_B"])
def test_tv_ner_12_matching_does_not_depend_on_order(order):
    v = SEM["TV-NER-12"]
    inp, exp = v["input"], v["expected"]
    r = evaluate_ner({"d": _spans(inp["gold_half_open"])}, {"d": _spans(inp[order])})
    for schema, block in exp["both_orders"].items():
        assert_prf(r.overall[schema], block, where=f"{order}/{schema}")
    assert r.overall["type"]["COR"] + r.overall["type"]["INC"] == exp["max_bipartite_matches"]
    obs = v["library_observed"]
    assert r.overall["type"]["f1"] != obs["nervaluate_type_order_A"]["F1"]
    assert r.overall["partial"]["f1"] != obs["nervaluate_partial_order_A"]["F1"]
    assert r.overall["type"]["f1"] != obs["heritage_partial_order_A"]["f1"]


@pytest.mark.parametrize("reverse", [False, True])
def test_tv_ner_16_worked_example_any_order(reverse):
    v = SEM["TV-NER-16"]
    inp, exp = v["input"], v["expected"]
    pred = _spans(inp["pred"])
    if reverse:
        pred = pred[::-1]
    text = inp["text"]
    gold_c = Corpus(
        {inp["doc_id"]: Document(inp["doc_id"], text)},
        {inp["doc_id"]: [Span(inp["doc_id"], s, e, lab) for s, e, lab in _spans(inp["gold"])]},
    )
    pred_c = Corpus(
        {inp["doc_id"]: Document(inp["doc_id"], text)},
        {inp["doc_id"]: [Span(inp["doc_id"], s, e, lab) for s, e, lab in pred]},
    )
    r = evaluate_ner(gold_c, pred_c)
    for schema, block in exp.items():
        assert_prf(r.overall[schema], block, where=schema)
    assert close(r.entity["micro"]["f1"], 0.4)
    if reverse:
        nerv = v["library_observed"]["nervaluate_reversed_prediction_order"]["type"]
        assert not close(r.overall["type"]["f1"], nerv["F1"])


# -- spans, tokens and documents (TV-NER-13, 14, 15, 17) -----------------------------------------
@pytest.mark.parametrize("case", ["double_space", "parenthesis"])
def test_tv_ner_13_char_spans_to_tags(case):
    v = SPANS["TV-NER-13"]
    inp = v["input"][f"case_{case}"]
    exp = v["expected"]["simple_tokenizer"][case]
    text = inp["text"]
    tokens = simple_tokenize(text)
    assert [text[a:b] for a, b in tokens] == exp["tokens"]
    conv = spans_to_tags(tokens, [tuple(s) for s in inp["spans"]], misaligned="error")
    assert conv.tags == exp["iob2"]
    support = sum(1 for t in conv.tags if t.endswith("MUS"))
    assert support == v["expected"]["token_support_for_MUS"][case]
    heritage = v["library_observed"]
    if case == "double_space":
        assert support != heritage["heritage_token_support_double_space"]
    else:
        assert support != len(heritage["heritage_types_found_parenthesis"])


@pytest.mark.parametrize("case", ["double_space", "parenthesis"])
def test_tv_ner_13_spacy_whitespace_tokens_are_dropped(case):
    """spaCy's own offsets, including its ' ' token, give the simple tokenizer's tags."""
    from ragmeter.extraction.tokenize import get_tokenizer

    v = SPANS["TV-NER-13"]
    inp = v["input"][f"case_{case}"]
    text = inp["text"]
    spacy_tokens = v["expected"]["spacy_tokenizer"][case]["tokens"]

    def spacy_like(t: str):  # offsets as spaCy reports them (Token.idx), whitespace token included
        out, pos = [], 0
        for tok in spacy_tokens:
            pos = t.index(tok, pos) if tok != " " else pos
            out.append((pos, pos + len(tok)))
            pos += len(tok)
        return out

    tok, _ = get_tokenizer(spacy_like)
    tokens = tok(text)
    assert [text[a:b] for a, b in tokens] == v["expected"]["simple_tokenizer"][case]["tokens"]
    tags = spans_to_tags(tokens, [tuple(s) for s in inp["spans"]]).tags
    assert tags == v["expected"]["simple_tokenizer"][case]["iob2"]


def _tv14_corpus():
    v = SPANS["TV-NER-14"]
    text = v["input"]["text"]
    spans = [
        Span("eval_001", a["start"], a["end"], a["type"], text=a["text"])
        for a in v["input"]["ner_annotations"]
    ]
    return v, Corpus({"eval_001": Document("eval_001", text)}, {"eval_001": spans})


def test_tv_ner_14_offset_mismatch_lists_every_bad_span():
    v, corpus = _tv14_corpus()
    with pytest.raises(OffsetMismatchError) as exc:
        validate(corpus)
    bad = [c for c in v["expected"]["checks"] if not c["ok"]]
    lines = str(exc.value).splitlines()
    assert len(lines) == len(bad) == len(exc.value.mismatches)
    for check, line in zip(bad, lines, strict=True):
        assert f"span {check['given_start']}-{check['given_end']}" in line
        assert repr(check["text_at_given_offsets"]) in line
        assert f"occurs once, at {check['correct_start']}-{check['correct_end']}" in line
    for check in v["expected"]["checks"]:
        assert (
            v["input"]["text"][check["given_start"] : check["given_end"]]
            == check["text_at_given_offsets"]
        )


def test_tv_ner_14_relocation():
    v, corpus = _tv14_corpus()
    report = validate(corpus, on_offset_mismatch="relocate")
    moved = [{"text": r["text"], "start": r["to"][0], "end": r["to"][1]} for r in report.relocated]
    assert moved == v["expected"]["on_offset_mismatch=relocate"]
    got = [(s.start, s.end) for s in report.corpus.spans["eval_001"]]
    want = [(c["correct_start"], c["correct_end"]) for c in v["expected"]["checks"]]
    assert got == want
    skipped = validate(corpus, on_offset_mismatch="skip")
    assert len(skipped.corpus.spans["eval_001"]) == 2 and len(skipped.skipped) == 2


def test_tv_ner_15_matching_stays_within_documents():
    v = SPANS["TV-NER-15"]
    inp = v["input"]
    gold = {d: _spans(inp[d]["gold"]) for d in inp}
    pred = {d: _spans(inp[d]["pred"]) for d in inp}
    r = evaluate_ner(gold, pred)
    assert_prf(r.overall["strict"], v["expected"]["strict"])
    assert r.per_document["doc1"]["strict"]["MIS"] == 1
    assert r.per_document["doc2"]["strict"]["SPU"] == 1
    tags = evaluate_ner_tags([["B-LOC"], ["O"]], [["O"], ["B-LOC"]])
    assert tags.entity["micro"]["f1"] == v["expected"]["seqeval_f1_tag_form"]
    assert r.overall["strict"]["f1"] != v["library_observed"]["heritage_runner_pooled"]["f1"]


def test_tv_ner_17_token_level_diagnostics():
    v = SPANS["TV-NER-17"]
    inp, exp = v["input"], v["expected"]
    r = token_level_metrics(
        {"d": _spans(inp["gold"])},
        {"d": _spans(inp["pred"])},
        {"d": inp["text"]},
        return_tags=True,
    )
    assert r.tags["d"]["tokens"] == exp["tokens"]
    assert r.tags["d"]["gold"] == exp["gold_labels"]
    assert r.tags["d"]["pred"] == exp["pred_labels"]
    for label, block in exp["per_type"].items():
        assert_prf(r.per_label[label], block, where=label)
    for avg in ("micro", "macro", "weighted"):
        assert_prf(getattr(r, avg), exp[avg], where=avg)
    assert close(r.token_accuracy, exp["token_accuracy_including_O"])
    # token level is a diagnostic: the entity-level strict F1 differs (docs/extraction.md#ner)
    ent = evaluate_ner({"d": _spans(inp["gold"])}, {"d": _spans(inp["pred"])})
    assert not close(ent.overall["strict"]["f1"], r.micro["f1"])
