"""Bad input: every validation rule of docs/extraction.md#data-model-and-validation (V1–V6), with
its message."""

from __future__ import annotations

import pytest

from ragmeter.errors import InputError
from ragmeter.extraction.errors import (
    DuplicateSpanError,
    InvalidLabelError,
    OffsetMismatchError,
    SpanBoundsError,
    UnknownDocumentError,
)
from ragmeter.extraction.model import Corpus, Document, Span
from ragmeter.extraction.ner import evaluate_ner
from ragmeter.extraction.validation import validate

TEXT = "Het Rijksmuseum Amsterdam opende in 1885."


def corpus(*spans: Span, text: str = TEXT) -> Corpus:
    return Corpus({"d": Document("d", text)}, {"d": list(spans)})


# V1 bounds ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("span", "message"),
    [
        (
            Span("d", -1, 3, "MUS"),
            "span -1-3 'MUS' starts before the text (expected 0 <= start < end)",
        ),
        (
            Span("d", 5, 5, "MUS"),
            "span 5-5 'MUS' is empty or reversed (expected start < end, half-open offsets)",
        ),
        (Span("d", 9, 4, "MUS"), "span 9-4 'MUS' is empty or reversed"),
        (
            Span("d", 36, 99, "TMP"),
            "span 36-99 'TMP' ends after the text (expected end <= 41, the text length)",
        ),
        (
            Span("d", 0, 25, "MUS", fragments=((0, 3), (2, 25))),
            "has fragments that are unsorted or overlap (expected sorted, disjoint)",
        ),
        (
            Span("d", 0, 25, "MUS", fragments=((4, 15), (16, 25))),
            "does not span its fragments",
        ),
    ],
)
def test_v1_bounds(span, message):
    with pytest.raises(SpanBoundsError) as exc:
        validate(corpus(span))
    assert message in str(exc.value)
    assert str(exc.value).startswith("document 'd': ")


def test_v1_bounds_hint_when_the_mention_occurs_once():
    with pytest.raises(SpanBoundsError, match=r"'1885' occurs once, at 36-40"):
        validate(corpus(Span("d", 40, 44, "TMP", text="1885")))


def test_v1_every_bad_span_is_listed():
    with pytest.raises(SpanBoundsError) as exc:
        validate(corpus(Span("d", 5, 5, "A"), Span("d", 50, 60, "B")))
    assert len(str(exc.value).splitlines()) == 2


def test_v1_in_columns_and_mappings():
    with pytest.raises(SpanBoundsError, match=r"gold span 5-2 'MUS' is empty or reversed"):
        evaluate_ner({"d": [(5, 2, "MUS")]}, {"d": []})
    with pytest.raises(
        SpanBoundsError, match=r"predicted document 'd': span 0-99 'MUS' ends after"
    ):
        evaluate_ner(corpus(), corpus(Span("d", 0, 99, "MUS")))


# V2 surface --------------------------------------------------------------------------------------
def test_v2_surface_error_lists_every_span_with_the_text_found():
    bad = corpus(Span("d", 3, 15, "MUS", text="Rijksmuseum"), Span("d", 35, 39, "TMP", text="1885"))
    with pytest.raises(OffsetMismatchError) as exc:
        validate(bad)
    lines = str(exc.value).splitlines()
    assert lines == [
        "document 'd': span 3-15 'MUS' reads ' Rijksmuseum', not 'Rijksmuseum' (expected "
        "text[start:end] == mention; 'Rijksmuseum' occurs once, at 4-15)",
        "document 'd': span 35-39 'TMP' reads ' 188', not '1885' (expected text[start:end] == "
        "mention; '1885' occurs once, at 36-40)",
    ]
    assert [m["found"] for m in exc.value.mismatches] == [" Rijksmuseum", " 188"]


def test_v2_relocate_needs_exactly_one_occurrence():
    text = "museum en museum"
    with pytest.raises(OffsetMismatchError, match="occurs more than once"):
        validate(
            corpus(Span("d", 1, 7, "MUS", text="museum"), text=text), on_offset_mismatch="relocate"
        )
    with pytest.raises(OffsetMismatchError, match="does not occur in the text"):
        validate(
            corpus(Span("d", 0, 4, "MUS", text="zoo!"), text=text), on_offset_mismatch="relocate"
        )


def test_v2_fragments_surface_is_joined_by_one_space():
    text = "Rijks- en Stedelijk Museum"
    ok = Span("d", 0, 26, "MUS", text="Rijks Museum", fragments=((0, 5), (20, 26)))
    assert validate(corpus(ok, text=text)).n_spans == 1
    bad = Span("d", 0, 26, "MUS", text="Rijks-Museum", fragments=((0, 5), (20, 26)))
    with pytest.raises(OffsetMismatchError, match="reads 'Rijks Museum', not 'Rijks-Museum'"):
        validate(corpus(bad, text=text))


def test_v2_skip_drops_and_lists():
    report = validate(corpus(Span("d", 0, 3, "X", text="Hat")), on_offset_mismatch="skip")
    assert report.corpus.spans["d"] == []
    assert report.skipped == [
        {"doc_id": "d", "label": "X", "text": "Hat", "start": 0, "end": 3, "found": "Het"}
    ]


# V3 whitespace -----------------------------------------------------------------------------------
def test_v3_whitespace_warnings_reach_the_ner_report():
    r = evaluate_ner(corpus(Span("d", 3, 15, "MUS")), corpus(Span("d", 4, 15, "MUS")))
    assert r.warnings == ["gold document 'd': span 3-15 'MUS' starts with whitespace"]
    assert r.reports["validation"]["gold"]["whitespace"][0]["where"] == "starts"


def test_v3_whitespace_is_a_listed_warning():
    report = validate(corpus(Span("d", 3, 15, "MUS"), Span("d", 4, 16, "MUS")))
    assert [w["where"] for w in report.whitespace] == ["starts", "ends"]
    assert report.warnings == [
        "document 'd': span 3-15 'MUS' starts with whitespace",
        "document 'd': span 4-16 'MUS' ends with whitespace",
    ]


# V4 duplicates -----------------------------------------------------------------------------------
def test_v4_gold_duplicates_are_an_error():
    with pytest.raises(DuplicateSpanError) as exc:
        validate(corpus(Span("d", 4, 15, "MUS"), Span("d", 4, 15, "MUS")))
    assert str(exc.value) == (
        "document 'd': span 4-15 'MUS' appears twice (expected each (doc_id, start, end, "
        "label) once in gold)"
    )
    with pytest.raises(DuplicateSpanError, match="gold span 4-15 'MUS' appears twice"):
        evaluate_ner({"d": [(4, 15, "MUS"), (4, 15, "MUS")]}, {"d": []})


def test_v4_prediction_duplicates_follow_the_policy():
    dup = corpus(Span("d", 4, 15, "MUS"), Span("d", 4, 15, "MUS"))
    deduped = validate(dup, role="pred")
    assert len(deduped.corpus.spans["d"]) == 1 and len(deduped.duplicates_removed) == 1
    kept = validate(dup, role="pred", duplicates="keep")
    assert len(kept.corpus.spans["d"]) == 2 and len(kept.duplicates_kept) == 1
    gold = {"d": [(4, 15, "MUS")]}
    pred = {"d": [(4, 15, "MUS"), (4, 15, "MUS")]}
    r = evaluate_ner(gold, pred)
    assert r.reports["n_duplicates_removed"] == 1 and r.overall["strict"]["SPU"] == 0
    r = evaluate_ner(gold, pred, duplicates="keep")
    assert r.reports["n_duplicates_kept"] == 1 and r.overall["strict"]["SPU"] == 1
    assert r.per_label["MUS"]["strict"]["SPU"] == 1
    assert r.entity["micro"]["precision"] == 0.5


# V5 labels ---------------------------------------------------------------------------------------
def test_v5_gold_labels_outside_the_vocabulary():
    with pytest.raises(InvalidLabelError) as exc:
        validate(
            corpus(Span("d", 4, 15, "MUSEUM"), Span("d", 36, 40, "DATE")), vocabulary=["MUS", "TMP"]
        )
    text = str(exc.value)
    assert (
        "gold label 'MUSEUM' of span 4-15 is not in the vocabulary (expected one of MUS, TMP)"
        in text
    )
    assert exc.value.labels == ["DATE", "MUSEUM"]
    with pytest.raises(
        InvalidLabelError, match=r"gold label 'XYZ' \(1 span\(s\)\) is not in the vocabulary"
    ):
        evaluate_ner({"d": [(0, 3, "XYZ")]}, {"d": []}, vocabulary=["MUS"])


def test_v5_predicted_labels_are_reported():
    report = validate(corpus(Span("d", 4, 15, "MUSEUM")), vocabulary=["MUS"], role="pred")
    assert report.invalid_labels == {"MUSEUM": 1}


# V6 documents ------------------------------------------------------------------------------------
def test_v6_spans_for_an_unknown_document():
    c = Corpus({"d": Document("d", TEXT)}, {"d": [], "x": [Span("x", 0, 3, "A")]})
    with pytest.raises(
        UnknownDocumentError, match="1 span\\(s\\) for document 'x', which is not in the corpus"
    ):
        validate(c)


def test_unknown_predicted_documents_follow_the_policy():
    gold = {"d": [(0, 3, "A")]}
    pred = {"d": [(0, 3, "A")], "x": [(0, 3, "A")]}
    with pytest.raises(UnknownDocumentError) as exc:
        evaluate_ner(gold, pred)
    assert str(exc.value).startswith(
        "document 'x': predictions for a document that is not in the gold set"
    )
    ignored = evaluate_ner(gold, pred, unknown_documents="ignore")
    assert ignored.overall["strict"]["SPU"] == 0
    assert ignored.reports["unknown_documents"]["documents"] == ["x"]
    spurious = evaluate_ner(gold, pred, unknown_documents="as_empty_gold")
    assert spurious.overall["strict"]["SPU"] == 1 and spurious.doc_ids == ["d", "x"]


def test_prediction_text_must_equal_gold_text():
    other = Corpus({"d": Document("d", TEXT + " ")}, {"d": []})
    with pytest.raises(UnknownDocumentError, match="prediction's text differs from the gold text"):
        evaluate_ner(corpus(), other)


# model-level checks ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"start": "4"}, "start is '4' (expected an integer offset)"),
        ({"start": 4.0}, "start is 4.0 (expected an integer offset)"),
        ({"start": True}, "start is True (expected an integer offset)"),
        ({"label": ""}, "has label '' (expected a non-empty string)"),
        (
            {"nil": True, "kb_ids": {"Q1"}},
            "is marked NIL and has KB ids Q1 (expected one or the other)",
        ),
    ],
)
def test_span_construction_errors(kwargs, message):
    base = {"doc_id": "d", "start": 4, "end": 15, "label": "MUS"}
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Span(**{**base, **kwargs})


@pytest.mark.parametrize(
    ("span", "message"),
    [
        (5, "span 5 is not a Span, a (start, end, label) tuple or a dict"),
        ({"start": 1, "end": 2}, "span label is None (expected a non-empty string)"),
        ({"start": 1, "end": 2.5, "label": "A"}, "span end is 2.5 (expected an integer offset)"),
        ((1, 2, None), "span label is None (expected a non-empty string)"),
    ],
)
def test_mapping_input_errors(span, message):
    with pytest.raises(
        InputError,
        match=message.replace("(", r"\(")
        .replace(")", r"\)")
        .replace("{", r"\{")
        .replace("}", r"\}"),
    ):
        evaluate_ner({"d": [span]}, {"d": []})


def test_option_errors():
    with pytest.raises(ValueError, match="unknown NER schema 'fuzzy'"):
        evaluate_ner({}, {}, schemas=["fuzzy"])
    with pytest.raises(ValueError, match=r"zero_division=0\.5"):
        evaluate_ner({}, {}, zero_division=0.5)
    with pytest.raises(ValueError, match="min_overlap=2"):
        evaluate_ner({}, {}, min_overlap=2)
    with pytest.raises(ValueError, match="on_offset_mismatch='fix'"):
        validate(corpus(), on_offset_mismatch="fix")


def test_empty_inputs_are_scored_with_reasons():
    r = evaluate_ner({"d": []}, {"d": []})
    assert r.overall["strict"]["f1"] == 0.0
    assert r.undefined["overall.strict.precision"] == "no gold and no predictions"
    assert r.metrics["macro_over_documents"]["strict"]["f1"] == 1.0  # GERBIL's rule
    skip = evaluate_ner({"d": []}, {"d": []}, empty_documents="skip")
    assert skip.metrics["macro_over_documents"]["strict"]["f1"] is None
    assert skip.undefined["macro_over_documents.strict"] == "no documents to average"
